package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestARefusalNeverReadsTheDocument puts a large document of another fund,
// restated many times, and asks every document route for it: the refusal
// must cost the same operations as an unknown document (one GetItem of the
// head), never a Query of the document's items or history, so that neither
// its existence nor its size shows in the cost or the time of the answer.
func TestARefusalNeverReadsTheDocument(t *testing.T) {
	s := newServer(t, false)
	big := fund.Document{ID: "BIG", DocumentFields: fund.DocumentFields{FundID: "FUND_Z", Kind: fund.KindCapitalCallNotice, Title: "Big", AsOf: fund.MustDate("2025-06-30")}}
	for i := range 150 { // more than a transaction's 100 items
		big.Positions = append(big.Positions, fund.Position{ID: fmt.Sprintf("BIGPOS_%04d", i), InvestorID: fmt.Sprintf("BIGINV_%04d", i),
			CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("10.00")}})
	}
	for range 10 { // 10 versions, so the history is long too
		if _, err := s.Store.Restate(context.Background(), big, nil); err != nil {
			t.Fatal(err)
		}
		big.Title += "."
	}
	asA := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	for _, route := range []string{"", "/analysis", "/capital", "/reconciliation", "/versions", "/versions?from=2025-01-01", "/versions/latest", "/versions/3",
		"/positions/BIGPOS_0001", "/positions/BIGPOS_0001?itemType=capital_call"} {
		var ops [2][]string
		for i, doc := range []string{"BIG", "NOSUCHDOC"} {
			s.Counter.Reset()
			r := s.do(t, http.MethodGet, "/v1/documents/"+doc+route, nil, "Authorization", asA)
			if r.Status != http.StatusNotFound {
				t.Fatalf("GET %s%s: %d, want 404\n%s", doc, route, r.Status, r.Body)
			}
			ops[i] = s.Counter.Ops()
			slices.Sort(ops[i])
		}
		if !slices.Equal(ops[0], ops[1]) || slices.Contains(ops[0], "Query") {
			t.Errorf("GET /v1/documents/BIG%s as another fund's admin costs %v, an unknown document %v; want the same, and no Query", route, ops[0], ops[1])
		}
	}
	// A void is authorized as a read is: from the head, before any write.
	var ops [2][]string
	for i, doc := range []string{"BIG", "NOSUCHDOC"} {
		s.Counter.Reset()
		r := s.do(t, http.MethodDelete, "/v1/documents/"+doc, nil, "Authorization", asA, "If-Match", `"10"`)
		if r.Status != http.StatusNotFound {
			t.Fatalf("DELETE %s: %d, want 404\n%s", doc, r.Status, r.Body)
		}
		ops[i] = s.Counter.Ops()
		slices.Sort(ops[i])
	}
	if !slices.Equal(ops[0], ops[1]) || slices.ContainsFunc(ops[0], func(op string) bool { return op != "GetItem" }) {
		t.Errorf("DELETE /v1/documents/BIG as another fund's admin costs %v, an unknown document %v; want the same, GetItems only", ops[0], ops[1])
	}
	if h, err := s.Store.As(fund.Operator).LatestDocument(context.Background(), "BIG"); err != nil || h.Version != 10 || h.Voided {
		t.Errorf("after the refused void BIG is %+v, %v; want version 10, not voided", h, err)
	}
}

