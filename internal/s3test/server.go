// Package s3test runs MinIO, an S3-compatible server, on loopback for
// integration tests, and gives tests an S3 client for it and fresh buckets.
//
// `make tools` builds MinIO at the version the Makefile pins into
// tools/bin/minio. A test binary shares one server, started on first use by
// Shared and stopped after the tests by Main or Cleanup:
//
//	func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }
//
// A package that also uses dynamotest, whose Main runs the tests itself:
//
//	func TestMain(m *testing.M) {
//		code := dynamotest.Main(m)
//		s3test.Cleanup()
//		os.Exit(code)
//	}
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fundsvc/fundsvc/internal/harness"
)

const (
	// binPath is where `make tools` installs MinIO, relative to the
	// repository root.
	binPath = "tools/bin/minio"

	// startTimeout bounds MinIO's start-up, which takes well under a second
	// on an idle machine.
	startTimeout = 30 * time.Second
	pollInterval = 50 * time.Millisecond

	// startAttempts covers the window between picking free ports and MinIO
	// binding them, in which another process may take one.
	startAttempts = 3

	region = "us-east-1"
)

// Server is a running MinIO. Its methods are safe for concurrent use.
type Server struct {
	Endpoint  string // base URL, such as "http://127.0.0.1:41234"
	AccessKey string // root user
	SecretKey string // root password
	Region    string

	dir      string // temporary directory: MinIO's data and home
	cmd      *exec.Cmd
	exited   <-chan struct{} // closed when cmd has been waited for
	stopOnce sync.Once
}

// Start starts MinIO on free loopback ports with a fresh temporary data
// directory and random root credentials, and returns once it reports ready.
// The caller must call Stop.
func Start(ctx context.Context) (*Server, error) {
	bin, err := locate()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	s, err := harness.Retry(ctx, startAttempts, errExitedEarly, func() (*Server, error) {
		return startOnce(ctx, bin)
	})
	if err != nil {
		return nil, fmt.Errorf("start MinIO: %w", err)
	}
	return s, nil
}

var errExitedEarly = errors.New("MinIO exited during start-up")

func startOnce(ctx context.Context, bin string) (_ *Server, err error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	consolePort, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "s3test-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()

	s := &Server{
		Endpoint:  "http://127.0.0.1:" + strconv.Itoa(port),
		AccessKey: harness.RandomHex(8),
		SecretKey: harness.RandomHex(16),
		Region:    region,
		dir:       dir,
	}
	s.cmd = exec.Command(bin, "server", filepath.Join(dir, "data"),
		"--address", "127.0.0.1:"+strconv.Itoa(port),
		"--console-address", "127.0.0.1:"+strconv.Itoa(consolePort),
		"--quiet",
	)
	s.cmd.Env = append(os.Environ(),
		// MinIO creates ~/.minio (config and certs directories) on start.
		"HOME="+dir,
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off", // no web console
	)
	// Its own process group, which Stop kills; on Linux the kernel also
	// kills MinIO if the test binary dies first (see harness.SysProcAttr).
	exited, out, err := harness.StartProcess(s.cmd)
	if err != nil {
		return nil, err
	}
	s.exited = exited
	if err := waitReady(ctx, s.Endpoint, s.exited); err != nil {
		s.kill()
		return nil, harness.WithOutput(err, "MinIO", out)
	}
	return s, nil
}

// Stop kills the server, waits for it to exit and removes its data. It is
// safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.kill()
		os.RemoveAll(s.dir)
	})
}

// kill kills MinIO's process group and waits for MinIO to exit. The data is
// thrown away, so there is no point in a graceful shutdown.
func (s *Server) kill() {
	harness.SignalGroup(s.cmd.Process.Pid, true)
	<-s.exited
}

// Client returns an S3 client for the server: its endpoint and root
// credentials, region us-east-1 and path-style addressing (bucket names in
// the path, not the host name). It reads nothing from the environment or
// ~/.aws, so tests cannot reach a real AWS account by accident.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       s.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
	})
}

// NewBucket creates a bucket no other test uses and returns its name, made
// of t's name and a random suffix. The bucket is not removed afterwards: it
// goes with the server's data.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := bucketName(t.Name())
	_, err := s.Client().CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		t.Fatalf("s3test: create bucket %s: %v", name, err)
	}
	return name
}

// bucketName returns "s3test-<test name>-<random>" within S3's rules: 3 to
// 63 characters of a-z, 0-9, '-' and '.', starting and ending with a letter
// or digit. Every other character of the test name becomes '-'.
func bucketName(testName string) string {
	const prefix, maxMiddle = "s3test-", 63 - len("s3test-") - len("-") - 12
	middle := strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, testName)
	if len(middle) > maxMiddle {
		middle = middle[:maxMiddle]
	}
	return prefix + middle + "-" + harness.RandomHex(6)
}

// waitReady polls MinIO's readiness probe until it answers 200 OK, ctx ends
// or exited closes.
func waitReady(ctx context.Context, endpoint string, exited <-chan struct{}) error {
	url := endpoint + "/minio/health/ready"
	client := &http.Client{Timeout: 2 * time.Second}
	return harness.WaitReady(ctx, pollInterval, exited, errExitedEarly, "not ready", func(ctx context.Context) error {
		return probe(ctx, client, url)
	})
}

func probe(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// locate returns tools/bin/minio under the repository root (see
// harness.RepoRoot).
func locate() (string, error) {
	root, err := harness.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, binPath)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("MinIO not found at %s: run `make tools`", bin)
	}
	return bin, nil
}
