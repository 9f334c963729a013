package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/s3test"
	"github.com/fundsvc/fundsvc/store"
)

// TestMain runs the tests on the shared DynamoDB Local, then stops MinIO if
// an export test started it.
func TestMain(m *testing.M) {
	code := dynamotest.Main(m)
	s3test.Cleanup()
	os.Exit(code)
}

// poll calls ok until it returns true or the deadline passes.
func poll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func env(t *testing.T, table string) func(string) string {
	vars := map[string]string{
		"FUNDSVC_TABLE":             table,
		"FUNDSVC_DYNAMODB_ENDPOINT": dynamotest.Shared().Endpoint(),
		"FUNDSVC_LISTEN":            "127.0.0.1:0",
		"FUNDSVC_JWT_HS256_SECRET":  "cmd-test-secret-0123456789-abcdefghij",
	}
	return func(k string) string { return vars[k] }
}

func TestTableAndSeedAreIdempotent(t *testing.T) {
	getenv := env(t, dynamotest.UniqueName(t, "cmd"))
	ctx := context.Background()
	for i, want := range []string{"is ready", "is ready"} {
		var out bytes.Buffer
		if err := run(ctx, []string{"table", "create"}, getenv, &out); err != nil || !strings.Contains(out.String(), want) {
			t.Fatalf("table create #%d: %q, %v", i+1, out.String(), err)
		}
	}
	for i, want := range []string{fmt.Sprintf("%d versions written", len(fund.DemoVersions())), "0 versions written"} { // then none
		var out bytes.Buffer
		if err := run(ctx, []string{"seed"}, getenv, &out); err != nil || !strings.Contains(out.String(), want) {
			t.Fatalf("seed #%d: %q, %v; want %q", i+1, out.String(), err, want)
		}
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"table", "describe"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"key PK/SK", "index GSI1: key GSI1PK/GSI1SK", "index GSI2: key GSI2PK/GSI2SK"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBadConfigurationIsRefusedClearly(t *testing.T) {
	base := env(t, "fundsvc")
	cases := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"an unknown command", []string{"launch"}, nil, `unknown command "launch"`},
		{"table without a subcommand", []string{"table"}, nil, "want create or describe"},
		{"an unknown flag", []string{"serve", "--colour"}, nil, "flag provided but not defined"},
		{"a listen address without a port", []string{"serve", "--listen", "localhost"}, nil, "listen"},
		{"an endpoint that is not a URL", []string{"seed"}, map[string]string{"FUNDSVC_DYNAMODB_ENDPOINT": "dynamo:8000"}, "endpoint"},
		{"a table name DynamoDB refuses", []string{"seed", "--table", "a#b"}, nil, "table"},
		{"a non-numeric limit", []string{"serve"}, map[string]string{"FUNDSVC_MAX_POSITIONS": "many"}, "FUNDSVC_MAX_POSITIONS"},
		{"an unknown log level", []string{"serve", "--log-level", "loud"}, nil, "log-level"},
		{"a shutdown timeout shorter than the write timeout", []string{"serve"}, map[string]string{"FUNDSVC_SHUTDOWN_TIMEOUT": "20s"}, "FUNDSVC_SHUTDOWN_TIMEOUT"},
		{"a claim lease no longer than the write timeout", []string{"serve"}, map[string]string{"FUNDSVC_CLAIM_LEASE": "5m"}, "FUNDSVC_CLAIM_LEASE"},
		{"a negative rate limit", []string{"serve"}, map[string]string{"FUNDSVC_RATE_LIMIT": "-1"}, "FUNDSVC_RATE_LIMIT"},
		{"a rate limit that is not a number", []string{"serve"}, map[string]string{"FUNDSVC_RATE_LIMIT": "NaN"}, "FUNDSVC_RATE_LIMIT"},
		{"a rate limit without a burst", []string{"serve"}, map[string]string{"FUNDSVC_RATE_BURST": "0"}, "FUNDSVC_RATE_BURST"},
		{"a negative fan-out concurrency", []string{"serve"}, map[string]string{"FUNDSVC_FANOUT_CONCURRENCY": "-1"}, "FUNDSVC_FANOUT_CONCURRENCY"},
		{"a read header timeout longer than the read timeout", []string{"serve"}, map[string]string{"FUNDSVC_READ_HEADER_TIMEOUT": "2m"}, "FUNDSVC_READ_HEADER_TIMEOUT"},
		{"a zero read header timeout", []string{"serve"}, map[string]string{"FUNDSVC_READ_HEADER_TIMEOUT": "0s"}, "FUNDSVC_READ_HEADER_TIMEOUT"},
		{"a negative drain delay", []string{"serve"}, map[string]string{"FUNDSVC_DRAIN_DELAY": "-1s"}, "FUNDSVC_DRAIN_DELAY"},
		{"a JWKS file without an audience", []string{"serve"}, map[string]string{"FUNDSVC_JWT_JWKS_FILE": "/nonexistent/jwks.json"},
			"FUNDSVC_JWT_JWKS_FILE is set but FUNDSVC_JWT_AUDIENCE is not"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			getenv := func(k string) string {
				if v, ok := c.vars[k]; ok {
					return v
				}
				return base(k)
			}
			err := run(context.Background(), c.args, getenv, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

// TestServeShutsDownGracefully starts the real server with a write held
// at its first DynamoDB write (a WriteHook), begins shutdown while it is held,
// and checks that /readyz fails during the drain delay, that new connections
// are then refused, and that the held write still completes (201, readable
// afterwards) before serve returns.
func TestServeShutsDownGracefully(t *testing.T) {
	table := dynamotest.UniqueName(t, "cmd")
	getenv := withVars(env(t, table), map[string]string{"FUNDSVC_DRAIN_DELAY": "3s"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, []string{"table", "create"}, getenv, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(getenv, nil, config.CmdServe)
	if err != nil {
		t.Fatal(err)
	}
	hook := &dynamotest.WriteHook{}
	st := store.NewStore(store.NewDB(dynamotest.Shared().Config(dynamotest.WithAPIOptions(hook.APIOption()))), table)
	out := &fundtest.SyncBuffer{}
	log := slog.New(slog.NewJSONHandler(out, nil))
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, st, log, out) }()

	addr := regexp.MustCompile(`"addr":"(http://[^"]+)"`)
	var base string
	poll(t, "the listening log line", func() bool {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			return true
		}
		return false
	})
	readyz := func() int {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return -1 // refused
		}
		res.Body.Close()
		return res.StatusCode
	}
	poll(t, "/readyz", func() bool { return readyz() == http.StatusOK })

	held, release := make(chan struct{}), make(chan struct{})
	hook.OnWrite(1, func() { close(held); <-release })
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	body, _ := json.Marshal(map[string]any{"fundId": "FUND_S", "kind": "capital_call_notice", "title": "t", "asOf": "2025-01-31",
		"positions": []map[string]any{{"positionId": "P1", "investorId": "I1", "capitalCall": map[string]any{"amount": "100.00"}}}})
	admin := mint(t, getenv, "--role", "admin", "--funds", "FUND_S")
	status := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, base+"/v1/documents/SHUTDOWN", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- -1
			return
		}
		res.Body.Close()
		status <- res.StatusCode
	}()
	<-held
	cancel()

	poll(t, "/readyz to answer 503 while draining", func() bool { return readyz() == http.StatusServiceUnavailable })
	poll(t, "new connections to be refused once the drain delay is over", func() bool { return readyz() == -1 })
	select {
	case code := <-status:
		t.Fatalf("the held write finished (%d) before it was released", code)
	case err := <-done:
		t.Fatalf("serve returned (%v) while a write was in flight", err)
	default:
	}
	close(release)

	if code := <-status; code != http.StatusCreated {
		t.Fatalf("the write in flight at shutdown ended with %d, want 201", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if !strings.Contains(out.String(), `"msg":"stopped"`) {
		t.Fatalf("no stop log line:\n%s", out.String())
	}
	got, err := store.NewStore(store.NewDB(dynamotest.Shared().Config()), table).As(fund.Operator).LatestDocument(context.Background(), "SHUTDOWN")
	if err != nil || got.Version != 1 {
		t.Fatalf("the write acknowledged at shutdown is not readable at version 1: %+v %v", got, err)
	}
}

// TestShutdownGraceCoversTheWriteTimeout: unless set, the shutdown timeout
// is the longer of the request and write timeouts plus a margin, so a
// write running when SIGTERM comes is not cut off; a shorter one is refused.
func TestShutdownGraceCoversTheWriteTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want time.Duration
	}{
		{"by default it covers the default write timeout", nil, 5*time.Minute + 10*time.Second},
		{"it follows a longer write timeout", map[string]string{"FUNDSVC_WRITE_TIMEOUT": "30m"}, 30*time.Minute + 10*time.Second},
		{"it follows a request timeout longer than the write timeout", map[string]string{"FUNDSVC_REQUEST_TIMEOUT": "10m", "FUNDSVC_WRITE_TIMEOUT": "1m"}, 10*time.Minute + 10*time.Second},
		{"an explicit one at least the write timeout is kept", map[string]string{"FUNDSVC_SHUTDOWN_TIMEOUT": "6m"}, 6 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := config.Load(withVars(env(t, "fundsvc"), tc.vars), nil, config.CmdServe)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ShutdownTimeout != tc.want || cfg.ShutdownTimeout < cfg.WriteTimeout {
				t.Errorf("shutdown timeout %s (write timeout %s), want %s", cfg.ShutdownTimeout, cfg.WriteTimeout, tc.want)
			}
		})
	}
}

