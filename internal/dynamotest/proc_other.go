//go:build !unix

package dynamotest

import (
	"os"
	"syscall"
)

// Process groups are a Unix idea; elsewhere Stop kills the JVM alone.

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(pid int, _ bool) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