// TestPerformanceRoutesCostWhatTheirDocsSay counts the DynamoDB operations
// of each performance route on the demo (three positions of FUND_A, each
// with two statements): a position costs one Query of the position pivot;
// an investor's or a fund's page costs the registry read plus one Query
// per position; a reconciliation costs the head's GetItem, one Query of the
// statements and one Query per statement; the largest page
// (api.MaxFanoutPage) costs the same, and a larger one is 400 before any
// read. Refusals and bounds cost no position read at all.
func TestPerformanceRoutesCostWhatTheirDocsSay(t *testing.T) {
	env := newServer(t, true).Env
	s := startAPI(t, env, func(o *api.Options) { o.MaxFundPerformancePositions = 3 })
	tight := startAPI(t, env, func(o *api.Options) { o.MaxFundPerformancePositions = 2 })
	admin := "Bearer " + token(t, api.Principal{Subject: "admin", Role: api.RoleAdmin, Funds: []string{"*"}})
	other := "Bearer " + token(t, api.Principal{Subject: "admin-b", Role: api.RoleAdmin, Funds: []string{"FUND_B"}})
	investor := "Bearer " + token(t, api.Principal{Subject: "lp", Role: api.RoleInvestor, Investor: "INVESTOR_1"})
	cases := []struct {
		srv    *testServer
		auth   string
		path   string
		status int
		ops    string
	}{
		{s, investor, "/v1/positions/POSITION_1/performance?asOf=2025-12-31", 200, "Query"},
		{s, investor, "/v1/positions/POSITION_2/performance?asOf=2025-12-31", 404, "Query"}, // another investor's: as an unknown one
		{s, investor, "/v1/positions/POSITION_9/performance?asOf=2025-12-31", 404, "Query"},
		{s, investor, "/v1/investors/INVESTOR_1/performance?asOf=2025-12-31", 200, "Query Query"},
		{s, investor, fmt.Sprintf("/v1/investors/INVESTOR_1/performance?limit=%d", api.MaxFanoutPage), 200, "Query Query"},
		{s, investor, fmt.Sprintf("/v1/investors/INVESTOR_1/summary?limit=%d", api.MaxFanoutPage), 200, "BatchGetItem Query Query"},
		{s, investor, fmt.Sprintf("/v1/investors/INVESTOR_1/summary?limit=%d", api.MaxFanoutPage+1), 400, ""},
		{s, investor, "/v1/investors/INVESTOR_2/performance", 404, ""},
		{s, admin, "/v1/funds/FUND_A/performance?asOf=2025-12-31", 200, "Query Query Query Query"},
		{s, other, "/v1/funds/FUND_A/performance", 404, ""},
		{tight, admin, "/v1/funds/FUND_A/performance", 400, "Query"}, // three registry rows read, then refused
		{s, admin, "/v1/documents/DOC007/reconciliation", 200, "GetItem Query Query Query Query"},
		{s, admin, "/v1/documents/DOC007/reconciliation?limit=1", 200, "GetItem Query Query"},
		{s, admin, fmt.Sprintf("/v1/documents/DOC007/reconciliation?limit=%d", api.MaxFanoutPage), 200, "GetItem Query Query Query Query"},
		{s, admin, fmt.Sprintf("/v1/documents/DOC007/reconciliation?limit=%d", api.MaxFanoutPage+1), 400, ""},
		{s, admin, "/v1/documents/DOC002/reconciliation", 200, "GetItem Query"}, // a notice has no statements
		{s, other, "/v1/documents/DOC007/reconciliation", 404, "GetItem"},
	}
	for _, c := range cases {
		env.Counter.Reset()
		r := c.srv.do(t, http.MethodGet, c.path, nil, "Authorization", c.auth)
		if r.Status != c.status {
			t.Errorf("GET %s: %d, want %d\n%s", c.path, r.Status, c.status, r.Body)
			continue
		}
		ops := env.Counter.Ops()
		slices.Sort(ops)
		if got := strings.Join(ops, " "); got != c.ops {
			t.Errorf("GET %s costs %q, want %q", c.path, got, c.ops)
		}
	}
}

