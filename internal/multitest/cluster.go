// Package multitest runs several real `fundsvc serve` processes on one table
// of the shared DynamoDB Local, the way production runs two or more instances
// behind a load balancer, and gives tests a client that spreads requests
// across them. The guarantees of docs/commit-protocol.md and
// docs/threat-model.md must hold across processes, where nothing kept inside
// one process (the writers' turns, a token cache) helps; these tests are
// where that is proven.
//
// A test package runs its tests through Main, which builds the binary once
// for the whole test binary:
//
//	func TestMain(m *testing.M) { os.Exit(multitest.Main(m)) }
//
// and each test starts its own cluster on its own table:
//
//	c := multitest.Start(t, multitest.Options{Instances: 3})
//	admin := c.Client(c.AdminToken(t, "FUND_A"))
package multitest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/harness"
	"github.com/fundsvc/fundsvc/store"
)

const (
	// buildTimeout bounds `go build` of the binary on a busy machine.
	buildTimeout = 5 * time.Minute
	// readyTimeout bounds one instance's start until /readyz answers 200.
	readyTimeout = 30 * time.Second
	// requestTimeout is the instances' deadline of a read and of a write
	// (FUNDSVC_REQUEST_TIMEOUT, FUNDSVC_WRITE_TIMEOUT): no request of these
	// tests should take near it. The shutdown timeout must be longer than
	// both, so that no request in flight is cut off; stopGrace lets the
	// instances use it before their process groups are killed. An idle
	// instance stops at once.
	requestTimeout  = 30 * time.Second
	shutdownTimeout = requestTimeout + 10*time.Second
	stopGrace       = shutdownTimeout + 5*time.Second
	// startAttempts covers another process taking the free port between
	// FreePort and the instance binding it.
	startAttempts = 3
	// clientTimeout is longer than any request a test makes should take,
	// and shorter than a test's patience.
	clientTimeout = time.Minute
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Main runs a test binary's tests on the shared DynamoDB Local (see
// dynamotest.Main) and removes the fundsvc binary built for them afterwards.
// It returns the exit code, for TestMain.
func Main(m *testing.M) int {
	code := dynamotest.Main(m)
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	return code
}

// Binary returns the path of a fundsvc binary built from this repository's
// ./cmd/fundsvc, building it on the first call of the test binary run. It
// fails t if the build fails.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { buildBin, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("build fundsvc: %v", buildErr)
	}
	return buildBin
}

// PoisonStackFile points FUNDSVC_STACK_FILE at a file no fundsvc command
// accepts, for the rest of t: a fundsvc started meanwhile that reads a
// stack file rather than ignoring it fails.
func PoisonStackFile(t *testing.T) {
	stack := filepath.Join(t.TempDir(), "stack.env")
	if err := os.WriteFile(stack, []byte("not a setting\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUNDSVC_STACK_FILE", stack)
}

func build() (string, error) {
	root, err := harness.RepoRoot()
	if err != nil {
		return "", err
	}
	buildDir, err = os.MkdirTemp("", "multitest-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(buildDir, "fundsvc")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/fundsvc")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/fundsvc: %w\n%s", err, out)
	}
	return bin, nil
}

// Options say how to run a cluster.
type Options struct {
	// Instances is how many `fundsvc serve` processes to run; at least 2
	// (the default).
	Instances int
	// Env adds to or overrides the environment of every instance, such as
	// FUNDSVC_MAX_POSITIONS.
	Env map[string]string
	// Intercept, when set, puts a proxy between each instance and DynamoDB
	// Local that calls it with every request (see Hold).
	Intercept Intercept
}

// Cluster is several `fundsvc serve` processes on one table, sharing one
// HS256 secret (a token minted once works on every instance) and one cursor
// key (a cursor issued by one instance continues on another).
type Cluster struct {
	// Table is the cluster's own table on the shared DynamoDB Local.
	Table string
	// Store reads and writes the same table directly, for checks that the
	// API cannot express (such as whether an overview fell back to the
	// version partition).
	Store *store.Store

	bin       string
	env       []string
	instances []*instance
	http      *http.Client
	next      atomic.Uint64 // round robin over instances, shared by every client
}

// instance is one running `fundsvc serve`.
type instance struct {
	base   string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	exited <-chan struct{}
	out    *harness.TailBuffer
}

var errExited = errors.New("fundsvc exited during start-up")

