package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

// knownAtClock is a clock the tests move by hand, shared by the stores of
// two API servers on one table: every write and read of a step happens at
// the step's instant, so nothing sleeps.
type knownAtClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *knownAtClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// step moves the clock a minute on and returns the new instant.
func (c *knownAtClock) step() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Minute)
	return c.now
}

// twoServersOnOneTable starts two API servers on one table, each with its
// own store, both on the clock now (writes and reads are stamped from it):
// two instances. The second store's requests are counted on the first's
// Counter too, so a cost test may read from either.
func twoServersOnOneTable(t *testing.T, now func() time.Time) (a, b *testServer) {
	t.Helper()
	env := fundtest.New(t)
	env.Store.Now = now
	other := *env
	other.Store = store.NewStore(store.NewDB(dynamotest.Shared().Config(dynamotest.WithAPIOptions(env.Counter.APIOption()))), env.Table)
	other.Store.Now = now
	other.Positions = positions.NewAnalytics(other.Store)
	return startAPI(t, env, nil), startAPI(t, &other, nil)
}

// knownAtNotice is revision rev of a capital call notice of FUND_K: its
// amounts change with rev, its asOf is asOf, and it reports the positions
// named.
func knownAtNotice(rev int, asOf string, positions ...string) map[string]any {
	var ps []any
	for i, p := range positions {
		ps = append(ps, map[string]any{"positionId": p, "investorId": "INV_" + p,
			"capitalCall":        map[string]any{"amount": fmt.Sprintf("%d.00", 1000*(i+1)+rev), "status": "pending", "dueDate": "2025-12-15"},
			"unfundedCommitment": map[string]any{"amount": fmt.Sprintf("%d.00", 90000-rev)}})
	}
	return map[string]any{"fundId": "FUND_K", "kind": "capital_call_notice", "title": fmt.Sprintf("Call, revision %d", rev), "asOf": asOf, "currency": "USD",
		"capitalActivity": map[string]any{"amount": fmt.Sprintf("%d.00", 5000+rev), "status": "pending", "activityDate": asOf, "description": "Call"},
		"positions":       ps}
}

// knownAtPaths are the requests of the document routes recorded for doc.
func knownAtPaths(doc string) []string {
	base := "/v1/documents/" + doc
	return []string{
		base, base + "?limit=1", base + "/versions", base + "/versions?limit=2", base + "/versions?from=2025-12-01",
		base + "/versions/latest", base + "/versions/1", base + "/versions/2", base + "/versions/3",
		base + "/positions/POS_1", base + "/positions/POS_2", base + "/positions/POS_2?itemType=capital_call",
		base + "/capital", base + "/capital?limit=1", base + "/analysis",
	}
}

// knownAtAnswer is a recorded answer: its status, ETag and body.
type knownAtAnswer struct {
	path   string
	at     time.Time // the instant it was read at
	status int
	etag   string
	body   map[string]any
	raw    []byte
}

// knownAtGet reads path from s; knownAt, when not zero, is added to it.
func knownAtGet(t *testing.T, s *testServer, path string, knownAt time.Time) knownAtAnswer {
	t.Helper()
	p := path
	if !knownAt.IsZero() {
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		p += sep + "knownAt=" + url.QueryEscape(knownAt.Format(time.RFC3339Nano))
	}
	r := s.do(t, http.MethodGet, p, nil)
	if r.Status >= 500 {
		t.Fatalf("GET %s: %d\n%s", p, r.Status, r.Body)
	}
	return knownAtAnswer{path: path, status: r.Status, etag: r.Header.Get("ETag"), body: r.JSON(t), raw: r.Body}
}

// comparable is an answer's body without what may differ between two
// reads of the same answer: its basis, the request's own ID in a problem,
// and the sealed bytes of a cursor (whether there is one stays).
func (a knownAtAnswer) comparable() map[string]any {
	out := map[string]any{}
	for k, v := range a.body {
		switch k {
		case "basis", "requestId":
		case "next":
			out[k] = "a cursor"
		default:
			out[k] = v
		}
	}
	return out
}

