package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// steppedClock is the table's clock of both servers: it moves only when
// the test moves it, so no test sleeps.
type steppedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *steppedClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *steppedClock) step()          { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(time.Second) }

// knownAtRoutes are the fund and investor routes that take knownAt, as the
// replay reads them.
var knownAtRoutes = []string{
	"/v1/funds",
	"/v1/funds/FUND_K",
	"/v1/funds/FUND_R",
	"/v1/funds/FUND_K/documents",
	"/v1/funds/FUND_K/documents?kind=capital_call_notice",
	"/v1/funds/FUND_K/positions",
	"/v1/investors",
	"/v1/investors?fundId=FUND_K",
	"/v1/investors/INV_K1",
	"/v1/investors/INV_K2",
	"/v1/investors/INV_K1/positions",
	"/v1/investors/INV_K2/positions",
	"/v1/investors/INV_K1/summary?asOf=2025-12-31", // names its funds by their records then
}

// fundRecorded is one live answer and the instant it was read at.
type fundRecorded struct {
	path    string
	status  int
	body    map[string]any
	knownAt string
}

// fundKnownAtDoc is a document of FUND_K with positions of (position,
// investor) pairs.
func fundKnownAtDoc(title, asOf string, holders ...[2]string) map[string]any {
	var ps []any
	for _, h := range holders {
		ps = append(ps, map[string]any{"positionId": h[0], "investorId": h[1],
			"capitalCall": map[string]any{"amount": "10.00", "status": "pending", "dueDate": "2025-12-31"}})
	}
	return map[string]any{"fundId": "FUND_K", "kind": "capital_call_notice", "title": title, "asOf": asOf, "currency": "USD", "positions": ps}
}

