//go:build !unix

package builtins

import "os/exec"

// verifyIsolate leaves the command as it is: without process groups,
// cancellation kills the direct child only.
func verifyIsolate(*exec.Cmd) {}

func verifyExitCode(err *exec.ExitError) int { return err.ExitCode() }