// mint runs fundsvc token with args and returns the token it prints.
func mint(t *testing.T, getenv func(string) string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), append([]string{"token"}, args...), getenv, &out); err != nil {
		t.Fatalf("token %v: %v", args, err)
	}
	return strings.TrimSpace(out.String())
}

func TestTokenMintsWhatServeAccepts(t *testing.T) {
	getenv := env(t, "fundsvc")
	cfg, _, err := config.Load(getenv, nil, config.CmdServe)
	if err != nil {
		t.Fatal(err)
	}
	v, err := verifier(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(mint(t, getenv, "--role", "admin", "--funds", "FUND_A,FUND_B"))
	if err != nil || p.Role != "admin" || strings.Join(p.Funds, ",") != "FUND_A,FUND_B" || p.Subject != "dev-admin" {
		t.Fatalf("admin token: %+v %v", p, err)
	}
	p, err = v.Verify(mint(t, getenv, "--role", "investor", "--investor", "INVESTOR_1", "--subject", "portal"))
	if err != nil || p.Role != "investor" || p.Investor != "INVESTOR_1" || p.Subject != "portal" {
		t.Fatalf("investor token: %+v %v", p, err)
	}
	for _, bad := range [][]string{{"--role", "admin"}, {"--role", "investor"}, {"--role", "root", "--funds", "*"}, {"--role", "investor", "--investor", "A#B"}} {
		if err := run(context.Background(), append([]string{"token"}, bad...), getenv, &bytes.Buffer{}); err == nil {
			t.Errorf("token %v was minted", bad)
		}
	}
	noSecret := func(k string) string {
		if k == "FUNDSVC_JWT_HS256_SECRET" {
			return ""
		}
		return getenv(k)
	}
	if err := run(context.Background(), []string{"token", "--role", "admin", "--funds", "*"}, noSecret, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "FUNDSVC_JWT_HS256_SECRET") {
		t.Fatalf("without a secret: %v", err)
	}
	if err := run(context.Background(), []string{"serve"}, noSecret, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no token keys") {
		t.Fatalf("serve without keys: %v", err)
	}
}

func TestServeSetsTheGCTargetUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	for _, c := range []struct {
		gogc string
		want int
	}{{"", serveGCPercent}, {"50", 100}, {"off", 100}} {
		debug.SetGCPercent(100)
		tuneGC(func(name string) string {
			if name == "GOGC" {
				return c.gogc
			}
			return ""
		})
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", c.gogc, got, c.want)
		}
	}
}

