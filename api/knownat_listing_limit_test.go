package api_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
)

// listedDoc is revision rev of document i of FUND_L: one position, its
// asOf spread over a year, and an odd document's restatement moving its
// asOf a month later, so the listing's order differs between revisions.
func listedDoc(i, rev int) fund.Document {
	asOf := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*37%365)
	if i%2 == 1 {
		asOf = asOf.AddDate(0, rev-1, 0)
	}
	amount := fund.MustMoney(fmt.Sprintf("%d.00", 1000+i+rev))
	return fund.Document{ID: fmt.Sprintf("DOC_L%04d", i), CreatedBy: "admin@example.com",
		DocumentFields: fund.DocumentFields{FundID: "FUND_L", Kind: fund.KindCapitalCallNotice, Title: fmt.Sprintf("Call %d, revision %d", i, rev),
			AsOf: fund.DateOf(asOf), Currency: "USD"},
		Positions: []fund.Position{{ID: fmt.Sprintf("POS_L%04d", i), InvestorID: "INV_L", CapitalCall: &fund.CapitalCallItem{Amount: amount}}}}
}

// commitRaw stores revision rev of documents from..to-1 of FUND_L as
// their commits would, in seconds rather than the minutes as many
// Restates take: each document's write plan (store.Store.WritePlanAfter,
// after its head in heads, which it updates) has its commit transaction's
// puts and deletes sent unconditionally, 25 to a BatchWriteItem, four at
// a time, its head marked materialized as the plan's Finish does. So the
// table holds each version's head, fund listing entry, event, instant
// index entry and history record as a commit writes them. It leaves out
// what no listing reads, two of a commit's seven writes: the latest view's
// document item and the delete of a capital activity the documents never
// had (and, as every Plan sent without its other phases, the staged
// version partitions, the latest views' positions and the position
// registry). The documents are committed at one instant, a step of clock
// after the last write.
func commitRaw(t *testing.T, env *fundtest.Env, clock *steppedClock, heads map[string]*store.Item, rev, from, to int) {
	t.Helper()
	clock.step()
	plans := make([]store.Plan, to-from)
	var wg sync.WaitGroup
	planErrs := make([]error, to-from)
	for w := range 2 { // the plans' hashing and compression, on both cores
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from + w; i < to; i += 2 {
				d := listedDoc(i, rev)
				plans[i-from], planErrs[i-from] = env.Store.WritePlanAfter(d, heads[d.ID])
			}
		}()
	}
	wg.Wait()
	byKey := map[[2]string]types.WriteRequest{}
	var order [][2]string
	for j, p := range plans {
		if planErrs[j] != nil {
			t.Fatal(planErrs[j])
		}
		for n, ti := range p.Commit.TransactItems {
			var key map[string]types.AttributeValue
			var w types.WriteRequest
			switch {
			case ti.Put != nil && ti.Put.Item[store.AttrSK].(*types.AttributeValueMemberS).Value == store.DocumentLatestSK:
				continue
			case ti.Put != nil:
				key, w = ti.Put.Item, types.WriteRequest{PutRequest: &types.PutRequest{Item: ti.Put.Item}}
			case ti.Delete != nil:
				if ti.Delete.Key[store.AttrSK].(*types.AttributeValueMemberS).Value == store.CapitalActivityLatestSK {
					continue
				}
				key, w = ti.Delete.Key, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: ti.Delete.Key}}
			default:
				t.Fatalf("%s: the commit holds %+v, which a batch cannot send", p.Document.ID, ti)
			}
			if n == 0 {
				var h store.Item
				if err := h.UnmarshalDynamoItem(ti.Put.Item); err != nil || h.SK != store.HeadSK {
					t.Fatalf("%s: the commit's first put is %+v (%v), want its head", p.Document.ID, h, err)
				}
				h.Materialized = true
				av, err := h.MarshalDynamoItem()
				if err != nil {
					t.Fatal(err)
				}
				w.PutRequest.Item = av
				heads[p.Document.ID] = &h
			}
			k := [2]string{key[store.AttrPK].(*types.AttributeValueMemberS).Value, key[store.AttrSK].(*types.AttributeValueMemberS).Value}
			if _, seen := byKey[k]; !seen {
				order = append(order, k)
			}
			byKey[k] = w // the fund's item: each commit puts it, the last one stays
		}
	}
	client := dynamodb.NewFromConfig(dynamotest.Shared().Config())
	batches := make(chan []types.WriteRequest)
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for reqs := range batches {
				in := &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{env.Table: reqs}}
				for len(in.RequestItems) > 0 {
					out, err := client.BatchWriteItem(context.Background(), in)
					if err != nil {
						errs <- err
						return
					}
					in.RequestItems = out.UnprocessedItems
				}
			}
		}()
	}
	for len(order) > 0 {
		n := min(25, len(order))
		reqs := make([]types.WriteRequest, 0, n)
		for _, k := range order[:n] {
			reqs = append(reqs, byKey[k])
		}
		order = order[n:]
		batches <- reqs
	}
	close(batches)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestAFundListingAsKnownAtReadsTheLimitsThousandDocumentsAndRefusesOneMore
