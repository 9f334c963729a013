package api_test

import (
	"fmt"
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
	"github.com/shopspring/decimal"
)

// changesHistory writes, through two servers on one table, one write a
// minute from 2026-03-02T09:00Z on their shared clock, PK1's documents
// (fund FUND_K, USD), and returns the instant before the first write and
// each write's instant. Written:
//
//	1 N1 v1  call notice 2025-03-31: PK1 call 100,000.00 completed, due 2025-04-15; PK2 50,000.00
//	2 S1 v1  statement 2025-06-30: contributions 100,000, unrealized 5,000, NAV 105,000.00
//	3 D1 v1  distribution notice 2025-09-15: 20,000.00 completed, paid 2025-09-20
//	4 N1 v2  PK1's call restated to 110,000.00
//	5 N1 v3  PK2's call restated to 60,000.00 (nothing of PK1 changes)
//	6 S1 v2  statement restated with its asOf moved to 2025-10-31, NAV 107,000.00
//	7 N1 v4  restated without PK1 (the position dropped)
//	8 D1 v2  voided
//	9 N2 v1  call notice 2025-04-30: PK1 call 120,000.00 completed, due 2025-05-15
func changesHistory(t *testing.T, now *time.Time, servers []*testServer) (time.Time, []time.Time) {
	t.Helper()
	start := *now
	var at []time.Time
	put := func(d fund.Document, ifMatch string) {
		t.Helper()
		*now = now.Add(time.Minute)
		s := servers[len(at)%2]
		var r response
		if d.Voided {
			r = s.do(t, http.MethodDelete, "/v1/documents/"+d.ID, nil, "If-Match", ifMatch)
		} else {
			r = s.do(t, http.MethodPut, "/v1/documents/"+d.ID, wire.RequestOf(d), "If-Match", ifMatch)
		}
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("write %d (%s): %d\n%s", len(at)+1, d.ID, r.Status, r.Body)
		}
		at = append(at, *now)
	}
	n1 := func(pk1, pk2 string) fund.Document {
		var ps []fund.Position
		if pk1 != "" {
			ps = append(ps, knownAtCall("PK1", "INV_K1", pk1, "2025-04-15"))
		}
		return knownAtDoc("N1", fund.KindCapitalCallNotice, "2025-03-31", append(ps, knownAtCall("PK2", "INV_K2", pk2, "2025-04-15"))...)
	}
	s1 := func(asOf, unrealized, nav string) fund.Document {
		return knownAtDoc("S1", fund.KindCapitalAccountStatement, asOf, fund.Position{ID: "PK1", InvestorID: "INV_K1",
			CapitalAccount: &fund.CapitalAccount{PeriodStart: fund.MustDate("2025-01-01"), Contributions: knownAtMoney("100000.00"),
				NetUnrealizedGainLoss: knownAtMoney(unrealized), EndingNAV: fund.MustMoney(nav)}})
	}
	put(n1("100000.00", "50000.00"), "")
	put(s1("2025-06-30", "5000.00", "105000.00"), "")
	put(knownAtDoc("D1", fund.KindDistributionNotice, "2025-09-15", fund.Position{ID: "PK1", InvestorID: "INV_K1",
		Distribution: &fund.DistributionItem{Amount: fund.MustMoney("20000.00"), Status: fund.StatusCompleted,
			DistributionDetails: fund.DistributionDetails{PaymentDate: fund.MustDate("2025-09-20")}}}), "")
	put(n1("110000.00", "50000.00"), `"1"`)
	put(n1("110000.00", "60000.00"), `"2"`)
	put(s1("2025-10-31", "7000.00", "107000.00"), `"1"`)
	put(n1("", "60000.00"), `"3"`)
	put(fund.Document{ID: "D1", Voided: true}, `"1"`)
	put(knownAtDoc("N2", fund.KindCapitalCallNotice, "2025-04-30", knownAtCall("PK1", "INV_K1", "120000.00", "2025-05-15")), "")
	return start, at
}

// instantQuery is an instant as a query value.
func instantQuery(t time.Time) string { return url.QueryEscape(t.UTC().Format(time.RFC3339Nano)) }

