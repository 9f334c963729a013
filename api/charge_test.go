package api_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/smithy-go/middleware"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

// testClock is a clock the tests move by hand.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(fundtest.Clock.UnixNano())
	return c
}

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// largePositions is how many positions putLargeFund writes: more than a
// fan-out page holds, so the largest page is full and a second one follows.
const largePositions = api.MaxFanoutPage + 10

// putFund writes fund F_<name>: n positions <name>POS_00… of one investor,
// <name>INV, each with a capital call in the notice <name>CALL and, with
// statements, a capital account statement in <name>STMT.
func putFund(t *testing.T, env *fundtest.Env, name string, n int, statements bool) {
	t.Helper()
	fundID := "F_" + name
	call := fund.Document{ID: name + "CALL", DocumentFields: fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalCallNotice, Title: name + " call", AsOf: fund.MustDate("2025-05-01")}}
	stmt := fund.Document{ID: name + "STMT", DocumentFields: fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalAccountStatement, Title: name + " Q2 statements", AsOf: fund.MustDate("2025-06-30")}}
	for i := range n {
		id := fmt.Sprintf("%sPOS_%02d", name, i)
		call.Positions = append(call.Positions, fund.Position{ID: id, InvestorID: name + "INV", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("100.00")}})
		stmt.Positions = append(stmt.Positions, fund.Position{ID: id, InvestorID: name + "INV", CapitalAccount: &fund.CapitalAccount{PeriodStart: fund.MustDate("2025-04-01")}})
	}
	docs := []fund.Document{call}
	if statements {
		docs = append(docs, stmt)
	}
	for _, d := range docs {
		if _, err := env.Store.Restate(context.Background(), d, nil); err != nil {
			t.Fatalf("put %s: %v", d.ID, err)
		}
	}
	env.Counter.Reset()
}

// chargeOf reads what the last requests of auth were charged on s, whose
// limiter refills one token a second up to a burst of burst on a clock
// that does not move: cheap probes (an invalid ID: 400, no read) are
// admitted while the bucket holds a token, then the first refused one's
// Retry-After is the seconds until the bucket holds one again, that is
// 1 - its tokens.
func chargeOf(t *testing.T, s *testServer, auth string, burst int) int {
	t.Helper()
	admitted := 0
	for range burst + 1 {
		r := s.do(t, http.MethodGet, "/v1/positions/-probe", nil, "Authorization", auth)
		switch r.Status {
		case http.StatusBadRequest:
			admitted++
		case http.StatusTooManyRequests:
			wait, err := strconv.Atoi(r.Header.Get("Retry-After"))
			if err != nil || wait < 1 {
				t.Fatalf("a 429 with Retry-After %q", r.Header.Get("Retry-After"))
			}
			// tokens before the probes = admitted + 1 - wait; spent = burst - tokens.
			return burst - admitted - 1 + wait
		default:
			t.Fatalf("a probe answered %d\n%s", r.Status, r.Body)
		}
	}
	t.Fatalf("%d probes admitted on a bucket of %d tokens", admitted, burst)
	return 0
}