// basisKnownAt is the answer's basis.knownAt.
func (a knownAtAnswer) basisKnownAt(t *testing.T) time.Time {
	t.Helper()
	b, ok := a.body["basis"].(map[string]any)
	if !ok {
		t.Fatalf("GET %s has no basis\n%s", a.path, a.raw)
	}
	at, err := time.Parse(time.RFC3339Nano, b["knownAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if b["asOf"] != nil {
		t.Errorf("GET %s: basis.asOf is %v, want null (the route takes no asOf)", a.path, b["asOf"])
	}
	return at
}

// TestDocumentRoutesReplayWhatTheyAnsweredAsKnownAt records the answers of
// every document route at several instants while documents are created,
// restated (amounts, a moved asOf, a dropped position, more than 20 times)
// and voided through two API servers on one table, writes and reads
// alternating between them; afterwards each request, sent again with
// knownAt set to its answer's basis.knownAt, must return the recorded
// status, ETag and body exactly, except the basis (and a problem's request
// ID and the cursor's sealed bytes), and the pages after a recorded first
// page and after the replayed one must be the same.
func TestDocumentRoutesReplayWhatTheyAnsweredAsKnownAt(t *testing.T) {
	clock := &knownAtClock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	a, b := twoServersOnOneTable(t, clock.Now)
	servers := []*testServer{a, b}
	writes := 0
	write := func(method, doc string, body any, headers ...string) {
		t.Helper()
		clock.step()
		s := servers[writes%2]
		writes++
		r := s.do(t, method, "/v1/documents/"+doc, body, headers...)
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("%s %s: %d\n%s", method, doc, r.Status, r.Body)
		}
	}
	var recorded []knownAtAnswer
	reads := 0
	record := func() {
		t.Helper()
		at := clock.step()
		s := servers[reads%2]
		reads++
		for _, doc := range []string{"KA_1", "KA_2", "KA_3"} {
			for _, path := range knownAtPaths(doc) {
				ans := knownAtGet(t, s, path, time.Time{})
				ans.at = at
				if ans.status == http.StatusOK && !ans.basisKnownAt(t).Equal(at) {
					t.Fatalf("GET %s at %s: basis.knownAt %s, want the instant of the read", path, at, ans.basisKnownAt(t))
				}
				recorded = append(recorded, ans)
			}
		}
	}

	record() // nothing exists yet: every route is 404
	write(http.MethodPut, "KA_1", knownAtNotice(1, "2025-12-01", "POS_1", "POS_2"))
	record()
	write(http.MethodPut, "KA_1", knownAtNotice(2, "2025-12-01", "POS_1", "POS_2")) // amounts restated
	write(http.MethodPut, "KA_2", knownAtNotice(1, "2025-11-01", "POS_1", "POS_2"))
	record()
	write(http.MethodPut, "KA_1", knownAtNotice(3, "2025-11-15", "POS_1", "POS_2")) // its asOf moves back
	record()
	write(http.MethodPut, "KA_1", knownAtNotice(4, "2025-11-15", "POS_1")) // POS_2 dropped
	write(http.MethodPut, "KA_2", knownAtNotice(2, "2025-12-20", "POS_1", "POS_2"))
	record()
	write(http.MethodDelete, "KA_2", nil, "If-Match", `"2"`) // voided
	for rev := 1; rev <= 23; rev++ {
		write(http.MethodPut, "KA_3", knownAtNotice(rev, "2025-12-31", "POS_1", "POS_2"))
		if rev == 2 || rev == 22 {
			record()
		}
	}
	record()
	// Later restatements, which no replay may show.
	write(http.MethodPut, "KA_1", knownAtNotice(5, "2026-01-31", "POS_2"))
	write(http.MethodPut, "KA_3", knownAtNotice(24, "2026-01-31", "POS_1"))
	clock.step()

	statuses := map[int]int{}
	for i, rec := range recorded {
		at := rec.at
		if rec.status == http.StatusOK {
			at = rec.basisKnownAt(t)
		}
		s := servers[(i+1)%2] // the other server than the one that recorded, mostly
		got := knownAtGet(t, s, rec.path, at)
		statuses[rec.status]++
		if got.status != rec.status || got.etag != rec.etag || !reflect.DeepEqual(got.comparable(), rec.comparable()) {
			t.Errorf("GET %s as known at %s: %d ETag %s\n%s\nrecorded then: %d ETag %s\n%s", rec.path, at.Format(time.RFC3339Nano),
				got.status, got.etag, got.raw, rec.status, rec.etag, rec.raw)
			continue
		}
		if got.status == http.StatusOK {
			if !got.basisKnownAt(t).Equal(at) {
				t.Errorf("GET %s as known at %s: basis.knownAt %s", rec.path, at, got.basisKnownAt(t))
			}
			if settled, _ := got.body["basis"].(map[string]any)["settled"].(bool); settled != !at.After(clock.Now().Add(-store.ChangeSettleMargin)) {
				t.Errorf("GET %s as known at %s: settled %v at %s", rec.path, at, settled, clock.Now())
			}
		}
		// The page after: from the recorded cursor and from the replayed one.
		if next, ok := rec.body["next"].(string); ok {
			path, _, _ := strings.Cut(rec.path, "?")
			q, _ := url.ParseQuery(rec.path[min(len(rec.path), len(path)+1):])
			q.Set("cursor", next)
			fromRecorded := knownAtGet(t, s, path+"?"+q.Encode(), time.Time{})
			q.Set("cursor", got.body["next"].(string))
			fromReplayed := knownAtGet(t, s, path+"?"+q.Encode(), time.Time{})
			if fromRecorded.status != http.StatusOK || !reflect.DeepEqual(fromRecorded.comparable(), fromReplayed.comparable()) ||
				!reflect.DeepEqual(fromRecorded.body["basis"], fromReplayed.body["basis"]) {
				t.Errorf("the page after GET %s: from the recorded cursor %d\n%s\nfrom the replayed one %d\n%s", rec.path,
					fromRecorded.status, fromRecorded.raw, fromReplayed.status, fromReplayed.raw)
			}
		}
	}
	// The record holds what the replay must tell apart.
	if statuses[http.StatusOK] < 100 || statuses[http.StatusNotFound] < 20 {
		t.Errorf("recorded %v answers by status: too few to prove anything", statuses)
	}
	versionsSeen := map[string]map[float64]bool{}
	for _, rec := range recorded {
		if rec.status == http.StatusOK && strings.Count(rec.path, "/") == 3 {
			doc := strings.Split(rec.path, "/")[3]
			doc, _, _ = strings.Cut(doc, "?")
			if versionsSeen[doc] == nil {
				versionsSeen[doc] = map[float64]bool{}
			}
			versionsSeen[doc][rec.body["version"].(float64)] = true
		}
	}
	if len(versionsSeen["KA_1"]) < 4 || len(versionsSeen["KA_2"]) < 2 || len(versionsSeen["KA_3"]) < 3 {
		t.Errorf("the recorded overviews show versions %v: too few", versionsSeen)
	}
}

