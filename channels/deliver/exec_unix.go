//go:build unix

package deliver

import (
	"os/exec"
	"syscall"
)

// isolate starts the command in a process group of its own, and makes
// cancellation kill the whole group: a delivery script that forks (a shell
// script running curl) would otherwise leave its children running, and
// holding the output pipes, after it was killed.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// exitCode is the exit status, or the negated signal number when the
// process was killed by one.
func exitCode(err *exec.ExitError) int {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return err.ExitCode()
}