// TestFanoutChargesAreWhatTheDocsSay measures what each request is charged
// (chargeOf, on a frozen clock, the bucket refilled by moving the clock an
// hour between requests) and counts its DynamoDB operations: every route
// pays one token for its first read; an investor's summary 3 and one per
// position of the page, its performance 2 and one per position, a
// reconciliation 2 and one per statement, a fund's performance one for its
// registry and one per position, as the OpenAPI document says; never less
// than the operations made. The largest page (api.MaxFanoutPage) is
// covered, and a larger limit is 400 at the cost of a request that reads
// nothing.
func TestFanoutChargesAreWhatTheDocsSay(t *testing.T) {
	const burst = 2 // each step of a charge needs a token: the one the request's token paid leaves one
	env := fundtest.New(t)
	env.Seed(t)
	putFund(t, env, "Z", largePositions, true)
	clock := newTestClock()
	tweak := func(maxPooled int) func(*api.Options) {
		return func(o *api.Options) {
			o.RateLimit, o.RateBurst, o.Clock, o.MaxFundPerformancePositions = 1, burst, clock.now, maxPooled
		}
	}
	s := startAPI(t, env, tweak(0))
	tight := startAPI(t, env, tweak(2))
	admin := "Bearer " + token(t, adminOfAll)
	adminQ := "Bearer " + token(t, api.Principal{Subject: "admin-q", Role: api.RoleAdmin, Funds: []string{"FUND_Q"}})
	inv1 := "Bearer " + token(t, api.Principal{Subject: "lp1", Role: api.RoleInvestor, Investor: "INVESTOR_1"})
	zinv := "Bearer " + token(t, api.Principal{Subject: "zlp", Role: api.RoleInvestor, Investor: "ZINV"})
	// one: a route that is no fan-out, charged its token whatever it reads.
	const one = true
	page := api.MaxFanoutPage
	rest := largePositions - page
	queries := func(n int) string { return strings.TrimSpace(strings.Repeat("Query ", n)) }
	type charged struct {
		srv    *testServer
		auth   string
		path   string // "NEXT" is replaced by the next of the case before
		status int
		charge int
		ops    string // sorted; "≤" before it: at most these
		one    bool
	}
	cases := []charged{
		// Routes that are not fan-outs: their token.
		{s, admin, "/v1/documents/DOC001", 200, 1, "Query", one},
		{s, inv1, "/v1/positions/POSITION_1/summary?asOf=2025-12-31", 200, 1, "Query", one},
		{s, inv1, "/v1/positions/POSITION_1/performance?asOf=2025-12-31", 200, 1, "Query", one},
		{s, inv1, "/v1/investors/INVESTOR_1/positions", 200, 1, "BatchGetItem Query", one},

		// The demo: INVESTOR_1 holds one position, FUND_A three, DOC007
		// three statements.
		{s, inv1, "/v1/investors/INVESTOR_1/summary?asOf=2025-12-31", 200, 3 + 1, "≤BatchGetItem Query Query", false},
		{s, inv1, fmt.Sprintf("/v1/investors/INVESTOR_1/summary?limit=%d", page), 200, 3 + 1, "≤BatchGetItem Query Query", false},
		{s, inv1, "/v1/investors/INVESTOR_1/performance?asOf=2025-12-31", 200, 2 + 1, "≤Query Query", false},
		{s, admin, "/v1/funds/FUND_A/performance?asOf=2025-12-31", 200, 1 + 3, queries(4), false},
		{s, admin, "/v1/documents/DOC007/reconciliation", 200, 2 + 3, "GetItem " + queries(4), false},
		{s, admin, "/v1/documents/DOC007/reconciliation?limit=1", 200, 2 + 1, "GetItem Query Query", false},
		{s, admin, "/v1/documents/DOC002/reconciliation", 200, 2, "GetItem Query", false}, // a notice: no statement

		// Refusals: before the fan-out, its token; a document of another
		// fund, its head and its page's first Query.
		{s, inv1, "/v1/investors/INVESTOR_2/summary", 404, 1, "", false},
		{s, adminQ, "/v1/documents/DOC007/reconciliation", 404, 2, "GetItem", false},
		{tight, admin, "/v1/funds/FUND_A/performance", 400, 1, "Query", false}, // the registry read, no position
		{s, inv1, fmt.Sprintf("/v1/investors/INVESTOR_1/summary?limit=%d", page+1), 400, 1, "", false},
		{s, admin, fmt.Sprintf("/v1/documents/DOC007/reconciliation?limit=%d", page+1), 400, 1, "", false},

		// The largest page, and the rest.
		{s, zinv, fmt.Sprintf("/v1/investors/ZINV/summary?limit=%d", page), 200, 3 + page, "≤BatchGetItem " + queries(2+page), false},
		// A later page is read at the first page's instant: one more Query
		// and token, asking the fund's event feed whether it changed since.
		{s, zinv, "NEXT", 200, 3 + rest + 1, "≤BatchGetItem " + queries(2+rest+1), false},
		{s, zinv, "/v1/investors/ZINV/performance", 200, 2 + page, "≤" + queries(2+page), false}, // limit absent: the largest page
		{s, zinv, "NEXT", 200, 2 + rest + 1, "≤" + queries(2+rest+1), false},
		{s, admin, fmt.Sprintf("/v1/documents/ZSTMT/reconciliation?limit=%d", page), 200, 2 + page, "GetItem " + queries(1+page), false},
		{s, admin, "NEXT", 200, 2 + rest + 1, "GetItem " + queries(1+rest+1), false},
		{s, admin, "/v1/funds/F_Z/performance", 200, 1 + largePositions, queries(1 + largePositions), false},
	}
	next := ""
	for _, c := range cases {
		path := c.path
		if path == "NEXT" {
			if next == "" {
				t.Fatalf("no next page before %+v", c)
			}
			path = next
		}
		clock.advance(time.Hour) // every bucket full again
		env.Counter.Reset()
		r := c.srv.do(t, http.MethodGet, path, nil, "Authorization", c.auth)
		ops := env.Counter.Ops()
		if r.Status != c.status {
			t.Fatalf("GET %s: %d, want %d\n%s", path, r.Status, c.status, r.Body)
		}
		next = ""
		if r.Status == http.StatusOK {
			next, _ = r.JSON(t)["next"].(string)
			if next != "" {
				u := strings.Split(path, "?")[0]
				next = u + "?cursor=" + next
				if strings.Contains(path, "limit=") {
					next += fmt.Sprintf("&limit=%d", page)
				}
			}
		}
		got := chargeOf(t, c.srv, c.auth, burst)
		if got != c.charge {
			t.Errorf("GET %s (%d) was charged %d tokens, want %d", path, r.Status, got, c.charge)
		}
		slices.Sort(ops)
		if want, atMost := strings.CutPrefix(c.ops, "≤"); atMost {
			if len(ops) > len(strings.Fields(want)) || len(ops) > got {
				t.Errorf("GET %s made %d operations %v, want at most %q and at most its charge %d", path, len(ops), ops, want, got)
			}
		} else if strings.Join(ops, " ") != want {
			t.Errorf("GET %s made %q, want %q", path, strings.Join(ops, " "), want)
		}
		if !c.one && len(ops) > got {
			t.Errorf("GET %s made %d DynamoDB operations but was charged %d tokens", path, len(ops), got)
		}
	}
}