// TestFundAndInvestorRoutesReplayAsKnownAt is issue 25's literal proof for
// the fund and investor routes: through two servers on one table, records
// are created and replaced, documents created, restated (one moving its
// asOf, one dropping a position) and voided; after each write every route
// is read live from the other server. Afterwards each route, asked with
// knownAt set to each recorded answer's basis.knownAt (the instant a 404
// was read at, for those), answers exactly what was recorded, but for the
// basis, which says knownAt and settled.
func TestFundAndInvestorRoutesReplayAsKnownAt(t *testing.T) {
	clock := &steppedClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	a, b := twoServersOnOneTable(t, clock.now)
	servers := []*testServer{a, b}
	writes := []struct {
		what   string
		method string
		path   string
		body   any
		want   int
	}{
		{"a fund's record before any document", http.MethodPut, "/v1/funds/FUND_R", map[string]any{"name": "Record Only", "baseCurrency": "EUR"}, 201},
		{"a first document", http.MethodPut, "/v1/documents/DOC_K1", fundKnownAtDoc("Call 1", "2025-03-31", [2]string{"POS_K1", "INV_K1"}), 201},
		{"an investor's record", http.MethodPut, "/v1/investors/INV_K1", map[string]any{"displayName": "First LP", "investorType": "pension"}, 201},
		{"a second document with a new investor", http.MethodPut, "/v1/documents/DOC_K2", fundKnownAtDoc("Call 2", "2025-06-30", [2]string{"POS_K1", "INV_K1"}, [2]string{"POS_K2", "INV_K2"}), 201},
		{"a restatement that moves the asOf", http.MethodPut, "/v1/documents/DOC_K1", fundKnownAtDoc("Call 1 restated", "2025-09-30", [2]string{"POS_K1", "INV_K1"}), 200},
		{"the fund's record", http.MethodPut, "/v1/funds/FUND_K", map[string]any{"name": "K One", "baseCurrency": "USD"}, 201},
		{"the fund's record replaced", http.MethodPut, "/v1/funds/FUND_K", map[string]any{"name": "K Two", "baseCurrency": "USD"}, 200},
		{"the investor's record replaced", http.MethodPut, "/v1/investors/INV_K1", map[string]any{"displayName": "First LP, renamed", "investorType": "pension"}, 200},
		{"a restatement that drops a position", http.MethodPut, "/v1/documents/DOC_K2", fundKnownAtDoc("Call 2 restated", "2025-06-30", [2]string{"POS_K1", "INV_K1"}), 200},
		{"a void", http.MethodDelete, "/v1/documents/DOC_K1", nil, 200},
		{"a third document", http.MethodPut, "/v1/documents/DOC_K3", fundKnownAtDoc("Call 3", "2025-01-31", [2]string{"POS_K3", "INV_K2"}), 201},
	}
	var recs []fundRecorded
	read := func(s *testServer) {
		at := clock.now().Format(time.RFC3339Nano)
		for _, path := range knownAtRoutes {
			r := s.do(t, http.MethodGet, path, nil)
			body := r.JSON(t)
			if r.Status == http.StatusOK {
				basis, _ := body["basis"].(map[string]any)
				if basis == nil || basis["knownAt"] != at || basis["settled"] != false {
					t.Fatalf("GET %s: basis %v, want knownAt %s, not settled", path, body["basis"], at)
				}
			}
			recs = append(recs, fundRecorded{path, r.Status, body, at})
		}
		clock.step() // every later write is committed after the instant read
	}
	read(b)
	for i, w := range writes {
		clock.step()
		hdr := []string{}
		if w.method == http.MethodDelete {
			hdr = []string{"If-Match", "*"}
		}
		if r := servers[i%2].do(t, w.method, w.path, w.body, hdr...); r.Status != w.want {
			t.Fatalf("%s: %s %s: %d\n%s", w.what, w.method, w.path, r.Status, r.Body)
		}
		read(servers[(i+1)%2])
	}
	// Each answer must have changed at least once, or the replay proves
	// nothing of the route.
	changed := map[string]bool{}
	first := map[string]fundRecorded{}
	for _, rc := range recs {
		if f, ok := first[rc.path]; !ok {
			first[rc.path] = rc
		} else if f.status != rc.status || !reflect.DeepEqual(withoutBasis(f.body), withoutBasis(rc.body)) {
			changed[rc.path] = true
		}
	}
	for _, path := range knownAtRoutes {
		if !changed[path] {
			t.Errorf("GET %s never changed over the writes: the replay proves nothing of it", path)
		}
	}
	clock.step()
	for i, rc := range recs {
		u, _ := url.Parse(rc.path)
		q := u.Query()
		q.Set("knownAt", rc.knownAt)
		u.RawQuery = q.Encode()
		r := servers[i%2].do(t, http.MethodGet, u.String(), nil)
		got := r.JSON(t)
		if r.Status != rc.status {
			t.Errorf("GET %s: %d, recorded %d\n%s", u, r.Status, rc.status, r.Body)
			continue
		}
		if r.Status != http.StatusOK {
			if got["type"] != rc.body["type"] {
				t.Errorf("GET %s: %v, recorded %v", u, got["type"], rc.body["type"])
			}
			continue
		}
		basis, _ := got["basis"].(map[string]any)
		var asOf any // null, or the asOf asked for
		if d := q.Get("asOf"); d != "" {
			asOf = d
		}
		if basis == nil || basis["knownAt"] != rc.knownAt || basis["asOf"] != asOf {
			t.Errorf("GET %s: basis %v, want knownAt %s and asOf %v", u, got["basis"], rc.knownAt, asOf)
		}
		if g, w := withoutBasis(got), withoutBasis(rc.body); !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("GET %s:\n got %s\nwant %s", u, gb, wb)
		}
	}
}

func withoutBasis(body map[string]any) map[string]any {
	out := make(map[string]any, len(body))
	for k, v := range body {
		if k != "basis" {
			out[k] = v
		}
	}
	return out
}

