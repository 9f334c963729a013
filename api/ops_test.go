package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
)

// serverWithoutTable starts the API over a table that does not exist, with
// the given request timeout.
func serverWithoutTable(t *testing.T, timeout time.Duration) (*testServer, string) {
	t.Helper()
	table := dynamotest.UniqueName(t, "missing")
	store := fund.NewStore(fund.NewDB(dynamotest.Shared().Config()), table)
	s := startAPI(t, &fundtest.Env{Store: store, Positions: positions.NewStore(store)}, func(o *api.Options) { o.RequestTimeout = timeout })
	return s, table
}

// logLines parses every log line, failing on any that is not a JSON object.
func logLines(t *testing.T, s *testServer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		if line == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("log line is not JSON: %v\n%s", err, line)
			continue
		}
		out = append(out, v)
	}
	return out
}

func TestHealth(t *testing.T) {
	s := newServer(t, false)

	t.Run("livez answers 200", func(t *testing.T) {
		r := s.do(t, http.MethodGet, "/livez", nil)
		if r.Status != http.StatusOK || r.JSON(t)["status"] != "ok" {
			t.Errorf("status %d, body %s", r.Status, r.Body)
		}
	})

	t.Run("readyz answers 200 when the table exists", func(t *testing.T) {
		r := s.do(t, http.MethodGet, "/readyz", nil)
		if r.Status != http.StatusOK || r.JSON(t)["status"] != "ready" {
			t.Errorf("status %d, body %s", r.Status, r.Body)
		}
	})

	t.Run("readyz answers 503 with Retry-After when the table does not exist", func(t *testing.T) {
		missing, table := serverWithoutTable(t, 0)
		r := missing.do(t, http.MethodGet, "/readyz", nil)
		p := checkProblem(t, r, http.StatusServiceUnavailable, "/problems/unavailable")
		if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("Retry-After = %q, want a whole number of seconds", r.Header.Get("Retry-After"))
		}
		if strings.Contains(string(r.Body), table) {
			t.Errorf("the problem names the table: %+v", p)
		}
		// livez does not depend on the table.
		if r := missing.do(t, http.MethodGet, "/livez", nil); r.Status != http.StatusOK {
			t.Errorf("livez over a missing table: status %d", r.Status)
		}
	})
}

var routeLabel = regexp.MustCompile(`route="([^"]*)"`)

// metricValue returns the value of the sample whose name and labels are
// exactly series, or "" if there is none.
func metricValue(metrics, series string) string {
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

func TestMetricsAreLabelledByRouteTemplate(t *testing.T) {
	s := newServer(t, true)
	for _, path := range []string{"/v1/documents/DOC001", "/v1/documents/DOC002", "/v1/documents/NOPE42",
		"/v1/documents/DOC001/positions/POSITION_1", "/v1/nowhere/DOC001", "/favicon.ico"} {
		s.do(t, http.MethodGet, path, nil)
	}
	s.do(t, http.MethodDelete, "/v1/documents/DOC001", nil)
	r := s.do(t, http.MethodGet, "/metrics", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("metrics: status %d", r.Status)
	}
	metrics := string(r.Body)

	for _, tc := range []struct{ name, series, want string }{
		{"two reads of two documents count under one route template",
			`fundsvc_http_requests_total{method="GET",route="/v1/documents/:documentId",status="200"}`, "2"},
		{"a read of an unknown document counts under the same template with its status",
			`fundsvc_http_requests_total{method="GET",route="/v1/documents/:documentId",status="404"}`, "1"},
		{"a nested route counts under its template",
			`fundsvc_http_requests_total{method="GET",route="/v1/documents/:documentId/positions/:positionId",status="200"}`, "1"},
		{"unmatched routes count as unmatched",
			`fundsvc_http_requests_total{method="GET",route="unmatched",status="404"}`, "2"},
		{"request durations are labelled by template",
			`fundsvc_http_request_duration_seconds_count{method="GET",route="/v1/documents/:documentId"}`, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := metricValue(metrics, tc.series); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.series, got, tc.want)
			}
		})
	}

	t.Run("no route label holds a raw path", func(t *testing.T) {
		labels := map[string]bool{}
		for _, m := range routeLabel.FindAllStringSubmatch(metrics, -1) {
			labels[m[1]] = true
		}
		if len(labels) < 3 {
			t.Fatalf("only route labels %v", labels)
		}
		for l := range labels {
			for _, raw := range []string{"DOC00", "NOPE42", "POSITION_1", "nowhere", "favicon"} {
				if strings.Contains(l, raw) {
					t.Errorf("route label %q holds %q", l, raw)
				}
			}
			if l != "unmatched" && !strings.HasPrefix(l, "/") {
				t.Errorf("route label %q is neither a template nor unmatched", l)
			}
		}
	})
}