// TestDocumentRoutesKnownAtRefusals: a knownAt before a document's first
// commit is answered exactly as an unknown document, on every route; a
// knownAt later than the server's clock, or malformed, is 400; a knownAt
// other than the one a cursor pins is 400.
func TestDocumentRoutesKnownAtRefusals(t *testing.T) {
	clock := &knownAtClock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	s, _ := twoServersOnOneTable(t, clock.Now)
	before := clock.step()
	clock.step()
	if r := s.do(t, http.MethodPut, "/v1/documents/KA_R", knownAtNotice(1, "2025-12-01", "POS_1", "POS_2")); r.Status != http.StatusCreated {
		t.Fatalf("PUT: %d\n%s", r.Status, r.Body)
	}
	after := clock.step()
	for _, path := range knownAtPaths("KA_R") {
		got := knownAtGet(t, s, path, before)
		unknown := knownAtGet(t, s, strings.Replace(path, "KA_R", "KA_NONE", 1), before)
		if got.status != http.StatusNotFound || unknown.status != http.StatusNotFound ||
			strings.ReplaceAll(fmt.Sprint(got.comparable()), "KA_R", "KA_NONE") != fmt.Sprint(unknown.comparable()) {
			t.Errorf("GET %s as known before its first commit: %d %s; an unknown document: %d %s", path, got.status, got.raw, unknown.status, unknown.raw)
		}
		if ans := knownAtGet(t, s, path, after); ans.status != http.StatusOK && !strings.Contains(path, "/versions/2") && !strings.Contains(path, "/versions/3") {
			t.Errorf("GET %s as known after its first commit: %d %s", path, ans.status, ans.raw)
		}
		for _, bad := range []string{after.Add(time.Second).Format(time.RFC3339Nano), "2026-03-02", "yesterday", "2026-03-02T09:00:00"} {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			r := s.do(t, http.MethodGet, path+sep+"knownAt="+url.QueryEscape(bad), nil)
			if r.Status != http.StatusBadRequest || r.JSON(t)["field"] != "knownAt" {
				t.Errorf("GET %s with knownAt=%s: %d, want 400 naming knownAt\n%s", path, bad, r.Status, r.Body)
			}
		}
	}
	// A cursor's pinned knownAt may be sent again, not another.
	first := knownAtGet(t, s, "/v1/documents/KA_R?limit=1", after)
	next := first.body["next"].(string)
	if r := s.do(t, http.MethodGet, "/v1/documents/KA_R?limit=1&cursor="+next+"&knownAt="+url.QueryEscape(before.Format(time.RFC3339Nano)), nil); r.Status != http.StatusBadRequest {
		t.Errorf("a cursor with another knownAt: %d\n%s", r.Status, r.Body)
	}
	if r := s.do(t, http.MethodGet, "/v1/documents/KA_R?limit=1&cursor="+next+"&knownAt="+url.QueryEscape(after.Format(time.RFC3339Nano)), nil); r.Status != http.StatusOK {
		t.Errorf("a cursor with its own knownAt: %d\n%s", r.Status, r.Body)
	}
	// A live read takes no asOf and names none.
	if r := s.do(t, http.MethodGet, "/v1/documents/KA_R?asOf=2025-12-01", nil); r.Status != http.StatusBadRequest {
		t.Errorf("the overview with asOf: %d, want 400 (not a parameter of the route)\n%s", r.Status, r.Body)
	}
}

