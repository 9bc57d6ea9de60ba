// Package benchcpu reports the CPU time a benchmark's operations take, as
// a metric beside go test's wall time.
//
// Wall time per operation moves with whatever else the machine runs: on a
// shared machine of two cores, a second build halves the parallelism a
// benchmark sees. The CPU time the process spends (user and system, every
// thread) moves far less, and it is what a busy machine pays for the
// work, so the-loop's performance targets are stated in it. To report it,
// call [Start] before a benchmark's loop and the function it returns
// after:
//
//	stop := benchcpu.Start(b)
//	for b.Loop() { ... }
//	stop()
//
// The metric is cpu-ns/op, which benchstat compares like ns/op. It counts
// the whole process, the collector and the benchmark's own helpers
// included, so run one benchmark at a time (-bench with a pattern that
// matches one) when the figure matters.
package benchcpu
