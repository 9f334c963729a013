package positions_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

func money(s string) *fund.Money { m := fund.MustMoney(s); return &m }

func date(s string) fund.Date { return fund.MustDate(s) }

// restate writes d as the next version of its document.
func restate(t *testing.T, e *fundtest.Env, d fund.Document) {
	t.Helper()
	if _, err := e.Store.Restate(context.Background(), d, nil); err != nil {
		t.Fatalf("restate %s: %v", d.ID, err)
	}
}

// handFixtures writes the documents whose figures the tests below work out
// by hand. Fund FUND_H is in USD, FUND_E in EUR.
//
//	PA (INV_A, FUND_H) — commitment 1,000,000.00
//	  D1 2024-03-31       call 250,000.00 Completed, due 2024-04-15; unfunded 750,000.00
//	  D2 2024-06-30 v1    call 100,000.00 Pending;                 unfunded 650,000.00
//	  D2 2024-06-30 v2    call 120,000.00 Pending, due 2024-07-15; unfunded 630,000.00 (restated)
//	  D3 2024-09-30       distribution 80,000.00 Completed, 2024-10-05,
//	                      recallable 20,000.00, withholding 1,250.50
//	PB (INV_B, FUND_H) — commitment 500,000.00
//	  E1 2024-03-31 v1    call 50,000.00 Completed; unfunded 450,000.00
//	  E1 2024-04-30 v2    call 55,000.00 Completed; unfunded 445,000.00 (restated, as-of moved later)
//	  E2 2024-06-30       distribution 10,000.00 Pending, all of it recallable
//	  E3 2024-07-31 v1    call 7,000.00; v2 drops PB (its line withdrawn)
//	PC (INV_A, FUND_E) — commitment 100,000.00, no distributions
//	  F1 2024-05-15       call 33,333.33 Pending; unfunded 66,666.67
//	PD (INV_A, FUND_H) — no commitment stated
//	  D1 2024-03-31       call 1,000.00 Completed
func handFixtures(t *testing.T, e *fundtest.Env) {
	t.Helper()
	doc := func(id, fundID, asOf string, ps ...fund.Position) fund.Document {
		cur := "USD"
		if fundID == "FUND_E" {
			cur = "EUR"
		}
		return fund.Document{ID: id, FundID: fundID, Kind: fund.KindCapitalAccountStatement, Title: id, AsOf: date(asOf), Currency: cur, Positions: ps}
	}
	call := func(amount string, status fund.Status, due string) *fund.CapitalCallItem {
		c := &fund.CapitalCallItem{Amount: fund.MustMoney(amount), Status: status}
		if due != "" {
			c.DueDate = date(due)
		}
		return c
	}
	unfunded := func(amount, commitment string) *fund.UnfundedCommitmentItem {
		return &fund.UnfundedCommitmentItem{Amount: fund.MustMoney(amount), Status: fund.StatusActive, UnfundedLines: fund.UnfundedLines{Commitment: money(commitment)}}
	}
	pa := func(p fund.Position) fund.Position { p.ID, p.InvestorID = "PA", "INV_A"; return p }
	pb := func(p fund.Position) fund.Position { p.ID, p.InvestorID = "PB", "INV_B"; return p }

	d1 := call("250000.00", fund.StatusCompleted, "2024-04-15")
	d1.Investment, d1.ManagementFee = money("240000.00"), money("10000.00")
	restate(t, e, doc("D1", "FUND_H", "2024-03-31",
		pa(fund.Position{CapitalCall: d1, UnfundedCommitment: unfunded("750000.00", "1000000.00")}),
		fund.Position{ID: "PD", InvestorID: "INV_A", CapitalCall: call("1000.00", fund.StatusCompleted, "")}))
	restate(t, e, doc("D2", "FUND_H", "2024-06-30",
		pa(fund.Position{CapitalCall: call("100000.00", fund.StatusPending, ""), UnfundedCommitment: unfunded("650000.00", "1000000.00")})))
	restate(t, e, doc("D2", "FUND_H", "2024-06-30",
		pa(fund.Position{CapitalCall: call("120000.00", fund.StatusPending, "2024-07-15"), UnfundedCommitment: unfunded("630000.00", "1000000.00")})))
	restate(t, e, doc("D3", "FUND_H", "2024-09-30",
		pa(fund.Position{Distribution: &fund.DistributionItem{
			Amount:            fund.MustMoney("80000.00"),
			Status:            fund.StatusCompleted,
			Date:              date("2024-10-05"),
			DistributionLines: fund.DistributionLines{ReturnOfCapital: money("50000.00"), RealizedGain: money("25000.00"), Income: money("5000.00"), Recallable: money("20000.00"), Withholding: money("1250.50")},
		}})))

	restate(t, e, doc("E1", "FUND_H", "2024-03-31",
		pb(fund.Position{CapitalCall: call("50000.00", fund.StatusCompleted, ""), UnfundedCommitment: unfunded("450000.00", "500000.00")})))
	restate(t, e, doc("E1", "FUND_H", "2024-04-30",
		pb(fund.Position{CapitalCall: call("55000.00", fund.StatusCompleted, ""), UnfundedCommitment: unfunded("445000.00", "500000.00")})))
	restate(t, e, doc("E2", "FUND_H", "2024-06-30",
		pb(fund.Position{Distribution: &fund.DistributionItem{Amount: fund.MustMoney("10000.00"), Status: fund.StatusPending, DistributionLines: fund.DistributionLines{Recallable: money("10000.00")}}})))
	restate(t, e, doc("E3", "FUND_H", "2024-07-31", pb(fund.Position{CapitalCall: call("7000.00", fund.StatusPending, "")})))
	restate(t, e, doc("E3", "FUND_H", "2024-07-31", fund.Position{ID: "PX", InvestorID: "INV_X", CapitalCall: call("7000.00", fund.StatusPending, "")}))

	restate(t, e, doc("F1", "FUND_E", "2024-05-15",
		fund.Position{ID: "PC", InvestorID: "INV_A", CapitalCall: call("33333.33", fund.StatusPending, ""), UnfundedCommitment: unfunded("66666.67", "100000.00")}))
}

