//go:build unix && !linux

package s3test

import "syscall"

// sysProcAttr puts MinIO in a process group of its own. These systems have
// no parent-death signal: a test binary that dies without calling Stop
// leaves MinIO running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
