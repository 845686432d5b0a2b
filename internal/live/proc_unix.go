//go:build unix

package live

import (
	"os/exec"
	"syscall"
)

// killGroup runs the script in its own process group and kills the whole
// group on timeout: torch and Triton start helper processes that would
// otherwise outlive the interpreter and hold its pipes.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
