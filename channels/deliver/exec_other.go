//go:build !unix

package deliver

import "os/exec"

// isolate leaves the command as it is: without process groups,
// cancellation kills the direct child only.
func isolate(*exec.Cmd) {}

func exitCode(err *exec.ExitError) int { return err.ExitCode() }
