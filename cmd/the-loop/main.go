package main

import (
	"os"
	"runtime/debug"
)

// softMemoryLimit is the heap size past which the collector runs however
// little garbage there is: the per-call memory limit of a repository hook
// and room for everything else.
const softMemoryLimit = 512 << 20

func main() {
	// A check is a short burst of small allocations (file reads, parsed
	// front matter) over a small live heap; collecting at 4x rather than 2x
	// the live heap takes about a third off a 200-item check for ~10 MB more
	// peak memory. GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// A repository hook may hold up to its memory limit (256 MiB), and
	// collecting at 4x its live heap would let the process grow to a
	// gigabyte and more. A soft limit makes the collector work harder as
	// the heap nears it instead; it never stops the process.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
