package webhooks_test

import (
	"bufio"
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/webhooks"
)

// loopbackListener is a listener on an ephemeral loopback port whose
// connections serve runs, closed with the test.
func loopbackListener(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); serve(c) }()
		}
	}()
	return "http://" + ln.Addr().String() + "/hook"
}

// TestAnEndpointsLogDoesNotTellHowAConnectionFailed delivers one event to
// a port nothing listens on (the connection refused), to a receiver that
// reads the request and closes the connection, and to one that never
// answers: the three attempts are logged alike, "no answer" with no
// latency, so an administrator cannot scan ports through an endpoint's
// log; the server's debug log still names each cause.
func TestAnEndpointsLogDoesNotTellHowAConnectionFailed(t *testing.T) {
	closedPort, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closedPort.Addr().String() + "/hook"
	closedPort.Close()
	closes := loopbackListener(t, func(c net.Conn) {
		_, _ = http.ReadRequest(bufio.NewReader(c))
		c.Close()
	})
	release := make(chan struct{})
	silent := loopbackListener(t, func(c net.Conn) {
		defer c.Close()
		_, _ = http.ReadRequest(bufio.NewReader(c))
		<-release // never answers; closed when the test ends
	})
	t.Cleanup(func() { close(release) })

	r := newEndpointRig(t)
	urls := map[string]string{"wh_refused": refused, "wh_closes": closes, "wh_silent": silent}
	for id, url := range urls {
		r.add(t, id, url)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	r.d.Timeout = 300 * time.Millisecond
	r.d.Log = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.write(t, call("DOC_N", "FUND_A", "100.00"))
	attempts := map[string]fund.WebhookAttempt{}
	r.roundsUntil(t, "an attempt to every endpoint", func() bool {
		for id := range urls {
			if a := r.attemptsOf(t, id, "evt_DOC_N_v1"); len(a) > 0 {
				attempts[id] = a[0]
			}
		}
		return len(attempts) == len(urls)
	})
	for id, a := range attempts {
		if a.Error != webhooks.NoAnswer || a.StatusCode != 0 || a.LatencyMS != 0 {
			t.Errorf("%s (%s): the log says %+v, want %q, no status code, no latency", id, urls[id], a, webhooks.NoAnswer)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"webhook=wh_refused", "webhook=wh_closes", "webhook=wh_silent", "connection refused"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the server's debug log does not say %q:\n%s", want, logs.String())
		}
	}
	for _, url := range urls {
		if strings.Contains(logs.String(), strings.TrimPrefix(url, "http://")+"/hook") {
			t.Errorf("the server's log names an endpoint's URL %s", url)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