// TestDocumentRouteCursorsPinTheirBasis reads the first page of the
// overview, /versions and /capital, restates the document, and reads the
// pages after: they show the first page's version and echo its basis,
// for a live first page and for one read as known at an instant.
func TestDocumentRouteCursorsPinTheirBasis(t *testing.T) {
	clock := &knownAtClock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	s, other := twoServersOnOneTable(t, clock.Now)
	for rev := 1; rev <= 4; rev++ {
		clock.step()
		if r := s.do(t, http.MethodPut, "/v1/documents/KA_P", knownAtNotice(rev, "2025-12-01", "POS_1", "POS_2")); r.Status >= 300 {
			t.Fatalf("PUT: %d\n%s", r.Status, r.Body)
		}
	}
	third := clock.Now().Add(-time.Minute) // version 3 was known then
	clock.step()
	for _, knownAt := range []time.Time{{}, third} {
		want := 4.0
		if !knownAt.IsZero() {
			want = 3
		}
		firsts := map[string]knownAtAnswer{}
		for _, path := range []string{"/v1/documents/KA_P?limit=1", "/v1/documents/KA_P/versions?limit=1", "/v1/documents/KA_P/capital?limit=1"} {
			firsts[path] = knownAtGet(t, s, path, knownAt)
		}
		clock.step()
		if r := other.do(t, http.MethodPut, "/v1/documents/KA_P", knownAtNotice(9, "2025-12-09", "POS_1", "POS_3")); r.Status != http.StatusOK {
			t.Fatalf("PUT: %d\n%s", r.Status, r.Body)
		}
		clock.step()
		for path, first := range firsts {
			if first.status != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", path, first.status, first.raw)
			}
			page := knownAtGet(t, other, path+"&cursor="+first.body["next"].(string), time.Time{})
			// The same asOf and knownAt; settled may have become true since.
			pinned := func(a knownAtAnswer) []any {
				b, _ := a.body["basis"].(map[string]any)
				return []any{b["asOf"], b["knownAt"]}
			}
			if page.status != http.StatusOK || !reflect.DeepEqual(pinned(page), pinned(first)) {
				t.Errorf("the page after GET %s: %d, basis %v, want the first page's %v\n%s", path, page.status, page.body["basis"], first.body["basis"], page.raw)
			}
			switch {
			case strings.Contains(path, "/versions"):
				v := page.body["versions"].([]any)
				if page.body["latest"].(map[string]any)["version"] != want || len(v) != 1 || v[0].(map[string]any)["version"] != want-1 || page.etag != fmt.Sprintf(`"%v"`, want) {
					t.Errorf("the page after GET %s: %s, want version %v as latest", path, page.raw, want)
				}
			default:
				if page.body["version"] != want {
					t.Errorf("the page after GET %s: %s, want version %v", path, page.raw, want)
				}
			}
		}
	}
}

