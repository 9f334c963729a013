package harness

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("RepoRoot() = %s, which holds no go.mod: %v", root, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "internal", "harness"); wd != want {
		t.Errorf("RepoRoot() = %s; the test runs in %s, want it to be %s", root, wd, want)
	}
}

func TestRepoRootOutsideModule(t *testing.T) {
	dir := t.TempDir()
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "go.mod")); err == nil {
		t.Skipf("a go.mod above %s", dir)
	}
	t.Chdir(dir)
	root, err := RepoRoot()
	if err == nil {
		// Some directory above the temporary one may hold a go.mod.
		if _, statErr := os.Stat(filepath.Join(root, "go.mod")); statErr != nil {
			t.Errorf("RepoRoot() = %s without a go.mod and no error", root)
		}
		return
	}
	if !strings.Contains(err.Error(), "no go.mod above the working directory") {
		t.Errorf("RepoRoot() error = %v, want one about no go.mod", err)
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("FreePort() = %d, not a port", port)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("listen on the port FreePort returned: %v", err)
	}
	l.Close()
}

func TestRandomHex(t *testing.T) {
	hexRE := regexp.MustCompile(`^[0-9a-f]*$`)
	for _, n := range []int{0, 1, 6, 16} {
		got := RandomHex(n)
		if len(got) != 2*n || !hexRE.MatchString(got) {
			t.Errorf("RandomHex(%d) = %q, want %d hex digits", n, got, 2*n)
		}
	}
	if a, b := RandomHex(16), RandomHex(16); a == b {
		t.Errorf("RandomHex(16) returned %s twice", a)
	}
}

func TestTailBuffer(t *testing.T) {
	b := NewTailBuffer(5)
	if got := b.String(); got != "" {
		t.Errorf("new buffer holds %q", got)
	}
	for _, w := range []string{"abc", "de", "fghij", "klmnopq", "r"} {
		n, err := b.Write([]byte(w))
		if n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
		}
	}
	if got, want := b.String(), "nopqr"; got != want {
		t.Errorf("String() = %q, want the last 5 bytes %q", got, want)
	}

	b = NewTailBuffer(16)
	b.Write([]byte("short"))
	if got := b.String(); got != "short" {
		t.Errorf("String() under the limit = %q, want %q", got, "short")
	}
}