// Start creates a table for t, starts o.Instances processes on it, each
// listening on a free loopback port, and returns once every one answers
// /readyz with 200. The processes are stopped, and the table deleted, when
// t ends, whether it passed or not; if it failed, what each process logged
// at warning level or above is logged.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	o.Instances = cmp.Or(o.Instances, 2)
	if o.Instances < 2 {
		t.Fatalf("multitest: a cluster has at least 2 instances, not %d", o.Instances)
	}
	bin := Binary(t)
	env := fundtest.New(t)
	c := &Cluster{
		Table: env.Table, Store: env.Store, bin: bin,
		http: &http.Client{Timeout: clientTimeout, Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 16}},
	}
	vars := map[string]string{
		"FUNDSVC_TABLE":            env.Table,
		"FUNDSVC_JWT_HS256_SECRET": harness.RandomHex(32),
		"FUNDSVC_CURSOR_KEY":       harness.RandomHex(32),
		"FUNDSVC_REQUEST_TIMEOUT":  requestTimeout.String(),
		"FUNDSVC_WRITE_TIMEOUT":    requestTimeout.String(),
		"FUNDSVC_SHUTDOWN_TIMEOUT": shutdownTimeout.String(),
		// Warnings and errors only: the tail kept for a failed test's log
		// is then not crowded out by access log lines.
		"FUNDSVC_LOG_LEVEL": "warn",
	}
	for k, v := range o.Env {
		vars[k] = v
	}
	c.env = environ(vars)
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			c.logOutput(t)
		}
	})
	for i := 0; i < o.Instances; i++ {
		endpoint := dynamotest.Shared().Endpoint()
		if o.Intercept != nil {
			endpoint = startProxy(t, i, endpoint, o.Intercept)
		}
		in, err := harness.Retry(context.Background(), startAttempts, errExited, func() (*instance, error) { return c.startInstance(endpoint) })
		if err != nil {
			t.Fatalf("start instance %d of %d: %v", i+1, o.Instances, err)
		}
		c.instances = append(c.instances, in)
	}
	return c
}

// environ is the test binary's environment with vars set, minus any
// FUNDSVC_ setting of the developer's shell that vars does not name, so
// that a cluster runs the same everywhere.
func environ(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FUNDSVC_") {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	return env
}

func (c *Cluster) startInstance(endpoint string) (*instance, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(c.bin, "serve")
	cmd.Env = append(slices.Clone(c.env), "FUNDSVC_LISTEN="+addr, "FUNDSVC_DYNAMODB_ENDPOINT="+endpoint)
	exited, out, err := harness.StartProcess(cmd)
	if err != nil {
		return nil, err
	}
	in := &instance{base: "http://" + addr, cmd: cmd, exited: exited, out: out}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	err = harness.WaitReady(ctx, 20*time.Millisecond, exited, errExited, "no 200 from /readyz", func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.base+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz answered %d", resp.StatusCode)
		}
		return nil
	})
	if err != nil {
		harness.StopGroup(cmd.Process.Pid, exited, stopGrace)
		return nil, harness.WithOutput(err, "fundsvc serve on "+addr, out)
	}
	return in, nil
}

// stop stops every instance at once and waits for them to exit.
func (c *Cluster) stop() {
	var wg sync.WaitGroup
	for _, in := range c.instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			harness.StopGroup(in.cmd.Process.Pid, in.exited, stopGrace)
		}()
	}
	wg.Wait()
	c.http.CloseIdleConnections()
}

// logOutput logs what each instance wrote, less the AWS SDK's warnings
// about response checksums, which DynamoDB Local provokes on every request
// and which would crowd out the service's own lines.
func (c *Cluster) logOutput(t testing.TB) {
	for i, in := range c.instances {
		var lines []string
		for _, l := range strings.Split(in.out.String(), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "failed to close HTTP response body") {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			t.Logf("instance %d (%s) logged:\n%s", i, in.base, strings.Join(lines, "\n"))
		}
	}
}

// Instances returns how many instances run.
func (c *Cluster) Instances() int { return len(c.instances) }

// BaseURL returns instance i's base URL, such as http://127.0.0.1:41234.
func (c *Cluster) BaseURL(i int) string { return c.instances[i].base }

// Pid returns the process ID of instance i, which leads its process group.
func (c *Cluster) Pid(i int) int { return c.instances[i].cmd.Process.Pid }

// AdminToken mints a token for an administrator of funds ("*" for every
// fund), with the cluster's secret, through the binary's own `token`
// subcommand.
func (c *Cluster) AdminToken(t testing.TB, funds ...string) string {
	t.Helper()
	return c.token(t, "--role", "admin", "--funds", strings.Join(funds, ","), "--subject", "admin-"+strings.Join(funds, "-"))
}

// InvestorToken mints a token for the portal of one investor.
func (c *Cluster) InvestorToken(t testing.TB, investor string) string {
	t.Helper()
	return c.token(t, "--role", "investor", "--investor", investor, "--subject", "portal-"+investor)
}

func (c *Cluster) token(t testing.TB, args ...string) string {
	t.Helper()
	// The token subcommand reads no table; the endpoint only has to be valid.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"token", "--ttl", "1h"}, args...)...)
	cmd.Env = append(slices.Clone(c.env), "FUNDSVC_DYNAMODB_ENDPOINT="+dynamotest.Shared().Endpoint())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fundsvc token %v: %v: %s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}
