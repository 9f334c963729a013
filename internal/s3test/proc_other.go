//go:build !unix

package s3test

import (
	"os"
	"syscall"
)

// Process groups are a Unix idea; elsewhere Stop kills MinIO alone.

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
