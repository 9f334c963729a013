package multitest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Intercept is called with every DynamoDB request an instance sends when a
// cluster runs with Options.Intercept: the instance's index, the operation
// (such as "TransactWriteItems", from X-Amz-Target) and the JSON body. It
// runs before the request is forwarded and may block, to hold the request
// back while other instances go on; it must not keep body.
type Intercept func(instance int, op string, body []byte)

// startProxy runs a reverse proxy on a loopback port that calls intercept
// for each request of instance i and forwards it to DynamoDB Local; it is
// closed when t ends.
func startProxy(t testing.TB, i int, endpoint string, intercept Intercept) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatalf("DynamoDB endpoint %q: %v", endpoint, err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		intercept(i, op, body)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Hold holds back the first DynamoDB request that matches, once armed,
// until released: a fault point between processes, to make an interleaving
// of two instances happen on purpose. Its Intercept method is an
// Options.Intercept.
type Hold struct {
	mu      sync.Mutex
	match   func(instance int, op string, body []byte) bool
	held    chan struct{}
	release chan struct{}
}

// Arm makes the next request for which match is true wait in Intercept
// until Release. It returns a channel that is closed once that request is
// being held.
func (h *Hold) Arm(match func(instance int, op string, body []byte) bool) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.match, h.held, h.release = match, make(chan struct{}), make(chan struct{})
	return h.held
}

// Release lets the held request go on (or the next matching one pass at
// once, if none was held yet) and disarms the hold.
func (h *Hold) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		close(h.release)
		h.release = nil
	}
	h.match = nil
}

// Intercept holds the first matching request while armed.
func (h *Hold) Intercept(instance int, op string, body []byte) {
	h.mu.Lock()
	if h.match == nil || !h.match(instance, op, body) {
		h.mu.Unlock()
		return
	}
	held, release := h.held, h.release
	h.match = nil // the first match only
	h.mu.Unlock()
	close(held)
	<-release
}
