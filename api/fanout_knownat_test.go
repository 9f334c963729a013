package api_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// fanoutKnownAtPaths are the fan-out reads the replay covers: INV_K1 holds
// PK1 and PK3, FUND_K holds PK1, PK2 and PK3, S1 states PK1 and PK2.
var fanoutKnownAtPaths = []string{
	"/v1/investors/INV_K1/summary?asOf=2025-09-30", "/v1/investors/INV_K1/summary?asOf=2025-12-31&limit=1",
	"/v1/investors/INV_K1/performance", "/v1/investors/INV_K1/performance?asOf=2025-09-30&limit=1",
	"/v1/funds/FUND_K/performance", "/v1/funds/FUND_K/performance?asOf=2025-09-30",
	"/v1/documents/S1/reconciliation", "/v1/documents/S1/reconciliation?limit=1",
}

// TestFanoutReadsReplayAsKnownAt records the answers of the investor
// summary and performance, the fund performance and the reconciliation
// while documents are created, restated (one restatement drops a position,
// one moves the statement's asOf), voided and created again, through two
// servers on one table, writes and reads alternating between them; the
// second page of every paged answer too, and its cursor. Afterwards each
// is asked again with knownAt set to its basis.knownAt (and asOf to its
// basis.asOf) from the other server and answers the same but for the
// basis; the next of each replayed first page, used after every write,
// answers the second page recorded then (a later page of a knownAt read is
// read at the pinned instant).
func TestFanoutReadsReplayAsKnownAt(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	a, b := twoServersOnOneTable(t, func() time.Time { return now })
	servers := []*testServer{a, b}
	var log []recorded
	second := map[int]map[string]any{} // the second pages, by index in log
	record := func() {
		t.Helper()
		now = now.Add(30 * time.Second)
		for i, path := range fanoutKnownAtPaths {
			if len(log) < len(fanoutKnownAtPaths) && strings.Contains(path, "/investors/") && strings.Contains(path, "limit=1") {
				// Before any document, the registry is empty: the live read
				// is 404, while the registry read later lists positions not
				// yet registered then, whose page is empty but for next
				// (the registry's registration-instant filter is another
				// change's).
				continue
			}
			r := servers[i%2].do(t, http.MethodGet, path, nil)
			rec := recorded{path: path, status: r.Status, at: now}
			if r.Status == http.StatusOK {
				rec.body = r.JSON(t)
				var basis struct{ Basis wire.Basis }
				if err := json.Unmarshal(r.Body, &basis); err != nil || !basis.Basis.KnownAt.Equal(now) || basis.Basis.Settled {
					t.Fatalf("%s: basis %+v (%v), want knownAt %s, not settled", path, basis.Basis, err, now)
				}
				if next, _ := rec.body["next"].(string); next != "" {
					p := servers[(i+1)%2].do(t, http.MethodGet, withQuery(strings.Split(path, "?")[0], "cursor", next), nil)
					if p.Status != http.StatusOK {
						t.Fatalf("%s, page 2: %d\n%s", path, p.Status, p.Body)
					}
					second[len(log)] = p.JSON(t)
				}
			} else if r.Status != http.StatusNotFound {
				t.Fatalf("%s: %d\n%s", path, r.Status, r.Body)
			}
			log = append(log, rec)
		}
	}
	step := 0
	write := func(method string, d fund.Document, ifMatch string) {
		t.Helper()
		now = now.Add(time.Minute)
		s := servers[step%2]
		step++
		var r response
		if method == http.MethodDelete {
			r = s.do(t, method, "/v1/documents/"+d.ID, nil, "If-Match", ifMatch)
		} else {
			r = s.do(t, method, "/v1/documents/"+d.ID, wire.RequestOf(d), "If-Match", ifMatch)
		}
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("%s %s: %d\n%s", method, d.ID, r.Status, r.Body)
		}
		record()
	}
	statement := func(pos, inv, nav string) fund.Position {
		return fund.Position{ID: pos, InvestorID: inv, CapitalAccount: &fund.CapitalAccount{PeriodStart: fund.MustDate("2025-01-01"),
			Contributions: knownAtMoney("100000.00"), NetUnrealizedGainLoss: knownAtMoney(nav + ".00"), EndingNAV: fund.MustMoney(fmt.Sprintf("%d.00", 100000+atoi(t, nav)))}}
	}
	s1 := func(asOf, nav string) fund.Document {
		return knownAtDoc("S1", fund.KindCapitalAccountStatement, asOf, statement("PK1", "INV_K1", nav), statement("PK2", "INV_K2", "1000"))
	}

	record() // nothing yet: 404 everywhere
	write(http.MethodPut, knownAtDoc("N1", fund.KindCapitalCallNotice, "2025-03-31",
		knownAtCall("PK1", "INV_K1", "100000.00", "2025-04-15"), knownAtCall("PK2", "INV_K2", "100000.00", "2025-04-15"),
		knownAtCall("PK3", "INV_K1", "30000.00", "2025-04-15")), "")
	write(http.MethodPut, s1("2025-06-30", "5000"), "")
	write(http.MethodPut, knownAtDoc("D1", fund.KindDistributionNotice, "2025-09-15", fund.Position{ID: "PK1", InvestorID: "INV_K1",
		Distribution: &fund.DistributionItem{Amount: fund.MustMoney("20000.00"), Status: fund.StatusCompleted,
			DistributionDetails: fund.DistributionDetails{PaymentDate: fund.MustDate("2025-09-20")}}}), "")
	// N1 restated without PK1: the pivot forgets N1 for PK1.
	write(http.MethodPut, knownAtDoc("N1", fund.KindCapitalCallNotice, "2025-03-31",
		knownAtCall("PK2", "INV_K2", "100000.00", "2025-04-15"), knownAtCall("PK3", "INV_K1", "30000.00", "2025-04-15")), `"1"`)
	// S1 restated with its asOf moved after 2025-09-30.
	write(http.MethodPut, s1("2025-10-31", "7000"), `"1"`)
	write(http.MethodDelete, fund.Document{ID: "D1"}, `"1"`)
	write(http.MethodPut, knownAtDoc("N2", fund.KindCapitalCallNotice, "2025-04-30",
		knownAtCall("PK1", "INV_K1", "120000.00", "2025-05-15"), knownAtCall("PK3", "INV_K1", "5000.00", "2025-05-15")), "")

	// The recorded answers must differ from one another, or the replay
	// could not tell the instants apart.
	for _, path := range fanoutKnownAtPaths {
		distinct := map[string]bool{}
		for _, rec := range log {
			if rec.path == path && rec.body != nil {
				enc, _ := json.Marshal(comparable(rec.path, rec.body))
				distinct[string(enc)] = true
			}
		}
		if len(distinct) < 3 {
			t.Errorf("control: %s took %d distinct answers over the writes, want at least 3", path, len(distinct))
		}
	}
	if len(second) < 10 {
		t.Fatalf("control: %d answers had a second page, want at least 10", len(second))
	}

	now = now.Add(time.Hour)
	same := func(what, path string, got, want map[string]any) {
		t.Helper()
		if g, w := comparable(path, got), comparable(path, want); !reflect.DeepEqual(g, w) {
			gj, _ := json.MarshalIndent(g, "", " ")
			wj, _ := json.MarshalIndent(w, "", " ")
			t.Errorf("%s answers\n%s\nrecorded\n%s", what, gj, wj)
		}
	}
	for i, rec := range log {
		path := withQuery(rec.path, "knownAt", rec.at.Format(time.RFC3339Nano))
		if rec.body != nil && !strings.Contains(rec.path, "asOf=") {
			if asOf, _ := rec.body["basis"].(map[string]any)["asOf"].(string); asOf != "" {
				path = withQuery(path, "asOf", asOf)
			}
		}
		s := servers[(i+1)%2]
		r := s.do(t, http.MethodGet, path, nil)
		if r.Status != rec.status {
			t.Errorf("%s: %d, recorded %d\n%s", path, r.Status, rec.status, r.Body)
			continue
		}
		if rec.body == nil {
			continue
		}
		got := r.JSON(t)
		same(path, rec.path, got, rec.body)
		if basis := got["basis"].(map[string]any); basis["knownAt"] != rec.at.Format(time.RFC3339) || basis["settled"] != true {
			t.Errorf("%s: basis %v, want knownAt %s, settled", path, basis, rec.at.Format(time.RFC3339))
		}
		p2, paged := second[i]
		if next, _ := got["next"].(string); (next != "") != paged {
			t.Errorf("%s: next %q, recorded a second page: %v", path, next, paged)
		} else if paged {
			base := strings.Split(rec.path, "?")[0]
			// The replay's cursor reads the second page as known at the
			// recorded instant, after every write since.
			r := servers[i%2].do(t, http.MethodGet, withQuery(base, "cursor", next), nil)
			if r.Status != http.StatusOK {
				t.Errorf("%s, page 2: %d\n%s", path, r.Status, r.Body)
				continue
			}
			body := r.JSON(t)
			same(path+", page 2", rec.path, body, p2)
			if basis := body["basis"].(map[string]any); basis["knownAt"] != rec.at.Format(time.RFC3339) || basis["settled"] != true {
				t.Errorf("%s, page 2: basis %v, want knownAt %s, settled", path, basis, rec.at.Format(time.RFC3339))
			}
		}
	}
}

