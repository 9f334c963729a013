package api_test

import (
	"encoding/json"
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
)

// knownAtDoc is a document of fund FUND_K in USD.
func knownAtDoc(id string, kind fund.Kind, asOf string, ps ...fund.Position) fund.Document {
	return fund.Document{ID: id, Positions: ps, DocumentFields: fund.DocumentFields{FundID: "FUND_K", Kind: kind, Title: id, AsOf: fund.MustDate(asOf), Currency: "USD"}}
}

func knownAtCall(pos, inv, amount, due string) fund.Position {
	return fund.Position{ID: pos, InvestorID: inv, CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(amount), Status: fund.StatusCompleted,
		CallDetails: fund.CallDetails{DueDate: fund.MustDate(due)}}}
}

// recorded is one answer of a read at an instant.
type recorded struct {
	path   string
	status int
	body   map[string]any
	at     time.Time // the instant the read began (its basis.knownAt when 200)
}

// positionKnownAtPaths are the reads of PK1 the replay covers.
var positionKnownAtPaths = []string{
	"/v1/positions/PK1", "/v1/positions/PK1?itemType=capital_call", "/v1/positions/PK1?limit=1",
	"/v1/positions/PK1/capital-calls", "/v1/positions/PK1/capital-calls?document=N1",
	"/v1/positions/PK1/summary", "/v1/positions/PK1/summary?asOf=2025-09-30", "/v1/positions/PK1/summary?asOf=2025-07-31",
	"/v1/positions/PK1/cashflows", "/v1/positions/PK1/cashflows?asOf=2025-09-30",
	"/v1/positions/PK1/performance", "/v1/positions/PK1/performance?asOf=2025-09-30", "/v1/positions/PK1/performance?asOf=2025-12-31",
}

// comparable is an answer without its basis and with its cursor's
// presence rather than its (randomly sealed) text; without asOf in the
// request, without the top-level asOf either, which a knownAt read takes
// as knownAt's date (docs/knownat.md).
func comparable(path string, body map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	delete(out, "basis")
	if _, ok := out["next"]; ok {
		out["next"] = true
	}
	if !strings.Contains(path, "asOf=") {
		delete(out, "asOf")
	}
	return out
}

