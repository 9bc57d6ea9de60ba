//go:build race

package main

// raceEnabled: this test binary carries the race detector, which
// multiplies a process's memory; tests that measure one build their own.
const raceEnabled = true
