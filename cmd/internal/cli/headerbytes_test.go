package cli

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
)

// TestRequestHeadersOfTheLimitAreReadAndMoreAre431 drives the header limit
// of serve's two listeners: MaxHeaderBytes (64 KiB on the API's, 16 KiB on
// the metrics listener) plus the 4,096 bytes Go's server reads beyond it.
// A request whose request line and headers take exactly that many bytes is
// answered by its route; one byte more is 431 from Go's server.
func TestRequestHeadersOfTheLimitAreReadAndMoreAre431(t *testing.T) {
	table := dynamotest.UniqueName(t, "cmd")
	getenv := withVars(env(t, table), map[string]string{"FUNDSVC_METRICS_LISTEN": "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, []string{"table", "create"}, getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	out, done := startServe(t, ctx, getenv)
	base := listeningAddr(t, out, done)
	var metrics string
	metricsAddr := regexp.MustCompile(`"msg":"serving metrics","addr":"http://(127\.0\.0\.1:[0-9]+)/metrics"`)
	poll(t, "the metrics listener's log line", func() bool {
		if m := metricsAddr.FindStringSubmatch(out.String()); m != nil {
			metrics = m[1]
			return true
		}
		return false
	})
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	// send writes a GET of path whose request line and headers (with the
	// blank line ending them) are exactly n bytes, and answers the status.
	send := func(t *testing.T, addr, path string, n int) int {
		t.Helper()
		head := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\nX-Pad: "
		const tail = "\r\n\r\n"
		req := head + strings.Repeat("p", n-len(head)-len(tail)) + tail
		if len(req) != n {
			t.Fatalf("built %d bytes, want %d", len(req), n)
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%d header bytes to %s: %v", n, path, err)
		}
		res.Body.Close()
		return res.StatusCode
	}

	api := strings.TrimPrefix(base, "http://")
	for _, tc := range []struct {
		listener, addr, path string
		limit                int
	}{
		{"API", api, "/livez", 64<<10 + 4096},
		{"metrics", metrics, "/metrics", 16<<10 + 4096},
	} {
		if status := send(t, tc.addr, tc.path, tc.limit); status != http.StatusOK {
			t.Errorf("%s listener, %d header bytes: %d, want 200", tc.listener, tc.limit, status)
		}
		if status := send(t, tc.addr, tc.path, tc.limit+1); status != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("%s listener, %d header bytes: %d, want 431", tc.listener, tc.limit+1, status)
		}
	}
}