// TestRecordRoutesCostWhatTheirDocsSay counts the DynamoDB operations of
// the record routes on the demo: a refusal of an admin costs nothing, a
// refusal that depends on an investor's positions costs the one BatchGet an
// unknown ID costs, a write reads its version and puts, and the listing of
// every fund is a bounded number of registry Queries and one BatchGet,
// never a Scan.
func TestRecordRoutesCostWhatTheirDocsSay(t *testing.T) {
	s := newServer(t, true)
	all := "Bearer " + token(t, adminOfAll)
	asA := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	asZ := "Bearer " + token(t, api.Principal{Subject: "admin-z", Role: api.RoleAdmin, Funds: []string{"FUND_Z"}})
	inv1 := "Bearer " + token(t, api.Principal{Subject: "lp1", Role: api.RoleInvestor, Investor: "INVESTOR_1"})
	fundBody := map[string]any{"name": "Fund A", "baseCurrency": "USD"}
	invBody := map[string]any{"displayName": "Northwind", "investorType": "pension"}
	costsAre(t, s, []costCase{
		{"GET", "/v1/funds/FUND_A", asA, nil, 200, "BatchGetItem"},
		{"GET", "/v1/funds/FUND_A", asZ, nil, 404, ""},
		{"GET", "/v1/funds/FUND_A", inv1, nil, 200, "BatchGetItem BatchGetItem"},
		{"GET", "/v1/funds/FUND_Q", inv1, nil, 404, "BatchGetItem"},
		{"GET", "/v1/funds", asA, nil, 200, "BatchGetItem"},
		{"GET", "/v1/funds", inv1, nil, 200, "BatchGetItem Query"},
		{"PUT", "/v1/funds/FUND_A", asA, fundBody, 200, "GetItem TransactWriteItems"},
		{"PUT", "/v1/funds/FUND_A", asZ, fundBody, 404, ""},
		{"PUT", "/v1/funds/FUND_A", asA, map[string]any{"name": "x"}, 400, ""}, // refused before any read
		{"GET", "/v1/investors/INVESTOR_1", inv1, nil, 200, "BatchGetItem"},
		{"GET", "/v1/investors/INVESTOR_2", inv1, nil, 404, ""},
		{"GET", "/v1/investors/INVESTOR_1", asZ, nil, 404, "BatchGetItem"},
		{"PUT", "/v1/investors/INVESTOR_1", all, invBody, 200, "GetItem TransactWriteItems"},
		{"PUT", "/v1/investors/INVESTOR_1", asZ, invBody, 404, "BatchGetItem"},
		{"GET", "/v1/investors?fundId=FUND_A", asZ, nil, 404, ""},
		{"GET", "/v1/investors", asA, nil, 400, ""},
	})
	for _, path := range []string{"/v1/funds", "/v1/funds?limit=1", "/v1/investors", "/v1/investors?limit=2"} {
		s.Counter.Reset()
		if r := s.do(t, http.MethodGet, path, nil, "Authorization", all); r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, r.Status, r.Body)
		}
		ops := s.Counter.Ops()
		queries := 0
		for _, op := range ops {
			switch op {
			case "Query":
				queries++
			case "BatchGetItem":
			default:
				t.Errorf("GET %s made a %s: %v", path, op, ops)
			}
		}
		if queries == 0 || queries > store.RegistryShards+4 {
			t.Errorf("GET %s made %d Queries of the registry, want 1 to %d", path, queries, store.RegistryShards+4)
		}
	}
}

