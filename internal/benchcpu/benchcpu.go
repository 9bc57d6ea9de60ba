package benchcpu

import "testing"

// Start begins measuring the process's CPU time and returns the function
// that reports it, per operation of b, as cpu-ns/op. Where the process's
// CPU time cannot be read, it reports nothing.
func Start(b *testing.B) (stop func()) {
	b.Helper()
	start, ok := processCPU()
	return func() {
		end, ok2 := processCPU()
		if !ok || !ok2 || b.N == 0 {
			return
		}
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}