func TestRequestIDsAndLogs(t *testing.T) {
	s := newServer(t, true)
	const id = "ops-test.request_1"
	ok := s.do(t, http.MethodGet, "/v1/documents/DOC001", nil, "X-Request-ID", id)
	bad := s.do(t, http.MethodGet, "/v1/documents/NOPE", nil, "X-Request-ID", id+"-404")
	insane := s.do(t, http.MethodGet, "/v1/documents/DOC002", nil, "X-Request-ID", "not a sane id\twith spaces")
	tooLong := s.do(t, http.MethodGet, "/v1/documents/DOC002", nil, "X-Request-ID", strings.Repeat("r", 65))
	plain1 := s.do(t, http.MethodGet, "/livez", nil)
	plain2 := s.do(t, http.MethodGet, "/livez", nil)
	lines := logLines(t, s)

	t.Run("an incoming X-Request-ID is echoed back", func(t *testing.T) {
		if got := ok.Header.Get("X-Request-ID"); got != id {
			t.Errorf("X-Request-ID = %q, want %q", got, id)
		}
	})

	t.Run("a problem carries the incoming request ID", func(t *testing.T) {
		p := checkProblem(t, bad, http.StatusNotFound, "/problems/not_found")
		if p.RequestID != id+"-404" || bad.Header.Get("X-Request-ID") != id+"-404" {
			t.Errorf("requestId %q, header %q, want %q", p.RequestID, bad.Header.Get("X-Request-ID"), id+"-404")
		}
	})

	t.Run("an unusable X-Request-ID is replaced by a fresh one", func(t *testing.T) {
		fresh := regexp.MustCompile(`^[A-Za-z0-9._-]{8,64}$`)
		for _, r := range []response{insane, tooLong} {
			got := r.Header.Get("X-Request-ID")
			if !fresh.MatchString(got) || strings.Contains(got, "sane") || got == strings.Repeat("r", 65) {
				t.Errorf("X-Request-ID = %q, want a fresh ID", got)
			}
		}
	})

	t.Run("requests without an ID get distinct ones", func(t *testing.T) {
		a, b := plain1.Header.Get("X-Request-ID"), plain2.Header.Get("X-Request-ID")
		if a == "" || a == b {
			t.Errorf("request IDs %q and %q", a, b)
		}
	})

	t.Run("every log line is JSON and carries a request ID", func(t *testing.T) {
		if len(lines) < 6 {
			t.Fatalf("%d log lines for 6 requests", len(lines))
		}
		for _, l := range lines {
			if rid, _ := l["request_id"].(string); rid == "" {
				t.Errorf("log line without request_id: %v", l)
			}
			if l["msg"] == "" || l["level"] == "" || l["time"] == "" {
				t.Errorf("log line without msg, level or time: %v", l)
			}
		}
	})

	t.Run("the access log uses the incoming request ID and the route template", func(t *testing.T) {
		found := false
		for _, l := range lines {
			if l["msg"] == "request" && l["request_id"] == id {
				found = true
				if l["path"] != "/v1/documents/DOC001" || l["route"] != "/v1/documents/:documentId" || l["status"] != float64(200) || l["method"] != "GET" {
					t.Errorf("access log line %v", l)
				}
			}
		}
		if !found {
			t.Errorf("no access log line with request_id %q in\n%s", id, s.logs.String())
		}
	})

	t.Run("the access log uses the ID that replaced an unusable one", func(t *testing.T) {
		want := insane.Header.Get("X-Request-ID")
		for _, l := range lines {
			if l["msg"] == "request" && l["request_id"] == want {
				return
			}
		}
		t.Errorf("no access log line with request_id %q", want)
	})
}