// TestPositionReadsReplayAsKnownAt records the answers of every position
// route while documents are created, restated (one restatement drops the
// position, one moves a statement's asOf), voided and created again,
// through two servers on one table, writes and reads alternating between
// them; then asks each again with knownAt set to its basis.knownAt (and
// asOf to its basis.asOf), from both servers, and wants the same answer
// but for the basis. A read before the first report is 404, as known then.
func TestPositionReadsReplayAsKnownAt(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	a, b := twoServersOnOneTable(t, func() time.Time { return now })
	servers := []*testServer{a, b}
	var log []recorded
	record := func() {
		t.Helper()
		now = now.Add(30 * time.Second)
		for i, path := range positionKnownAtPaths {
			r := servers[i%2].do(t, http.MethodGet, path, nil)
			rec := recorded{path: path, status: r.Status, at: now}
			if r.Status == http.StatusOK {
				rec.body = r.JSON(t)
				var basis struct{ Basis wire.Basis }
				if err := json.Unmarshal(r.Body, &basis); err != nil || !basis.Basis.KnownAt.Equal(now) || basis.Basis.Settled {
					t.Fatalf("%s: basis %+v (%v), want knownAt %s, not settled", path, basis.Basis, err, now)
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

	record() // nothing yet: 404 everywhere
	write(http.MethodPut, knownAtDoc("N1", fund.KindCapitalCallNotice, "2025-03-31",
		knownAtCall("PK1", "INV_K1", "100000.00", "2025-04-15"), knownAtCall("PK2", "INV_K2", "50000.00", "2025-04-15")), "")
	s1 := func(asOf, nav string) fund.Document {
		return knownAtDoc("S1", fund.KindCapitalAccountStatement, asOf, fund.Position{ID: "PK1", InvestorID: "INV_K1",
			CapitalAccount: &fund.CapitalAccount{PeriodStart: fund.MustDate("2025-01-01"), Contributions: knownAtMoney("100000.00"),
				NetUnrealizedGainLoss: knownAtMoney(fmt.Sprintf("%s.00", nav)), EndingNAV: fund.MustMoney(fmt.Sprintf("%d.00", 100000+atoi(t, nav)))}})
	}
	write(http.MethodPut, s1("2025-06-30", "5000"), "")
	write(http.MethodPut, knownAtDoc("D1", fund.KindDistributionNotice, "2025-09-15", fund.Position{ID: "PK1", InvestorID: "INV_K1",
		Distribution: &fund.DistributionItem{Amount: fund.MustMoney("20000.00"), Status: fund.StatusCompleted,
			DistributionDetails: fund.DistributionDetails{PaymentDate: fund.MustDate("2025-09-20")}}}), "")
	// N1 restated without PK1: the pivot forgets N1 for PK1.
	write(http.MethodPut, knownAtDoc("N1", fund.KindCapitalCallNotice, "2025-03-31", knownAtCall("PK2", "INV_K2", "50000.00", "2025-04-15")), `"1"`)
	// S1 restated with its asOf moved after 2025-09-30.
	write(http.MethodPut, s1("2025-10-31", "7000"), `"1"`)
	write(http.MethodDelete, fund.Document{ID: "D1"}, `"1"`)
	write(http.MethodPut, knownAtDoc("N2", fund.KindCapitalCallNotice, "2025-04-30", knownAtCall("PK1", "INV_K1", "120000.00", "2025-05-15")), "")

	// The recorded answers must differ from one another, or the replay
	// could not tell the instants apart.
	distinct := map[string]bool{}
	for _, rec := range log {
		if rec.path == "/v1/positions/PK1/summary?asOf=2025-09-30" && rec.body != nil {
			enc, _ := json.Marshal(comparable(rec.path, rec.body))
			distinct[string(enc)] = true
		}
	}
	if len(distinct) < 5 {
		t.Fatalf("control: the summary on 2025-09-30 took %d distinct answers over the writes, want at least 5", len(distinct))
	}

	now = now.Add(time.Hour)
	for i, rec := range log {
		q := url.Values{}
		q.Set("knownAt", rec.at.Format(time.RFC3339Nano))
		if rec.body != nil {
			if asOf, _ := rec.body["basis"].(map[string]any)["asOf"].(string); asOf != "" {
				q.Set("asOf", asOf)
			}
		}
		sep := "?"
		if strings.Contains(rec.path, "?") {
			sep = "&"
		}
		path := rec.path + sep + q.Encode()
		if strings.Contains(rec.path, "asOf=") || strings.Contains(rec.path, "itemType") || strings.Contains(rec.path, "/capital-calls") || rec.path == "/v1/positions/PK1" || strings.Contains(rec.path, "limit=") {
			// the path names asOf already, or the route takes none
			q.Del("asOf")
			path = rec.path + sep + q.Encode()
		}
		r := servers[(i+1)%2].do(t, http.MethodGet, path, nil)
		if r.Status != rec.status {
			t.Errorf("%s: %d, recorded %d\n%s", path, r.Status, rec.status, r.Body)
			continue
		}
		if rec.body == nil {
			continue
		}
		got := r.JSON(t)
		if want := comparable(rec.path, rec.body); !reflect.DeepEqual(comparable(rec.path, got), want) {
			g, _ := json.MarshalIndent(comparable(rec.path, got), "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("%s answers\n%s\nrecorded\n%s", path, g, w)
		}
		if basis := got["basis"].(map[string]any); basis["knownAt"] != rec.at.Format(time.RFC3339) || basis["settled"] != true {
			t.Errorf("%s: basis %v, want knownAt %s, settled", path, basis, rec.at.Format(time.RFC3339))
		}
		// A knownAt read's pages go on at the same instant.
		if next, _ := got["next"].(string); next != "" {
			var rest wire.Page[map[string]any]
			getJSON(t, a, "/v1/positions/PK1?limit=1&cursor="+url.QueryEscape(next), &rest)
			if len(rest.Items) != 1 {
				t.Errorf("%s: page 2 holds %d items, want 1", path, len(rest.Items))
			}
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAKnownAtPositionReadDecidesAccessOnTheLedger: an investor token
// asking for another investor's position as known at an instant costs
// exactly what an unknown position costs (the ledger's one Query), and a
// position first reported after knownAt is 404.
func TestAKnownAtPositionReadDecidesAccessOnTheLedger(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	a, _ := twoServersOnOneTable(t, func() time.Time { return now })
	before := now
	for i := range 3 {
		now = now.Add(time.Minute)
		d := knownAtDoc(fmt.Sprintf("N%d", i), fund.KindCapitalCallNotice, "2025-03-31", knownAtCall("PK1", "INV_K1", "100.00", "2025-04-15"))
		if r := a.do(t, http.MethodPut, "/v1/documents/"+d.ID, wire.RequestOf(d)); r.Status != http.StatusCreated {
			t.Fatalf("PUT %s: %d\n%s", d.ID, r.Status, r.Body)
		}
	}
	now = now.Add(time.Hour)
	at := url.QueryEscape(now.Add(-time.Minute).Format(time.RFC3339))
	other := "Bearer " + token(t, api.Principal{Subject: "inv-2", Role: api.RoleInvestor, Investor: "INV_K2"})
	own := "Bearer " + token(t, api.Principal{Subject: "inv-1", Role: api.RoleInvestor, Investor: "INV_K1"})
	for _, route := range []string{"", "?itemType=capital_call", "/capital-calls", "/capital-calls?document=N1", "/summary", "/cashflows", "/performance"} {
		sep := "?"
		if strings.Contains(route, "?") {
			sep = "&"
		}
		var ops [2][]string
		for i, pos := range []string{"PK1", "NOSUCHPOS"} {
			a.Counter.Reset()
			path := "/v1/positions/" + pos + route + sep + "knownAt=" + at
			if r := a.do(t, http.MethodGet, path, nil, "Authorization", other); r.Status != http.StatusNotFound {
				t.Fatalf("GET %s as another investor: %d, want 404\n%s", path, r.Status, r.Body)
			}
			ops[i] = a.Counter.Ops()
			slices.Sort(ops[i])
		}
		if !slices.Equal(ops[0], ops[1]) || !slices.Equal(ops[0], []string{"Query"}) {
			t.Errorf("GET PK1%s with knownAt as another investor costs %v, an unknown position %v; want the same, one Query", route, ops[0], ops[1])
		}
		// Its own investor reads it (so the 404 above could be false), and
		// as known before the first report it is unknown.
		path := "/v1/positions/PK1" + route + sep + "knownAt=" + at
		if r := a.do(t, http.MethodGet, path, nil, "Authorization", own); r.Status != http.StatusOK {
			t.Errorf("GET %s as its investor: %d\n%s", path, r.Status, r.Body)
		}
		path = "/v1/positions/PK1" + route + sep + "knownAt=" + url.QueryEscape(before.Format(time.RFC3339))
		if r := a.do(t, http.MethodGet, path, nil, "Authorization", own); r.Status != http.StatusNotFound {
			t.Errorf("GET %s, before the first report: %d, want 404\n%s", path, r.Status, r.Body)
		}
	}
}

func knownAtMoney(s string) *fund.Money { m := fund.MustMoney(s); return &m }

// TestALivePositionListingsNextPageIsReadAtItsFirstPagesInstant: page 1
// of /v1/positions/{id} is read from the latest versions; a restatement
// then changes the amount page 2 would show; page 2, read on the other
// server, shows what was known when page 1 was read.
func TestALivePositionListingsNextPageIsReadAtItsFirstPagesInstant(t *testing.T) {
	now := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	a, b := twoServersOnOneTable(t, func() time.Time { return now })
	put := func(s *testServer, d fund.Document, status int) {
		t.Helper()
		now = now.Add(time.Minute)
		if r := s.do(t, http.MethodPut, "/v1/documents/"+d.ID, wire.RequestOf(d)); r.Status != status {
			t.Fatalf("PUT %s: %d\n%s", d.ID, r.Status, r.Body)
		}
	}
	put(a, knownAtDoc("N1", fund.KindCapitalCallNotice, "2025-03-31", knownAtCall("PK1", "INV_K1", "100.00", "2025-04-15")), http.StatusCreated)
	put(a, knownAtDoc("N2", fund.KindCapitalCallNotice, "2025-06-30", knownAtCall("PK1", "INV_K1", "200.00", "2025-07-15")), http.StatusCreated)
	now = now.Add(time.Minute)
	first := a.do(t, http.MethodGet, "/v1/positions/PK1?limit=1", nil).JSON(t)
	next, _ := first["next"].(string)
	if next == "" {
		t.Fatalf("page 1 has no next: %v", first)
	}
	put(b, knownAtDoc("N2", fund.KindCapitalCallNotice, "2025-06-30", knownAtCall("PK1", "INV_K1", "999.00", "2025-07-15")), http.StatusOK)
	now = now.Add(time.Minute)
	second := b.do(t, http.MethodGet, "/v1/positions/PK1?limit=1&cursor="+next, nil).JSON(t)
	items, _ := second["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["amount"] != "200.00" || items[0].(map[string]any)["documentVersion"] != float64(1) {
		t.Errorf("page 2 after N2's restatement: %v, want N2 version 1's 200.00, as known when page 1 was read", items)
	}
	if first["basis"].(map[string]any)["knownAt"] != second["basis"].(map[string]any)["knownAt"] {
		t.Errorf("page 2's basis %v, page 1's %v: want the same instant", second["basis"], first["basis"])
	}
}
