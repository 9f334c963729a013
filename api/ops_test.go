package api_test

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

// serverWithoutTable starts the API over a table that does not exist, with
// the given request timeout.
func serverWithoutTable(t *testing.T, timeout time.Duration) (*testServer, string) {
	t.Helper()
	table := dynamotest.UniqueName(t, "missing")
	store := store.NewStore(store.NewDB(dynamotest.Shared().Config()), table)
	s := startAPI(t, &fundtest.Env{Store: store, Positions: positions.NewAnalytics(store)}, func(o *api.Options) { o.RequestTimeout = timeout })
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

	t.Run("readyz answers 503 once the server is draining", func(t *testing.T) {
		var draining atomic.Bool
		d := startAPI(t, fundtest.New(t), func(o *api.Options) { o.Draining = draining.Load })
		if r := d.do(t, http.MethodGet, "/readyz", nil); r.Status != http.StatusOK {
			t.Fatalf("before draining: status %d", r.Status)
		}
		draining.Store(true)
		r := d.do(t, http.MethodGet, "/readyz", nil)
		checkProblem(t, r, http.StatusServiceUnavailable, "/problems/unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		// Requests in flight or arriving late are still served.
		if r := d.do(t, http.MethodGet, "/livez", nil); r.Status != http.StatusOK {
			t.Errorf("livez while draining: status %d", r.Status)
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
		{"PATCH of a document is 405 problem+json allowing GET, PUT and DELETE", http.MethodPatch, "/v1/documents/DOC001", "GET,PUT,DELETE"},
		{"POST of a document is 405 problem+json allowing GET, PUT and DELETE", http.MethodPost, "/v1/documents/DOC001", "GET,PUT,DELETE"},
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

	t.Run("DELETE of a document without If-Match is 428 and leaves it in place", func(t *testing.T) {
		checkProblem(t, s.do(t, http.MethodDelete, "/v1/documents/DOC001", nil), http.StatusPreconditionRequired, "/problems/precondition_required")
		if r := s.do(t, http.MethodGet, "/v1/documents/DOC001", nil); r.Status != http.StatusOK || r.JSON(t)["documents"].(map[string]any)["latest"].(map[string]any)["status"] != "latest" {
			t.Errorf("DOC001 after DELETE: status %d\n%s", r.Status, r.Body)
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

// tokenChars are the characters of an HTTP token (RFC 9110), of which a
// method is made.
const tokenChars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func randomString(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// httpSeries counts the samples of the server's own HTTP metrics in a
// /metrics text.
func httpSeries(metrics string) int {
	n := 0
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "fundsvc_http_") {
			n++
		}
	}
	return n
}

// TestMetricsSeriesDoNotGrowWithRequests sends 10,000 unauthenticated
// requests with invented methods (up to 1 KB) and random paths: the series of
// /metrics after them are those after the first 100, every label comes
// from a fixed set, and /metrics stays small.
func TestMetricsSeriesDoNotGrowWithRequests(t *testing.T) {
	o := testOptions(t, fundtest.New(t), io.Discard)
	o.PublicMetrics = true // read without a token, as FUNDSVC_PUBLIC_METRICS=true allows
	h := api.NewServer(o)
	rng := rand.New(rand.NewPCG(13, 4))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
	methods := []func() string{
		func() string { return randomString(rng, tokenChars, 1+rng.IntN(1024)) },
		func() string { return "GET" },
		func() string { return "PUT" },
		func() string { return "get" },
	}
	paths := []func() string{
		func() string { return "/livez" },
		func() string { return "/" + randomString(rng, alnum, 1+rng.IntN(200)) },
		func() string { return "/v1/documents/" + randomString(rng, alnum, 1+rng.IntN(64)) },
		func() string {
			return "/v1/" + randomString(rng, alnum, 1+rng.IntN(100)) + "/" + randomString(rng, alnum, 1+rng.IntN(100))
		},
	}
	metrics := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("/metrics: status %d", rec.Code)
		}
		return rec.Body.String()
	}
	// Each of the first 100 requests takes the next of the 16 shapes, so
	// that every label set the shapes can produce appears among them.
	send := func(from, to int) {
		for i := from; i < to; i++ {
			shape := i % (len(methods) * len(paths))
			req := httptest.NewRequest(methods[shape/len(paths)](), paths[shape%len(paths)](), nil)
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	metrics() // so that the series of /metrics itself exist before the count
	send(0, 100)
	after100 := metrics()
	send(100, 10_000)
	after10k := metrics()

	if n := httpSeries(after100); n == 0 {
		t.Fatalf("no fundsvc_http_ series after 100 requests:\n%s", after100)
	}
	if a, b := httpSeries(after100), httpSeries(after10k); a != b {
		t.Errorf("%d HTTP series after 100 requests, %d after 10,000: the labels grow with the requests", a, b)
	}
	if len(after10k) > 64<<10 {
		t.Errorf("/metrics is %d bytes after 10,000 requests, want at most 64 KiB", len(after10k))
	}
	fixed := map[string]map[string]bool{
		"method": {"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true,
			"CONNECT": true, "OPTIONS": true, "TRACE": true, "other": true},
	}
	label := regexp.MustCompile(`(method|route|status)="([^"]*)"`)
	seen := map[string]map[string]bool{}
	for _, line := range strings.Split(after10k, "\n") {
		if !strings.HasPrefix(line, "fundsvc_http_") {
			continue
		}
		for _, m := range label.FindAllStringSubmatch(line, -1) {
			if seen[m[1]] == nil {
				seen[m[1]] = map[string]bool{}
			}
			seen[m[1]][m[2]] = true
		}
	}
	for v := range seen["method"] {
		if !fixed["method"][v] {
			t.Errorf("method label %q is not a standard method or other", v)
		}
	}
	if !seen["method"]["other"] {
		t.Errorf("no method label other, though most requests invented their method: %v", seen["method"])
	}
	for v := range seen["route"] {
		if v != "unmatched" && v != "/livez" && v != "/metrics" && v != "/v1/documents/:documentId" {
			t.Errorf("route label %q is neither a route template these requests could match nor unmatched", v)
		}
	}
	for v := range seen["status"] {
		if n, err := strconv.Atoi(v); err != nil || http.StatusText(n) == "" {
			t.Errorf("status label %q is not a standard status code", v)
		}
	}
}

// TestAnswersAreNotStored: /v1 answers, successful or not, and the
// operational answers carry Cache-Control: no-store, so that no shared cache
// keeps an investor's figures.
func TestAnswersAreNotStored(t *testing.T) {
	s := newServer(t, true)
	investor := []string{"Authorization", "Bearer " + token(t, api.Principal{Subject: "portal", Role: api.RoleInvestor, Investor: "INVESTOR_1"})}
	for _, tc := range []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
	}{
		{"a document overview", http.MethodGet, "/v1/documents/DOC001", nil, nil, http.StatusOK},
		{"a created document", http.MethodPut, "/v1/documents/DOC_CACHE", authzDocument("FUND_A"), nil, http.StatusCreated},
		{"an investor's positions", http.MethodGet, "/v1/investors/INVESTOR_1/positions", nil, investor, http.StatusOK},
		{"a position summary", http.MethodGet, "/v1/positions/POSITION_1/summary", nil, investor, http.StatusOK},
		{"an unknown document", http.MethodGet, "/v1/documents/NOPE", nil, nil, http.StatusNotFound},
		{"a request without a token", http.MethodGet, "/v1/documents/DOC001", nil, []string{"Authorization", ""}, http.StatusUnauthorized},
		{"livez", http.MethodGet, "/livez", nil, nil, http.StatusOK},
		{"readyz", http.MethodGet, "/readyz", nil, nil, http.StatusOK},
		{"metrics", http.MethodGet, "/metrics", nil, nil, http.StatusOK},
	} {
		t.Run(tc.name+" is no-store", func(t *testing.T) {
			r := s.do(t, tc.method, tc.path, tc.body, tc.headers...)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d\n%s", r.Status, tc.status, r.Body)
			}
			if got := r.Header.Values("Cache-Control"); len(got) != 1 || got[0] != "no-store" {
				t.Errorf("Cache-Control = %q, want exactly no-store", got)
			}
		})
	}
}

// TestAccessLogHasTheClientAddress: the access log line names the client's
// address, taken from X-Forwarded-For only when the peer is a trusted proxy.
func TestAccessLogHasTheClientAddress(t *testing.T) {
	clientOf := func(t *testing.T, s *testServer, id string) any {
		t.Helper()
		for _, l := range logLines(t, s) {
			if l["msg"] == "request" && l["request_id"] == id {
				return l["client"]
			}
		}
		t.Fatalf("no access log line with request_id %q:\n%s", id, s.logs.String())
		return nil
	}
	const forwarded = "203.0.113.7"

	t.Run("without trusted proxies it is the peer's address, whatever X-Forwarded-For says", func(t *testing.T) {
		s := startAPI(t, fundtest.New(t), nil)
		s.do(t, http.MethodGet, "/livez", nil, "X-Request-ID", "direct-1", "X-Forwarded-For", forwarded)
		if got := clientOf(t, s, "direct-1"); got != "127.0.0.1" {
			t.Errorf("client = %v, want 127.0.0.1 (the peer; its X-Forwarded-For is not believed)", got)
		}
	})

	t.Run("behind a trusted proxy it is the address the proxy forwards", func(t *testing.T) {
		s := startAPI(t, fundtest.New(t), func(o *api.Options) { o.TrustedProxies = []string{"127.0.0.1"} })
		s.do(t, http.MethodGet, "/v1/documents/NOPE", nil, "X-Request-ID", "proxied-1", "X-Forwarded-For", forwarded)
		if got := clientOf(t, s, "proxied-1"); got != forwarded {
			t.Errorf("client = %v, want %s (forwarded by a trusted proxy)", got, forwarded)
		}
	})
}
