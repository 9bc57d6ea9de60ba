package main

import (
	"io"
	"path/filepath"
	"testing"
)

// The start-up benchmarks run a verb in-process, as a test calls run. They
// see what parsing the command line and answering cost per call, not a
// process's start (runtime and package initialisation, page faults), nor
// what a process does once and caches (compiling a shipped loop or a
// config schema): `just bench-start` times whole processes for that.

func benchRun(b *testing.B, want int, args ...string) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		if code := run(args, io.Discard, io.Discard); code != want {
			b.Fatalf("exit %d, want %d", code, want)
		}
	}
}

func BenchmarkStartVersion(b *testing.B)   { benchRun(b, 0, "--version") }
func BenchmarkStartHelp(b *testing.B)      { benchRun(b, 0, "--help") }
func BenchmarkStartGraphShow(b *testing.B) { benchRun(b, 0, "graph", "show") }

// BenchmarkStartGraphShowDemo is graph show in a repository with a harness
// config and rules of its own.
func BenchmarkStartGraphShowDemo(b *testing.B) {
	benchRun(b, 0, "graph", "show", "--repo", filepath.Join("..", "..", "examples", "demo"))
}
