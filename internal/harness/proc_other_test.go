//go:build !unix

package harness

import "testing"

func TestNoProcessGroups(t *testing.T) {
	if a := SysProcAttr(); a != nil {
		t.Errorf("SysProcAttr() = %+v, want nil", a)
	}
	if ProcessGroupExists(1) {
		t.Error("ProcessGroupExists(1) = true where there are no process groups")
	}
}
