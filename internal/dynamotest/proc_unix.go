//go:build unix

package dynamotest

import "syscall"

// signalGroup sends SIGTERM, or SIGKILL if kill is set, to the process group
// pgid. A group that is already gone is not an error.
func signalGroup(pgid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pgid, sig)
}