// figureAt reads a figure of an answer by its dotted path; nil when the
// answer leaves it out.
func figureAt(body map[string]any, path string) *string {
	var v any = body
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return &s
}

func text(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// moved is one change as the tests write it by hand: the version, and for
// each figure it moved, its contribution (money) or "before→after" (a
// ratio or a figure absent on a side).
type moved struct {
	doc     string
	version int
	event   fund.EventType
	figures map[string]string
}

func movedOf(c wire.FigureMove) moved {
	m := moved{doc: c.DocumentID, version: c.Version, event: c.EventType, figures: map[string]string{}}
	for _, f := range c.Figures {
		if f.Contribution != nil {
			m.figures[f.Figure] = *f.Contribution
		} else {
			m.figures[f.Figure] = text(f.Before) + "→" + text(f.After)
		}
	}
	return m
}

// checkChanges holds an answer to what must be true of every one: each
// change's instant is its version's write, its figures before are the
// figures after the change listed before it (the read as known at from
// for the first), and its figures after are the route's answer as known
// at its instant; the figures from from to to are the route's answers
// then; and every money figure's contributions add up to its change.
func checkChanges(t *testing.T, s *testServer, route, asOf string, from, to time.Time, got wire.PositionFigureChanges, writes map[string]time.Time) {
	t.Helper()
	read := func(at time.Time) map[string]any {
		t.Helper()
		r := s.do(t, http.MethodGet, "/v1/positions/PK1/"+route+"?asOf="+asOf+"&knownAt="+instantQuery(at), nil)
		switch r.Status {
		case http.StatusOK:
			return r.JSON(t)
		case http.StatusNotFound:
			return nil // not known then: no figure to compare
		}
		t.Fatalf("%s as known at %s: %d\n%s", route, at, r.Status, r.Body)
		return nil
	}
	last := map[string]*string{}
	for _, f := range got.Figures {
		last[f.Figure] = f.Before
	}
	if body := read(from); body != nil {
		for _, f := range got.Figures {
			if w := figureAt(body, f.Figure); text(w) != text(f.Before) {
				t.Errorf("%s: %s before %s, the read as known at from answers %s", route, f.Figure, text(f.Before), text(w))
			}
		}
	} else if got.KnownAtFrom {
		t.Errorf("%s: knownAtFrom, but the read as known at from is 404", route)
	}
	sum := map[string]decimal.Decimal{}
	for _, c := range got.Changes {
		key := fmt.Sprintf("%s v%d", c.DocumentID, c.Version)
		if want, ok := writes[key]; !ok || !c.CommittedAt.Equal(want) {
			t.Errorf("%s: %s committed at %s, written at %s", route, key, c.CommittedAt, want)
		}
		if c.VersionPath != fund.VersionPath(c.DocumentID, c.Version) {
			t.Errorf("%s: %s versionPath %q", route, key, c.VersionPath)
		}
		body := read(c.CommittedAt)
		for _, f := range c.Figures {
			if text(f.Before) != text(last[f.Figure]) {
				t.Errorf("%s: %s %s before %s, after the previous change %s", route, key, f.Figure, text(f.Before), text(last[f.Figure]))
			}
			if text(f.Before) == text(f.After) {
				t.Errorf("%s: %s lists %s unchanged", route, key, f.Figure)
			}
			last[f.Figure] = f.After
			if body != nil {
				if w := figureAt(body, f.Figure); text(w) != text(f.After) {
					t.Errorf("%s: %s %s after %s, the read as known at its instant answers %s", route, key, f.Figure, text(f.After), text(w))
				}
			}
			if f.Contribution != nil {
				sum[f.Figure] = sum[f.Figure].Add(decimal.RequireFromString(*f.Contribution))
			}
		}
	}
	body := read(to)
	for _, f := range got.Figures {
		if text(f.After) != text(last[f.Figure]) {
			t.Errorf("%s: %s after %s, after the last change %s", route, f.Figure, text(f.After), text(last[f.Figure]))
		}
		if body != nil {
			if w := figureAt(body, f.Figure); text(w) != text(f.After) {
				t.Errorf("%s: %s after %s, the read as known at to answers %s", route, f.Figure, text(f.After), text(w))
			}
		}
		if f.Unit == "money" && f.Before != nil && f.After != nil {
			change := decimal.RequireFromString(*f.After).Sub(decimal.RequireFromString(*f.Before))
			if f.Contribution == nil || !decimal.RequireFromString(*f.Contribution).Equal(change) || !sum[f.Figure].Equal(change) {
				t.Errorf("%s: %s moved %s (contribution %s), its versions' contributions add up to %s", route, f.Figure, change, text(f.Contribution), sum[f.Figure])
			}
		}
	}
}

// TestPositionChangesListTheVersionsThatMovedEachFigure writes PK1's
// history (changesHistory) and asks which versions moved its summary and
// its performance: each answer is worked out by hand, version by version,
// and checkChanges holds it to the routes' knownAt reads and to
// contributions adding up.
func TestPositionChangesListTheVersionsThatMovedEachFigure(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	a, b := twoServersOnOneTable(t, func() time.Time { return now })
	start, at := changesHistory(t, &now, []*testServer{a, b})
	writes := map[string]time.Time{}
	for i, key := range []string{"N1 v1", "S1 v1", "D1 v1", "N1 v2", "N1 v3", "S1 v2", "N1 v4", "D1 v2", "N2 v1"} {
		writes[key] = at[i]
	}
	now = now.Add(time.Hour)
	end := at[len(at)-1].Add(time.Minute)

	changes := func(s *testServer, route, query string) wire.PositionFigureChanges {
		t.Helper()
		var w wire.PositionFigureChanges
		getJSON(t, s, "/v1/positions/PK1/"+route+"/changes?"+query, &w)
		return w
	}
	created, restated, voided := fund.EventDocumentCreated, fund.EventDocumentRestated, fund.EventDocumentVoided

	t.Run("summary", func(t *testing.T) {
		got := changes(b, "summary", "from="+instantQuery(start)+"&to="+instantQuery(end)+"&asOf=2025-09-30")
		// S1's versions move no summary figure (a statement adds none but
		// the commitment and unfunded it states, and S1 states neither),
		// and N1 v3 touched PK2 only: all three left out.
		want := []moved{
			{"N1", 1, created, map[string]string{"called": "100000.00", "paidIn": "100000.00", "dpi": "null→0.000000"}},
			{"D1", 1, created, map[string]string{"distributed.gross.total": "20000.00", "distributed.gross.completed": "20000.00",
				"distributed.net.total": "20000.00", "distributed.net.completed": "20000.00", "dpi": "0.000000→0.200000"}},
			{"N1", 2, restated, map[string]string{"called": "10000.00", "paidIn": "10000.00", "dpi": "0.200000→0.181818"}},
			{"N1", 4, restated, map[string]string{"called": "-110000.00", "paidIn": "-110000.00", "dpi": "0.181818→null"}},
			{"D1", 2, voided, map[string]string{"distributed.gross.total": "-20000.00", "distributed.gross.completed": "-20000.00",
				"distributed.net.total": "-20000.00", "distributed.net.completed": "-20000.00"}},
			{"N2", 1, created, map[string]string{"called": "120000.00", "paidIn": "120000.00", "dpi": "null→0.000000"}},
		}
		var have []moved
		for _, c := range got.Changes {
			have = append(have, movedOf(c))
		}
		if !reflect.DeepEqual(have, want) {
			t.Errorf("changes\n%v\nwant\n%v", have, want)
		}
		if got.KnownAtFrom || !got.KnownAtTo || got.FundID != "FUND_K" || got.InvestorID != "INV_K1" || got.Currency != "USD" {
			t.Errorf("identity %s/%s/%s, knownAtFrom %v, knownAtTo %v: want FUND_K/INV_K1/USD, false, true", got.FundID, got.InvestorID, got.Currency, got.KnownAtFrom, got.KnownAtTo)
		}
		if bs := got.Basis; !bs.From.Equal(start) || !bs.To.Equal(end) || bs.AsOf != fund.MustDate("2025-09-30") || !bs.Settled {
			t.Errorf("basis %+v, want from, to, asOf as asked, settled (to is an hour old)", bs)
		}
		checkChanges(t, a, "summary", "2025-09-30", start, end, got, writes)
	})

	t.Run("performance", func(t *testing.T) {
		// On 2025-12-31 S1 counts at its latest version: v1's NAV of
		// 105,000 rolled forward by D1's 20,000 paid after its period end,
		// then v2's 107,000 as of 2025-10-31, after D1.
		got := changes(a, "performance", "from="+instantQuery(start)+"&to="+instantQuery(end)+"&asOf=2025-12-31")
		want := map[string][2]string{ // paidIn, nav.value contributions ("" when not moved)
			"N1 v1": {"100000.00", ""}, "S1 v1": {"", "null→105000.00"}, "D1 v1": {"", "-20000.00"}, "N1 v2": {"10000.00", ""},
			"S1 v2": {"", "22000.00"}, "N1 v4": {"-110000.00", ""}, "D1 v2": {"", ""}, "N2 v1": {"120000.00", ""},
		}
		seen := map[string]bool{}
		for _, c := range got.Changes {
			key := fmt.Sprintf("%s v%d", c.DocumentID, c.Version)
			m := movedOf(c)
			seen[key] = true
			if w, ok := want[key]; !ok || m.figures["paidIn"] != w[0] || m.figures["nav.value"] != w[1] {
				t.Errorf("%s moved paidIn %q and nav.value %q, want %q", key, m.figures["paidIn"], m.figures["nav.value"], w)
			}
		}
		for key := range want {
			if !seen[key] {
				t.Errorf("%s is not listed", key)
			}
		}
		// D1's void moves the distributed amount, and its NAV not at all
		// (D1 was paid before S1 v2's period end).
		for _, c := range got.Changes {
			if c.DocumentID == "D1" && c.Version == 2 {
				if m := movedOf(c); m.figures["distributed"] != "-20000.00" || m.figures["nav.value"] != "" {
					t.Errorf("D1's void moved %v", m.figures)
				}
			}
		}
		checkChanges(t, b, "performance", "2025-12-31", start, end, got, writes)
	})

	t.Run("a window within the history", func(t *testing.T) {
		// From just after D1 v1 to N1 v4: N1 v2 and v4 move the summary;
		// N1 v3 and S1 v2 do not.
		got := changes(a, "summary", "from="+instantQuery(at[2])+"&to="+instantQuery(at[6])+"&asOf=2025-09-30")
		var keys []string
		for _, c := range got.Changes {
			keys = append(keys, fmt.Sprintf("%s v%d", c.DocumentID, c.Version))
		}
		if !slices.Equal(keys, []string{"N1 v2", "N1 v4"}) || !got.KnownAtFrom || !got.KnownAtTo {
			t.Errorf("changes %v, knownAtFrom %v, knownAtTo %v; want [N1 v2 N1 v4], true, true", keys, got.KnownAtFrom, got.KnownAtTo)
		}
		checkChanges(t, b, "summary", "2025-09-30", at[2], at[6], got, writes)
	})

	t.Run("a window in which no figure moved", func(t *testing.T) {
		for _, w := range [][2]time.Time{{at[3], at[4]}, {end, now}} { // N1 v3 alone; nothing at all
			got := changes(a, "summary", "from="+instantQuery(w[0])+"&to="+instantQuery(w[1])+"&asOf=2025-09-30")
			if len(got.Changes) != 0 || !got.KnownAtFrom {
				t.Errorf("(%s, %s]: changes %+v, knownAtFrom %v; want none, true", w[0], w[1], got.Changes, got.KnownAtFrom)
			}
			for _, f := range got.Figures {
				if text(f.Before) != text(f.After) || (f.Contribution != nil && !decimal.RequireFromString(*f.Contribution).IsZero()) {
					t.Errorf("(%s, %s]: %s moved from %s to %s", w[0], w[1], f.Figure, text(f.Before), text(f.After))
				}
			}
		}
	})

	t.Run("to defaults to the read's instant and asOf to its date", func(t *testing.T) {
		got := changes(b, "summary", "from="+instantQuery(at[7]))
		if !got.Basis.To.Equal(now) || got.Basis.AsOf != fund.DateOf(now) || got.Basis.Settled || len(got.Changes) != 1 || got.Changes[0].DocumentID != "N2" {
			t.Errorf("basis %+v, %d changes; want to %s, asOf its date, not settled, N2's change", got.Basis, len(got.Changes), now)
		}
	})

	t.Run("a bad window is 400", func(t *testing.T) {
		future := now.Add(time.Second)
		for _, q := range []string{
			"to=" + instantQuery(end),                                         // no from
			"from=" + instantQuery(end) + "&to=" + instantQuery(end),          // from = to
			"from=" + instantQuery(end) + "&to=" + instantQuery(start),        // from after to
			"from=" + instantQuery(start) + "&to=" + instantQuery(future),     // to in the future
			"from=" + instantQuery(future),                                    // from in the future
			"from=2026-03-02",                                                 // not an instant
			"from=" + instantQuery(start) + "&asOf=2025-13-01",                // not a date
			"from=" + instantQuery(start) + "&knownAt=" + instantQuery(at[0]), // not a parameter of the route
		} {
			for _, route := range []string{"summary", "performance"} {
				if r := a.do(t, http.MethodGet, "/v1/positions/PK1/"+route+"/changes?"+q, nil); r.Status != http.StatusBadRequest {
					t.Errorf("%s/changes?%s: %d, want 400\n%s", route, q, r.Status, r.Body)
				}
			}
		}
	})
}

// TestPositionChangesDecideAccessOnTheLedger: another investor's position
// costs exactly what an unknown one does (the ledger's one Query) and is
// 404 as it is; its own investor reads it.
func TestPositionChangesDecideAccessOnTheLedger(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	a, b := twoServersOnOneTable(t, func() time.Time { return now })
	start, _ := changesHistory(t, &now, []*testServer{a, b})
	now = now.Add(time.Hour)
	other := "Bearer " + token(t, api.Principal{Subject: "inv-2", Role: api.RoleInvestor, Investor: "INV_K2"})
	own := "Bearer " + token(t, api.Principal{Subject: "inv-1", Role: api.RoleInvestor, Investor: "INV_K1"})
	for _, route := range []string{"summary", "performance"} {
		var ops [2][]string
		for i, pos := range []string{"PK1", "NOSUCHPOS"} {
			a.Counter.Reset()
			path := "/v1/positions/" + pos + "/" + route + "/changes?from=" + instantQuery(start)
			if r := a.do(t, http.MethodGet, path, nil, "Authorization", other); r.Status != http.StatusNotFound {
				t.Fatalf("GET %s as another investor: %d, want 404\n%s", path, r.Status, r.Body)
			}
			ops[i] = a.Counter.Ops()
			slices.Sort(ops[i])
		}
		if !slices.Equal(ops[0], ops[1]) || !slices.Equal(ops[0], []string{"Query"}) {
			t.Errorf("%s changes of PK1 as another investor cost %v, of an unknown position %v; want the same, one Query", route, ops[0], ops[1])
		}
		path := "/v1/positions/PK1/" + route + "/changes?from=" + instantQuery(start)
		if r := a.do(t, http.MethodGet, path, nil, "Authorization", own); r.Status != http.StatusOK {
			t.Errorf("GET %s as its investor: %d\n%s", path, r.Status, r.Body)
		}
		// Known in no instant of the window: 404, as an unknown position.
		path = "/v1/positions/PK1/" + route + "/changes?from=" + instantQuery(start.Add(-time.Hour)) + "&to=" + instantQuery(start)
		if r := a.do(t, http.MethodGet, path, nil, "Authorization", own); r.Status != http.StatusNotFound {
			t.Errorf("GET %s, before the first report: %d, want 404\n%s", path, r.Status, r.Body)
		}
	}
}
