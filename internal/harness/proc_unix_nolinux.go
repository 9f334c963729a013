//go:build unix && !linux

package harness

import "syscall"

// SysProcAttr returns the attributes for a child server's exec.Cmd: a
// process group of its own, so that SignalGroup reaches it and anything it
// spawned at once. These systems have no parent-death signal: a test binary
// that dies without stopping the child leaves it running.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
