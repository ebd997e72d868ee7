//go:build unix

package scout

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup runs the command in a process group of its own; cancelling it
// sends the whole group SIGTERM, then SIGKILL after grace, so a script's
// children do not outlive its timeout.
func ownGroup(cmd *exec.Cmd, grace time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		pgid := -cmd.Process.Pid
		err := syscall.Kill(pgid, syscall.SIGTERM)
		time.AfterFunc(grace, func() { _ = syscall.Kill(pgid, syscall.SIGKILL) })
		return err
	}
	// Wait returns once the group's output pipes close, or grace after
	// the cancel at the latest.
	cmd.WaitDelay = grace + time.Second
}
