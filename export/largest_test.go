package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
)

// The largest document the limits admit (docs/limits.md): the most
// positions (FUNDSVC_MAX_POSITIONS), each with every item a position can
// hold (a capital call, a distribution, an unfunded commitment and a
// capital account statement, every line item stated), every ID at its
// longest (64 characters) and of the most entropy the ID alphabet allows,
// so that nothing compresses them, the title and the description at 200
// bytes, amounts of 19 digits, and as many typed transaction lines per
// call and distribution (at most fund.MaxTransactions) as keep the body
// within FUNDSVC_MAX_BODY_BYTES.

// idAlphabet is every character an ID may hold after its first.
const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-"

// randomID is an ID of the longest length, its characters drawn from r:
// it starts with a letter or digit, as IDs must.
func randomID(r *rand.Rand) string {
	b := make([]byte, 64)
	b[0] = idAlphabet[r.IntN(62)]
	for i := 1; i < len(b); i++ {
		b[i] = idAlphabet[r.IntN(len(idAlphabet))]
	}
	return string(b)
}

// largest is the largest admitted document and what the test checks of it.
type largest struct {
	ID, FundID string
	Doc        fund.Document
	Body       []byte // the PUT body
	Lines      int    // typed lines per call and per distribution
}

// amountOf is the fund.Money s.
func amountOf(s string) fund.Money { return fund.MustMoney(s) }

func ptr(m fund.Money) *fund.Money { return &m }

// splitInto splits amount into n non-negative lines of at most 4 decimal
// places that add up to it exactly: n-1 equal lines and the rest.
func splitInto(amount fund.Money, n int) []fund.Money {
	unit := fund.MoneyOf(amount.Decimal().DivRound(fund.MustMoney(fmt.Sprint(n)).Decimal(), 4).Truncate(4))
	if unit.Cmp(amountOf("0")) > 0 && unit.Decimal().Mul(fund.MustMoney(fmt.Sprint(n)).Decimal()).GreaterThan(amount.Decimal()) {
		unit = unit.Sub(amountOf("0.0001"))
	}
	out := make([]fund.Money, n)
	rest := amount
	for i := 0; i < n-1; i++ {
		out[i], rest = unit, rest.Sub(unit)
	}
	out[n-1] = rest
	return out
}

