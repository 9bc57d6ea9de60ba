//go:build race

package graph

// raceEnabled: this test binary carries the race detector, which makes
// every step ten times dearer and adds nothing to a test that runs on one
// goroutine; such tests may check a sample.
const raceEnabled = true
