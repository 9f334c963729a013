package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// closedEndpoint is an http:// URL on a loopback port nothing listens on
// (it was free a moment ago, and the kernel does not hand it out again at
// once).
func closedEndpoint(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// startServe runs serve in the background with getenv and args; the
// returned channel gives its error when it returns.
func startServe(t *testing.T, ctx context.Context, getenv func(string) string, args ...string) (*fundtest.SyncBuffer, <-chan error) {
	t.Helper()
	out := &fundtest.SyncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), getenv, out) }()
	return out, done
}

// listeningAddr polls out for serve's "listening" line and returns its URL.
func listeningAddr(t *testing.T, out *fundtest.SyncBuffer, done <-chan error) string {
	t.Helper()
	addr := regexp.MustCompile(`"msg":"listening","addr":"(http://[^"]+)"`)
	var base string
	poll(t, "the listening log line", func() bool {
		select {
		case err := <-done:
			t.Fatalf("serve returned %v before listening:\n%s", err, out.String())
		default:
		}
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			return true
		}
		return false
	})
	return base
}

// TestServeChecksItsTableAtStart: serve exits at once, saying what is
// wrong and what to do, when DynamoDB does not answer or the table does not
// exist; with --wait-for-table it waits for the table and then serves.
func TestServeChecksItsTableAtStart(t *testing.T) {
	t.Run("DynamoDB not reachable: serve exits within seconds, naming the endpoint", func(t *testing.T) {
		endpoint := closedEndpoint(t)
		getenv := withVars(env(t, "fundsvc"), map[string]string{"FUNDSVC_DYNAMODB_ENDPOINT": endpoint})
		began := time.Now()
		err := run(t.Context(), []string{"serve"}, getenv, io.Discard)
		elapsed := time.Since(began)
		if err == nil {
			t.Fatal("serve started")
		}
		for _, want := range []string{"DynamoDB at " + endpoint + " is not reachable", "connection refused", "is DynamoDB Local running? (make run starts one"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if elapsed > 5*time.Second {
			t.Errorf("serve took %s to give up on a closed port, want a few seconds at most", elapsed)
		}
	})

	t.Run("the table missing: serve exits, saying to create it", func(t *testing.T) {
		table := dynamotest.UniqueName(t, "nosuch")
		err := run(t.Context(), []string{"serve"}, env(t, table), io.Discard)
		if err == nil || err.Error() != "table "+table+" does not exist: run fundsvc table create" {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("--wait-for-table waits for the table, then serves", func(t *testing.T) {
		table := dynamotest.UniqueName(t, "later")
		getenv := env(t, table)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		out, done := startServe(t, ctx, getenv, "--wait-for-table", "2m")
		poll(t, "serve to say it waits for the table", func() bool {
			return strings.Contains(out.String(), `"msg":"waiting for the table"`) && strings.Contains(out.String(), "table "+table+" does not exist")
		})
		if strings.Contains(out.String(), `"msg":"listening"`) {
			t.Fatal("serve listened before its table existed")
		}
		if err := run(t.Context(), []string{"table", "create"}, getenv, io.Discard); err != nil {
			t.Fatal(err)
		}
		base := listeningAddr(t, out, done)
		if res, err := http.Get(base + "/readyz"); err != nil || res.StatusCode != http.StatusOK {
			t.Errorf("/readyz once serving: %v %v", res, err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

// proxy forwards TCP connections to target until stopped; stopping it
// closes its listener and every connection, so that the port then refuses
// connections as a stopped DynamoDB Local's does.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(p.stop)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) endpoint() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestRequestsAnswer503SoonWhenDynamoDBRefuses: once DynamoDB refuses
// connections, a /v1 request is answered 503 within seconds (not after the
// request timeout), with the reason, and /readyz says why it is not ready.
func TestRequestsAnswer503SoonWhenDynamoDBRefuses(t *testing.T) {
	fe := fundtest.New(t)
	fe.Seed(t)
	p := startProxy(t, strings.TrimPrefix(dynamotest.Shared().Endpoint(), "http://"))
	getenv := withVars(env(t, fe.Table), map[string]string{"FUNDSVC_DYNAMODB_ENDPOINT": p.endpoint()})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out, done := startServe(t, ctx, getenv)
	base := listeningAddr(t, out, done)
	admin := mint(t, getenv, "--role", "admin", "--funds", "*")
	get := func(path string) (int, map[string]any, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		began := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body, time.Since(began)
	}
	if code, body, _ := get("/v1/documents/DOC001"); code != http.StatusOK {
		t.Fatalf("before: %d %v", code, body)
	}

	p.stop()
	code, body, took := get("/v1/documents/DOC001")
	if code != http.StatusServiceUnavailable || body["detail"] != "DynamoDB is not reachable" {
		t.Errorf("with DynamoDB refusing: %d %v, want 503 saying DynamoDB is not reachable", code, body)
	}
	if took > 5*time.Second {
		t.Errorf("the 503 took %s, want a few seconds at most (the request timeout is 60s)", took)
	}
	if code, body, _ := get("/readyz"); code != http.StatusServiceUnavailable || body["detail"] != "DynamoDB is not reachable" {
		t.Errorf("/readyz: %d %v", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestCommandsReadTheStackFile: with nothing else set, a command takes the
// stack file's settings and says so on standard error, one line, without
// the secret; a variable set beside it wins and is not reported.
func TestCommandsReadTheStackFile(t *testing.T) {
	table := dynamotest.UniqueName(t, "stack")
	secret := "stack-file-secret-0123456789abcdefghij"
	stack := filepath.Join(t.TempDir(), "stack.env")
	body := "# make run\nFUNDSVC_DYNAMODB_ENDPOINT=" + dynamotest.Shared().Endpoint() + "\nFUNDSVC_TABLE=" + table +
		"\nFUNDSVC_REGION=us-east-1\nFUNDSVC_LISTEN=127.0.0.1:0\nFUNDSVC_JWT_HS256_SECRET=" + secret + "\n"
	if err := os.WriteFile(stack, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"FUNDSVC_STACK_FILE": stack}
	getenv := func(k string) string { return vars[k] }
	runWith := func(args ...string) (stdout, stderr string, err error) {
		var o, e bytes.Buffer
		p := Program{Stderr: &e}
		err = p.Run(t.Context(), args, getenv, &o)
		return o.String(), e.String(), err
	}

	out, notice, err := runWith("table", "create")
	if err != nil || out != "table "+table+" is ready\n" {
		t.Fatalf("table create from the stack file: %q %v", out, err)
	}
	if strings.Count(notice, "\n") != 1 || !strings.Contains(notice, stack) ||
		!strings.Contains(notice, "FUNDSVC_DYNAMODB_ENDPOINT="+dynamotest.Shared().Endpoint()) || !strings.Contains(notice, "FUNDSVC_TABLE="+table) {
		t.Errorf("notice %q: want one line naming the file, the endpoint and the table", notice)
	}
	out, notice, err = runWith("token", "--role", "admin", "--funds", "*")
	if err != nil || !strings.Contains(notice, "FUNDSVC_JWT_HS256_SECRET=(secret)") || strings.Contains(notice, secret) || strings.Contains(notice, "FUNDSVC_TABLE") {
		t.Fatalf("token: %q, notice %q, %v", out, notice, err)
	}

	vars["FUNDSVC_TABLE"] = dynamotest.UniqueName(t, "other")
	_, notice, err = runWith("table", "describe")
	if err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(notice, "FUNDSVC_TABLE") {
		t.Errorf("FUNDSVC_TABLE beside the stack file: err %v, notice %q: want the variable's table, not reported", err, notice)
	}
	vars["FUNDSVC_STACK_FILE"] = filepath.Join(t.TempDir(), "missing.env")
	if _, _, err := runWith("table", "describe"); err == nil || !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a FUNDSVC_STACK_FILE that does not exist: %v", err)
	}
}