// TestARecordAsKnownAtCostsConstantReadsAndIsCharged replaces a fund's
// record 16 times and reads each version back as known at its instant:
// the latest costs the record's BatchGet alone, an earlier one a Query of
// the record's instant index and a GetItem more, whatever the version;
// before the first, the fund did not exist
// (404, as an unknown fund). A token that does not cover the fund is
// answered 404 with no read, with knownAt as without. And the reads are
// charged: a burst of 3 serves three live reads, but one read as known at
// the first version leaves no token for a second request.
func TestARecordAsKnownAtCostsConstantReadsAndIsCharged(t *testing.T) {
	clock := &steppedClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	env := fundtest.New(t)
	env.Store.Now = clock.now
	env.Seed(t)
	s := startAPI(t, env, nil)
	before := clock.now().Format(time.RFC3339Nano)
	var at []string
	for v := 1; v <= 16; v++ {
		clock.step()
		if r := s.do(t, http.MethodPut, "/v1/funds/FUND_K", map[string]any{"name": "K v" + strconv.Itoa(v), "baseCurrency": "USD"}); r.Status/100 != 2 {
			t.Fatalf("PUT version %d: %d\n%s", v, r.Status, r.Body)
		}
		at = append(at, clock.now().Format(time.RFC3339Nano))
	}
	clock.step()
	for v := 1; v <= 16; v++ {
		env.Counter.Reset()
		r := s.do(t, http.MethodGet, "/v1/funds/FUND_K?knownAt="+at[v-1], nil)
		body := r.JSON(t)
		if r.Status != http.StatusOK || body["name"] != "K v"+strconv.Itoa(v) || body["version"] != float64(v) {
			t.Fatalf("version %d as known at %s: %d %v", v, at[v-1], r.Status, body)
		}
		ops := env.Counter.Ops()
		want := []string{"BatchGetItem", "Query", "GetItem"}
		if v == 16 {
			want = want[:1]
		}
		if !slices.Equal(ops, want) {
			t.Errorf("version %d as known at its instant costs %v: want %v", v, ops, want)
		}
	}
	checkProblem(t, s.do(t, http.MethodGet, "/v1/funds/FUND_K?knownAt="+before, nil), http.StatusNotFound, "/problems/not_found")

	asZ := "Bearer " + token(t, api.Principal{Subject: "admin-z", Role: api.RoleAdmin, Funds: []string{"FUND_Z"}})
	costsAre(t, s, []costCase{
		{"GET", "/v1/funds/FUND_K", asZ, nil, 404, ""},
		{"GET", "/v1/funds/FUND_K?knownAt=" + at[4], asZ, nil, 404, ""},
		{"GET", "/v1/funds/FUND_A/documents?knownAt=" + at[4], asZ, nil, 404, ""},
		{"GET", "/v1/funds/FUND_A/positions?knownAt=" + at[4], asZ, nil, 404, ""},
		{"GET", "/v1/investors?fundId=FUND_A&knownAt=" + at[4], asZ, nil, 404, ""},
	})

	tight := func() *testServer {
		return startAPI(t, env, func(o *api.Options) { o.RateLimit, o.RateBurst, o.Clock = 1, 3, clock.now })
	}
	live := tight()
	for i := range 3 {
		if r := live.do(t, http.MethodGet, "/v1/funds/FUND_K", nil); r.Status != http.StatusOK {
			t.Fatalf("live read %d of a burst of 3: %d\n%s", i+1, r.Status, r.Body)
		}
	}
	past := tight()
	if r := past.do(t, http.MethodGet, "/v1/funds/FUND_K?knownAt="+at[0], nil); r.Status != http.StatusOK {
		t.Fatalf("read as known at version 1: %d\n%s", r.Status, r.Body)
	}
	if r := past.do(t, http.MethodGet, "/v1/funds/FUND_K", nil); r.Status != http.StatusTooManyRequests {
		t.Fatalf("after a read as known at version 1 (3 requests) from a burst of 3: %d, want 429\n%s", r.Status, r.Body)
	}
}