// TestSeedResetRestoresTheDemo: seed --reset (make reset-demo) deletes what
// was written beside the demo and seeds it again, on DynamoDB Local; on a
// non-loopback endpoint it refuses before touching anything.
func TestSeedResetRestoresTheDemo(t *testing.T) {
	fe := fundtest.New(t)
	fe.Seed(t)
	getenv := env(t, fe.Table)
	d := fund.Document{ID: "EXTRA", DocumentFields: fund.DocumentFields{FundID: "FUND_A", Kind: fund.KindCapitalCallNotice, Title: "t", AsOf: fund.MustDate("2026-01-31")}}
	if _, err := fe.Store.Restate(t.Context(), d, nil); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"seed", "--reset"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("reset table %s to the demo dataset: %d versions written\n", fe.Table, len(fund.DemoVersions())); out.String() != want {
		t.Errorf("seed --reset printed %q, want %q", out.String(), want)
	}
	if _, err := fe.Store.As(fund.Operator).LatestDocument(t.Context(), "EXTRA"); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Errorf("the document written beside the demo survived the reset: %v", err)
	}
	if _, err := fe.Store.As(fund.Operator).LatestDocument(t.Context(), "DOC001"); err != nil {
		t.Errorf("the demo after the reset: %v", err)
	}
	err := run(t.Context(), []string{"seed", "--reset", "--endpoint", "http://dynamodb.example.com:8000"}, getenv, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "refusing to reset table") {
		t.Errorf("seed --reset on a remote endpoint: %v", err)
	}
}
