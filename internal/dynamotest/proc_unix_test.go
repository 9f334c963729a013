//go:build unix

package dynamotest

import (
	"errors"
	"syscall"
)

// processGroupExists reports whether any process is left in group pgid.
func processGroupExists(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}
