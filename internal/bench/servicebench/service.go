package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/internal/harness"
)

const (
	readyTimeout = 30 * time.Second
	// clientTimeout is longer than the service's deadlines (60s for a read,
	// 5 minutes for a write by default), so the service's answer is measured,
	// not the client giving up.
	clientTimeout = 6 * time.Minute
	stopGrace     = 25 * time.Second // the service's shutdown timeout is 20s
)

// service is `fundsvc serve` running as a child process on a loopback
// port, with an admin token for every fund.
type service struct {
	base   string // http://127.0.0.1:PORT
	token  string
	client *http.Client

	cmd    *exec.Cmd
	exited <-chan struct{}
	out    fmt.Stringer // the tail of its output, for errors

	// notReady says why the service was measured without /readyz ever
	// answering 200; empty when it did.
	notReady string
}

// benchSubject is the subject of the bench's token, and so the creator of
// the webhook endpoints it subscribes.
const benchSubject = "servicebench"

var errServiceExited = errors.New("fundsvc exited during start-up")

// serviceConfig is how to run the service.
type serviceConfig struct {
	bin, endpoint, table string
	log                  *os.File      // gets the service's output (a temporary file when nil)
	requestTimeout       time.Duration // FUNDSVC_REQUEST_TIMEOUT; zero for the service's default
	writeTimeout         time.Duration // FUNDSVC_WRITE_TIMEOUT; zero for the service's default
}

// startService runs `fundsvc serve` against the table on DynamoDB Local,
// with a fresh random token secret, and returns once /readyz answers 200.
// The caller must call stop.
func startService(ctx context.Context, sc serviceConfig) (*service, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(),
		// Nothing from make run's stack file (.data/stack.env in the
		// checkout the bench runs from): its FUNDSVC_FEED_SETTLE of 5s is
		// for one writer, and the raw baseline writes from this process,
		// so webhook events went undelivered.
		"FUNDSVC_STACK_FILE=/dev/null",
		"FUNDSVC_LISTEN=127.0.0.1:"+strconv.Itoa(port),
		"FUNDSVC_DYNAMODB_ENDPOINT="+sc.endpoint,
		"FUNDSVC_TABLE="+sc.table,
		"FUNDSVC_JWT_HS256_SECRET="+harness.RandomHex(32),
		// One token drives the whole load: the per-principal rate limit
		// would measure 429s, not the service.
		"FUNDSVC_RATE_LIMIT=0",
		// Webhooks on, as in production, with the receiver the bench
		// subscribes (an http:// loopback URL) allowed.
		"FUNDSVC_WEBHOOK_SECRET_KEY="+webhookKey(),
		"FUNDSVC_WEBHOOK_ALLOW_LOOPBACK=true",
	)
	if sc.requestTimeout > 0 {
		env = append(env, "FUNDSVC_REQUEST_TIMEOUT="+sc.requestTimeout.String())
	}
	if sc.writeTimeout > 0 {
		env = append(env, "FUNDSVC_WRITE_TIMEOUT="+sc.writeTimeout.String())
	}
	token, err := mintToken(ctx, sc.bin, env)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(sc.bin, "serve")
	cmd.Env = env
	// The service logs a line per request, to a file it writes itself: a
	// pipe copied by this process would wake one of its goroutines per
	// request, on the API side of every comparison only.
	log := sc.log
	if log == nil {
		if log, err = os.CreateTemp("", "servicebench-fundsvc-*.log"); err != nil {
			return nil, err
		}
		defer os.Remove(log.Name()) // the child keeps its descriptor; the tail reads by name while it lives
		defer log.Close()
	}
	exited, out, err := harness.StartProcessToFile(cmd, log)
	if err != nil {
		return nil, err
	}
	s := &service{
		base: "http://127.0.0.1:" + strconv.Itoa(port), token: token,
		client: benchClient(),
		cmd:    cmd, exited: exited, out: out,
	}
	wctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	last := "no answer" // the last answer that was not 200
	err = harness.WaitReady(wctx, 50*time.Millisecond, exited, errServiceExited, "no 200 from /readyz", func(ctx context.Context) error {
		start := time.Now()
		status, _, body, err := s.do(ctx, http.MethodGet, "/readyz", nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("/readyz answered %d", status)
			last = fmt.Sprintf("%d after %s: %s", status, time.Since(start).Round(10*time.Millisecond), truncate(body, 200))
		}
		return err
	})
	if err != nil && s.live(ctx) {
		// /readyz gives its check of the table 2s; a DynamoDB Local busy
		// with a large table can take longer. A live service is measured
		// all the same, and the report says so.
		s.notReady = fmt.Sprintf("/readyz did not answer 200 within %s (last answer: %s); measured anyway, since /livez answered 200", readyTimeout, last)
		fmt.Println("warning:", s.notReady)
		err = nil
	}
	if err != nil {
		s.stop()
		return nil, harness.WithOutput(fmt.Errorf("start %s serve: %w", sc.bin, err), "fundsvc", out)
	}
	return s, nil
}

// benchClient is the bench's HTTP client of a server: enough idle
// connections for every worker, so that no request pays for a new
// connection.
func benchClient() *http.Client {
	return &http.Client{Timeout: clientTimeout, Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}}
}

// live reports whether the service still runs and answers /livez.
func (s *service) live(ctx context.Context) bool {
	select {
	case <-s.exited:
		return false
	default:
	}
	status, _, _, err := s.do(ctx, http.MethodGet, "/livez", nil)
	return err == nil && status == http.StatusOK
}

// mintToken runs `fundsvc token` for an admin of every fund, with the
// secret the service verifies with.
func mintToken(ctx context.Context, bin string, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "token", "--role", "admin", "--funds", "*", "--subject", benchSubject, "--ttl", "12h")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s token: %w: %s", bin, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// stop sends SIGTERM, lets in-flight requests finish and waits for the
// process to exit, killing it if it takes longer than its own shutdown
// timeout.
func (s *service) stop() { harness.StopGroup(s.cmd.Process.Pid, s.exited, stopGrace) }

// do sends one request with the admin token and reads the whole response.
// It returns the status, the ETag's version (0 if none) and the body.
func (s *service) do(ctx context.Context, method, path string, body []byte) (int, int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, r)
	if err != nil {
		return 0, 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, 0, nil, fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	version, _ := strconv.Atoi(strings.Trim(resp.Header.Get("ETag"), `"`))
	return resp.StatusCode, version, b, nil
}

// expect sends a request and fails unless the answer has the given status.
func (s *service) expect(ctx context.Context, status int, method, path string, body []byte) (int, []byte, error) {
	got, version, b, err := s.do(ctx, method, path, body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if got != status {
		return 0, nil, fmt.Errorf("%s %s: status %d, want %d: %s", method, path, got, status, truncate(b, 300))
	}
	return version, b, nil
}

// webhookKey is a fresh AES-256 key for FUNDSVC_WEBHOOK_SECRET_KEY: 32
// random bytes in standard base64.
func webhookKey() string {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24 and later)
	return base64.StdEncoding.EncodeToString(key)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
