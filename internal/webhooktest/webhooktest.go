// Package webhooktest runs a webhook receiver for tests: a Node.js server
// (receiver.mjs) that verifies every delivery with the Standard Webhooks
// reference library (npm standardwebhooks, pinned in tools/package.json),
// not with this project's code, on an ephemeral loopback port.
package webhooktest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/harness"
)

// Receiver is a running receiver.
type Receiver struct {
	URL string // where to deliver: http://127.0.0.1:PORT/hook
	pid int
}

// Delivery is one request the receiver got.
type Delivery struct {
	At           int64    `json:"at"` // Unix milliseconds
	Path         string   `json:"path"`
	Mode         string   `json:"mode"` // how it was answered: ok, fail, gone, down
	ID           string   `json:"id"`
	Timestamp    string   `json:"timestamp"`
	Signature    string   `json:"signature"`
	VerifiedWith []int    `json:"verifiedWith"` // the indexes of the secrets that verify it
	Errors       []string `json:"errors"`
	Body         string   `json:"body"`
}

// Start starts a receiver verifying with secrets, answering 204, until t ends.
func Start(t testing.TB, secrets ...string) *Receiver {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tools", "node_modules", "standardwebhooks", "package.json")); err != nil {
		t.Fatalf("webhooktest: npm standardwebhooks is not installed in tools/node_modules: run `make tools`")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("webhooktest: Node.js is needed: %v", err)
	}
	_, self, _, _ := callerFile()
	cmd := exec.Command(node, filepath.Join(filepath.Dir(self), "receiver.mjs"), root)
	stdout, pw := io.Pipe()
	cmd.Stdout = pw
	exited, out, err := harness.StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { harness.StopGroup(cmd.Process.Pid, exited, 2*time.Second); pw.Close() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() { // drained to the end, so the receiver never blocks on writing
			if first {
				lines <- sc.Text()
				close(lines)
				first = false
			}
		}
		if first {
			close(lines)
		}
	}()
	var ready struct{ Port int }
	select {
	case l, ok := <-lines:
		if !ok || json.Unmarshal([]byte(l), &ready) != nil || ready.Port == 0 {
			t.Fatalf("webhooktest: the receiver did not start: %q %s", l, out)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("webhooktest: the receiver did not start within 20s: %s", out)
	}
	r := &Receiver{URL: fmt.Sprintf("http://127.0.0.1:%d/hook", ready.Port), pid: cmd.Process.Pid}
	r.Set(t, secrets, "ok", 0)
	return r
}

// Set changes the secrets the receiver verifies with (nil keeps them) and
// how it answers: ok (204 when a secret verifies, 400 otherwise), fail
// (500, with Retry-After when retryAfter > 0), gone (410) or down (the
// connection dropped).
func (r *Receiver) Set(t testing.TB, secrets []string, mode string, retryAfter int) {
	t.Helper()
	r.SetDelay(t, secrets, mode, retryAfter, 0)
}

// SetDelay is Set, and in mode ok the answer comes after delay.
func (r *Receiver) SetDelay(t testing.TB, secrets []string, mode string, retryAfter int, delay time.Duration) {
	t.Helper()
	c := map[string]any{"mode": mode, "delayMs": delay.Milliseconds()}
	if secrets != nil {
		c["secrets"] = secrets
	}
	if retryAfter > 0 {
		c["retryAfter"] = retryAfter
	}
	b, _ := json.Marshal(c)
	res, err := http.Post(r.base()+"/_control", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("webhooktest: control: %v", err)
	}
	res.Body.Close()
}

// Log returns every request received so far, in order.
func (r *Receiver) Log(t testing.TB) []Delivery {
	t.Helper()
	res, err := http.Get(r.base() + "/_log")
	if err != nil {
		t.Fatalf("webhooktest: log: %v", err)
	}
	defer res.Body.Close()
	var out []Delivery
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("webhooktest: log: %v", err)
	}
	return out
}

func (r *Receiver) base() string { return r.URL[:len(r.URL)-len("/hook")] }