// TestFundPerformanceKnownAtSearchesEachDocumentOnce: a fund performance
// as known at an instant over 4 positions, each reported by the same 3
// documents (each restated after the instant, so that finding its version
// then takes a search), searches each document's versions once, not once
// per position: its GetItems are those of 3 searches, and stay so with
// twice the positions. The same read without the memo (the position
// route's, per position) would make 12 searches.
func TestFundPerformanceKnownAtSearchesEachDocumentOnce(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	a, _ := twoServersOnOneTable(t, func() time.Time { return now })
	put := func(d fund.Document, ifMatch string) {
		t.Helper()
		now = now.Add(time.Minute)
		if r := a.do(t, http.MethodPut, "/v1/documents/"+d.ID, wire.RequestOf(d), "If-Match", ifMatch); r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("PUT %s: %d\n%s", d.ID, r.Status, r.Body)
		}
	}
	docsOf := func(fundID string, positions int, amount string) []fund.Document {
		var out []fund.Document
		for _, id := range []string{"A", "B", "C"} {
			d := knownAtDoc(fundID+"_"+id, fund.KindCapitalCallNotice, "2025-03-31")
			d.FundID = fundID
			for p := range positions {
				d.Positions = append(d.Positions, knownAtCall(fmt.Sprintf("%s_P%d", fundID, p), fmt.Sprintf("INV_%d", p), amount, "2025-04-15"))
			}
			out = append(out, d)
		}
		return out
	}
	for _, f := range []struct {
		id        string
		positions int
	}{{"FUND_S", 4}, {"FUND_T", 8}} {
		for _, d := range docsOf(f.id, f.positions, "100.00") {
			put(d, "")
		}
	}
	now = now.Add(time.Minute)
	at := now
	for _, f := range []struct {
		id        string
		positions int
	}{{"FUND_S", 4}, {"FUND_T", 8}} {
		for _, d := range docsOf(f.id, f.positions, "200.00") {
			put(d, `"1"`)
		}
	}
	now = now.Add(time.Hour)
	knownAt := url.QueryEscape(at.Format(time.RFC3339))
	var gets []int
	for _, f := range []struct {
		id        string
		positions int
	}{{"FUND_S", 4}, {"FUND_T", 8}} {
		a.Counter.Reset()
		var p wire.FundPerformance
		getJSON(t, a, "/v1/funds/"+f.id+"/performance?asOf=2025-12-31&knownAt="+knownAt, &p)
		// Control: the figures are v1's (100.00 a call), not the latest.
		if p.Positions != f.positions || len(p.Currencies) != 1 || p.Currencies[0].PaidIn.String() != fmt.Sprintf("%d.00", 300*f.positions) {
			t.Fatalf("%s as known at %s: %d positions, %+v; want %d positions paid in %d.00", f.id, at, p.Positions, p.Currencies, f.positions, 300*f.positions)
		}
		// One search per document: its head, the Query of its instant
		// index, version 1's record.
		if got, want := a.Counter.Count("GetItem"), 3*2; got != want {
			t.Errorf("%s (%d positions in 3 documents) as known at an instant: %d GetItems, want %d (3 searches of 2); ops %v", f.id, f.positions, got, want, a.Counter.Ops())
		}
		// Per position, its ledger and one Query of each document's version;
		// the registry's Query; each search's Query of the instant index.
		if got, want := a.Counter.Count("Query"), 1+f.positions*(1+3)+3; got != want {
			t.Errorf("%s as known at an instant: %d Queries, want %d; ops %v", f.id, got, want, a.Counter.Ops())
		}
		gets = append(gets, a.Counter.Count("GetItem"))
	}
	if gets[0] != gets[1] {
		t.Errorf("twice the positions in the same documents took %d GetItems, then %d: the searches grow with the positions", gets[0], gets[1])
	}
}

