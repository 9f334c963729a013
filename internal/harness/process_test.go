package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for a child server: with
// HARNESS_TEST_CHILD set it writes that to stdout and stderr and exits 3.
func TestMain(m *testing.M) {
	if msg := os.Getenv("HARNESS_TEST_CHILD"); msg != "" {
		fmt.Fprint(os.Stdout, msg+" out\n")
		fmt.Fprint(os.Stderr, msg+" err\n")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func TestStartProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "HARNESS_TEST_CHILD="+strings.Repeat("x", 20<<10))
	exited, out, err := StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		SignalGroup(cmd.Process.Pid, true)
		t.Fatal("exited not closed after the child ended")
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("child state %v, want waited for with exit status 3", cmd.ProcessState)
	}
	got := out.String()
	if len(got) != 16<<10 || !strings.HasSuffix(got, "x err\n") {
		t.Errorf("output kept: %d bytes ending %q, want the last 16 KiB, ending %q", len(got), got[max(0, len(got)-10):], "x err\n")
	}
}

func TestStartProcessError(t *testing.T) {
	// Not on PATH: exec.Command's look-up fails, and Start reports it.
	const missing = "fundsvc-harness-no-such-server"
	_, _, err := StartProcess(exec.Command(missing))
	if err == nil || !strings.HasPrefix(err.Error(), "run "+missing+": ") {
		t.Errorf("StartProcess of a missing binary: err = %v, want \"run %s: ...\"", err, missing)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestWithOutput(t *testing.T) {
	base := errors.New("not ready")
	err := WithOutput(base, "MinIO", stringer("line 1\nline 2\n"))
	if want := "not ready\n--- MinIO output ---\nline 1\nline 2\n"; err.Error() != want {
		t.Errorf("WithOutput = %q, want %q", err, want)
	}
	if !errors.Is(err, base) {
		t.Error("WithOutput does not wrap its error")
	}
}

var errExited = errors.New("server exited")

func TestWaitReady(t *testing.T) {
	t.Run("returns once probe succeeds", func(t *testing.T) {
		calls := 0
		err := WaitReady(t.Context(), time.Millisecond, nil, errExited, "not ready", func(context.Context) error {
			calls++
			if calls < 3 {
				return errors.New("connection refused")
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Errorf("err = %v after %d calls, want nil after 3", err, calls)
		}
	})
	t.Run("returns errExited once exited closes", func(t *testing.T) {
		exited := make(chan struct{})
		close(exited)
		err := WaitReady(t.Context(), time.Hour, exited, errExited, "not ready", func(context.Context) error {
			return errors.New("connection refused")
		})
		if err != errExited {
			t.Errorf("err = %v, want %v", err, errExited)
		}
	})
	t.Run("quotes the last error when ctx ends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		err := WaitReady(ctx, time.Millisecond, make(chan struct{}), errExited, "no answer to ListTables", func(context.Context) error {
			return errors.New("connection refused")
		})
		want := "no answer to ListTables (last error: connection refused): context deadline exceeded"
		if err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want %q wrapping context.DeadlineExceeded", err, want)
		}
	})
	t.Run("passes ctx to probe", func(t *testing.T) {
		type key struct{}
		ctx := context.WithValue(t.Context(), key{}, "v")
		err := WaitReady(ctx, time.Millisecond, nil, errExited, "not ready", func(ctx context.Context) error {
			if ctx.Value(key{}) != "v" {
				return errors.New("probe got another context")
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	})
}

func TestRetry(t *testing.T) {
	errEarly := errors.New("exited early")
	t.Run("retries a retryable error", func(t *testing.T) {
		calls := 0
		got, err := Retry(t.Context(), 3, errEarly, func() (int, error) {
			calls++
			if calls < 3 {
				return 0, fmt.Errorf("attempt %d: %w", calls, errEarly)
			}
			return 42, nil
		})
		if got != 42 || err != nil || calls != 3 {
			t.Errorf("Retry = %d, %v after %d calls; want 42, nil after 3", got, err, calls)
		}
	})
	t.Run("joins the errors of all attempts", func(t *testing.T) {
		calls := 0
		_, err := Retry(t.Context(), 3, errEarly, func() (int, error) {
			calls++
			return 0, fmt.Errorf("attempt %d: %w", calls, errEarly)
		})
		want := "attempt 1: exited early\nattempt 2: exited early\nattempt 3: exited early"
		if calls != 3 || err == nil || err.Error() != want {
			t.Errorf("after %d calls err = %q, want 3 calls and %q", calls, err, want)
		}
	})
	t.Run("stops at another error", func(t *testing.T) {
		calls := 0
		other := errors.New("no such file")
		_, err := Retry(t.Context(), 3, errEarly, func() (int, error) {
			calls++
			return 0, other
		})
		if calls != 1 || !errors.Is(err, other) {
			t.Errorf("after %d calls err = %v, want 1 call and %v", calls, err, other)
		}
	})
	t.Run("stops once ctx ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		calls := 0
		_, err := Retry(ctx, 3, errEarly, func() (int, error) {
			calls++
			cancel()
			return 0, errEarly
		})
		if calls != 1 || !errors.Is(err, errEarly) {
			t.Errorf("after %d calls err = %v, want 1 call and %v", calls, err, errEarly)
		}
	})
	t.Run("tries at least once", func(t *testing.T) {
		calls := 0
		got, err := Retry(t.Context(), 0, errEarly, func() (string, error) {
			calls++
			return "ok", nil
		})
		if got != "ok" || err != nil || calls != 1 {
			t.Errorf("Retry = %q, %v after %d calls; want \"ok\", nil after 1", got, err, calls)
		}
	})
}
