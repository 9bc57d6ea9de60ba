//go:build !unix

package benchcpu

import "time"

// processCPU is not available here: Start reports nothing.
func processCPU() (time.Duration, bool) { return 0, false }
