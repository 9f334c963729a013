package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
)

// demoAPI serves the API on a fresh table of the shared DynamoDB Local,
// written at fundtest.Clock as the golden tests' is, holding the demo
// dataset (as `fundsvc seed` writes it) when seed is set, until t ends.
func demoAPI(t *testing.T, seed bool) *httptest.Server {
	t.Helper()
	env := fundtest.New(t)
	if seed {
		env.Seed(t)
		// Read once the demo's commits are settled, so the event feed
		// lists them (nothing else the reads answer depends on the clock).
		env.Store.Now = func() time.Time { return fundtest.Clock.Add(store.ChangeSettleMargin + time.Minute) }
	}
	v, err := NewVerifier(AuthConfig{HS256Secret: []byte(internalTestSecret)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewServer(Options{
		Documents: env.Store, Positions: env.Positions, Verifier: v,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		CursorKey:    []byte("openapi-examples-cursor-key-0123"),
		MaxBodyBytes: 1 << 20, DefaultLimit: 100, MaxLimit: 1000,
		PublicMetrics: true, PublicOpenAPI: true,
	}))
	t.Cleanup(srv.Close)
	return srv
}

// demoSend makes one demo request to srv with an all-funds admin token of
// subject demoSubject and returns the status and body.
func demoSend(t *testing.T, srv *httptest.Server, r demoRequest) (int, []byte) {
	t.Helper()
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequest(r.Method, srv.URL+r.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.IfMatch != "" {
		req.Header.Set("If-Match", r.IfMatch)
	}
	req.Header.Set("Authorization", "Bearer "+internalToken(t, Principal{Subject: demoSubject, Role: RoleAdmin, Funds: []string{AllFunds}}))
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// demoExampleAnswers makes the demo calls of ops and returns their answers:
// the reads on one server of the demo dataset, each write on a throwaway
// server of its own, and the /metrics calls last, so that they count every
// request before them. Each answer must have its response's status.
func demoExampleAnswers(t *testing.T, ops []operation) demoAnswers {
	t.Helper()
	demo := demoAPI(t, true)
	answers := demoAnswers{}
	var metrics []func()
	for _, op := range ops {
		for _, r := range op.Responses {
			for _, c := range r.Demo {
				p, err := c.plan()
				if err != nil {
					t.Fatalf("%s %s: %v", op.Method, op.Path, err)
				}
				if len(p.Requests) == 0 {
					continue // made by the generator (ThisDocument)
				}
				run := func() {
					srv := demo
					if p.Throwaway {
						srv = demoAPI(t, false)
					}
					for i, req := range p.Requests {
						status, body := demoSend(t, srv, req)
						last := i == len(p.Requests)-1
						if (last && status != r.Status) || (!last && status >= 300) {
							t.Fatalf("%s's %d example %q: %s %s answered %d\n%.1000s", op.ID, r.Status, c.name(), req.Method, req.Path, status, body)
						}
						if last {
							answers[demoKey(op, r.Status, c)] = body
						}
					}
				}
				if c.MetricFamily != "" {
					metrics = append(metrics, run)
				} else {
					run()
				}
			}
		}
	}
	for _, run := range metrics {
		run()
	}
	return answers
}

// TestOpenAPIRequestExamplesAreAccepted PUTs each request example of PUT
// /v1/documents/{documentId} to a server with an empty table, which must
// create it; reading it back must give the demo document it came from, so an
// example is neither refused nor another document than the demo's.
func TestOpenAPIRequestExamplesAreAccepted(t *testing.T) {
	examples, err := documentExamples()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []fund.Kind
	for _, ex := range examples {
		kinds = append(kinds, ex.Doc.Kind)
	}
	if !slices.Equal(kinds, fund.Kinds) {
		t.Fatalf("the examples are of kinds %v, want one of each of %v", kinds, fund.Kinds)
	}
	srv := demoAPI(t, false)
	for _, ex := range examples {
		t.Run(string(ex.Doc.Kind)+" "+ex.Doc.ID+" is created as the demo wrote it", func(t *testing.T) {
			status, body := demoSend(t, srv, demoRequest{Method: http.MethodPut, Path: "/v1/documents/" + ex.Doc.ID, Body: ex.Body})
			if status != http.StatusCreated {
				t.Fatalf("PUT: status %d\n%s", status, body)
			}
			var got wire.DocumentVersion
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			want := ex.Doc
			want.Normalize()
			if got.FundID != want.FundID || got.Kind != want.Kind || got.Title != want.Title || got.AsOf != want.AsOf || len(got.Positions) != len(want.Positions) {
				t.Fatalf("PUT answered %s %s %q %s with %d positions, want the demo's %s %s %q %s with %d",
					got.FundID, got.Kind, got.Title, got.AsOf, len(got.Positions), want.FundID, want.Kind, want.Title, want.AsOf, len(want.Positions))
			}
			for i, p := range want.Positions {
				if !samePosition(p, got.Positions[i], ex.Doc.Kind == fund.KindCapitalCallNotice) {
					gb, _ := json.Marshal(got.Positions[i])
					wb, _ := json.Marshal(p)
					t.Errorf("position %d answered\n%s\nwant the demo's\n%s", i, gb, wb)
				}
			}
			if ex.Doc.Kind == fund.KindCapitalCallNotice {
				for _, p := range got.Positions {
					if p.CapitalCall != nil && len(p.CapitalCall.Transactions) == 0 {
						t.Errorf("%s's call carries no typed transaction lines", p.ID)
					}
				}
			}
		})
	}
}

// samePosition compares a demo position with the answer's, as JSON; the
// calls' typed lines are compared as the lines they stand for when the
// example derived them (typed).
func samePosition(want fund.Position, got fund.Position, typed bool) bool {
	if typed && want.CapitalCall != nil {
		call := *want.CapitalCall
		call.Transactions = fund.CallTransactions(call.Amount, call.Transactions, call.CallLines)
		want.CapitalCall = &call
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	return bytes.Equal(a, b)
}
