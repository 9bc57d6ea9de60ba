//go:build unix

package builtins

import (
	"os/exec"
	"syscall"
)

// verifyIsolate starts the test command in a process group of its own, and
// makes cancellation kill the whole group: test runners fork (go test runs a
// test binary, npm a node), and killing only the parent would leave the rest
// running and holding the output pipes.
func verifyIsolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// verifyExitCode is the exit status, or the negated signal number when the
// process was killed by one.
func verifyExitCode(err *exec.ExitError) int {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return err.ExitCode()
}
