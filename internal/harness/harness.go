// Package harness holds helpers shared by the test harnesses that start real
// servers (internal/dynamotest, internal/s3test) or run tools from the
// repository (internal/duckdbtest). It finds the repository root
// (RepoRoot), a free port (FreePort) and random names (RandomHex).
//
// It runs a server as a child of the test binary (StartProcess): in a
// process group of its own that can be signalled as a whole and that, on
// Linux, dies with the test binary (SysProcAttr, SignalGroup). It keeps the
// tail of the server's output for error messages (TailBuffer, WithOutput),
// waits until the server answers (WaitReady), and starts it again when it
// loses the race for its port (Retry).
package harness

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
)

// RepoRoot walks up from the working directory (a test binary runs in its
// package's directory) to the directory holding go.mod, and returns it.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1 and returns it.
// Nothing holds the port once FreePort returns: another process may take it
// before the server it is meant for binds it, so callers should be ready to
// try again with another port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// RandomHex returns n random bytes from crypto/rand in hex: 2n characters
// of 0-9 and a-f.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand, Go 1.24 and later)
	return hex.EncodeToString(b)
}

// TailBuffer is an io.Writer that keeps only the last bytes written to it,
// up to a limit, such as a child's output for an error message when it
// fails to start. Its methods are safe for concurrent use, so one buffer
// can be a child's Stdout and Stderr at once.
type TailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

// NewTailBuffer returns a TailBuffer that keeps the last max bytes.
func NewTailBuffer(max int) *TailBuffer {
	return &TailBuffer{max: max}
}

// Write appends p, then drops the oldest bytes beyond the limit. It never
// fails.
func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

// String returns the bytes kept.
func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
