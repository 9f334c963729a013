//go:build !unix

package harness

import (
	"os"
	"syscall"
)

// Process groups are a Unix idea; elsewhere a child runs with default
// attributes and SignalGroup kills the child alone.

// SysProcAttr returns nil: no special attributes.
func SysProcAttr() *syscall.SysProcAttr { return nil }

// SignalGroup kills the process pid, whatever kill says: there is no
// graceful signal to send. A process that is already gone is not an error.
func SignalGroup(pid int, _ bool) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// ProcessGroupExists always reports false: there are no process groups to
// look for.
func ProcessGroupExists(int) bool { return false }
