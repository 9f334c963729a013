package api_test

import (
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

// TestHealthAnswersCarryTheBuild: /livez, /readyz and the
// fundsvc_build_info metric say which build is running, as
// debug.ReadBuildInfo reports it.
func TestHealthAnswersCarryTheBuild(t *testing.T) {
	s := newServer(t, false)
	b := api.ReadBuild()
	if b.GoVersion != runtime.Version() || b.Version == "" {
		t.Fatalf("ReadBuild: %+v, want the Go version %s and a version", b, runtime.Version())
	}
	for path, status := range map[string]string{"/livez": "ok", "/readyz": "ready"} {
		r := s.do(t, http.MethodGet, path, nil)
		body := r.JSON(t)
		build, _ := body["build"].(map[string]any)
		if r.Status != http.StatusOK || body["status"] != status || build["goVersion"] != runtime.Version() || build["version"] != b.Version {
			t.Errorf("%s: %d %s, want status %q and the build %+v", path, r.Status, r.Body, status, b)
		}
	}
	m := s.do(t, http.MethodGet, "/metrics", nil)
	series := `fundsvc_build_info{goversion="` + runtime.Version() + `",revision="` + b.Revision + `",version="` + b.Version + `"} 1`
	if !strings.Contains(string(m.Body), series+"\n") {
		t.Errorf("/metrics has no %s", series)
	}
}

// TestReadyzSaysWhyItIsNotReady: the problem's detail tells DynamoDB not
// answering from the table missing (the server shutting down is
// TestHealth's).
func TestReadyzSaysWhyItIsNotReady(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	unreachable := store.NewStore(store.NewDB(dynamotest.Shared().Config(func(c *aws.Config) { c.BaseEndpoint = aws.String(closed) })), "fundsvc")
	missing := store.NewStore(store.NewDB(dynamotest.Shared().Config()), dynamotest.UniqueName(t, "missing"))
	for detail, st := range map[string]*store.Store{"DynamoDB is not reachable": unreachable, "the table does not exist": missing} {
		s := startAPI(t, &fundtest.Env{Store: st, Positions: positions.NewAnalytics(st)}, nil)
		r := s.do(t, http.MethodGet, "/readyz", nil)
		if p := checkProblem(t, r, http.StatusServiceUnavailable, "/problems/unavailable"); p.Detail != detail {
			t.Errorf("detail %q, want %q", p.Detail, detail)
		}
	}
}
