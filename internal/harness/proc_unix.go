//go:build unix

package harness

import (
	"errors"
	"syscall"
)

// SignalGroup sends SIGTERM, or SIGKILL if kill is set, to the process group
// pgid: the group of a child started with SysProcAttr, whose pgid is its
// pid. A group that is already gone is not an error.
func SignalGroup(pgid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pgid, sig)
}

// ProcessGroupExists reports whether any process is left in group pgid, for
// tests that check a stopped server left nothing behind.
func ProcessGroupExists(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}
