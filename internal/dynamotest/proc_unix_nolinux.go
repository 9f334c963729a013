//go:build unix && !linux

package dynamotest

import "syscall"

// sysProcAttr puts the JVM in a process group of its own. These systems have
// no parent-death signal: a test binary that dies without calling Stop
// leaves the JVM running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
