package store_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/positions/positionstest"
)

// bothWrite writes each document to the store on DynamoDB Local and to the
// in-memory model of package positions' tests.
func bothWrite(t *testing.T, e *fundtest.Env, m *positionstest.Memory, docs ...fund.Document) {
	t.Helper()
	for _, d := range docs {
		if _, err := e.Store.Restate(ctx, d, nil); err != nil {
			t.Fatalf("restate %s: %v", d.ID, err)
		}
		m.Restate(d)
	}
}

// rendered is v as JSON, to compare answers: amounts decoded from the table
// and amounts written are equal but not always alike inside (reflect.DeepEqual
// tells them apart), and an empty slice is no answer as nil is.
func rendered(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); s != "[]" {
		return s
	}
	return "null"
}

// TestPositionsOverTheStoreAnswerAsOverTheModel is the integration test of
// package positions: the documents its tests work out by hand, and random
// restatements, read through *store.Store on DynamoDB Local, give the
// answers the in-memory model gives (so every hand-worked figure holds
// against the real table), with the Queries each read is known to need.
func TestPositionsOverTheStoreAnswerAsOverTheModel(t *testing.T) {
	e := fundtest.New(t)
	m := positionstest.NewMemory(fundtest.Clock)
	bothWrite(t, e, m, positionstest.HandFixtures()...)
	real, model := positions.NewAnalytics(e.Store), positions.NewAnalytics(m)
	date := fund.MustDate

	same := func(t *testing.T, pos string, asOf fund.Date) {
		t.Helper()
		got, gerr := real.Summary(ctx, fund.Operator, pos, asOf)
		want, werr := model.Summary(ctx, fund.Operator, pos, asOf)
		if fund.ErrorCode(gerr) != fund.ErrorCode(werr) || rendered(t, got) != rendered(t, want) {
			t.Errorf("summary of %s on %q:\nstore %+v (%v)\nmodel %+v (%v)", pos, asOf, got, gerr, want, werr)
		}
		gid, gflows, gerr := real.Cashflows(ctx, fund.Operator, pos, asOf)
		wid, wflows, werr := model.Cashflows(ctx, fund.Operator, pos, asOf)
		if fund.ErrorCode(gerr) != fund.ErrorCode(werr) || gid.FundID != wid.FundID || gid.InvestorID != wid.InvestorID || rendered(t, gflows) != rendered(t, wflows) {
			t.Errorf("cash flows of %s on %q:\nstore %+v (%v)\nmodel %+v (%v)", pos, asOf, gflows, gerr, wflows, werr)
		}
		gitems, gerr := e.Store.AllPositionItems(ctx, pos)
		witems, werr := m.AllPositionItems(ctx, pos)
		if gerr != nil || werr != nil || rendered(t, gitems) != rendered(t, witems) {
			t.Errorf("latest items of %s:\nstore %+v (%v)\nmodel %+v (%v)", pos, gitems, gerr, witems, werr)
		}
	}
	// sameStatements compares a document's statements, read a page of
	// limit at a time.
	sameStatements := func(t *testing.T, doc string, limit int) {
		t.Helper()
		var got, want []fund.PositionItem
		for _, r := range []struct {
			reader positions.Reader
			out    *[]fund.PositionItem
		}{{e.Store, &got}, {m, &want}} {
			var start []byte
			for pages := 0; pages == 0 || start != nil; pages++ {
				items, next, err := r.reader.DocumentStatements(ctx, doc, limit, start)
				if err != nil || pages > 10 {
					t.Fatalf("statements of %s, page %d: %v", doc, pages, err)
				}
				*r.out, start = append(*r.out, items...), next
			}
		}
		if rendered(t, got) != rendered(t, want) {
			t.Errorf("statements of %s:\nstore %s\nmodel %s", doc, rendered(t, got), rendered(t, want))
		}
	}

	cases := []struct {
		pos, asOf string
		queries   int
	}{
		{"PA", "", 1},
		{"PA", "2024-06-30", 1},
		// D2's latest version is dated later and had an earlier one: its
		// history up to the date shows none, so no version is read.
		{"PA", "2024-05-01", 2},
		{"PB", "", 1},
		// GSI2, then E1's history up to the date and its v1 partition.
		{"PB", "2024-04-15", 3},
		{"PB", "2024-01-01", 2},
		{"PC", "", 1},
		{"PD", "", 1},
		{"P_NONE", "", 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s on %q reads with %d Queries what the model answers", c.pos, c.asOf, c.queries), func(t *testing.T) {
			var asOf fund.Date
			if c.asOf != "" {
				asOf = date(c.asOf)
			}
			e.Counter.Reset()
			_, err := real.Summary(ctx, fund.Operator, c.pos, asOf)
			if err != nil && fund.ErrorCode(err) != fund.ENOTFOUND {
				t.Fatal(err)
			}
			if ops := e.Counter.Ops(); len(ops) != c.queries || slices.ContainsFunc(ops, func(op string) bool { return op != "Query" }) {
				t.Errorf("made %v, want %d Queries", ops, c.queries)
			}
			same(t, c.pos, asOf)
		})
	}

	t.Run("a refused position costs one Query, as an unknown one", func(t *testing.T) {
		e.Counter.Reset()
		_, err := real.Summary(ctx, fund.Latest(fund.Viewer{}), "PB", date("2024-04-15"))
		if fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
		if ops := e.Counter.Ops(); !slices.Equal(ops, []string{"Query"}) {
			t.Errorf("made %v, want one Query", ops)
		}
	})

	t.Run("an investor summary lists with one Query and sums up each position with one more", func(t *testing.T) {
		e.Counter.Reset()
		got, _, err := real.InvestorSummary(ctx, fund.Operator, "INV_A", fund.Date{}, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := e.Counter.Count("Query"); n != 4 || len(e.Counter.Ops()) != 4 {
			t.Errorf("made %v, want 4 Queries", e.Counter.Ops())
		}
		want, _, err := model.InvestorSummary(ctx, fund.Operator, "INV_A", fund.Date{}, 100, nil)
		if err != nil || rendered(t, got) != rendered(t, want) {
			t.Errorf("store %+v\nmodel %+v (%v)", got, want, err)
		}
	})

	t.Run("random restatements read alike on every date", func(t *testing.T) {
		dates := []fund.Date{{}, date("2024-01-31"), date("2024-03-31"), date("2024-06-30"), date("2024-09-30"), date("2024-12-31")}
		for seed := range uint64(6) {
			rng := rand.New(rand.NewPCG(seed, 11))
			cents := func(max int64) fund.Money {
				return fund.MustMoney(fmt.Sprintf("%d.%02d", rng.Int64N(max), rng.IntN(100)))
			}
			prefix := fmt.Sprintf("R%02d_", seed)
			ids := []string{prefix + "P0", prefix + "P1"}
			for range 8 {
				d := fund.Document{ID: fmt.Sprintf("%sD%d", prefix, rng.IntN(3)), DocumentFields: fund.DocumentFields{FundID: prefix + "F", Kind: fund.KindCapitalAccountStatement, Title: "random", Currency: "USD", AsOf: dates[1+rng.IntN(len(dates)-1)]}}
				for i, pos := range ids {
					if rng.IntN(3) == 0 {
						continue
					}
					p := fund.Position{ID: pos, InvestorID: fmt.Sprintf("%sI%d", prefix, i),
						CapitalCall: &fund.CapitalCallItem{Amount: cents(1_000_000), Status: fund.StatusPending}}
					if rng.IntN(2) == 0 {
						inv, fee := cents(1_000_000), cents(10_000)
						p.CapitalCall.Amount, p.CapitalCall.Transactions = inv.Add(fee), []fund.Transaction{
							{Type: "investment", Amount: inv, Unfunded: fund.Reduces},
							{Type: "management_fee_inside_commitment", Amount: fee, Unfunded: fund.Reduces}}
					}
					if rng.IntN(2) == 0 {
						begin, contributions := cents(3_000_000), cents(1_000_000)
						p.CapitalAccount = &fund.CapitalAccount{PeriodStart: date("2024-01-01"), BeginningNAV: begin,
							Contributions: &contributions, EndingNAV: begin.Add(contributions)}
					}
					if rng.IntN(2) == 0 {
						u := &fund.UnfundedCommitmentItem{Amount: cents(2_000_000), Status: fund.StatusActive}
						c := u.Amount.Add(cents(1_000_000))
						u.Commitment = &c
						p.UnfundedCommitment = u
					}
					if rng.IntN(2) == 0 {
						r := cents(10_000)
						p.Distribution = &fund.DistributionItem{Amount: cents(300_000), Status: fund.StatusCompleted, DistributionDetails: fund.DistributionDetails{DistributionLines: fund.DistributionLines{Recallable: &r}}}
					}
					d.Positions = append(d.Positions, p)
				}
				if len(d.Positions) > 0 {
					bothWrite(t, e, m, d)
				}
			}
			for _, pos := range ids {
				for _, asOf := range dates {
					same(t, pos, asOf)
				}
			}
			for i := range 3 {
				sameStatements(t, fmt.Sprintf("%sD%d", prefix, i), 1)
			}
		}
	})
}