// TestTheEventFeedCostsWhatItsDocsSay counts the DynamoDB operations of
// GET /v1/events on the demo (every event of FUND_A, committed on one UTC
// day): an administrator of every fund reads one Query per change shard of
// each day (after the shard count's and the feed start's GetItems); an
// administrator of some funds, or a fund filter, one Query per fund and
// month; an investor one Query of its positions, then one per fund of its
// positions and month. A page resumed from a cursor needs no start; a page
// over empty days stops after 64 Queries. Never a Scan.
func TestTheEventFeedCostsWhatItsDocsSay(t *testing.T) {
	s := newServer(t, true)
	settled := fundtest.Clock.Add(store.ChangeSettleMargin + time.Minute)
	s.Store.Now = func() time.Time { return settled }
	all := "Bearer " + token(t, api.Principal{Subject: "admin", Role: api.RoleAdmin, Funds: []string{"*"}})
	fundA := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	fundB := "Bearer " + token(t, api.Principal{Subject: "admin-b", Role: api.RoleAdmin, Funds: []string{"FUND_B"}})
	investor := "Bearer " + token(t, api.Principal{Subject: "lp", Role: api.RoleInvestor, Investor: "INVESTOR_1"})
	shards := strings.TrimSpace(strings.Repeat("Query ", store.DefaultChangeShards))
	get := func(auth, path string, status int, want string) map[string]any {
		t.Helper()
		s.Counter.Reset()
		r := s.do(t, http.MethodGet, path, nil, "Authorization", auth)
		if r.Status != status {
			t.Fatalf("GET %s: %d, want %d\n%s", path, r.Status, status, r.Body)
		}
		ops := s.Counter.Ops()
		slices.Sort(ops)
		if got := strings.Join(ops, " "); got != want {
			t.Errorf("GET %s costs %q, want %q", path, got, want)
		}
		if status != http.StatusOK {
			return nil
		}
		return r.JSON(t)
	}
	count := func(page map[string]any) int { items, _ := page["items"].([]any); return len(items) }

	if n := count(get(all, "/v1/events", 200, "GetItem GetItem "+shards)); n == 0 {
		t.Fatal("the feed of every fund is empty")
	}
	first := get(fundA, "/v1/events?limit=2", 200, "GetItem Query")
	if count(first) != 2 || first["more"] != true {
		t.Fatalf("the first page of FUND_A's feed: %v", first)
	}
	// A page resumed from a cursor knows where it starts.
	get(fundA, "/v1/events?limit=2&after="+first["next"].(string), 200, "Query")
	get(all, "/v1/events?fund=FUND_A", 200, "GetItem Query")
	if n := count(get(investor, "/v1/events", 200, "GetItem Query Query")); n == 0 {
		t.Fatal("INVESTOR_1's feed is empty")
	}
	get(fundB, "/v1/events?fund=FUND_A", 404, "")

	// Forty empty days later, a replay of every fund stops after 64
	// Queries (8 days of 8 shards) with more, and goes on from there.
	later := settled.Add(40 * 24 * time.Hour)
	s.Store.Now = func() time.Time { return later }
	if _, err := s.Store.Restate(context.Background(), fund.Document{ID: "LATE", DocumentFields: fund.DocumentFields{FundID: "FUND_A",
		Kind: fund.KindCapitalCallNotice, Title: "Late", AsOf: fund.MustDate("2026-02-10")},
		Positions: []fund.Position{{ID: "POSITION_1", InvestorID: "INVESTOR_1", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("1.00")}}}}, nil); err != nil {
		t.Fatal(err)
	}
	s.Store.Now = func() time.Time { return later.Add(store.ChangeSettleMargin + time.Minute) }
	page := get(all, "/v1/events?limit=1000", 200, "GetItem GetItem "+strings.TrimSpace(strings.Repeat("Query ", 64)))
	pages, late := 1, false
	for page["more"] == true {
		s.Counter.Reset()
		r := s.do(t, http.MethodGet, "/v1/events?limit=1000&after="+page["next"].(string), nil, "Authorization", all)
		if ops := s.Counter.Ops(); len(ops) > 1+64+store.DefaultChangeShards || slices.Contains(ops, "Scan") {
			t.Fatalf("a page costs %v", ops)
		}
		page, pages = r.JSON(t), pages+1
		for _, e := range page["items"].([]any) {
			late = late || e.(map[string]any)["id"] == "evt_LATE_v1"
		}
	}
	if !late || pages < 5 {
		t.Errorf("the replay took %d pages, found the late event: %v", pages, late)
	}
}

// costCase is one request by the token auth, answered status, and the
// DynamoDB operations it costs, sorted and space-separated.
type costCase struct {
	method, path string
	auth         string
	body         any
	status       int
	ops          string
}

// costsAre sends each case to s and checks its status and its cost.
func costsAre(t *testing.T, s *testServer, cases []costCase) {
	t.Helper()
	for _, c := range cases {
		s.Counter.Reset()
		r := s.do(t, c.method, c.path, c.body, "Authorization", c.auth)
		if r.Status != c.status {
			t.Errorf("%s %s: %d, want %d\n%s", c.method, c.path, r.Status, c.status, r.Body)
			continue
		}
		ops := s.Counter.Ops()
		slices.Sort(ops)
		if got := strings.Join(ops, " "); got != c.ops {
			t.Errorf("%s %s costs %q, want %q", c.method, c.path, got, c.ops)
		}
	}
}
