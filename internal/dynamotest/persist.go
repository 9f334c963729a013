package dynamotest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fundsvc/fundsvc/internal/harness"
)

// persistence is how a server from StartPersistent is (re)started: the same
// JVM, jar, data directory and port every time.
type persistence struct {
	java, jar string
	jvm       []string // JVM options before the jar's
	dir       string   // absolute: the JVM runs in the jar's directory
	port      int
}

// StartPersistent starts DynamoDB Local storing its tables in dir (-dbPath,
// one database file shared by every client: -sharedDb) and listening on
// port, and returns once it answers ListTables. With port 0 it picks a free
// port, and keeps it for Restart. jvm are JVM options (ShortLivedJVM for a
// test's server; none, the JVM's defaults, for a benchmark's). The caller
// must call Stop.
//
// Unlike Start's, its data outlives the process: Kill it (SIGKILL, as a
// crash or an OOM kill would) and Restart it, and clients configured with
// its Config, whose endpoint does not change, find the tables again as the
// killed process last stored them.
func StartPersistent(ctx context.Context, dir string, port int, jvm ...string) (*Server, error) {
	java, jar, err := locate()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("start DynamoDB Local: data directory %s: not a directory (%v)", abs, err)
	}
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	s := &Server{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		persist:  &persistence{java: java, jar: jar, jvm: jvm, dir: abs, port: port},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.launchLocked(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// DataDir returns a new empty directory for StartPersistent's data, removed
// when t ends (after a server started later in the test has stopped:
// cleanups run last-in first-out). It is on tmpfs (/dev/shm) where there is
// one. A process killed with SIGKILL loses nothing it wrote there — what a
// process writes is the kernel's, whatever the filesystem — but there
// DynamoDB Local's SQLite commits need not wait for the disk: on a small
// virtual machine that makes a 1,000-item write several times faster.
func DataDir(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat(shmDir); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp(shmDir, "dynamotest-"); err == nil {
			t.Cleanup(func() {
				if err := os.RemoveAll(dir); err != nil {
					t.Errorf("remove DynamoDB Local data: %v", err)
				}
			})
			return dir
		}
	}
	return t.TempDir()
}

// shmDir is tmpfs on Linux.
const shmDir = "/dev/shm"

// FreePort returns a TCP port that nothing listens on at the time of the
// call, for StartPersistent. Another process may take it meanwhile; the
// start then fails.
func FreePort() (int, error) { return harness.FreePort() }

// Kill ends the server with SIGKILL to its whole process group: no
// shutdown hook runs, no database is closed, a request it is handling gets
// no answer, just as when the machine or the OOM killer ends it. It returns
// once the process has exited; from then on connections to its endpoint are
// refused. It does nothing for a server this process did not start, or one
// already stopped. It is safe to call from any goroutine, also from a
// WriteHook's function in the middle of a request.
//
// What the server has answered survives, as DynamoDB promises: Kill first
// waits until DynamoDB Local has stored it (see settle).
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	s.stopOnce.Do(func() {
		s.settle()
		harness.SignalGroup(s.cmd.Process.Pid, true)
		<-s.exited
	})
}

// settle returns once every transaction the server has answered is in its
// database file. DynamoDB acknowledges a TransactWriteItems once it is
// durable; DynamoDB Local answers it as soon as its COMMIT is queued
// (SQLiteDBAccess.commitTransaction hands the COMMIT to its SQLiteQueue
// without waiting for it, where every other operation waits for its job),
// so a kill right after the answer loses the transaction now and then. The
// queue runs its jobs one at a time in order, so a ListTables answered after
// the transaction's answer proves its COMMIT has run. A server that does not
// answer within settleTimeout is killed all the same.
func (s *Server) settle() {
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	client := dynamodb.NewFromConfig(s.Config(func(c *aws.Config) { c.RetryMaxAttempts = 1 }))
	_, _ = client.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
}

// settleTimeout bounds how long Kill waits for the server to store what it
// has answered.
const settleTimeout = 10 * time.Second

// Restart starts a server from StartPersistent again on the same port and
// data directory, killing it first (as Kill) if it still runs, and returns
// once it answers ListTables. Clients made before keep working: the
// endpoint is the same. On error the server is left stopped.
func (s *Server) Restart(ctx context.Context) error {
	if s.persist == nil {
		return errors.New("dynamotest: Restart needs a server started by StartPersistent")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
	return s.launchLocked(ctx)
}

// launchLocked starts the JVM and waits until it answers, within
// startTimeout. The port is fixed, so an early exit (the port still or
// already taken) is retried a few times rather than moved to another port.
// s.mu is held.
func (s *Server) launchLocked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	_, err := harness.Retry(ctx, startAttempts, errExitedEarly, func() (struct{}, error) {
		return struct{}{}, s.launchOnceLocked(ctx)
	})
	if err != nil {
		return fmt.Errorf("start DynamoDB Local on port %d with data in %s: %w", s.persist.port, s.persist.dir, err)
	}
	return nil
}

// ShortLivedJVM are the JVM options of a DynamoDB Local that serves tests
// for a minute or two, as a crash test's persistent server does between
// its kills: the client compiler only, and the serial collector. The
// optimizing compiler's work never pays back in a JVM that short-lived;
// without it the crash test of the api package took 93 CPU seconds
// instead of 206, and its wall time fell from 116 to 80 s. Benchmarks keep
// the JVM's defaults: the client compiler's DynamoDB Local answers a Query
// slower, which lowers an API ÷ raw ratio without the API being faster.
var ShortLivedJVM = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"}

// TestRunJVM are the JVM options of the DynamoDB Local that serves a whole
// test run (Start's, and scripts/with-dynamodb-local.sh's for make test):
// the serial collector, and the optimizing compiler, which pays back over
// a run of several minutes. The tests of api and export (without -race)
// against one server took 143 and 147 s, its JVM 99 and 103 CPU seconds,
// and 168 and 168 s, 109 and 108 CPU seconds with ShortLivedJVM.
var TestRunJVM = []string{"-XX:+UseSerialGC"}

func (s *Server) launchOnceLocked(ctx context.Context) error {
	p := s.persist
	libDir := filepath.Join(filepath.Dir(p.jar), "DynamoDBLocal_lib")
	cmd := exec.Command(p.java, append(slices.Clone(p.jvm),
		"-Djava.library.path="+libDir,
		"-jar", p.jar,
		"-dbPath", p.dir,
		"-port", strconv.Itoa(p.port),
		"-sharedDb",
		"-disableTelemetry",
	)...)
	cmd.Dir = filepath.Dir(p.jar)
	// Its own process group, killed with the test binary (see
	// harness.SysProcAttr).
	exited, out, err := harness.StartProcess(cmd)
	if err != nil {
		return err
	}
	s.cmd, s.exited, s.stopOnce = cmd, exited, sync.Once{}

	if err := waitReady(ctx, s.endpoint, exited); err != nil {
		s.killLocked()
		return harness.WithOutput(err, "DynamoDB Local", out)
	}
	return nil
}
