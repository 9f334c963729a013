//go:build unix

package s3test

import "syscall"

// signalGroup kills the process group pgid. A group that is already gone is
// not an error.
func signalGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