// TestOneTokensConcurrentFundPerformancesAreNotAllAdmitted sends 50
// requests for a fund's performance at once with one token, at the default
// rate and burst on a frozen clock: some are refused with 429 and
// Retry-After, none fails otherwise, every admitted one answers what the
// fund's performance is, and the DynamoDB requests made stay within the
// bucket: the burst plus one request's charge, where one token a request
// would have let every one of them read every position.
func TestOneTokensConcurrentFundPerformancesAreNotAllAdmitted(t *testing.T) {
	const requests = 50
	const positions = 20 // 50 requests of 21 tokens each: five times the default burst
	env := fundtest.New(t)
	putFund(t, env, "Y", positions, false)
	defaults := config.Default()
	clock := newTestClock()
	s := startAPI(t, env, func(o *api.Options) {
		o.RateLimit, o.RateBurst, o.Clock = defaults.RateLimit, defaults.RateBurst, clock.now
		o.FanoutConcurrency = requests // the process's bound is another test's
	})
	path := "/v1/funds/F_Y/performance?asOf=2025-12-31"
	reference := s.do(t, http.MethodGet, path, nil) // another principal's bucket
	if reference.Status != http.StatusOK {
		t.Fatalf("reference: %d\n%s", reference.Status, reference.Body)
	}
	want := reference.JSON(t)
	hostile := "Bearer " + token(t, api.Principal{Subject: "flood", Role: api.RoleAdmin, Funds: []string{"F_Y"}})

	env.Counter.Reset()
	start := make(chan struct{})
	answers := make([]response, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = s.do(t, http.MethodGet, path, nil, "Authorization", hostile)
		}()
	}
	close(start)
	wg.Wait()
	queries := 0
	for _, op := range env.Counter.Ops() {
		if op != "Query" {
			t.Errorf("a fund performance made a %s", op)
		}
		queries++
	}

	admitted, refused := 0, 0
	for _, r := range answers {
		switch r.Status {
		case http.StatusOK:
			admitted++
			if got := r.JSON(t); !reflect.DeepEqual(got, want) {
				t.Errorf("an admitted request answered\n%s\nwant\n%s", r.Body, reference.Body)
			}
		case http.StatusTooManyRequests:
			refused++
			checkProblem(t, r, http.StatusTooManyRequests, "/problems/rate_limited")
			if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
				t.Errorf("a 429 with Retry-After %q", r.Header.Get("Retry-After"))
			}
		default:
			t.Errorf("a request answered %d\n%s", r.Status, r.Body)
		}
	}
	t.Logf("%d admitted, %d refused, %d Queries (one token a request: %d)", admitted, refused, queries, requests*(1+positions))
	if admitted == 0 || refused == 0 {
		t.Errorf("%d admitted and %d refused, want some of each", admitted, refused)
	}
	// Each admitted charge found a token in the bucket, so what was
	// charged, one token for each registry read and one for each position
	// read, is at most the burst, less one, plus the last charge.
	if limit := defaults.RateBurst - 1 + positions; queries > limit {
		t.Errorf("%d Queries made, want at most %d (the burst less one, plus one fund's positions)", queries, limit)
	}
	// The rest are registry reads, one for each request that got past its
	// token's charge.
	if registry := queries - admitted*positions; registry < admitted || registry > requests {
		t.Errorf("%d Queries for %d admitted requests: %d registry reads, want %d to %d", queries, admitted, registry, admitted, requests)
	}
}