// drives store.MaxKnownAtFundDocuments: a fund of exactly 1,000
// documents, all committed, then all restated (half of them moving their
// asOf). Its listing as known after the restatements is paged through,
// 100 a page, to the end, and read whole (limit 1,000): each page holds
// the latest versions in the order of their asOf then ID, and costs the
// DynamoDB requests of the whole read (each page reads every document of
// the fund). Its listing as known between the first versions and the
// restatements, when every document has been restated since (the
// costliest read the limit admits: a search of each document's
// versions), is read whole and holds every document at version 1, at its
// asOf then. Every read is answered within the default request timeout,
// which the server enforces. That costliest read, by a principal whose
// bucket (200 tokens, the default burst, not refilled meanwhile) holds
// fewer tokens than the read makes requests, goes ahead, each group of
// its requests paid before it is made, and leaves the bucket in a debt of
// exactly the requests it made: the next request is refused with a
// Retry-After of that debt. One more document, written through the API
// after both instants, makes the listing as known at either, and now,
// refused (400 /problems/invalid, field knownAt) before any head is read:
// the limit counts the documents the listing reads, the fund's documents
// now and those voided since the instant.
func TestAFundListingAsKnownAtReadsTheLimitsThousandDocumentsAndRefusesOneMore(t *testing.T) {
	const n = store.MaxKnownAtFundDocuments
	timeout := config.Default().RequestTimeout
	clock := &steppedClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	env := fundtest.New(t)
	env.Store.Now = clock.now
	s := startAPI(t, env, func(o *api.Options) { o.RequestTimeout = timeout })

	// The first document is written through the API, which records the
	// start of the event feed; the rest as their commits would be.
	started := time.Now()
	heads := map[string]*store.Item{}
	put := func(i, rev, want int) {
		t.Helper()
		clock.step()
		if r := s.do(t, http.MethodPut, "/v1/documents/"+listedDoc(i, rev).ID, wire.RequestOf(listedDoc(i, rev))); r.Status != want {
			t.Fatalf("PUT document %d revision %d: %d\n%s", i, rev, r.Status, r.Body)
		}
	}
	put(0, 1, http.StatusCreated)
	commitRaw(t, env, clock, heads, 1, 1, n)
	clock.step()
	first := clock.now()
	put(0, 2, http.StatusOK)
	commitRaw(t, env, clock, heads, 2, 1, n)
	clock.step()
	second := clock.now()
	clock.step()
	t.Logf("%d documents, each committed and restated, written in %s", n, time.Since(started).Round(time.Millisecond))

	// want is the listing as known at the instant rev was the latest.
	want := func(rev int) []string {
		var out []fund.Document
		for i := range n {
			out = append(out, listedDoc(i, rev))
		}
		slices.SortFunc(out, func(a, b fund.Document) int {
			if c := a.AsOf.Compare(b.AsOf); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		lines := make([]string, 0, n)
		for _, d := range out {
			lines = append(lines, fmt.Sprintf("%s v%d %s %q", d.ID, rev, d.AsOf, d.Title))
		}
		return lines
	}
	path := func(at time.Time) string {
		return "/v1/funds/FUND_L/documents?knownAt=" + at.Format(time.RFC3339Nano)
	}
	// read sends one GET within the request timeout and returns the page
	// and the DynamoDB requests it made.
	read := func(s *testServer, path string) (response, []string, int) {
		t.Helper()
		env.Counter.Reset()
		start := time.Now()
		r := s.do(t, http.MethodGet, path, nil)
		took := time.Since(start)
		ops := env.Counter.Ops()
		t.Logf("GET %.90s: %d in %s, %d DynamoDB requests", path, r.Status, took.Round(time.Millisecond), len(ops))
		if took > timeout {
			t.Errorf("GET %s took %s, more than the request timeout %s", path, took, timeout)
		}
		if r.Status != http.StatusOK {
			return r, nil, len(ops)
		}
		var page wire.Page[wire.DocumentHeader]
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, h := range page.Items {
			lines = append(lines, fmt.Sprintf("%s v%d %s %q", h.DocumentID, h.Version, h.AsOf, h.Title))
		}
		if page.Next != "" {
			lines = append(lines, "next "+page.Next)
		}
		return r, lines, len(ops)
	}
	same := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			for i := range max(len(got), len(want)) {
				if i >= len(got) || i >= len(want) || got[i] != want[i] {
					t.Fatalf("%s: %d entries, want %d; the first difference, at %d: got %q, want %q", what, len(got), len(want), i, entryAt(got, i), entryAt(want, i))
				}
			}
		}
	}

	// As known after the restatements: paged through, then whole.
	var paged []string
	pageCosts := map[int]int{}
	for cursor, pages := "", 0; ; pages++ {
		if pages > n/100 {
			t.Fatalf("still paging after %d pages of 100", pages)
		}
		p := withQuery(path(second), "limit", "100")
		if cursor != "" {
			p = withQuery(p, "cursor", cursor)
		}
		r, lines, cost := read(s, p)
		if r.Status != http.StatusOK {
			t.Fatalf("page %d: %d\n%s", pages+1, r.Status, r.Body)
		}
		pageCosts[cost]++
		cursor = ""
		if k := len(lines) - 1; k >= 0 && strings.HasPrefix(lines[k], "next ") {
			cursor, lines = strings.TrimPrefix(lines[k], "next "), lines[:k]
		}
		if len(lines) != 100 {
			t.Errorf("page %d holds %d documents, want 100", pages+1, len(lines))
		}
		paged = append(paged, lines...)
		if cursor == "" {
			break
		}
	}
	same("the listing as known after the restatements, paged by 100", paged, want(2))
	r, whole, wholeCost := read(s, withQuery(path(second), "limit", strconv.Itoa(n)))
	if r.Status != http.StatusOK {
		t.Fatalf("whole: %d\n%s", r.Status, r.Body)
	}
	same("the listing as known after the restatements, whole", whole, want(2))
	if len(pageCosts) != 1 || pageCosts[wholeCost] != n/100 {
		t.Errorf("the %d pages cost %v DynamoDB requests (cost: pages), the whole listing %d: each page reads what the whole does", n/100, pageCosts, wholeCost)
	}

	// As known before the restatements: every document searched, on a
	// bucket of the default burst that does not refill meanwhile.
	const burst = 200
	frozen := clock.now()
	tight := startAPI(t, env, func(o *api.Options) {
		o.RequestTimeout, o.RateLimit, o.RateBurst, o.Clock = timeout, 1, burst, func() time.Time { return frozen }
	})
	r, whole, cost := read(tight, withQuery(path(first), "limit", strconv.Itoa(n)))
	if r.Status != http.StatusOK {
		t.Fatalf("the listing as known before the restatements, on a bucket of %d: %d\n%s", burst, r.Status, r.Body)
	}
	same("the listing as known before the restatements", whole, want(1))
	if cost <= burst {
		t.Fatalf("the costliest listing made %d DynamoDB requests: no more than the bucket holds, so its charge proves nothing", cost)
	}
	next := tight.do(t, http.MethodGet, "/v1/funds/FUND_L/documents?limit=1", nil)
	checkProblem(t, next, http.StatusTooManyRequests, "/problems/rate_limited")
	if got, want := next.Header.Get("Retry-After"), strconv.Itoa(cost-burst+1); got != want {
		t.Errorf("after a listing of %d DynamoDB requests on a bucket of %d at a token a second: Retry-After %s, want %s (a debt of every request made)", cost, burst, got, want)
	}

	// One more document: the listing as known at either instant is
	// refused, before it reads any document's head.
	put(n, 1, http.StatusCreated)
	for _, at := range []time.Time{first, second, clock.now()} {
		env.Counter.Reset()
		r := s.do(t, http.MethodGet, withQuery(path(at), "limit", strconv.Itoa(n)), nil)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("as known at %s, with %d documents: %d, want 400\n%.300s", at.Format(time.RFC3339Nano), n+1, r.Status, r.Body)
		}
		p := checkProblem(t, r, http.StatusBadRequest, "/problems/invalid")
		if p.Field != "knownAt" {
			t.Errorf("as known at %s, with %d documents: the problem names %q, want knownAt", at.Format(time.RFC3339Nano), n+1, p.Field)
		}
		if ops := env.Counter.Ops(); slices.Contains(ops, "BatchGetItem") {
			t.Errorf("as known at %s, with %d documents: the refused listing read heads: %v", at.Format(time.RFC3339Nano), n+1, ops)
		}
	}
}

func entryAt(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}
