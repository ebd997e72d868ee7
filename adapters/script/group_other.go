//go:build !unix

package script

import (
	"os/exec"
	"time"
)

// ownGroup kills the script itself on cancel (no process groups here).
func ownGroup(cmd *exec.Cmd, grace time.Duration) { cmd.WaitDelay = grace }