// TestPositionItemsPageThroughGSI2 reads a position's items across
// documents one page, one Query, at a time, all kinds or one.
func TestPositionItemsPageThroughGSI2(t *testing.T) {
	e := fundtest.New(t)
	var docs []fund.Document
	for i := range 5 {
		d := doc(fmt.Sprintf("D%d", i), "F1", 100*i, "POS_1", "POS_2")
		d.Positions[0].Distribution = &fund.DistributionItem{Amount: fund.MustMoney("5.00"), Status: fund.StatusCompleted}
		docs = append(docs, d)
	}
	for _, d := range docs {
		if _, err := e.Store.Restate(ctx, d, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		kind fund.ItemKind
		want []string
	}{
		{"every kind comes by kind then document, and the last page has no next", "", []string{
			"CAPITAL_CALL#D0", "CAPITAL_CALL#D1", "CAPITAL_CALL#D2", "CAPITAL_CALL#D3", "CAPITAL_CALL#D4",
			"DISTRIBUTION#D0", "DISTRIBUTION#D1", "DISTRIBUTION#D2", "DISTRIBUTION#D3", "DISTRIBUTION#D4"}},
		{"one kind keeps to it, and a last page that is full has no next either", fund.Distribution, []string{"DISTRIBUTION#D0", "DISTRIBUTION#D1", "DISTRIBUTION#D2", "DISTRIBUTION#D3", "DISTRIBUTION#D4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			var start []byte
			pages := 0
			for {
				e.Counter.Reset()
				items, next, err := e.Store.PositionItems(ctx, "POS_1", c.kind, 3, start)
				if err != nil {
					t.Fatal(err)
				}
				if ops := e.Counter.Ops(); !slices.Equal(ops, []string{"Query"}) {
					t.Fatalf("page %d made %v, want one Query", pages, ops)
				}
				if len(items) > 3 {
					t.Fatalf("page %d holds %d items, more than the limit", pages, len(items))
				}
				for _, it := range items {
					if it.PositionID != "POS_1" || it.FundID != "F1" || it.DocumentVersion != 1 {
						t.Fatalf("item %+v", it)
					}
					got = append(got, string(it.Kind)+"#"+it.DocumentID)
				}
				if len(items) == 0 {
					t.Fatalf("page %d is empty: the page before it had a next", pages)
				}
				pages++
				if start = next; next == nil {
					break
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v\nwant %v", got, c.want)
			}
			if want := (len(c.want) + 2) / 3; pages != want {
				t.Errorf("%d pages of 3, want %d", pages, want)
			}
		})
	}

	t.Run("a capital call in one document is one Query of GSI1, and none is not found", func(t *testing.T) {
		e.Counter.Reset()
		it, err := e.Store.CapitalCallIn(ctx, "POS_2", "D3")
		if err != nil || it.DocumentID != "D3" || it.Kind != fund.CapitalCall || !it.Amount.Equal(fund.MustMoney("301")) {
			t.Fatalf("got %+v, %v", it, err)
		}
		if _, err := e.Store.CapitalCallIn(ctx, "POS_2", "D9"); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
		if ops := e.Counter.Ops(); !slices.Equal(ops, []string{"Query", "Query"}) {
			t.Errorf("made %v, want one Query each", ops)
		}
	})
}

// TestInvestorPositionsBoundTheirReads pages through an investor's positions
// in two funds as a caller who sees one fund's only: each page makes at
// most two Queries, ends right after its last position, and the pages
// together list each visible position once, in order.
func TestInvestorPositionsBoundTheirReads(t *testing.T) {
	e := fundtest.New(t)
	var want []string
	for i := range 9 {
		fundID := []string{"FA", "FB"}[i%2]
		pos := fmt.Sprintf("IP_%d", i)
		d := oneCall(fmt.Sprintf("D%d", i), fundID, pos, "INV_X")
		if _, err := e.Store.Restate(ctx, d, nil); err != nil {
			t.Fatal(err)
		}
		if fundID == "FB" {
			want = append(want, pos)
		}
	}
	onlyFB := fund.Viewer{Funds: []string{"FB"}}
	read := func(t *testing.T, limit int) (got []string, pages [][]string) {
		t.Helper()
		var start []byte
		for range 20 {
			e.Counter.Reset()
			rs, next, err := e.Store.InvestorPositions(ctx, onlyFB, "INV_X", limit, start)
			if err != nil {
				t.Fatal(err)
			}
			if n := e.Counter.Count("Query"); n < 1 || n > 2 || len(e.Counter.Ops()) != n {
				t.Fatalf("a page made %v, want one or two Queries", e.Counter.Ops())
			}
			var page []string
			for _, r := range rs {
				if r.FundID != "FB" || r.InvestorID != "INV_X" || r.Currency != "" && r.Currency != "USD" {
					t.Fatalf("row %+v", r)
				}
				page = append(page, r.PositionID)
			}
			got, pages = append(got, page...), append(pages, page)
			if start = next; next == nil {
				return got, pages
			}
		}
		t.Fatal("twenty pages did not reach the end")
		return nil, nil
	}

	t.Run("filtered, each Query reads far enough to fill a page, which ends right after its last position and is the last when none follows", func(t *testing.T) {
		got, pages := read(t, 2)
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		// The second page reads on past IP_7 and finds only FA's IP_8, so
		// it is the last: no empty page follows it.
		if !reflect.DeepEqual(pages, [][]string{{"IP_1", "IP_3"}, {"IP_5", "IP_7"}}) {
			t.Errorf("pages %v, want two full pages, the second without next", pages)
		}
	})
	t.Run("a fund's positions come in one Query a page", func(t *testing.T) {
		var got []string
		var start []byte
		for {
			e.Counter.Reset()
			rs, next, err := e.Store.FundPositions(ctx, "FA", 2, start)
			if err != nil {
				t.Fatal(err)
			}
			if ops := e.Counter.Ops(); !slices.Equal(ops, []string{"Query"}) {
				t.Fatalf("made %v, want one Query", ops)
			}
			for _, r := range rs {
				got = append(got, r.PositionID)
			}
			if start = next; next == nil {
				break
			}
		}
		if want := []string{"IP_0", "IP_2", "IP_4", "IP_6", "IP_8"}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("a fund's positions that fill their last page exactly end there", func(t *testing.T) {
		first, next, err := e.Store.FundPositions(ctx, "FB", 2, nil)
		if err != nil || len(first) != 2 || next == nil {
			t.Fatalf("first page %v, next %q, %v; want two positions and a next", first, next, err)
		}
		second, next, err := e.Store.FundPositions(ctx, "FB", 2, next)
		if err != nil || len(second) != 2 || next != nil {
			t.Errorf("second page %v, next %q, %v; want FB's last two positions and no next", second, next, err)
		}
	})
}
