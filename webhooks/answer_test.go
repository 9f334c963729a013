package webhooks

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAnAnswerOfTheLimitIsReadWholeAndOneByteMoreIsNot drives the 4 KiB an
// attempt reads of an endpoint's answer: an answer of exactly 4,096 bytes
// is read to its end and its connection serves the next attempt; one of
// 4,097 is read to 4,096 bytes, the last byte is not, and its connection is
// closed rather than reused.
func TestAnAnswerOfTheLimitIsReadWholeAndOneByteMoreIsNot(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("bytes"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, _ = w.Write([]byte(strings.Repeat("a", n)))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	client := Policy{AllowLoopback: true}.Client(5 * time.Second)

	// attempt answers how much of an answer of n bytes drain read, and
	// whether the attempt opened a new connection.
	attempt := func(t *testing.T, n int) (int, bool) {
		t.Helper()
		before := conns.Load()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/?bytes="+strconv.Itoa(n), nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		counted := countingReader{r: res.Body}
		drain(&counted)
		res.Body.Close()
		return counted.n, conns.Load() != before
	}

	if maxResponseBytes != 4096 {
		t.Fatalf("maxResponseBytes = %d, the documented limit is 4096", maxResponseBytes)
	}
	attempt(t, 0) // opens the connection
	if read, fresh := attempt(t, 4096); read != 4096 || fresh {
		t.Errorf("an answer of 4096 bytes: read %d, on a new connection %v; want 4096 on the open one", read, fresh)
	}
	if read, fresh := attempt(t, 4096); read != 4096 || fresh {
		t.Errorf("after an answer of 4096 bytes: read %d, on a new connection %v; want the connection reused", read, fresh)
	}
	if read, _ := attempt(t, 4097); read != 4096 {
		t.Errorf("an answer of 4097 bytes: read %d, want 4096", read)
	}
	if read, fresh := attempt(t, 0); read != 0 || !fresh {
		t.Errorf("after an answer of 4097 bytes: on a new connection %v, want a new connection (the unread byte ends the old one)", fresh)
	}
}
