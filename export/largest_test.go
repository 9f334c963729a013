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

// The largest capital call notice the limits admit (docs/limits.md): the
// most positions (FUNDSVC_MAX_POSITIONS), each a call and an unfunded
// commitment (the most items, fund.ItemsPerPosition a position), every ID at
// its longest (64 characters) and of the most entropy the ID alphabet
// allows, so that nothing compresses them, the title at 200 bytes, amounts
// of 19 digits, and as many typed lines a call as the body limit holds.

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

// largest is the largest notice and what the test checks of it.
type largest struct {
	ID, FundID string
	Doc        fund.Document
	Body       []byte // the PUT body
	Lines      int    // typed lines per call
}

// amountOf is the fund.Money s.
func amountOf(s string) fund.Money { return fund.MustMoney(s) }

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

// noticeCall is position i's call in the largest notice: 19 digits,
// different for each position, so that an item read back from the wrong
// position, or rounded, shows; split over its call lines and over lines
// typed lines.
func noticeCall(i, lines int, asOf fund.Date) *fund.CapitalCallItem {
	call := amountOf("999999999000000.0000").Add(amountOf(fmt.Sprintf("%d.%04d", i, i%10000)))
	parts := splitInto(call, 3)
	types := fund.TransactionTypesOn(fund.OnCall)
	var typed []fund.Transaction
	for k, m := range splitInto(call, lines) {
		t := types[k%len(types)]
		d, _ := fund.TransactionTypeOf(t)
		typed = append(typed, fund.Transaction{Type: t, Amount: m, Unfunded: d.Effects[len(d.Effects)-1]})
	}
	return &fund.CapitalCallItem{Amount: call, Status: fund.StatusCompleted,
		CallDetails:  fund.CallDetails{DueDate: asOf, CallLines: fund.CallLines{Investment: &parts[0], ManagementFee: &parts[1], FundExpenses: &parts[2]}},
		Transactions: typed}
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

// TestTheLargestNoticeTakesEveryPath writes the largest capital call
// notice the limits admit (FUNDSVC_MAX_POSITIONS positions, each a call of
// noticeLines typed lines, every ID 64 random characters, so that its
// event does not fit its item and takes parts), reads it back through
// every read of a document and of a position, finds it in the event feed
// and exports it, each request within the request or write timeout, on a
// server with every setting as fundsvc serve reads it (newLargestServer),
// checking counts and exact amounts. Delivery to a webhook endpoint, the
// one path of a document this does not take, is webhooks'
// TestANoticeOfEveryPositionTheLimitsAllowIsDeliveredAndSoIsTheNext.
func TestTheLargestNoticeTakesEveryPath(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 5,000 positions")
	}
	s := newLargestServer(t)
	doc := largestNotice(t, randomIDs(38, s.cfg.MaxPositions), s.cfg.MaxBodyBytes)
	t.Logf("%d positions, %d typed lines a call, %d bytes of body (limit %d)", len(doc.Doc.Positions), doc.Lines, len(doc.Body), s.cfg.MaxBodyBytes)
	path := "/v1/documents/" + url.PathEscape(doc.ID)
	v1 := doc.Doc
	v1.Normalize()
	v1.SortPositions()

	var header wire.DocumentHeader
	s.send(t, http.MethodPut, path, doc.Body, http.StatusCreated, &header)
	if header.Version != 1 || header.PositionCount != len(v1.Positions) {
		t.Fatalf("created version %d of %d positions", header.Version, header.PositionCount)
	}
	// A small document of the first position, so that its read spans two
	// documents.
	first := v1.Positions[0]
	small := fmt.Sprintf(`{"fundId":%q,"kind":"distribution_notice","title":"Small","asOf":"2026-01-31","currency":"EUR","positions":[{"positionId":%q,"investorId":%q,"distribution":{"amount":"0.0001"}}]}`,
		doc.FundID, first.ID, first.InvestorID)
	s.send(t, http.MethodPut, "/v1/documents/SMALL", []byte(small), http.StatusCreated, nil)

	t.Run("the version reads back whole", func(t *testing.T) {
		var got wire.DocumentVersionRead
		s.send(t, http.MethodGet, path+"/versions/1", nil, http.StatusOK, &got)
		if got.Version != 1 || got.Title != v1.Title || len(got.Positions) != len(v1.Positions) {
			t.Fatalf("read as version %d, %q, %d positions", got.Version, got.Title, len(got.Positions))
		}
		a, _ := json.Marshal(got.Positions)
		b, _ := json.Marshal(v1.Positions)
		if string(a) != string(b) {
			t.Errorf("its positions read back differ from those written")
		}
	})
	t.Run("the overview pages every position", func(t *testing.T) {
		seen := map[string]bool{}
		cursor := ""
		for pages := 1; ; pages++ {
			var o wire.Overview
			s.send(t, http.MethodGet, path+"?limit=1000"+cursor, nil, http.StatusOK, &o)
			for pid, g := range o.Positions {
				want, ok := v1.PositionByID(pid)
				switch {
				case !ok || seen[pid]:
					t.Fatalf("page %d: position %s unknown or repeated", pages, pid)
				case len(g.CapitalCalls) != 1 || !g.CapitalCalls[0].Amount.Equal(want.CapitalCall.Amount) || len(g.CapitalCalls[0].Transactions) != doc.Lines:
					t.Fatalf("position %s read back as %+v", pid, g.CapitalCalls)
				case len(g.UnfundedCommitments) != 1 || !g.UnfundedCommitments[0].Amount.Equal(want.UnfundedCommitment.Amount):
					t.Fatalf("position %s read back as %+v", pid, g.UnfundedCommitments)
				}
				seen[pid] = true
			}
			if o.Next == "" {
				break
			}
			cursor = "&cursor=" + url.QueryEscape(o.Next)
		}
		if len(seen) != len(v1.Positions) {
			t.Errorf("the overview listed %d positions, want %d", len(seen), len(v1.Positions))
		}
	})
	t.Run("a position reads across both documents", func(t *testing.T) {
		var page wire.PositionItemsPage
		s.send(t, http.MethodGet, "/v1/positions/"+url.PathEscape(first.ID)+"?limit=1000", nil, http.StatusOK, &page)
		var got []string
		for _, it := range page.Items {
			got = append(got, fmt.Sprintf("%s %s v%d %s", it.DocumentID, strings.ToLower(string(it.Kind)), it.DocumentVersion, it.Amount))
		}
		want := []string{fmt.Sprintf("%s capital_call v1 %s", doc.ID, first.CapitalCall.Amount),
			fmt.Sprintf("%s unfunded_commitment v1 %s", doc.ID, first.UnfundedCommitment.Amount), "SMALL distribution v1 0.0001"}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("position %s reads\n%s\nwant\n%s", first.ID, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("the fund lists both documents", func(t *testing.T) {
		var page wire.Page[wire.DocumentHeader]
		s.send(t, http.MethodGet, "/v1/funds/"+url.PathEscape(doc.FundID)+"/documents", nil, http.StatusOK, &page)
		var got []string
		for _, h := range page.Items {
			got = append(got, fmt.Sprintf("%s v%d %d", h.DocumentID, h.Version, h.PositionCount))
		}
		want := []string{fmt.Sprintf("%s v1 %d", doc.ID, len(v1.Positions)), "SMALL v1 1"}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("the fund lists %v, want %v", got, want)
		}
	})
	t.Run("the event feed announces every position", func(t *testing.T) {
		s.env.Store.Now = func() time.Time { return fundtest.Clock.Add(store.ChangeSettleMargin + time.Minute) }
		defer func() { s.env.Store.Now = func() time.Time { return fundtest.Clock } }()
		// The notice's event alone is over a page's byte budget, so it
		// comes in a page of its own.
		var got []string
		for query, pages := "/v1/events?limit=1000&fund="+url.QueryEscape(doc.FundID), 1; ; pages++ {
			var feed wire.EventFeed
			s.send(t, http.MethodGet, query, nil, http.StatusOK, &feed)
			for _, e := range feed.Items {
				got = append(got, fmt.Sprintf("%s %s v%d %d", e.Data.DocumentID, e.Type, e.Data.Version, len(e.Data.Positions)))
			}
			if !feed.More || pages > 10 {
				break
			}
			query = "/v1/events?limit=1000&fund=" + url.QueryEscape(doc.FundID) + "&after=" + url.QueryEscape(feed.Next)
		}
		slices.Sort(got)
		want := []string{fmt.Sprintf("%s document.created v1 %d", doc.ID, len(v1.Positions)), "SMALL document.created v1 1"}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("the feed holds %v, want %v", got, want)
		}
	})
	t.Run("the export holds every item exactly", func(t *testing.T) {
		sink, dir := dirSink(t)
		start := time.Now()
		runExport(t, s.env, sink, nil)
		t.Logf("export: %s", time.Since(start).Round(time.Millisecond))
		var calls, lines, unfunded fund.Money
		for _, p := range v1.Positions {
			calls, unfunded = calls.Add(p.CapitalCall.Amount), unfunded.Add(p.UnfundedCommitment.Amount)
			for _, l := range p.CapitalCall.Transactions {
				lines = lines.Add(l.Amount)
			}
		}
		n := len(v1.Positions)
		got := duck(t, views(t, dir, ""), fmt.Sprintf(`
			SELECT 'calls', count(*)::VARCHAR, sum(amount)::VARCHAR FROM capital_calls WHERE document_id = '%[1]s'
			UNION ALL SELECT 'lines', count(*)::VARCHAR, sum(amount)::VARCHAR FROM transaction_lines WHERE document_id = '%[1]s'
			UNION ALL SELECT 'unfunded', count(*)::VARCHAR, sum(amount)::VARCHAR FROM unfunded_commitments WHERE document_id = '%[1]s'
			UNION ALL SELECT 'positions', count(*)::VARCHAR, '' FROM positions WHERE fund_id = '%[2]s'
			UNION ALL SELECT 'document', version::VARCHAR, position_count::VARCHAR FROM documents WHERE document_id = '%[1]s'`, doc.ID, doc.FundID))
		want := [][]string{
			{"calls", fmt.Sprint(n), calls.Decimal().StringFixed(4)},
			{"lines", fmt.Sprint(n * doc.Lines), lines.Decimal().StringFixed(4)},
			{"unfunded", fmt.Sprint(n), unfunded.Decimal().StringFixed(4)},
			{"positions", fmt.Sprint(n), ""},
			{"document", "1", fmt.Sprint(n)},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the export holds\n%v\nwant\n%v", got, want)
		}
	})
}

// largestNotice is a capital call notice to every position of id, each a
// call and an unfunded commitment, its title at 200 bytes, each call of as
// many typed lines (up to fund.MaxTransactions) as a body of at most
// maxBody bytes holds. It fails t unless one line more a call would take
// the body past maxBody or past fund.MaxTransactions.
func largestNotice(t testing.TB, id ids, maxBody int64) largest {
	at := func(lines int) largest {
		asOf := fund.MustDate("2025-12-31")
		l := largest{ID: id.Doc, FundID: id.Fund, Lines: lines}
		l.Doc = fund.Document{ID: l.ID, DocumentFields: fund.DocumentFields{
			FundID: l.FundID, Kind: fund.KindCapitalCallNotice, AsOf: asOf, Currency: "EUR",
			// 200 bytes, the most a title holds, of multi-byte characters.
			Title: strings.Repeat("€", 66) + "ab",
		}}
		for i := range id.Positions {
			l.Doc.Positions = append(l.Doc.Positions, fund.Position{ID: id.Positions[i], InvestorID: id.Investor[i],
				CapitalCall:        noticeCall(i, lines, asOf),
				UnfundedCommitment: &fund.UnfundedCommitmentItem{Amount: amountOf("888888888000000.0000").Add(amountOf(fmt.Sprint(i)))}})
		}
		l.Body = l.body(t)
		return l
	}
	// The body grows by about the same bytes with each line a call: start
	// from the line between the fewest and the most, then step.
	lo, hi := at(1), at(fund.MaxTransactions)
	if int64(len(hi.Body)) <= maxBody {
		return hi
	}
	lines := 1 + int(int64(fund.MaxTransactions-1)*(maxBody-int64(len(lo.Body)))/int64(len(hi.Body)-len(lo.Body)))
	l := at(lines)
	for int64(len(l.Body)) > maxBody {
		lines--
		l = at(lines)
	}
	for more := at(lines + 1); int64(len(more.Body)) <= maxBody; more = at(lines + 1) {
		lines, l = lines+1, more
	}
	return l
}
