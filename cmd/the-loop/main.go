package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program, callable in-process by tests. It returns the
// exit code: 0 success, 1 a negative answer, 2 could not run.
func run(args []string, stdout, stderr io.Writer) int {
	return execute(args, stdout, stderr)
}
