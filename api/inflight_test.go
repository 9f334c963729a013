package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

// boundedDocument is a capital call notice of FUND_A titled title, its JSON
// preceded by whitespace up to size bytes, so that a test sends a body of
// the size it wants.
func boundedDocument(t *testing.T, title string, size int) []byte {
	t.Helper()
	doc, err := json.Marshal(map[string]any{
		"fundId": "FUND_A", "kind": "capital_call_notice", "title": title, "asOf": "2025-12-01", "currency": "USD",
		"positions": []any{map[string]any{"positionId": "BOUND_POS", "investorId": "BOUND_INV",
			"capitalCall": map[string]any{"amount": "1.00", "status": "pending", "dueDate": "2025-12-31"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc) > size {
		t.Fatalf("the document is %d bytes, more than %d", len(doc), size)
	}
	return append(bytes.Repeat([]byte(" "), size-len(doc)), doc...)
}

// metric is one sample of the server's /metrics ("" when absent).
func (s *testServer) metric(t *testing.T, series string) string {
	t.Helper()
	r := s.do(t, http.MethodGet, "/metrics", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics: %d %s", r.Status, r.Body)
	}
	return metricValue(string(r.Body), series)
}

// waitUntil polls ok until it holds, failing t after 20 seconds.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// wantBusy fails t unless r is the 503 problem of a bound of writes in
// flight, with Retry-After.
func wantBusy(t *testing.T, r response) {
	t.Helper()
	var p api.Problem
	_ = json.Unmarshal(r.Body, &p)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" ||
		r.Header.Get("Content-Type") != "application/problem+json" || p.Type != "/problems/unavailable" {
		t.Fatalf("got %d Retry-After %q %s, want a 503 problem with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
}

// titleOf is the title of version n of document id ("latest" for the
// current one) and its version.
func titleOf(t *testing.T, s *testServer, id, n string) (string, int) {
	t.Helper()
	r := s.do(t, http.MethodGet, "/v1/documents/"+id+"/versions/"+n, nil)
	var v struct {
		Title   string `json:"title"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(r.Body, &v); err != nil || r.Status != http.StatusOK {
		t.Fatalf("version %s of %s: %d %s", n, id, r.Status, r.Body)
	}
	return v.Title, v.Version
}

// TestWriteBodiesInFlightAreBounded holds one write's body half sent (the
// client stalls mid-body) and sends a restatement that would take the
// bodies held past the budget: it is answered 503 with Retry-After at
// once, and changes nothing: the document stays at its version, its
// Idempotency-Key stays free. Once the held body is answered, the budget
// is free again and the same request goes through.
func TestWriteBodiesInFlightAreBounded(t *testing.T) {
	const budget = 64 << 10
	s := startAPI(t, fundtest.New(t), func(o *api.Options) { o.MaxBodyBytesInFlight = budget })
	if r := s.do(t, http.MethodPut, "/v1/documents/BUDGET_DOC", boundedDocument(t, "as created", 1<<10)); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if got := s.metric(t, "fundsvc_write_body_bytes_held"); got != "0" {
		t.Fatalf("bytes held once the creation is answered: %q, want 0", got)
	}

	held := boundedDocument(t, "held", 40<<10)
	body, sender := io.Pipe()
	req, err := http.NewRequest(http.MethodPut, s.URL+"/v1/documents/BUDGET_HELD", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(held))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token(t, adminOfAll))
	answered := make(chan int, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- -1
			return
		}
		res.Body.Close()
		answered <- res.StatusCode
	}()
	defer sender.Close()
	if _, err := sender.Write(held[:len(held)/2]); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the stalled body to be held", func() bool {
		return s.metric(t, "fundsvc_write_body_bytes_held") == strconv.Itoa(len(held))
	})

	// 40 KiB held + 30 KiB > 64 KiB: refused before a byte is read.
	restatement := boundedDocument(t, "restated while the budget was spent", 30<<10)
	wantBusy(t, s.do(t, http.MethodPut, "/v1/documents/BUDGET_DOC", restatement, "Idempotency-Key", "budget-restatement"))
	if got := s.metric(t, `fundsvc_writes_refused_total{reason="body_budget"}`); got != "1" {
		t.Errorf("refusals counted: %q, want 1", got)
	}
	if title, v := titleOf(t, s, "BUDGET_DOC", "latest"); title != "as created" || v != 1 {
		t.Fatalf("after the refusal the document is %q at version %d, want as created at 1", title, v)
	}
	// A body that fits beside the held one is accepted meanwhile.
	if r := s.do(t, http.MethodPut, "/v1/documents/BUDGET_SMALL", boundedDocument(t, "small", 8<<10)); r.Status != http.StatusCreated {
		t.Fatalf("a body within the budget: %d %s", r.Status, r.Body)
	}

	if _, err := sender.Write(held[len(held)/2:]); err != nil {
		t.Fatal(err)
	}
	sender.Close()
	if status := <-answered; status != http.StatusCreated {
		t.Fatalf("the held write: %d, want 201", status)
	}
	if got := s.metric(t, "fundsvc_write_body_bytes_held"); got != "0" {
		t.Fatalf("bytes held after every write was answered: %q, want 0", got)
	}
	// The refused request's key was never taken: repeated, it runs.
	r := s.do(t, http.MethodPut, "/v1/documents/BUDGET_DOC", restatement, "Idempotency-Key", "budget-restatement")
	if r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "" || r.Header.Get("ETag") != `"2"` {
		t.Fatalf("the refused request repeated: %d replayed %q ETag %s\n%s", r.Status, r.Header.Get("Idempotent-Replayed"), r.Header.Get("ETag"), r.Body)
	}
}

// TestWaitingWritersOfADocumentAreBounded holds a writer of a document
// inside its turn (its first DynamoDB write waits on a hook, which holds
// every write of the store meanwhile), lets one more writer queue behind
// it, the most allowed, and sends a third: answered 503 with Retry-After at
// once, it changes nothing. Released, the first two commit in order, no
// version holds the third's title, and the third, repeated, runs.
func TestWaitingWritersOfADocumentAreBounded(t *testing.T) {
	env := fundtest.New(t)
	hook := &dynamotest.WriteHook{}
	st := store.NewStore(store.NewDB(dynamotest.Shared().Config(dynamotest.WithAPIOptions(hook.APIOption()))), env.Table)
	st.Now = env.Store.Now
	st.MaxWaitingWriters = 1
	s := startAPI(t, &fundtest.Env{Store: st, Positions: positions.NewAnalytics(st), Table: env.Table}, nil)
	const id = "QUEUED_DOC"
	if r := s.do(t, http.MethodPut, "/v1/documents/"+id, boundedDocument(t, "as created", 1<<10)); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}

	held, release := make(chan struct{}), make(chan struct{})
	hook.OnWrite(1, func() { close(held); <-release })
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	put := func(title string) <-chan response {
		out := make(chan response, 1)
		body := boundedDocument(t, title, 1<<10)
		go func() { out <- s.do(t, http.MethodPut, "/v1/documents/"+id, body) }()
		return out
	}
	first := put("writer A")
	<-held // writer A has its turn and waits before its first write
	second := put("writer B")
	waitUntil(t, "writer B to queue", func() bool { return st.WriteQueue().Waiting == 1 })
	if got := s.metric(t, "fundsvc_write_waiting_writers"); got != "1" {
		t.Errorf("waiting writers on /metrics: %q, want 1", got)
	}

	wantBusy(t, s.do(t, http.MethodPut, "/v1/documents/"+id, boundedDocument(t, "writer C", 1<<10)))
	if q := st.WriteQueue(); q.Refused != 1 || q.Waiting != 1 {
		t.Errorf("after the refusal: %+v, want 1 refused and writer B still waiting", q)
	}
	if got := s.metric(t, `fundsvc_writes_refused_total{reason="waiting_writers"}`); got != "1" {
		t.Errorf("refusals on /metrics: %q, want 1", got)
	}

	close(release)
	released = true
	for i, ch := range []<-chan response{first, second} {
		if r := <-ch; r.Status != http.StatusOK || r.Header.Get("ETag") != fmt.Sprintf(`"%d"`, i+2) {
			t.Fatalf("writer %c: %d ETag %s, want 200 at version %d\n%s", 'A'+i, r.Status, r.Header.Get("ETag"), i+2, r.Body)
		}
	}
	for n, want := range []string{"as created", "writer A", "writer B"} {
		if title, _ := titleOf(t, s, id, strconv.Itoa(n+1)); title != want {
			t.Errorf("version %d is %q, want %q", n+1, title, want)
		}
	}
	if _, v := titleOf(t, s, id, "latest"); v != 3 {
		t.Fatalf("the document is at version %d, want 3: the refused writer wrote nothing", v)
	}
	if r := s.do(t, http.MethodPut, "/v1/documents/"+id, boundedDocument(t, "writer C", 1<<10)); r.Status != http.StatusOK || r.Header.Get("ETag") != `"4"` {
		t.Fatalf("writer C repeated: %d ETag %s\n%s", r.Status, r.Header.Get("ETag"), r.Body)
	}
}