// largestPosition is position i of the largest document, with lines typed
// lines per call and distribution.
func largestPosition(id, investor string, i, lines int, asOf fund.Date) fund.Position {
	// Every amount is 19 digits and differs per position, so that an item
	// read back from the wrong position, or rounded, shows.
	big := func(base string) fund.Money { return amountOf(base).Add(amountOf(fmt.Sprintf("%d.%04d", i, i%10000))) }
	call := big("999999999000000.0000")
	parts := splitInto(call, 3)
	callTypes := fund.TransactionTypesOn(fund.OnCall)
	var callLines []fund.Transaction
	for k, m := range splitInto(call, lines) {
		t := callTypes[k%len(callTypes)]
		d, _ := fund.TransactionTypeOf(t)
		callLines = append(callLines, fund.Transaction{Type: t, Amount: m, Unfunded: d.Effects[len(d.Effects)-1]})
	}
	dist := big("899999999000000.0000")
	dparts := splitInto(dist, 3)
	distTypes := fund.TransactionTypesOn(fund.OnDistribution)
	var distLines []fund.Transaction
	for k, m := range splitInto(dist, lines) {
		t := distTypes[k%len(distTypes)]
		d, _ := fund.TransactionTypeOf(t)
		distLines = append(distLines, fund.Transaction{Type: t, Amount: m, Unfunded: d.Effects[len(d.Effects)-1]})
	}
	unfunded := big("799999999000000.0000")
	neg := func(m fund.Money) *fund.Money { return ptr(amountOf("0").Sub(m)) }
	small := func(s string) fund.Money { return amountOf(s).Add(amountOf(fmt.Sprintf("0.%04d", i%10000))) }
	ca := fund.CapitalAccount{
		PeriodStart:                    fund.MustDate("2025-01-01"),
		BeginningNAV:                   big("100000000000000.0000"),
		Contributions:                  ptr(small("10000000.1234")),
		Distributions:                  neg(small("2000000.5678")),
		OfferingSyndicationCosts:       neg(small("1000.0001")),
		PlacementFees:                  neg(small("2000.0002")),
		PartnerTransfers:               neg(small("3000.0003")),
		ManagementFeesGross:            neg(small("400000.0004")),
		ManagementFeeRebate:            ptr(small("5000.0005")),
		FeeWaivers:                     ptr(small("6000.0006")),
		ManagementFeeOffsets:           ptr(small("7000.0007")),
		AdviserRelatedPersonsExpenses:  neg(small("8000.0008")),
		PartnershipExpenses:            neg(small("9000.0009")),
		InvestmentIncome:               ptr(small("10000.001")),
		NetRealizedGainLoss:            ptr(small("11000.0011")),
		NetUnrealizedGainLoss:          neg(small("12000.0012")),
		CarriedInterestAccruedEarned:   neg(small("13000.0013")),
		CarriedInterestPaid:            ptr(small("14000.0014")),
		TotalCommitment:                ptr(big("900000000000000.0000")),
		BeginningUnfundedCommitment:    ptr(big("800000000000000.0000")),
		LessContributions:              neg(small("10000000.1234")),
		PlusRecallableDistributions:    ptr(small("1000000.0001")),
		LessExpiredReleasedCommitments: neg(small("15000.0015")),
		OtherUnfundedAdjustment:        ptr(small("16000.0016")),
	}
	end := ca.BeginningNAV
	for _, l := range fund.CapitalLines() {
		if m := l.Get(&ca); m != nil && l.Section == fund.SectionNAV && l.Role == "movement" {
			end = end.Add(*m)
		}
	}
	ca.EndingNAV = end
	endU := *ca.BeginningUnfundedCommitment
	for _, l := range fund.CapitalLines() {
		if m := l.Get(&ca); m != nil && l.Section == fund.SectionCommitment && l.Role == "movement" {
			endU = endU.Add(*m)
		}
	}
	ca.EndingUnfundedCommitment = &endU
	return fund.Position{
		ID: id, InvestorID: investor,
		CapitalCall: &fund.CapitalCallItem{Amount: call, Status: fund.StatusCompleted,
			CallDetails:  fund.CallDetails{DueDate: asOf, CallLines: fund.CallLines{Investment: &parts[0], ManagementFee: &parts[1], FundExpenses: &parts[2]}},
			Transactions: callLines},
		Distribution: &fund.DistributionItem{Amount: dist, Status: fund.StatusCompleted,
			DistributionDetails: fund.DistributionDetails{PaymentDate: asOf, DistributionLines: fund.DistributionLines{
				ReturnOfCapital: &dparts[0], RealizedGain: &dparts[1], Income: &dparts[2], Recallable: ptr(dparts[0]), Withholding: ptr(small("1234.5678"))}},
			Transactions: distLines},
		UnfundedCommitment: &fund.UnfundedCommitmentItem{Amount: unfunded, Status: fund.StatusActive,
			UnfundedDetails: fund.UnfundedDetails{UnfundedLines: fund.UnfundedLines{Commitment: ptr(big("900000000000000.0000"))}}},
		CapitalAccount: &ca,
	}
}

// ids are the IDs of a document: its own, its fund's, and its positions'
// and their investors'.
type ids struct {
	Doc, Fund           string
	Positions, Investor []string
}

// randomIDs are n positions' IDs of the most entropy, drawn from seed.
func randomIDs(seed uint64, n int) ids {
	r := rand.New(rand.NewPCG(seed, seed))
	out := ids{Doc: randomID(r), Fund: randomID(r)}
	for range n {
		out.Positions, out.Investor = append(out.Positions, randomID(r)), append(out.Investor, randomID(r))
	}
	return out
}