// want is a summary's figures as strings; "" is an absent figure.
type want struct {
	paid, paidPending, paidCompleted       string
	gross, grossPending, grossCompleted    string
	withheld, net, recallable              string
	commitment, reported, computed, diff   string
	dpi                                    string
	calls, distributions, unfundeds        int
	documents                              []string // "D2@2"
	commitmentSource, unfundedSource, curr string
}

func optional(m *fund.Money) string {
	if m == nil {
		return ""
	}
	return m.String()
}

func sourceName(s *positions.Source) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("%s@%d", s.DocumentID, s.Version)
}

// figuresOf renders f as a want, for comparison.
func figuresOf(f positions.Figures) want {
	w := want{
		paid: f.PaidIn.Total.String(), paidPending: f.PaidIn.Pending.String(), paidCompleted: f.PaidIn.Completed.String(),
		gross: f.Distributed.Total.String(), grossPending: f.Distributed.Pending.String(), grossCompleted: f.Distributed.Completed.String(),
		withheld: f.Withholding.Total.String(), net: f.DistributedNet.Total.String(), recallable: f.Recallable.String(),
		commitment: optional(f.Commitment), reported: optional(f.UnfundedReported), computed: optional(f.UnfundedComputed), diff: optional(f.UnfundedDifference),
		calls: f.CapitalCalls, distributions: f.Distributions, unfundeds: f.UnfundedCommitments, curr: f.Currency,
	}
	if f.DPI != nil {
		w.dpi = f.DPI.StringFixed(positions.DPIScale)
	}
	return w
}

func summaryOf(s positions.Summary) want {
	w := figuresOf(s.Figures)
	w.commitmentSource, w.unfundedSource = sourceName(s.CommitmentSource), sourceName(s.UnfundedSource)
	for _, d := range s.Documents {
		w.documents = append(w.documents, fmt.Sprintf("%s@%d", d.DocumentID, d.Version))
	}
	return w
}