// TestFanoutsBeyondTheProcessBoundAre503 holds two fan-outs inside their
// first DynamoDB read on a process that computes two at once: a third
// fan-out, of another principal, is 503 with Retry-After before it reads
// anything, a route that is no fan-out is served meanwhile, and once the
// two answer a fan-out is admitted again.
func TestFanoutsBeyondTheProcessBoundAre503(t *testing.T) {
	env := fundtest.New(t)
	env.Seed(t)
	gate := newReadGate(t, env, 2)
	s := startAPI(t, gate.env, func(o *api.Options) { o.FanoutConcurrency = 2 })
	inv1 := "Bearer " + token(t, api.Principal{Subject: "lp1", Role: api.RoleInvestor, Investor: "INVESTOR_1"})

	held := make(chan response, 2)
	for _, path := range []string{"/v1/funds/FUND_A/performance?asOf=2025-12-31", "/v1/documents/DOC007/reconciliation"} {
		go func() { held <- s.do(t, http.MethodGet, path, nil) }()
	}
	gate.waitHeld(t)

	before := gate.reads.Load()
	r := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_1/summary", nil, "Authorization", inv1)
	checkProblem(t, r, http.StatusServiceUnavailable, "/problems/unavailable")
	if r.Header.Get("Retry-After") != "1" {
		t.Errorf("the 503 has Retry-After %q, want 1", r.Header.Get("Retry-After"))
	}
	if n := gate.reads.Load() - before; n != 0 {
		t.Errorf("the refused fan-out made %d DynamoDB requests, want none", n)
	}
	if r := s.do(t, http.MethodGet, "/v1/positions/POSITION_1/summary", nil, "Authorization", inv1); r.Status != http.StatusOK {
		t.Errorf("a position's summary while the fan-outs are full: %d\n%s", r.Status, r.Body)
	}

	gate.release()
	for range 2 {
		if r := <-held; r.Status != http.StatusOK {
			t.Errorf("a held fan-out answered %d\n%s", r.Status, r.Body)
		}
	}
	if r := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_1/summary", nil, "Authorization", inv1); r.Status != http.StatusOK {
		t.Errorf("a fan-out after the others answered: %d\n%s", r.Status, r.Body)
	}
}

