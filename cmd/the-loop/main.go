package main

import (
	"io"
	"os"
	"runtime/debug"
)

func main() {
	// A check is a short burst of small allocations (file reads, parsed
	// front matter) over a small live heap; collecting at 4x rather than 2x
	// the live heap takes about a third off a 200-item check for ~10 MB more
	// peak memory. GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program, callable in-process by tests. It returns the
// exit code: 0 success, 1 a negative answer, 2 could not run.
func run(args []string, stdout, stderr io.Writer) int {
	return execute(args, stdout, stderr)
}