// largestDocument builds the largest document of the positions of id
// whose body is at most maxBody bytes.
func largestDocument(t testing.TB, id ids, maxBody int64) largest {
	t.Helper()
	asOf := fund.MustDate("2025-12-31")
	build := func(lines int) largest {
		l := largest{ID: id.Doc, FundID: id.Fund, Lines: lines}
		l.Doc = fund.Document{ID: l.ID, DocumentFields: fund.DocumentFields{
			FundID: l.FundID, Kind: fund.KindCapitalCallNotice, AsOf: asOf, Currency: "EUR",
			// 200 bytes, the most a title holds, of multi-byte characters.
			Title: strings.Repeat("€", 66) + "ab",
		}, CapitalActivity: &fund.CapitalActivity{Amount: amountOf("-999999999999999.9999"), Status: fund.StatusCompleted,
			ActivityDetails: fund.ActivityDetails{ActivityDate: asOf, Description: strings.Repeat("ü", 100)}}}
		for i := range id.Positions {
			l.Doc.Positions = append(l.Doc.Positions, largestPosition(id.Positions[i], id.Investor[i], i, lines, asOf))
		}
		l.Body = l.body(t)
		return l
	}
	// The body grows by about the same bytes with each typed line: guess
	// from one and two lines, then step to the most that fit.
	one, two := build(1), build(2)
	if int64(len(one.Body)) > maxBody {
		t.Fatalf("no document of %d positions fits in %d bytes", len(id.Positions), maxBody)
	}
	lines := 1 + int((maxBody-int64(len(one.Body)))/int64(len(two.Body)-len(one.Body)))
	lines = min(max(lines, 1), fund.MaxTransactions)
	l := build(lines)
	for ; lines > 1 && int64(len(l.Body)) > maxBody; l = build(lines) {
		lines--
	}
	for lines < fund.MaxTransactions {
		next := build(lines + 1)
		if int64(len(next.Body)) > maxBody {
			break
		}
		l, lines = next, lines+1
	}
	return l
}