func TestSummariesWorkedOutByHand(t *testing.T) {
	e := fundtest.New(t)
	handFixtures(t, e)
	ctx := context.Background()

	cases := []struct {
		name, pos, asOf string
		want            want
		queries         int // Queries the read may make
	}{
		{name: "PA with every document: a restated pending call, a completed call and a distribution with withholding and recallable", pos: "PA",
			want: want{paid: "370000.00", paidPending: "120000.00", paidCompleted: "250000.00",
				gross: "80000.00", grossPending: "0.00", grossCompleted: "80000.00", withheld: "1250.50", net: "78749.50", recallable: "20000.00",
				// computed 1,000,000 − 370,000 + 20,000; DPI 80,000 ÷ 370,000 = 0.21621…
				commitment: "1000000.00", reported: "630000.00", computed: "650000.00", diff: "-20000.00", dpi: "0.2162",
				calls: 2, distributions: 1, unfundeds: 2, documents: []string{"D1@1", "D2@2", "D3@1"},
				commitmentSource: "D2@2", unfundedSource: "D2@2", curr: "USD"},
			queries: 1},
		{name: "PA on 2024-06-30 counts D2 at its restated version and nothing distributed yet", pos: "PA", asOf: "2024-06-30",
			want: want{paid: "370000.00", paidPending: "120000.00", paidCompleted: "250000.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				commitment: "1000000.00", reported: "630000.00", computed: "630000.00", diff: "0.00", dpi: "0.0000",
				calls: 2, unfundeds: 2, documents: []string{"D1@1", "D2@2"}, commitmentSource: "D2@2", unfundedSource: "D2@2", curr: "USD"},
			queries: 1},
		{name: "PA on 2024-05-01 counts D1 alone", pos: "PA", asOf: "2024-05-01",
			want: want{paid: "250000.00", paidPending: "0.00", paidCompleted: "250000.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				commitment: "1000000.00", reported: "750000.00", computed: "750000.00", diff: "0.00", dpi: "0.0000",
				calls: 1, unfundeds: 1, documents: []string{"D1@1"}, commitmentSource: "D1@1", unfundedSource: "D1@1", curr: "USD"},
			// D2's latest version is dated later and had an earlier one: its
			// history up to the date shows none, so no version is read.
			queries: 2},
		{name: "PB with every document: E1 at v2, a fully recallable pending distribution, E3's withdrawn line left out", pos: "PB",
			want: want{paid: "55000.00", paidPending: "0.00", paidCompleted: "55000.00",
				gross: "10000.00", grossPending: "10000.00", grossCompleted: "0.00", withheld: "0.00", net: "10000.00", recallable: "10000.00",
				// computed 500,000 − 55,000 + 10,000; DPI 10,000 ÷ 55,000 = 0.18181…
				commitment: "500000.00", reported: "445000.00", computed: "455000.00", diff: "-10000.00", dpi: "0.1818",
				calls: 1, distributions: 1, unfundeds: 1, documents: []string{"E1@2", "E2@1"},
				commitmentSource: "E1@2", unfundedSource: "E1@2", curr: "USD"},
			queries: 1},
		{name: "PB on 2024-04-15 counts E1 at v1, since v2 moved its as-of date later", pos: "PB", asOf: "2024-04-15",
			want: want{paid: "50000.00", paidPending: "0.00", paidCompleted: "50000.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				commitment: "500000.00", reported: "450000.00", computed: "450000.00", diff: "0.00", dpi: "0.0000",
				calls: 1, unfundeds: 1, documents: []string{"E1@1"}, commitmentSource: "E1@1", unfundedSource: "E1@1", curr: "USD"},
			// GSI2, then E1's history up to the date and its v1 partition.
			queries: 3},
		{name: "PB before any document is all zeros, with no commitment and no DPI", pos: "PB", asOf: "2024-01-01",
			want: want{paid: "0.00", paidPending: "0.00", paidCompleted: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00", curr: "USD"},
			queries: 2},
		{name: "PC, in EUR, with no distributions", pos: "PC",
			want: want{paid: "33333.33", paidPending: "33333.33", paidCompleted: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				commitment: "100000.00", reported: "66666.67", computed: "66666.67", diff: "0.00", dpi: "0.0000",
				calls: 1, unfundeds: 1, documents: []string{"F1@1"}, commitmentSource: "F1@1", unfundedSource: "F1@1", curr: "EUR"},
			queries: 1},
		{name: "PD states no commitment, so nothing unfunded is computed", pos: "PD",
			want: want{paid: "1000.00", paidPending: "0.00", paidCompleted: "1000.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00", dpi: "0.0000",
				calls: 1, documents: []string{"D1@1"}, curr: "USD"},
			queries: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var asOf fund.Date
			if c.asOf != "" {
				asOf = date(c.asOf)
			}
			e.Counter.Reset()
			s, err := e.Positions.Summary(ctx, c.pos, asOf)
			if err != nil {
				t.Fatal(err)
			}
			if got := summaryOf(s); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			if ops := e.Counter.Ops(); len(ops) != c.queries || slices.ContainsFunc(ops, func(op string) bool { return op != "Query" }) {
				t.Errorf("made %v, want %d Queries", ops, c.queries)
			}
		})
	}

	t.Run("an unknown position is not found", func(t *testing.T) {
		if _, err := e.Positions.Summary(ctx, "P_NONE", fund.Date{}); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
	})

	t.Run("PA's cashflows run in date order with exact running totals", func(t *testing.T) {
		_, flows, err := e.Positions.Cashflows(ctx, "PA", fund.Date{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range flows {
			got = append(got, fmt.Sprintf("%s %s %s@%d %s net=%s | paid=%s dist=%s cash=%s", f.Date, f.Kind, f.DocumentID, f.Version,
				f.Amount, f.Net, f.PaidIn, f.Distributed, f.NetCashflow))
		}
		want := []string{
			"2024-04-15 CAPITAL_CALL D1@1 250000.00 net=0.00 | paid=250000.00 dist=0.00 cash=-250000.00",
			"2024-07-15 CAPITAL_CALL D2@2 120000.00 net=0.00 | paid=370000.00 dist=0.00 cash=-370000.00",
			// −370,000 + 80,000 − 1,250.50
			"2024-10-05 DISTRIBUTION D3@1 80000.00 net=78749.50 | paid=370000.00 dist=80000.00 cash=-291250.50",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got\n%v\nwant\n%v", got, want)
		}
	})

	t.Run("INV_A's totals keep USD and EUR apart and count PD's missing commitment", func(t *testing.T) {
		e.Counter.Reset()
		s, _, err := e.Positions.InvestorSummary(ctx, "INV_A", fund.Date{}, func(positions.Registered) bool { return true }, false, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range s.Positions {
			ids = append(ids, p.PositionID)
		}
		if !reflect.DeepEqual(ids, []string{"PA", "PC", "PD"}) {
			t.Fatalf("positions %v", ids)
		}
		if len(s.Totals) != 2 {
			t.Fatalf("%d totals, want EUR and USD", len(s.Totals))
		}
		eur, usd := s.Totals[0], s.Totals[1]
		wantEUR := want{paid: "33333.33", paidPending: "33333.33", paidCompleted: "0.00",
			gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
			commitment: "100000.00", reported: "66666.67", computed: "66666.67", diff: "0.00", dpi: "0.0000",
			calls: 1, unfundeds: 1, curr: "EUR"}
		// PA + PD: paid 370,000 + 1,000; DPI 80,000 ÷ 371,000 = 0.21563…;
		// commitment, computed and difference are PA's alone.
		wantUSD := want{paid: "371000.00", paidPending: "120000.00", paidCompleted: "251000.00",
			gross: "80000.00", grossPending: "0.00", grossCompleted: "80000.00", withheld: "1250.50", net: "78749.50", recallable: "20000.00",
			commitment: "1000000.00", reported: "630000.00", computed: "650000.00", diff: "-20000.00", dpi: "0.2156",
			calls: 3, distributions: 1, unfundeds: 2, curr: "USD"}
		if got := figuresOf(eur.Figures); !reflect.DeepEqual(got, wantEUR) || eur.Positions != 1 || eur.PositionsWithoutCommitment != 0 {
			t.Errorf("EUR: got %+v (%d positions, %d without commitment)\nwant %+v", got, eur.Positions, eur.PositionsWithoutCommitment, wantEUR)
		}
		if got := figuresOf(usd.Figures); !reflect.DeepEqual(got, wantUSD) || usd.Positions != 2 || usd.PositionsWithoutCommitment != 1 {
			t.Errorf("USD: got %+v (%d positions, %d without commitment)\nwant %+v", got, usd.Positions, usd.PositionsWithoutCommitment, wantUSD)
		}
		// One Query lists the positions, one more sums up each.
		if n := e.Counter.Count("Query"); n != 4 || len(e.Counter.Ops()) != 4 {
			t.Errorf("made %v, want 4 Queries", e.Counter.Ops())
		}
	})

	t.Run("an investor's positions the caller may not see are left out, and none left is not found", func(t *testing.T) {
		s, _, err := e.Positions.InvestorSummary(ctx, "INV_A", fund.Date{}, func(r positions.Registered) bool { return r.FundID == "FUND_E" }, true, 100, nil)
		if err != nil || len(s.Positions) != 1 || s.Positions[0].PositionID != "PC" || len(s.Totals) != 1 || s.Totals[0].Currency != "EUR" {
			t.Fatalf("got %+v, %v", s, err)
		}
		_, _, err = e.Positions.InvestorSummary(ctx, "INV_A", fund.Date{}, func(positions.Registered) bool { return false }, true, 100, nil)
		if fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
	})
}

// TestSummariesEqualAStraightforwardSum writes random documents, restated
// at random dates, and checks every summary against a sum worked out
// directly from the documents as written: each document counts at its
// latest version dated on or before the date, unless its latest version
// withdrew the position.
func TestSummariesEqualAStraightforwardSum(t *testing.T) {
	e := fundtest.New(t)
	ctx := context.Background()
	dates := []fund.Date{date("2024-01-31"), date("2024-03-31"), date("2024-06-30"), date("2024-09-30"), date("2024-12-31")}
	statuses := []fund.Status{fund.StatusPending, fund.StatusCompleted}

	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cents := func(max int64) fund.Money {
			return fund.MustMoney(fmt.Sprintf("%d.%02d", rng.Int64N(max), rng.IntN(100)))
		}
		upTo := func(m fund.Money) *fund.Money { // a random part of m, 0 to m
			d := m.Decimal().Mul(fund.MustMoney(fmt.Sprintf("0.%02d", rng.IntN(100))).Decimal()).Truncate(2)
			p := fund.MustMoney(d.StringFixed(2))
			return &p
		}
		prefix := fmt.Sprintf("S%02d_", seed)
		positionIDs := []string{prefix + "P0", prefix + "P1", prefix + "P2"}
		written := map[string][]fund.Document{} // document → its versions, in order

		for v := 0; v < 10; v++ {
			docID := fmt.Sprintf("%sD%d", prefix, rng.IntN(4))
			d := fund.Document{ID: docID, FundID: prefix + "F", Kind: fund.KindCapitalAccountStatement, Title: "random", Currency: "USD",
				AsOf: dates[rng.IntN(len(dates))]}
			for i, pos := range positionIDs {
				if rng.IntN(3) == 0 {
					continue
				}
				p := fund.Position{ID: pos, InvestorID: fmt.Sprintf("%sI%d", prefix, i)}
				if rng.IntN(3) > 0 {
					p.CapitalCall = &fund.CapitalCallItem{Amount: cents(1_000_000), Status: statuses[rng.IntN(2)]}
				}
				if rng.IntN(2) == 0 {
					x := &fund.DistributionItem{Amount: cents(300_000), Status: statuses[rng.IntN(2)]}
					x.Recallable, x.Withholding = upTo(x.Amount), upTo(x.Amount)
					p.Distribution = x
				}
				if rng.IntN(2) == 0 || (p.CapitalCall == nil && p.Distribution == nil) {
					u := &fund.UnfundedCommitmentItem{Amount: cents(2_000_000), Status: fund.StatusActive}
					if rng.IntN(4) > 0 {
						c := u.Amount.Add(cents(1_000_000))
						u.Commitment = &c
					}
					p.UnfundedCommitment = u
				}
				d.Positions = append(d.Positions, p)
			}
			if len(d.Positions) == 0 {
				continue
			}
			restate(t, e, d)
			written[docID] = append(written[docID], d)
		}

		for _, pos := range positionIDs {
			for _, asOf := range append([]fund.Date{{}}, dates...) {
				want, known := straightforwardSum(written, pos, asOf)
				got, err := e.Positions.Summary(ctx, pos, asOf)
				if !known {
					if fund.ErrorCode(err) != fund.ENOTFOUND {
						t.Errorf("seed %d, %s: got %v, want ENOTFOUND", seed, pos, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("seed %d, %s on %s: %v", seed, pos, asOf, err)
				}
				if g := summaryOf(got); !reflect.DeepEqual(g, want) {
					t.Errorf("seed %d, %s on %q:\ngot  %+v\nwant %+v", seed, pos, asOf, g, want)
				}
			}
		}
	}
}

// straightforwardSum works a position's summary out from the documents as
// written, without the positions package; known is false when no latest
// version reports the position.
func straightforwardSum(written map[string][]fund.Document, pos string, asOf fund.Date) (w want, known bool) {
	type counted struct {
		doc     string
		version int
		asOf    fund.Date
		p       fund.Position
	}
	var all []counted
	for doc, versions := range written {
		latest := versions[len(versions)-1]
		if _, ok := latest.PositionByID(pos); !ok {
			continue // withdrawn, or never reported
		}
		known = true
		for v := len(versions); v >= 1; v-- {
			d := versions[v-1]
			if !asOf.IsZero() && asOf.Before(d.AsOf) {
				continue
			}
			if p, ok := d.PositionByID(pos); ok {
				all = append(all, counted{doc, v, d.AsOf, p})
			}
			break
		}
	}
	slices.SortFunc(all, func(a, b counted) int {
		if c := a.asOf.Compare(b.asOf); c != 0 {
			return c
		}
		return cmpString(a.doc, b.doc)
	})
	var paid, paidPending, paidCompleted, gross, grossPending, grossCompleted, withheld, net, recallable []fund.Money
	var unfunded, commitment *counted
	later := func(a, b *counted) bool {
		return b == nil || b.asOf.Before(a.asOf) || (a.asOf == b.asOf && a.doc > b.doc)
	}
	for i := range all {
		c := &all[i]
		w.documents = append(w.documents, fmt.Sprintf("%s@%d", c.doc, c.version))
		if x := c.p.CapitalCall; x != nil {
			w.calls++
			paid = append(paid, x.Amount)
			if x.Status == fund.StatusPending {
				paidPending = append(paidPending, x.Amount)
			} else {
				paidCompleted = append(paidCompleted, x.Amount)
			}
		}
		if x := c.p.Distribution; x != nil {
			w.distributions++
			gross, withheld, recallable = append(gross, x.Amount), append(withheld, *x.Withholding), append(recallable, *x.Recallable)
			net = append(net, x.Amount.Sub(*x.Withholding))
			if x.Status == fund.StatusPending {
				grossPending = append(grossPending, x.Amount)
			} else {
				grossCompleted = append(grossCompleted, x.Amount)
			}
		}
		if u := c.p.UnfundedCommitment; u != nil {
			w.unfundeds++
			if later(c, unfunded) {
				unfunded = c
			}
			if u.Commitment != nil && later(c, commitment) {
				commitment = c
			}
		}
	}
	w.paid, w.paidPending, w.paidCompleted = fund.Sum(paid...).String(), fund.Sum(paidPending...).String(), fund.Sum(paidCompleted...).String()
	w.gross, w.grossPending, w.grossCompleted = fund.Sum(gross...).String(), fund.Sum(grossPending...).String(), fund.Sum(grossCompleted...).String()
	w.withheld, w.net, w.recallable = fund.Sum(withheld...).String(), fund.Sum(net...).String(), fund.Sum(recallable...).String()
	w.curr = "USD"
	if unfunded != nil {
		w.reported, w.unfundedSource = unfunded.p.UnfundedCommitment.Amount.String(), fmt.Sprintf("%s@%d", unfunded.doc, unfunded.version)
	}
	if commitment != nil {
		c := *commitment.p.UnfundedCommitment.Commitment
		computed := c.Sub(fund.Sum(paid...)).Add(fund.Sum(recallable...))
		w.commitment, w.computed, w.commitmentSource = c.String(), computed.String(), fmt.Sprintf("%s@%d", commitment.doc, commitment.version)
		if unfunded != nil {
			w.diff = unfunded.p.UnfundedCommitment.Amount.Sub(computed).String()
		}
	}
	if total := fund.Sum(paid...); total.Sign() > 0 {
		w.dpi = fund.Sum(gross...).Decimal().DivRound(total.Decimal(), 4).StringFixed(4)
	}
	return w, known
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