// TestFanoutKnownAtReadsAuthorizeAsTheLiveOnes: with knownAt, another
// investor's summary and performance are 404 for an investor token, a
// fund the admin does not cover is 404 at the cost of an unknown fund, and
// a document of such a fund answers its reconciliation 404 at the cost of
// an unknown document (the commit head's one GetItem); the token's own
// answers are 200, so the 404s could be false.
func TestFanoutKnownAtReadsAuthorizeAsTheLiveOnes(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	a, _ := twoServersOnOneTable(t, func() time.Time { return now })
	now = now.Add(time.Minute)
	d := knownAtDoc("S9", fund.KindCapitalAccountStatement, "2025-06-30", fund.Position{ID: "PK9", InvestorID: "INV_K1",
		CapitalAccount: &fund.CapitalAccount{PeriodStart: fund.MustDate("2025-01-01"), Contributions: knownAtMoney("10.00"), EndingNAV: fund.MustMoney("10.00")}})
	if r := a.do(t, http.MethodPut, "/v1/documents/S9", wire.RequestOf(d)); r.Status != http.StatusCreated {
		t.Fatalf("PUT S9: %d\n%s", r.Status, r.Body)
	}
	now = now.Add(time.Hour)
	at := "knownAt=" + url.QueryEscape(now.Add(-time.Minute).Format(time.RFC3339))
	own := "Bearer " + token(t, api.Principal{Subject: "inv-1", Role: api.RoleInvestor, Investor: "INV_K1"})
	other := "Bearer " + token(t, api.Principal{Subject: "inv-2", Role: api.RoleInvestor, Investor: "INV_K2"})
	adminK := "Bearer " + token(t, api.Principal{Subject: "admin-k", Role: api.RoleAdmin, Funds: []string{"FUND_K"}})
	adminZ := "Bearer " + token(t, api.Principal{Subject: "admin-z", Role: api.RoleAdmin, Funds: []string{"FUND_Z"}})
	for _, route := range []string{"/summary", "/performance"} {
		path := "/v1/investors/INV_K1" + route + "?" + at
		if r := a.do(t, http.MethodGet, path, nil, "Authorization", other); r.Status != http.StatusNotFound {
			t.Errorf("GET %s as another investor: %d, want 404\n%s", path, r.Status, r.Body)
		}
		if r := a.do(t, http.MethodGet, path, nil, "Authorization", own); r.Status != http.StatusOK {
			t.Errorf("GET %s as its investor: %d\n%s", path, r.Status, r.Body)
		}
		if r := a.do(t, http.MethodGet, path, nil, "Authorization", adminZ); r.Status != http.StatusNotFound {
			t.Errorf("GET %s as an admin of another fund: %d, want 404\n%s", path, r.Status, r.Body)
		}
	}
	costs := func(path string, auth string) (int, []string) {
		a.Counter.Reset()
		r := a.do(t, http.MethodGet, path, nil, "Authorization", auth)
		ops := a.Counter.Ops()
		slices.Sort(ops)
		return r.Status, ops
	}
	for _, c := range []struct{ covered, unknown string }{
		{"/v1/funds/FUND_K/performance?" + at, "/v1/funds/FUND_NONE/performance?" + at},
		{"/v1/documents/S9/reconciliation?" + at, "/v1/documents/NOSUCHDOC/reconciliation?" + at},
	} {
		s1, ops1 := costs(c.covered, adminZ)
		s2, ops2 := costs(c.unknown, adminZ)
		if s1 != http.StatusNotFound || s2 != http.StatusNotFound || !slices.Equal(ops1, ops2) {
			t.Errorf("as an admin of another fund, %s: %d %v; %s: %d %v; want 404 at the same cost", c.covered, s1, ops1, c.unknown, s2, ops2)
		}
		if s, _ := costs(c.covered, adminK); s != http.StatusOK {
			t.Errorf("%s as its fund's admin: %d, want 200", c.covered, s)
		}
	}
}