// body is the PUT body of the document as it stands.
func (l *largest) body(t testing.TB) []byte {
	b, err := json.Marshal(wire.RequestOf(l.Doc))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// largestServer is the API over a fresh table with every limit and
// timeout as fundsvc serve reads them: the defaults, unless the test's
// environment sets them (FUNDSVC_WRITE_TIMEOUT=15m on a machine slower
// than the default assumes), and an all-funds admin token.
type largestServer struct {
	env   *fundtest.Env
	url   string
	token string
	cfg   config.Config
	logs  *fundtest.SyncBuffer
}

func newLargestServer(t *testing.T) *largestServer {
	t.Helper()
	cfg, _, err := config.Load(func(k string) string {
		if k == "FUNDSVC_STACK_FILE" {
			return os.DevNull
		}
		return os.Getenv(k)
	}, nil, config.CmdServe)
	if err != nil {
		t.Fatal(err)
	}
	env := fundtest.New(t)
	env.Store.MaxPositions = cfg.MaxPositions
	env.Store.MaxWaitingWriters = cfg.WaitingWriters
	secret := []byte("export-test-secret-0123456789abcdef")
	v, err := api.NewVerifier(api.AuthConfig{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	logs := &fundtest.SyncBuffer{}
	t.Logf("write timeout %s, request timeout %s", cfg.WriteTimeout, cfg.RequestTimeout)
	srv := httptest.NewServer(api.NewServer(api.Options{
		Documents: env.Store, Positions: env.Positions, Verifier: v,
		Logger:       slog.New(slog.NewJSONHandler(logs, nil)),
		MaxBodyBytes: cfg.MaxBodyBytes, MaxBodyBytesInFlight: cfg.BodiesInFlight,
		DefaultLimit: cfg.DefaultPageLimit, MaxLimit: cfg.MaxPageLimit,
		RequestTimeout: cfg.RequestTimeout, WriteTimeout: cfg.WriteTimeout,
		RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst, FanoutConcurrency: cfg.FanoutConcurrency, ItemMemoBytes: cfg.ItemMemoBytes,
	}))
	t.Cleanup(srv.Close)
	tok, err := api.MintToken(secret, api.Principal{Subject: "largest", Role: "admin", Funds: []string{"*"}}, "", "", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &largestServer{env: env, url: srv.URL, token: tok, cfg: cfg, logs: logs}
}

// send sends one request and fails t unless it is answered want within
// the timeout of its kind (the write timeout for a PUT, else the request
// timeout); it decodes the answer into v unless v is nil.
func (s *largestServer) send(t *testing.T, method, path string, body []byte, want int, v any) {
	t.Helper()
	within := s.cfg.RequestTimeout
	if method != http.MethodGet {
		within = s.cfg.WriteTimeout
	}
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("%s %.80s: %d in %s, %d bytes", method, path, res.StatusCode, took.Round(time.Millisecond), len(b))
	if res.StatusCode != want {
		t.Fatalf("%s %.80s: %d, want %d: %.1000s\nlogs: %.3000s", method, path, res.StatusCode, want, b, s.logs.String())
	}
	if took > within {
		t.Errorf("%s %.80s took %s, more than its timeout %s", method, path, took, within)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %.80s: %v", method, path, err)
		}
	}
}

// TestTheLargestAdmittedDocumentTakesEveryPath writes the largest document
// the limits admit (FUNDSVC_MAX_POSITIONS positions with every
// item, the longest IDs, as many typed lines as FUNDSVC_MAX_BODY_BYTES
// lets in), restates it, reads it back through every read of a document
// and of a position, finds it in the event feed and exports it, each
// request within the request or write timeout, on a server with every
// setting as fundsvc serve reads it (newLargestServer), checking counts
// and exact amounts.
// Its IDs are random, so its events do not fit their items (store's
// event parts). Delivery to a webhook endpoint, the one path of a document
// this does not take, is webhooks'
// TestANoticeOfEveryPositionTheLimitsAllowIsDeliveredAndSoIsTheNext.
func TestTheLargestAdmittedDocumentTakesEveryPath(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two versions of 20,000 items")
	}
	s := newLargestServer(t)
	id := randomIDs(38, s.cfg.MaxPositions)
	doc := largestDocument(t, id, s.cfg.MaxBodyBytes)
	t.Logf("%d positions, %d typed lines per call and distribution, %d bytes of body (limit %d)", len(doc.Doc.Positions), doc.Lines, len(doc.Body), s.cfg.MaxBodyBytes)
	if len(doc.Doc.Positions) != s.cfg.MaxPositions || int64(len(doc.Body)) > s.cfg.MaxBodyBytes || int64(len(doc.Body)) < s.cfg.MaxBodyBytes*9/10 {
		t.Fatalf("not the largest document: %d positions, %d bytes", len(doc.Doc.Positions), len(doc.Body))
	}
	path := "/v1/documents/" + url.PathEscape(doc.ID)

	// Version 2 raises every unfunded commitment by 1 and retitles it.
	v1 := doc.Doc
	v1.Normalize()
	v1.SortPositions()
	v2 := largest{ID: doc.ID, FundID: doc.FundID}
	v2.Doc = v1
	v2.Doc.Title = strings.Repeat("€", 66) + "v2"
	v2.Doc.Positions = make([]fund.Position, len(v1.Positions))
	for i, p := range v1.Positions {
		u := *p.UnfundedCommitment
		u.Amount = u.Amount.Add(amountOf("1"))
		p.UnfundedCommitment = &u
		v2.Doc.Positions[i] = p
	}
	v2.Body = v2.body(t)
	if int64(len(v2.Body)) > s.cfg.MaxBodyBytes {
		t.Fatalf("the restatement is %d bytes", len(v2.Body))
	}

	var header wire.DocumentHeader
	s.send(t, http.MethodPut, path, doc.Body, http.StatusCreated, &header)
	if header.Version != 1 || header.PositionCount != len(v1.Positions) {
		t.Fatalf("created version %d of %d positions", header.Version, header.PositionCount)
	}
	s.send(t, http.MethodPut, path, v2.Body, http.StatusOK, &header)
	if header.Version != 2 || header.PositionCount != len(v1.Positions) || header.Title != v2.Doc.Title {
		t.Fatalf("restated as version %d of %d positions, %q", header.Version, header.PositionCount, header.Title)
	}
	// A small document of the first position, so that its read spans two
	// documents.
	first := v1.Positions[0]
	small := fmt.Sprintf(`{"fundId":%q,"kind":"distribution_notice","title":"Small","asOf":"2026-01-31","currency":"EUR","positions":[{"positionId":%q,"investorId":%q,"distribution":{"amount":"0.0001"}}]}`,
		doc.FundID, first.ID, first.InvestorID)
	s.send(t, http.MethodPut, "/v1/documents/SMALL", []byte(small), http.StatusCreated, nil)

	// canonical is positions as JSON, to compare them whole and exactly.
	canonical := func(ps []fund.Position) string {
		b, err := json.Marshal(ps)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Run("each version reads back whole", func(t *testing.T) {
		for n, want := range map[int]fund.Document{1: v1, 2: v2.Doc} {
			var got wire.DocumentVersionRead
			s.send(t, http.MethodGet, fmt.Sprintf("%s/versions/%d", path, n), nil, http.StatusOK, &got)
			if got.Version != n || got.Title != want.Title || len(got.Positions) != len(want.Positions) {
				t.Fatalf("version %d read as version %d, %q, %d positions", n, got.Version, got.Title, len(got.Positions))
			}
			if canonical(got.Positions) != canonical(want.Positions) {
				t.Errorf("version %d: its positions read back differ from those written", n)
			}
			if got.CapitalActivity == nil || got.CapitalActivity.Amount.String() != "-999999999999999.9999" {
				t.Errorf("version %d: capital activity %+v", n, got.CapitalActivity)
			}
		}
	})
	t.Run("the overview pages every position of the latest version", func(t *testing.T) {
		seen := map[string]bool{}
		cursor := ""
		for pages := 1; ; pages++ {
			var o wire.Overview
			s.send(t, http.MethodGet, path+"?limit=1000"+cursor, nil, http.StatusOK, &o)
			for pid, g := range o.Positions {
				want, ok := v2.Doc.PositionByID(pid)
				switch {
				case !ok || seen[pid]:
					t.Fatalf("page %d: position %s unknown or repeated", pages, pid)
				case len(g.CapitalCalls) != 1 || len(g.Distributions) != 1 || len(g.UnfundedCommitments) != 1 || len(g.CapitalAccounts) != 1:
					t.Fatalf("position %s: %d %d %d %d items", pid, len(g.CapitalCalls), len(g.Distributions), len(g.UnfundedCommitments), len(g.CapitalAccounts))
				case !g.CapitalCalls[0].Amount.Equal(want.CapitalCall.Amount) || !g.UnfundedCommitments[0].Amount.Equal(want.UnfundedCommitment.Amount) ||
					!g.CapitalAccounts[0].Amount.Equal(want.CapitalAccount.EndingNAV) || len(g.CapitalCalls[0].Transactions) != doc.Lines:
					t.Fatalf("position %s read back as %s, %s, %s with %d lines", pid, g.CapitalCalls[0].Amount, g.UnfundedCommitments[0].Amount, g.CapitalAccounts[0].Amount, len(g.CapitalCalls[0].Transactions))
				case o.Version != 2 || g.CapitalCalls[0].DocumentVersion != 2:
					t.Fatalf("page %d of version %d", pages, o.Version)
				}
				seen[pid] = true
			}
			if o.Next == "" {
				break
			}
			cursor = "&cursor=" + url.QueryEscape(o.Next)
		}
		if len(seen) != len(v2.Doc.Positions) {
			t.Errorf("the overview listed %d positions, want %d", len(seen), len(v2.Doc.Positions))
		}
	})
	t.Run("a position reads across both documents", func(t *testing.T) {
		var page wire.PositionItemsPage
		s.send(t, http.MethodGet, "/v1/positions/"+url.PathEscape(first.ID)+"?limit=1000", nil, http.StatusOK, &page)
		var got []string
		for _, it := range page.Items {
			got = append(got, fmt.Sprintf("%s %s v%d %s", it.DocumentID, strings.ToLower(string(it.Kind)), it.DocumentVersion, it.Amount))
		}
		want := v2.Doc.Positions[0]
		wantItems := []string{
			fmt.Sprintf("%s capital_call v2 %s", doc.ID, want.CapitalCall.Amount), fmt.Sprintf("%s distribution v2 %s", doc.ID, want.Distribution.Amount),
			fmt.Sprintf("%s unfunded_commitment v2 %s", doc.ID, want.UnfundedCommitment.Amount), fmt.Sprintf("%s capital_account v2 %s", doc.ID, want.CapitalAccount.EndingNAV),
			"SMALL distribution v1 0.0001",
		}
		slices.Sort(got)
		slices.Sort(wantItems)
		if !slices.Equal(got, wantItems) {
			t.Errorf("position %s reads\n%s\nwant\n%s", first.ID, strings.Join(got, "\n"), strings.Join(wantItems, "\n"))
		}
	})
	t.Run("the fund lists both documents", func(t *testing.T) {
		var page wire.Page[wire.DocumentHeader]
		s.send(t, http.MethodGet, "/v1/funds/"+url.PathEscape(doc.FundID)+"/documents", nil, http.StatusOK, &page)
		var got []string
		for _, h := range page.Items {
			got = append(got, fmt.Sprintf("%s v%d %d", h.DocumentID, h.Version, h.PositionCount))
		}
		if want := []string{fmt.Sprintf("%s v2 %d", doc.ID, len(v1.Positions)), "SMALL v1 1"}; !slices.Equal(got, want) {
			t.Errorf("the fund lists %v, want %v", got, want)
		}
	})
	t.Run("the event feed announces both versions with every position", func(t *testing.T) {
		s.env.Store.Now = func() time.Time { return fundtest.Clock.Add(store.ChangeSettleMargin + time.Minute) }
		defer func() { s.env.Store.Now = func() time.Time { return fundtest.Clock } }()
		var feed wire.EventFeed
		s.send(t, http.MethodGet, "/v1/events?limit=1000&fund="+url.QueryEscape(doc.FundID), nil, http.StatusOK, &feed)
		var got []string
		for _, e := range feed.Items {
			got = append(got, fmt.Sprintf("%s %s v%d %d", e.Data.DocumentID, e.Type, e.Data.Version, len(e.Data.Positions)))
		}
		// In commit order: the store's clock stands still, so the small
		// document's commit shares the first version's instant, and the
		// restatement's is a nanosecond after it.
		want := []string{fmt.Sprintf("%s document.created v1 %d", doc.ID, len(v1.Positions)), "SMALL document.created v1 1", fmt.Sprintf("%s document.restated v2 %d", doc.ID, len(v1.Positions))}
		if !slices.Equal(got, want) {
			t.Errorf("the feed holds %v, want %v", got, want)
		}
	})
	t.Run("the export holds every item exactly", func(t *testing.T) {
		sink, dir := dirSink(t)
		start := time.Now()
		runExport(t, s.env, sink, nil)
		t.Logf("export: %s", time.Since(start).Round(time.Millisecond))
		var calls, dists, unfunded, navs, lines fund.Money
		for _, p := range v2.Doc.Positions {
			calls, dists, unfunded, navs = calls.Add(p.CapitalCall.Amount), dists.Add(p.Distribution.Amount), unfunded.Add(p.UnfundedCommitment.Amount), navs.Add(p.CapitalAccount.EndingNAV)
			for _, l := range append(slices.Clone(p.CapitalCall.Transactions), p.Distribution.Transactions...) {
				lines = lines.Add(l.Amount)
			}
		}
		n := len(v2.Doc.Positions)
		got := duck(t, views(t, dir, ""), fmt.Sprintf(`
			SELECT 'calls', count(*)::VARCHAR, sum(amount)::VARCHAR FROM capital_calls WHERE document_id = '%[1]s' AND document_version = 2
			UNION ALL SELECT 'distributions', count(*)::VARCHAR, sum(amount)::VARCHAR FROM distributions WHERE document_id = '%[1]s' AND document_version = 2
			UNION ALL SELECT 'unfunded', count(*)::VARCHAR, sum(amount)::VARCHAR FROM unfunded_commitments WHERE document_id = '%[1]s' AND document_version = 2
			UNION ALL SELECT 'statements', count(*)::VARCHAR, sum(ending_nav)::VARCHAR FROM capital_accounts WHERE document_id = '%[1]s' AND document_version = 2
			UNION ALL SELECT 'lines', count(*)::VARCHAR, sum(amount)::VARCHAR FROM transaction_lines WHERE document_id = '%[1]s'
			UNION ALL SELECT 'positions', count(*)::VARCHAR, '' FROM positions WHERE fund_id = '%[2]s'
			UNION ALL SELECT 'document', version::VARCHAR, position_count::VARCHAR FROM documents WHERE document_id = '%[1]s'`, doc.ID, doc.FundID))
		want := [][]string{
			{"calls", fmt.Sprint(n), calls.Decimal().StringFixed(4)},
			{"distributions", fmt.Sprint(n), dists.Decimal().StringFixed(4)},
			{"unfunded", fmt.Sprint(n), unfunded.Decimal().StringFixed(4)},
			{"statements", fmt.Sprint(n), navs.Decimal().StringFixed(4)},
			{"lines", fmt.Sprint(2 * n * doc.Lines), lines.Decimal().StringFixed(4)},
			{"positions", fmt.Sprint(n), ""},
			{"document", "2", fmt.Sprint(n)},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the export holds\n%v\nwant\n%v", got, want)
		}
	})
}
