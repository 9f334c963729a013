package webhooks

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSignatureMatchesTheStandardWebhooksVector(t *testing.T) {
	// The specification's test vector (standard-webhooks, Svix).
	got, err := Signature([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	two, err := Signature([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", NewSecret()}, "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if parts := strings.Split(two, " "); len(parts) != 2 || parts[0] != got || !strings.HasPrefix(parts[1], "v1,") || parts[1] == got {
		t.Errorf("two secrets: %q, want the first's signature then another, space-separated", two)
	}
}

func TestSealedSecretsOpenOnlyForTheirEndpointAndKey(t *testing.T) {
	s, err := NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	secret := NewSecret()
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 30 {
		t.Fatalf("secret %q", secret)
	}
	sealed := s.Seal("wh_1", secret)
	if strings.Contains(string(sealed), strings.TrimPrefix(secret, "whsec_")) {
		t.Fatal("the sealed secret holds the secret in clear")
	}
	if got, err := s.Open("wh_1", sealed); err != nil || got != secret {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := s.Open("wh_2", sealed); err == nil {
		t.Error("a secret sealed for wh_1 opened for wh_2")
	}
	other, _ := NewSealer([]byte("fedcba9876543210fedcba9876543210"))
	if _, err := other.Open("wh_1", sealed); err == nil {
		t.Error("a secret opened with another key")
	}
}

func TestTheScheduleBacksOffWithJitterAndHonoursRetryAfter(t *testing.T) {
	none := func() float64 { return 0 }
	full := func() float64 { return 0.999 }
	for i, want := range []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour} {
		got, ok := nextDelay(DefaultSchedule, i+1, 0, none)
		if !ok || got != want {
			t.Errorf("after failure %d: %s %v, want %s", i+1, got, ok, want)
		}
		if j, _ := nextDelay(DefaultSchedule, i+1, 0, full); j <= want || j > want+want/10 {
			t.Errorf("after failure %d with jitter: %s, want within 10%% above %s", i+1, j, want)
		}
	}
	if _, ok := nextDelay(DefaultSchedule, len(DefaultSchedule), 0, none); ok {
		t.Error("the schedule did not run out after its last attempt")
	}
	if got, _ := nextDelay(DefaultSchedule, 1, 10*time.Minute, none); got != 10*time.Minute {
		t.Errorf("Retry-After 10m over a 5s wait: %s", got)
	}
	if got, _ := nextDelay(DefaultSchedule, 2, 10*time.Second, none); got != 5*time.Minute {
		t.Errorf("a shorter Retry-After must not shorten the wait: %s", got)
	}
	if got, _ := nextDelay(DefaultSchedule, 1, 72*time.Hour, none); got != 24*time.Hour {
		t.Errorf("Retry-After is bounded to a day: %s", got)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{"120": 2 * time.Minute, now.Add(time.Hour).Format(http.TimeFormat): time.Hour, "soon": 0, "-5": 0} {
		if got := retryAfter(http.Header{"Retry-After": {v}}, now); got != want {
			t.Errorf("Retry-After %q: %s, want %s", v, got, want)
		}
	}
}

func TestThePolicyRefusesPrivateLoopbackLinkLocalAndMetadataAddresses(t *testing.T) {
	for addr, allowed := range map[string]bool{
		"93.184.216.34": true, "2606:2800:220:1:248:1893:25c8:1946": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fd00:ec2::254": false, "fe80::1": false, "100.100.100.200": false,
		"0.0.0.0": false, "::": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "224.0.0.1": false,
	} {
		err := Policy{}.CheckAddress(netip.MustParseAddr(addr))
		if (err == nil) != allowed {
			t.Errorf("%s: %v, want allowed %v", addr, err, allowed)
		}
	}
	dev := Policy{AllowLoopback: true}
	if err := dev.CheckAddress(netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Errorf("the development setting refuses loopback: %v", err)
	}
	if err := dev.CheckAddress(netip.MustParseAddr("169.254.169.254")); err == nil {
		t.Error("the development setting allows the metadata address")
	}
	for url, ok := range map[string]bool{
		"https://hooks.example.com/x": true, "http://hooks.example.com/x": false, "ftp://example.com": false,
		"https://user:pw@example.com/": false, "https://10.0.0.1/x": false, "https://169.254.169.254/latest": false,
		"http://127.0.0.1:9/x": false, "/relative": false,
	} {
		if msg := (Policy{}).CheckURL(url); (msg == "") != ok {
			t.Errorf("%s: %q, want accepted %v", url, msg, ok)
		}
	}
	if msg := dev.CheckURL("http://127.0.0.1:9/x"); msg != "" {
		t.Errorf("development: http to loopback refused: %s", msg)
	}
	if msg := dev.CheckURL("http://hooks.example.com/x"); msg == "" {
		t.Error("development: plain http to a public host accepted")
	}
}

func TestTheClientRefusesAtConnectTimeFollowsNoRedirectAndReadsLittle(t *testing.T) {
	var hits, target atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/target", http.StatusFound)
		case "/target":
			target.Add(1)
		case "/endless":
			w.WriteHeader(http.StatusOK)
			buf := make([]byte, 64<<10)
			for i := 0; i < 2000; i++ { // 128 MiB unless the client stops reading
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()

	// A name (not a literal address) passes the URL check and is refused
	// when it resolves to loopback: what DNS rebinding would do.
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if msg := (Policy{}).CheckURL(strings.Replace(localhost, "http:", "https:", 1)); msg != "" {
		t.Fatalf("https://localhost is refused by the URL check already (%s): the test would not reach the dialer", msg)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, localhost+"/target", nil)
	if _, err := (Policy{}).Client(5 * time.Second).Do(req); !errors.Is(err, ErrRefusedAddress) {
		t.Errorf("a name resolving to loopback: %v, want ErrRefusedAddress", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the refused connection reached the server")
	}

	dev := Policy{AllowLoopback: true}.Client(5 * time.Second)
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/redirect", nil)
	res, err := dev.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || target.Load() != 0 {
		t.Errorf("redirect: status %d, target hit %d times; want the 302 itself and no request to its Location", res.StatusCode, target.Load())
	}

	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/endless", nil)
	begin := time.Now()
	res, err = dev.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var counted countingReader
	counted.r = res.Body
	drain(&counted)
	res.Body.Close()
	if counted.n > maxResponseBytes {
		t.Errorf("read %d bytes of the answer, want at most %d", counted.n, maxResponseBytes)
	}
	if time.Since(begin) > 4*time.Second {
		t.Errorf("an endless answer held the attempt for %s", time.Since(begin))
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
