//go:build unix

package harness

import (
	"bufio"
	"os/exec"
	"testing"
	"time"
)

// startGroup runs script under sh with SysProcAttr, followed by a sleep in
// the background, so the group holds two processes, and returns once sh has
// run script and started the sleep. It returns the pid (the group id) and a
// channel closed once sh has been waited for.
func startGroup(t *testing.T, script string) (int, <-chan struct{}) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(sh, "-c", script+"\nsleep 60 &\necho ready\nwait")
	cmd.SysProcAttr = SysProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The line, or EOF if sh died; either way it has done with script.
	_, _ = bufio.NewReader(stdout).ReadString('\n')
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		SignalGroup(pid, true)
		<-exited
	})
	if !ProcessGroupExists(pid) {
		t.Fatalf("process group %d of a running child not found", pid)
	}
	return pid, exited
}

// waitGone waits for the group to empty: the sleep sh started is reparented
// when it dies and reaped by someone else, a moment after sh.
func waitGone(t *testing.T, pgid int, exited <-chan struct{}) {
	t.Helper()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("process %d still running", pgid)
	}
	for deadline := time.Now().Add(10 * time.Second); ProcessGroupExists(pgid); {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still exists", pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSignalGroupTerm(t *testing.T) {
	t.Parallel()
	pid, exited := startGroup(t, ":")
	SignalGroup(pid, false)
	waitGone(t, pid, exited)
	SignalGroup(pid, false) // a group that is gone is not an error
	SignalGroup(pid, true)
}

func TestSignalGroupKill(t *testing.T) {
	t.Parallel()
	// Ignored signals stay ignored across exec, so SIGTERM ends neither sh
	// nor its sleep.
	pid, exited := startGroup(t, `trap "" TERM`)
	SignalGroup(pid, false)
	select {
	case <-exited:
		t.Fatal("SIGTERM ended a child that ignores it")
	case <-time.After(200 * time.Millisecond):
	}
	SignalGroup(pid, true)
	waitGone(t, pid, exited)
}