// TestAnOrdinaryPortalIsNeverRateLimited runs an investor portal at the
// default rate and burst for three minutes of the limiter's clock: every 5
// seconds an investor with eight positions loads its dashboard (its
// positions, summary and performance at once, as a browser does) and looks
// at one position (its summary, performance and cash flows at once), and an
// administrator lists the fund's documents. No request is refused.
func TestAnOrdinaryPortalIsNeverRateLimited(t *testing.T) {
	const loads = 36 // three minutes
	env := fundtest.New(t)
	env.Seed(t)
	portfolio := fund.Document{ID: "PCALL", DocumentFields: fund.DocumentFields{FundID: "FUND_P", Kind: fund.KindCapitalCallNotice, Title: "P call", AsOf: fund.MustDate("2025-05-01")}}
	for i := range 8 {
		portfolio.Positions = append(portfolio.Positions, fund.Position{ID: fmt.Sprintf("PPOS_%d", i), InvestorID: "PINV",
			CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("1000.00")}})
	}
	if _, err := env.Store.Restate(context.Background(), portfolio, nil); err != nil {
		t.Fatal(err)
	}
	defaults := config.Default()
	clock := newTestClock()
	s := startAPI(t, env, func(o *api.Options) {
		o.RateLimit, o.RateBurst, o.Clock = defaults.RateLimit, defaults.RateBurst, clock.now
	})
	investor := "Bearer " + token(t, api.Principal{Subject: "portal", Role: api.RoleInvestor, Investor: "PINV"})
	admin := "Bearer " + token(t, api.Principal{Subject: "fund-admin", Role: api.RoleAdmin, Funds: []string{"FUND_P"}})

	statuses := map[int]int{}
	var mu sync.Mutex
	all := func(auth string, paths ...string) {
		var wg sync.WaitGroup
		for _, p := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.do(t, http.MethodGet, p, nil, "Authorization", auth)
				mu.Lock()
				defer mu.Unlock()
				statuses[r.Status]++
				if r.Status != http.StatusOK {
					t.Errorf("GET %s at %s: %d\n%s", p, clock.now().Format(time.TimeOnly), r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
	}
	for i := range loads {
		all(investor, "/v1/investors/PINV/positions", "/v1/investors/PINV/summary", "/v1/investors/PINV/performance")
		pos := fmt.Sprintf("/v1/positions/PPOS_%d", i%8)
		all(investor, pos+"/summary", pos+"/performance", pos+"/cashflows")
		all(admin, "/v1/funds/FUND_P/documents")
		clock.advance(5 * time.Second)
	}
	if len(statuses) != 1 || statuses[http.StatusOK] != loads*7 {
		t.Errorf("statuses %v, want %d answers of 200", statuses, loads*7)
	}
}

// readGate is env's table read through a store whose first held DynamoDB
// requests wait until release, each telling waitHeld it has begun; it
// counts every request.
type readGate struct {
	env     *fundtest.Env
	held    int
	begun   chan struct{}
	open    chan struct{}
	reads   atomic.Int64
	waiting atomic.Int64
}

func newReadGate(t *testing.T, env *fundtest.Env, held int) *readGate {
	g := &readGate{held: held, begun: make(chan struct{}, held), open: make(chan struct{})}
	hold := func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("readGate", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			g.reads.Add(1)
			if g.waiting.Add(1) <= int64(g.held) {
				g.begun <- struct{}{}
				select {
				case <-g.open:
				case <-ctx.Done():
					return middleware.InitializeOutput{}, middleware.Metadata{}, ctx.Err()
				}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	}
	st := store.NewStore(store.NewDB(dynamotest.Shared().Config(dynamotest.WithAPIOptions(hold))), env.Table)
	g.env = &fundtest.Env{Store: st, Positions: positions.NewAnalytics(st), Counter: env.Counter, Table: env.Table}
	t.Cleanup(g.release)
	return g
}

// waitHeld waits until the held requests have begun.
func (g *readGate) waitHeld(t *testing.T) {
	t.Helper()
	deadline := time.After(time.Minute)
	for range g.held {
		select {
		case <-g.begun:
		case <-deadline:
			t.Fatalf("the held DynamoDB requests did not begin within a minute")
		}
	}
}

// release lets the held requests go on.
func (g *readGate) release() {
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}