// TestAKnownAtReadCostsConstantReadUnits commits a document 64 times
// and reads its overview's first page (limit=1) as known at the instant of
// each version: each read makes at most 2 GetItems (the head, the
// version's record) and 4 Queries (the instant index, the version's
// partition, and the 20 history records below it of each kind), and its
// read units stay under that bound, whatever the version. The other
// routes' knownAt reads find the version the same way. A refusal of
// another fund's document costs what an unknown one does, one GetItem,
// knownAt or not.
func TestAKnownAtReadCostsConstantReadUnits(t *testing.T) {
	clock := &knownAtClock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	s, _ := twoServersOnOneTable(t, clock.Now)
	const n = 64
	instants := make([]time.Time, n+1)
	for v := 1; v <= n; v++ {
		instants[v] = clock.step()
		d := fund.Document{ID: "KA_COST", CreatedBy: "test", DocumentFields: fund.DocumentFields{FundID: "FUND_K", Kind: fund.KindCapitalCallNotice,
			Title: fmt.Sprintf("Revision %d", v), AsOf: fund.MustDate("2025-12-01"), Currency: "USD"},
			CapitalActivity: &fund.CapitalActivity{Amount: fund.MustMoney(fmt.Sprintf("%d.00", 1000+v)), Status: fund.StatusPending,
				ActivityDetails: fund.ActivityDetails{ActivityDate: fund.MustDate("2025-12-01"), Description: "Call"}},
			Positions: []fund.Position{{ID: "POS_1", InvestorID: "INV_1", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(fmt.Sprintf("%d.00", 100+v))}}}}
		if _, err := s.Store.Restate(context.Background(), d, nil); err != nil {
			t.Fatal(err)
		}
	}
	clock.step()
	const search = 2 // the head, the record
	// Every GetItem reads one item of less than 4 KB (one unit), and so
	// does the Query of the instant index; the version's partition is a
	// few hundred bytes (one unit); 20 history records of a few hundred
	// bytes each take at most 3 units a Query.
	bound := float64(search) + 1 + 1 + 2*3
	worst := 0.0
	for v := 1; v <= n; v++ {
		s.Counter.Reset()
		spent := s.Store.Consumed()
		r := knownAtGet(t, s, "/v1/documents/KA_COST?limit=1", instants[v])
		units := s.Store.Consumed().Sub(spent).Total().Read
		worst = max(worst, units)
		ops := s.Counter.Ops()
		gets, queries := 0, 0
		for _, op := range ops {
			switch op {
			case "GetItem":
				gets++
			case "Query":
				queries++
			default:
				t.Errorf("version %d: the read made a %s", v, op)
			}
		}
		if r.status != http.StatusOK || r.body["version"] != float64(v) {
			t.Fatalf("as known at version %d's commit: %d\n%s", v, r.status, r.raw)
		}
		earlier := r.body["documents"].(map[string]any)["earlier"].([]any)
		if len(earlier) != min(v-1, store.OverviewHistory) || (v > 1 && earlier[len(earlier)-1].(map[string]any)["version"] != float64(v-1)) {
			t.Errorf("as known at version %d: %d earlier versions, the last %v", v, len(earlier), earlier)
		}
		if gets > search || queries > 4 || units > bound {
			t.Errorf("as known at version %d: %d GetItems, %d Queries, %.1f read units; want at most %d, 4 and %.0f", v, gets, queries, units, search, bound)
		}
	}
	t.Logf("the overview's first page as known at each of 64 versions: at most %.1f read units (bound %.0f: 2 GetItems + 8)", worst, bound)

	// Refusals: another fund's document costs one GetItem, as an unknown one.
	asA := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	knownAt := url.QueryEscape(instants[n/2].Format(time.RFC3339Nano))
	for _, route := range []string{"", "?limit=1", "/versions", "/versions?from=2025-01-01", "/versions/latest", "/versions/3", "/positions/POS_1",
		"/positions/POS_1?itemType=capital_call", "/capital", "/capital?limit=1", "/analysis"} {
		sep := "?"
		if strings.Contains(route, "?") {
			sep = "&"
		}
		var ops [2][]string
		var bodies [2]string
		for i, doc := range []string{"KA_COST", "KA_NONE"} {
			s.Counter.Reset()
			r := s.do(t, http.MethodGet, "/v1/documents/"+doc+route+sep+"knownAt="+knownAt, nil, "Authorization", asA)
			if r.Status != http.StatusNotFound {
				t.Fatalf("GET %s%s as known at version 32: %d, want 404\n%s", doc, route, r.Status, r.Body)
			}
			ops[i] = s.Counter.Ops()
			p := r.JSON(t)
			bodies[i] = strings.ReplaceAll(fmt.Sprint(p["type"], p["title"], p["detail"], p["instance"]), doc, "DOC")
		}
		if !slices.Equal(ops[0], ops[1]) || !slices.Equal(ops[0], []string{"GetItem"}) || bodies[0] != bodies[1] {
			t.Errorf("GET %s as another fund's admin, as known at version 32: %v %q; an unknown document: %v %q; want one GetItem each, the same answer",
				route, ops[0], bodies[0], ops[1], bodies[1])
		}
	}
}