// TestALiveFanoutsLaterPagesAreReadAtItsFirstPagesInstant: an investor's
// summary and performance and a document's reconciliation are read a
// position a page, live; between the first page and the next, a notice of
// FUND_K is restated (every call 100.00 → 999.00) from the other server.
// The later pages are read at the first page's instant: each position's
// figures are those of the same read with knownAt set to page 1's basis,
// which the live read no longer answers; a position of FUND_L, whose
// documents did not change, is read from its latest versions (one Query
// of FUND_L's event feed says so) and answers the same.
func TestALiveFanoutsLaterPagesAreReadAtItsFirstPagesInstant(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	a, b := twoServersOnOneTable(t, func() time.Time { return now })
	put := func(s *testServer, d fund.Document, status int) {
		t.Helper()
		now = now.Add(time.Minute)
		if r := s.do(t, http.MethodPut, "/v1/documents/"+d.ID, wire.RequestOf(d)); r.Status != status {
			t.Fatalf("PUT %s: %d\n%s", d.ID, r.Status, r.Body)
		}
	}
	notice := func(amount string) fund.Document {
		return knownAtDoc("PN1", fund.KindCapitalCallNotice, "2025-03-31",
			knownAtCall("PP1", "INV_P", amount, "2025-04-15"), knownAtCall("PP2", "INV_P", amount, "2025-04-15"), knownAtCall("PP3", "INV_P", amount, "2025-04-15"))
	}
	statement := func(pos string) fund.Position {
		return fund.Position{ID: pos, InvestorID: "INV_P", CapitalAccount: &fund.CapitalAccount{PeriodStart: fund.MustDate("2025-01-01"),
			Contributions: knownAtMoney("100.00"), EndingNAV: fund.MustMoney("100.00")}}
	}
	other := knownAtDoc("PL1", fund.KindCapitalCallNotice, "2025-03-31", knownAtCall("PL9", "INV_P", "50.00", "2025-04-15"))
	other.FundID = "FUND_L"
	put(a, notice("100.00"), http.StatusCreated)
	put(a, other, http.StatusCreated)
	put(a, knownAtDoc("PS1", fund.KindCapitalAccountStatement, "2025-06-30", statement("PP1"), statement("PP2"), statement("PP3")), http.StatusCreated)
	now = now.Add(time.Minute)

	pages := map[string][]map[string]any{}
	var pinned string
	paths := []string{"/v1/investors/INV_P/summary?asOf=2025-12-31", "/v1/investors/INV_P/performance?asOf=2025-12-31", "/v1/documents/PS1/reconciliation"}
	for _, path := range paths {
		first := a.do(t, http.MethodGet, path+sep(path)+"limit=1", nil).JSON(t)
		pages[path] = append(pages[path], first)
		pinned = first["basis"].(map[string]any)["knownAt"].(string)
	}
	put(b, notice("999.00"), http.StatusOK)
	now = now.Add(time.Minute)
	for _, path := range paths {
		for next, _ := pages[path][0]["next"].(string); next != ""; {
			p := b.do(t, http.MethodGet, strings.Split(path, "?")[0]+"?limit=1&cursor="+next, nil)
			if p.Status != http.StatusOK {
				t.Fatalf("%s, a later page: %d\n%s", path, p.Status, p.Body)
			}
			body := p.JSON(t)
			if got := body["basis"].(map[string]any)["knownAt"]; got != pinned {
				t.Errorf("%s, page %d: basis.knownAt %v, want page 1's %s", path, len(pages[path])+1, got, pinned)
			}
			pages[path] = append(pages[path], body)
			next, _ = body["next"].(string)
		}
	}

	// Each position as the page answered it, against the same read as
	// known at page 1's instant, and the live read now.
	entries := func(body map[string]any) map[string]any {
		out := map[string]any{}
		key := "positions"
		if _, ok := body["reconciliations"]; ok {
			key = "reconciliations"
		}
		list, _ := body[key].([]any)
		for _, e := range list {
			m := e.(map[string]any)
			out[m["positionId"].(string)] = m
		}
		return out
	}
	for _, path := range paths {
		paged := map[string]any{}
		for _, p := range pages[path] {
			maps.Copy(paged, entries(p))
		}
		asKnown := entries(a.do(t, http.MethodGet, path+sep(path)+"knownAt="+url.QueryEscape(pinned), nil).JSON(t))
		live := entries(a.do(t, http.MethodGet, path, nil).JSON(t))
		if len(paged) < 3 || len(asKnown) != len(paged) {
			t.Fatalf("%s: the pages list %d positions, the read as known at page 1's instant %d", path, len(paged), len(asKnown))
		}
		differs := false
		for pos, e := range paged {
			if !reflect.DeepEqual(e, asKnown[pos]) {
				t.Errorf("%s: %s on its page:\n%v\nas known at page 1's instant:\n%v", path, pos, e, asKnown[pos])
			}
			differs = differs || !reflect.DeepEqual(e, live[pos])
		}
		if !differs {
			t.Errorf("%s: the pages answer what the live read answers now: the restatement between them changed nothing", path)
		}
	}
}

// sep is the separator that adds a parameter to path.
func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}
