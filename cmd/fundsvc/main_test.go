package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/s3test"
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
	for i, want := range []string{"3 versions written", "0 versions written"} {
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

// TestServeShutsDownGracefully starts the real server, waits for /readyz,
// sends a large write, cancels while it is in flight, and checks the write
// still completes before run returns.
func TestServeShutsDownGracefully(t *testing.T) {
	table := dynamotest.UniqueName(t, "cmd")
	getenv := env(t, table)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, []string{"table", "create"}, getenv, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out := &fundtest.SyncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, getenv, out) }()

	addr := regexp.MustCompile(`"addr":"(http://[^"]+)"`)
	var base string
	poll(t, "the listening log line", func() bool {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			return true
		}
		return false
	})
	poll(t, "/readyz", func() bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	var positions []map[string]any
	for i := 0; i < 300; i++ {
		positions = append(positions, map[string]any{"positionId": fmt.Sprintf("P%d", i), "investorId": fmt.Sprintf("I%d", i),
			"capitalCall": map[string]any{"amount": "100.00"}})
	}
	body, _ := json.Marshal(map[string]any{"fundId": "FUND_S", "kind": "capital_call_notice", "title": "t", "asOf": "2025-01-31", "positions": positions})
	status := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, base+"/v1/documents/SHUTDOWN", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+mint(t, getenv, "--role", "admin", "--funds", "FUND_S"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- -1
			return
		}
		res.Body.Close()
		status <- res.StatusCode
	}()
	// Wait until the write is under way: it registers the fund first.
	raw := dynamodb.NewFromConfig(dynamotest.Shared().Config())
	poll(t, "the write to start", func() bool {
		got, err := raw.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: fund.FundPK("FUND_S")}, "SK": &types.AttributeValueMemberS{Value: fund.FundSK}}})
		return err == nil && got.Item != nil
	})
	cancel()

	select {
	case code := <-status:
		t.Fatalf("the write finished (%d) before shutdown began; the test proves nothing", code)
	default:
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if code := <-status; code != http.StatusCreated {
		t.Fatalf("in-flight write ended with %d, want 201", code)
	}
	if _, err := http.Get(base + "/livez"); err == nil {
		t.Fatal("the server still accepts connections after shutdown")
	}
	if !strings.Contains(out.String(), `"msg":"stopped"`) {
		t.Fatalf("no stop log line:\n%s", out.String())
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
	cfg, _, err := config.Load(getenv, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err := verifier(cfg)
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
