//go:build unix

// Command proctime times whole processes: it runs each command N times,
// interleaved so that a machine's drift affects them alike, and prints
// each one's median wall time, median CPU time and peak RSS, then each
// command's median against the last one's. The justfile's process
// benchmarks use it; `go test -bench` cannot see a process's start-up.
//
//	go run ./tools/proctime -n 21 -- the-loop check issue-1 --repo R -- grep -rL SPDX R/src
//
// It reads rusage, so it builds on unix only.
package main