func TestRoutingErrors(t *testing.T) {
	s := newServer(t, true)

	for _, tc := range []struct{ name, method, path string }{
		{"an unknown route is 404 problem+json", http.MethodGet, "/v2/documents/DOC001"},
		{"an unknown sub-route of a document is 404 problem+json", http.MethodGet, "/v1/documents/DOC001/nothing"},
		{"the root is 404 problem+json", http.MethodGet, "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkProblem(t, s.do(t, tc.method, tc.path, nil), http.StatusNotFound, "/problems/no_route")
		})
	}

	t.Run("an unknown document is 404 not_found, not no_route", func(t *testing.T) {
		checkProblem(t, s.do(t, http.MethodGet, "/v1/documents/DOC999", nil), http.StatusNotFound, "/problems/not_found")
	})

	for _, tc := range []struct{ name, method, path, allow string }{
		{"DELETE of a document is 405 problem+json allowing GET and PUT", http.MethodDelete, "/v1/documents/DOC001", "GET,PUT"},
		{"POST of a document is 405 problem+json allowing GET and PUT", http.MethodPost, "/v1/documents/DOC001", "GET,PUT"},
		{"PUT of a fund's documents is 405 problem+json allowing GET", http.MethodPut, "/v1/funds/FUND_A/documents", "GET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, tc.method, tc.path, nil)
			checkProblem(t, r, http.StatusMethodNotAllowed, "/problems/method_not_allowed")
			var allowed []string
			for _, m := range strings.Split(r.Header.Get("Allow"), ",") {
				allowed = append(allowed, strings.TrimSpace(m))
			}
			for _, m := range strings.Split(tc.allow, ",") {
				if !strings.Contains(","+strings.Join(allowed, ",")+",", ","+m+",") {
					t.Errorf("Allow = %q, want it to hold %s", r.Header.Get("Allow"), m)
				}
			}
		})
	}

	t.Run("DELETE of a document leaves it in place", func(t *testing.T) {
		s.do(t, http.MethodDelete, "/v1/documents/DOC001", nil)
		if r := s.do(t, http.MethodGet, "/v1/documents/DOC001", nil); r.Status != http.StatusOK {
			t.Errorf("DOC001 after DELETE: status %d", r.Status)
		}
	})
}

// internalDetails are strings that would betray internals in an answer.
var internalDetails = []string{"dynamo", "Dynamo", "injected", "ResourceNotFound", "non-existent", "operation error", "panic", "goroutine", ".go:"}

func checkNoDetail(t *testing.T, r response, more ...string) {
	t.Helper()
	for _, s := range append(internalDetails, more...) {
		if strings.Contains(string(r.Body), s) {
			t.Errorf("the answer leaks %q:\n%s", s, r.Body)
		}
		for name, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, s) {
					t.Errorf("header %s leaks %q: %s", name, s, v)
				}
			}
		}
	}
}

