package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// outputTail is how much of a child's output StartProcess keeps.
const outputTail = 16 << 10

// StartProcess starts cmd as a test's child server: in a process group of
// its own (see SysProcAttr), so that SignalGroup(cmd.Process.Pid, ...)
// reaches it and anything it spawns, with its standard output and error
// going to a TailBuffer of the last 16 KiB, for error messages (see
// WithOutput); a Stdout the caller set gets a copy of both. It sets cmd's
// Stdout, Stderr and SysProcAttr.
//
// It returns that buffer and a channel that is closed once the process has
// exited and been waited for; the caller must not call cmd.Wait. The exit
// status is dropped: a server killed by SignalGroup exits non-zero, and
// whoever killed it caused that.
func StartProcess(cmd *exec.Cmd) (exited <-chan struct{}, out *TailBuffer, err error) {
	out = NewTailBuffer(outputTail)
	var w io.Writer = out
	if cmd.Stdout != nil {
		w = io.MultiWriter(out, cmd.Stdout)
	}
	cmd.Stdout, cmd.Stderr = w, w
	done, err := start(cmd)
	if err != nil {
		return nil, nil, err
	}
	return done, out, nil
}

// start starts cmd in a process group of its own and returns a channel
// closed once it has exited and been waited for.
func start(cmd *exec.Cmd) (<-chan struct{}, error) {
	cmd.SysProcAttr = SysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return done, nil
}

// StartProcessToFile is StartProcess with the child's standard output and
// error written straight to f, a file the child inherits, rather than
// through a pipe this process copies: a benchmark's child that logs a line
// per request then wakes no goroutine of the measuring process per
// request. The returned tail reads f's last 16 KiB, for error messages.
func StartProcessToFile(cmd *exec.Cmd, f *os.File) (exited <-chan struct{}, tail fmt.Stringer, err error) {
	cmd.Stdout, cmd.Stderr = f, f
	done, err := start(cmd)
	if err != nil {
		return nil, nil, err
	}
	return done, fileTail{f.Name()}, nil
}

// fileTail is the last outputTail bytes of a file, read when printed.
type fileTail struct{ path string }

func (t fileTail) String() string {
	f, err := os.Open(t.path)
	if err != nil {
		return fmt.Sprintf("(the output in %s cannot be read: %v)", t.path, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > outputTail {
		_, _ = f.Seek(info.Size()-outputTail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// StopGroup stops a process started with StartProcess: it sends SIGTERM to
// its group, waits for exited to close, and kills the group if that takes
// longer than grace.
func StopGroup(pid int, exited <-chan struct{}, grace time.Duration) {
	SignalGroup(pid, false)
	select {
	case <-exited:
	case <-time.After(grace):
		SignalGroup(pid, true)
		<-exited
	}
}

// WithOutput returns err with what the server called name wrote, such as
// the TailBuffer from StartProcess, appended below it:
//
//	<err>
//	--- <name> output ---
//	<output>
//
// The result wraps err.
func WithOutput(err error, name string, output fmt.Stringer) error {
	return fmt.Errorf("%w\n--- %s output ---\n%s", err, name, output.String())
}

// WaitReady waits for a starting server to be ready: it calls probe, and
// again every interval, until probe returns nil, and then returns nil.
//
// If exited closes first (the server's process has gone; a nil channel
// never closes), it returns errExited. If ctx ends first, it returns an
// error wrapping ctx.Err() that names what is missing and probe's last
// error: "<notReady> (last error: <error>): <ctx.Err()>".
func WaitReady(ctx context.Context, interval time.Duration, exited <-chan struct{}, errExited error, notReady string, probe func(context.Context) error) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		err := probe(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s (last error: %v): %w", notReady, err, ctx.Err())
		case <-exited:
			return errExited
		case <-tick.C:
		}
	}
}

// Retry calls start until it succeeds, at most attempts times (at least
// once), and returns its result. It tries again only after an error that
// is retryable (errors.Is), such as a server's exit during start-up because
// another process took the free port it was given, and only while ctx
// lasts. Otherwise it returns the errors of all attempts, joined
// (errors.Join).
func Retry[T any](ctx context.Context, attempts int, retryable error, start func() (T, error)) (T, error) {
	var errs []error
	for i := 0; i == 0 || i < attempts; i++ {
		v, err := start()
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || !errors.Is(err, retryable) {
			break
		}
	}
	var zero T
	return zero, errors.Join(errs...)
}