func TestInternalErrorsLeakNothing(t *testing.T) {
	t.Run("a write that fails inside the store is a plain 500, its detail logged", func(t *testing.T) {
		s := newServer(t, true)
		s.Faults.FailAfterWrites(0)
		r := s.do(t, http.MethodPut, "/v1/documents/DOC_FAIL", inputJSON(t, inputDocument()), "X-Request-ID", "fail-1")
		s.Faults.Disarm()
		p := checkProblem(t, r, http.StatusInternalServerError, "/problems/internal")
		checkNoDetail(t, r, s.Table)
		if p.RequestID != "fail-1" {
			t.Errorf("requestId = %q, want fail-1", p.RequestID)
		}
		if s.Faults.Injected() == 0 {
			t.Fatal("no write failed; the test provoked nothing")
		}
		logged := false
		for _, l := range logLines(t, s) {
			if e, _ := l["error"].(string); l["request_id"] == "fail-1" && strings.Contains(e, "injected") {
				logged = true
			}
		}
		if !logged {
			t.Errorf("the failure's detail was not logged with the request ID:\n%s", s.logs.String())
		}
	})

	t.Run("a read of a table that does not exist is a plain 500, its detail logged", func(t *testing.T) {
		missing, table := serverWithoutTable(t, 0)
		for _, path := range []string{"/v1/documents/DOC001", "/v1/funds/FUND_A/positions", "/v1/positions/POSITION_1"} {
			r := missing.do(t, http.MethodGet, path, nil)
			checkProblem(t, r, http.StatusInternalServerError, "/problems/internal")
			checkNoDetail(t, r, table)
			logged := false
			for _, l := range logLines(t, missing) {
				if e, _ := l["error"].(string); l["request_id"] == r.Header.Get("X-Request-ID") && strings.Contains(e, "ResourceNotFoundException") {
					logged = true
				}
			}
			if !logged {
				t.Errorf("GET %s: the failure's detail was not logged with the request ID:\n%s", path, missing.logs.String())
			}
		}
	})

	t.Run("a request that runs out of time is 503 with Retry-After", func(t *testing.T) {
		slow, table := serverWithoutTable(t, time.Nanosecond)
		r := slow.do(t, http.MethodGet, "/v1/documents/DOC001", nil)
		checkProblem(t, r, http.StatusServiceUnavailable, "/problems/unavailable")
		checkNoDetail(t, r, table, "deadline")
		if r.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	})
}

// TestWritesHaveTheirOwnDeadline: a read is bounded by RequestTimeout, a
// write by WriteTimeout, so a large restatement is not cut off at a read's
// deadline, and a write past its own deadline is 503 and changes nothing.
func TestWritesHaveTheirOwnDeadline(t *testing.T) {
	body := authzDocument("FUND_A")

	t.Run("a write outlives the read deadline", func(t *testing.T) {
		s := startAPI(t, fundtest.New(t), func(o *api.Options) { o.RequestTimeout, o.WriteTimeout = time.Nanosecond, time.Minute })
		if r := s.do(t, http.MethodPut, "/v1/documents/DOC_T1", body); r.Status != http.StatusCreated {
			t.Fatalf("PUT: status %d\n%s", r.Status, r.Body)
		}
		checkProblem(t, s.do(t, http.MethodGet, "/v1/documents/DOC_T1", nil), http.StatusServiceUnavailable, "/problems/unavailable")
	})

	t.Run("a write past its deadline is 503 and changes nothing", func(t *testing.T) {
		s := startAPI(t, fundtest.New(t), func(o *api.Options) { o.RequestTimeout, o.WriteTimeout = time.Minute, time.Nanosecond })
		before := s.Dump(t)
		checkProblem(t, s.do(t, http.MethodPut, "/v1/documents/DOC_T1", body), http.StatusServiceUnavailable, "/problems/unavailable")
		if after := s.Dump(t); len(after) != len(before) {
			t.Fatalf("%d items before the refused write, %d after", len(before), len(after))
		}
		checkProblem(t, s.do(t, http.MethodGet, "/v1/documents/DOC_T1", nil), http.StatusNotFound, "/problems/not_found")
	})
}
