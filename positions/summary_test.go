package positions_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/positions/positionstest"
)

// The tests of this package read through positionstest.Memory: the
// arithmetic needs no DynamoDB. The storage package's tests run the same
// documents through *store.Store on DynamoDB Local and require the same
// answers with a known number of Queries.

func date(s string) fund.Date { return fund.MustDate(s) }

// clock is the time of every write.
var clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// handWritten is a positions.Analytics over the hand-worked documents (see
// positionstest.HandFixtures), and the memory it reads.
func handWritten() (*positions.Analytics, *positionstest.Memory) {
	m := positionstest.NewMemory(clock)
	for _, d := range positionstest.HandFixtures() {
		m.Restate(d)
	}
	return positions.NewAnalytics(m), m
}

// want is a summary's figures as strings; "" is an absent figure.
type want struct {
	called, paid, outstanding, returned    string
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
	return want{
		called: f.Called.String(), paid: f.PaidIn.String(), outstanding: f.Outstanding.String(), returned: f.PaidInReturned.String(),
		gross: f.Distributed.Total.String(), grossPending: f.Distributed.Pending.String(), grossCompleted: f.Distributed.Completed.String(),
		withheld: f.Withholding.Total.String(), net: f.DistributedNet.Total.String(), recallable: f.Recallable.String(),
		commitment: optional(f.Commitment), reported: optional(f.UnfundedReported), computed: optional(f.UnfundedComputed), diff: optional(f.UnfundedDifference),
		dpi:   multiple(f.DPI),
		calls: f.CapitalCalls, distributions: f.Distributions, unfundeds: f.UnfundedCommitments, curr: f.Currency,
	}
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
	ps, m := handWritten()
	ctx := context.Background()

	// Called counts every call, pending or completed; paid-in the completed
	// calls dated (due, or else their document's as-of date) on or before
	// the date; outstanding is the rest. The DPI divides the distributed
	// typed lines of the distributions paid on the same terms by paid-in
	// less returned paid-in, to 6 places; none when nothing is paid in.
	cases := []struct {
		name, pos, asOf string
		want            want
		histories       int // documents whose history the read must look into
	}{
		{name: "PA with every document: a restated pending call, a completed call and a distribution with withholding and recallable", pos: "PA",
			want: want{
				// D1's 250,000 and D2's pending 120,000 are called; D1's alone is paid in.
				called: "370000.00", paid: "250000.00", outstanding: "120000.00", returned: "0.00",
				gross: "80000.00", grossPending: "0.00", grossCompleted: "80000.00", withheld: "1250.50", net: "78749.50", recallable: "20000.00",
				// computed 1,000,000 − 370,000 + 20,000 (the pending call is owed:
				// called, so no longer unfunded); DPI: D3's lines are all
				// distributed (recallable return of capital 20,000 + return of
				// capital 30,000 + gain 25,000 + income 5,000), 80,000 ÷ 250,000 = 0.32.
				commitment: "1000000.00", reported: "630000.00", computed: "650000.00", diff: "-20000.00", dpi: "0.320000",
				calls: 2, distributions: 1, unfundeds: 2, documents: []string{"D1@1", "D2@2", "D3@1"},
				commitmentSource: "D2@2", unfundedSource: "D2@2", curr: "USD"},
			histories: 0},
		{name: "PA on 2024-06-30 counts D2 at its restated version, its pending call outstanding, and nothing distributed yet", pos: "PA", asOf: "2024-06-30",
			want: want{called: "370000.00", paid: "250000.00", outstanding: "120000.00", returned: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				// 0 ÷ 250,000.
				commitment: "1000000.00", reported: "630000.00", computed: "630000.00", diff: "0.00", dpi: "0.000000",
				calls: 2, unfundeds: 2, documents: []string{"D1@1", "D2@2"}, commitmentSource: "D2@2", unfundedSource: "D2@2", curr: "USD"},
			histories: 0},
		{name: "PA on 2024-05-01 counts D1 alone, its call paid in on 2024-04-15", pos: "PA", asOf: "2024-05-01",
			want: want{called: "250000.00", paid: "250000.00", outstanding: "0.00", returned: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				commitment: "1000000.00", reported: "750000.00", computed: "750000.00", diff: "0.00", dpi: "0.000000",
				calls: 1, unfundeds: 1, documents: []string{"D1@1"}, commitmentSource: "D1@1", unfundedSource: "D1@1", curr: "USD"},
			// D2's latest version is dated later and had an earlier one: its
			// history up to the date must be read (it shows none).
			histories: 1},
		{name: "PA on 2024-04-01: D1's completed call is due on 2024-04-15, so it is called and outstanding but not paid in yet", pos: "PA", asOf: "2024-04-01",
			want: want{called: "250000.00", paid: "0.00", outstanding: "250000.00", returned: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				// Nothing paid in: no DPI. Unfunded 1,000,000 − 250,000: the call is owed.
				commitment: "1000000.00", reported: "750000.00", computed: "750000.00", diff: "0.00",
				calls: 1, unfundeds: 1, documents: []string{"D1@1"}, commitmentSource: "D1@1", unfundedSource: "D1@1", curr: "USD"},
			histories: 1},
		{name: "PB with every document: E1 at v2, a fully recallable pending distribution, E3's withdrawn line left out", pos: "PB",
			want: want{called: "55000.00", paid: "55000.00", outstanding: "0.00", returned: "0.00",
				gross: "10000.00", grossPending: "10000.00", grossCompleted: "0.00", withheld: "0.00", net: "10000.00", recallable: "10000.00",
				// computed 500,000 − 55,000 + 10,000; E2 is pending, so not
				// distributed yet: DPI 0 ÷ 55,000.
				commitment: "500000.00", reported: "445000.00", computed: "455000.00", diff: "-10000.00", dpi: "0.000000",
				calls: 1, distributions: 1, unfundeds: 1, documents: []string{"E1@2", "E2@1"},
				commitmentSource: "E1@2", unfundedSource: "E1@2", curr: "USD"},
			histories: 0},
		{name: "PB on 2024-04-15 counts E1 at v1, since v2 moved its as-of date later", pos: "PB", asOf: "2024-04-15",
			// E1 v1's call has no due date: it is dated by its document, 2024-03-31.
			want: want{called: "50000.00", paid: "50000.00", outstanding: "0.00", returned: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				commitment: "500000.00", reported: "450000.00", computed: "450000.00", diff: "0.00", dpi: "0.000000",
				calls: 1, unfundeds: 1, documents: []string{"E1@1"}, commitmentSource: "E1@1", unfundedSource: "E1@1", curr: "USD"},
			// E1's history up to the date gives its v1.
			histories: 1},
		{name: "PB before any document is all zeros, with no commitment and no DPI", pos: "PB", asOf: "2024-01-01",
			want: want{called: "0.00", paid: "0.00", outstanding: "0.00", returned: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00", curr: "USD"},
			histories: 1},
		{name: "PC, in EUR, with no distributions and its one call pending: called and outstanding, nothing paid in, no DPI", pos: "PC",
			want: want{called: "33333.33", paid: "0.00", outstanding: "33333.33", returned: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
				// 100,000 − 33,333.33.
				commitment: "100000.00", reported: "66666.67", computed: "66666.67", diff: "0.00",
				calls: 1, unfundeds: 1, documents: []string{"F1@1"}, commitmentSource: "F1@1", unfundedSource: "F1@1", curr: "EUR"},
			histories: 0},
		{name: "PD states no commitment, so nothing unfunded is computed", pos: "PD",
			want: want{called: "1000.00", paid: "1000.00", outstanding: "0.00", returned: "0.00",
				gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00", dpi: "0.000000",
				calls: 1, documents: []string{"D1@1"}, curr: "USD"},
			histories: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var asOf fund.Date
			if c.asOf != "" {
				asOf = date(c.asOf)
			}
			m.ResetReads()
			s, err := ps.Summary(ctx, fund.Operator, c.pos, asOf)
			if err != nil {
				t.Fatal(err)
			}
			if got := summaryOf(s); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			want := []string{"AllPositionItems"}
			for range c.histories {
				want = append(want, "PositionAsOf")
			}
			if reads := m.Reads(); !slices.Equal(reads, want) {
				t.Errorf("read %v, want %v", reads, want)
			}
		})
	}

	t.Run("an unknown position is not found", func(t *testing.T) {
		if _, err := ps.Summary(ctx, fund.Operator, "P_NONE", fund.Date{}); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
	})

	// Only completed flows move the cumulative totals; a pending one is
	// listed where its date puts it and moves none of them.
	for _, c := range []struct {
		pos  string
		want []string
	}{
		{"PA", []string{
			"2024-04-15 CAPITAL_CALL D1@1 completed 250000.00 net=0.00 | paid=250000.00 dist=0.00 cash=-250000.00",
			"2024-07-15 CAPITAL_CALL D2@2 pending 120000.00 net=0.00 | paid=250000.00 dist=0.00 cash=-250000.00",
			// −250,000 + 80,000 − 1,250.50
			"2024-10-05 DISTRIBUTION D3@1 completed 80000.00 net=78749.50 | paid=250000.00 dist=80000.00 cash=-171250.50",
		}},
		{"PB", []string{
			// Neither item has a date of its own: their documents' as-of dates.
			"2024-04-30 CAPITAL_CALL E1@2 completed 55000.00 net=0.00 | paid=55000.00 dist=0.00 cash=-55000.00",
			"2024-06-30 DISTRIBUTION E2@1 pending 10000.00 net=10000.00 | paid=55000.00 dist=0.00 cash=-55000.00",
		}},
	} {
		t.Run(c.pos+"'s cashflows run in date order with exact cumulative totals of the completed flows", func(t *testing.T) {
			_, flows, err := ps.Cashflows(ctx, fund.Operator, c.pos, fund.Date{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range flows {
				got = append(got, fmt.Sprintf("%s %s %s@%d %s %s net=%s | paid=%s dist=%s cash=%s", f.Date, f.Kind, f.DocumentID, f.Version,
					f.Status, f.Amount, f.Net, f.CumulativePaidIn, f.CumulativeDistributed, f.CumulativeNetCashflow))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%v\nwant\n%v", got, c.want)
			}
		})
	}

	t.Run("INV_A's totals keep USD and EUR apart and count PD's missing commitment", func(t *testing.T) {
		m.ResetReads()
		s, _, err := ps.InvestorSummary(ctx, fund.Operator, "INV_A", fund.Date{}, 100, nil)
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
		wantEUR := want{called: "33333.33", paid: "0.00", outstanding: "33333.33", returned: "0.00",
			gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00", recallable: "0.00",
			commitment: "100000.00", reported: "66666.67", computed: "66666.67", diff: "0.00",
			calls: 1, unfundeds: 1, curr: "EUR"}
		// PA + PD: called 370,000 + 1,000, paid in 250,000 + 1,000; DPI
		// 80,000 ÷ 251,000 = 0.3187250…; commitment, computed and
		// difference are PA's alone.
		wantUSD := want{called: "371000.00", paid: "251000.00", outstanding: "120000.00", returned: "0.00",
			gross: "80000.00", grossPending: "0.00", grossCompleted: "80000.00", withheld: "1250.50", net: "78749.50", recallable: "20000.00",
			commitment: "1000000.00", reported: "630000.00", computed: "650000.00", diff: "-20000.00", dpi: "0.318725",
			calls: 3, distributions: 1, unfundeds: 2, curr: "USD"}
		if got := figuresOf(eur.Figures); !reflect.DeepEqual(got, wantEUR) || eur.Positions != 1 || eur.PositionsWithoutCommitment != 0 {
			t.Errorf("EUR: got %+v (%d positions, %d without commitment)\nwant %+v", got, eur.Positions, eur.PositionsWithoutCommitment, wantEUR)
		}
		if got := figuresOf(usd.Figures); !reflect.DeepEqual(got, wantUSD) || usd.Positions != 2 || usd.PositionsWithoutCommitment != 1 {
			t.Errorf("USD: got %+v (%d positions, %d without commitment)\nwant %+v", got, usd.Positions, usd.PositionsWithoutCommitment, wantUSD)
		}
		// One read lists the positions, one more sums up each.
		reads := m.Reads()
		slices.Sort(reads)
		if want := []string{"AllPositionItems", "AllPositionItems", "AllPositionItems", "InvestorPositions"}; !slices.Equal(reads, want) {
			t.Errorf("read %v, want %v", reads, want)
		}
	})

	t.Run("an investor's positions the caller may not see are left out, and none left is not found", func(t *testing.T) {
		s, _, err := ps.InvestorSummary(ctx, fund.Latest(fund.Viewer{Funds: []string{"FUND_E"}}), "INV_A", fund.Date{}, 100, nil)
		if err != nil || len(s.Positions) != 1 || s.Positions[0].PositionID != "PC" || len(s.Totals) != 1 || s.Totals[0].Currency != "EUR" {
			t.Fatalf("got %+v, %v", s, err)
		}
		_, _, err = ps.InvestorSummary(ctx, fund.Latest(fund.Viewer{Funds: []string{}}), "INV_A", fund.Date{}, 100, nil)
		if fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
	})
}

// TestARefusedPositionCostsWhatAnUnknownOneDoes: the access rule is decided
// on the first read, before the histories a date may need, so a refused
// position is read no further than a position no document reports.
func TestARefusedPositionCostsWhatAnUnknownOneDoes(t *testing.T) {
	ps, m := handWritten()
	ctx := context.Background()
	early := date("2024-01-01") // PB needs E1's history on this date
	// Another investor than INV_B, whose PB is.
	refuse := fund.Latest(fund.Viewer{Investor: "INV_OTHER"})
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"a summary", func() error { _, err := ps.Summary(ctx, refuse, "PB", early); return err }},
		{"cash flows", func() error { _, _, err := ps.Cashflows(ctx, refuse, "PB", early); return err }},
		{"an unknown position", func() error { _, err := ps.Summary(ctx, refuse, "P_NONE", early); return err }},
	} {
		t.Run(c.name+" refused is not found after one read", func(t *testing.T) {
			m.ResetReads()
			if err := c.read(); fund.ErrorCode(err) != fund.ENOTFOUND {
				t.Fatalf("got %v, want ENOTFOUND", err)
			}
			if reads := m.Reads(); !slices.Equal(reads, []string{"AllPositionItems"}) {
				t.Errorf("read %v, want only AllPositionItems", reads)
			}
		})
	}
	t.Run("allowed, the same summary reads the history too", func(t *testing.T) {
		m.ResetReads()
		if _, err := ps.Summary(ctx, fund.Operator, "PB", early); err != nil {
			t.Fatal(err)
		}
		if reads := m.Reads(); !slices.Equal(reads, []string{"AllPositionItems", "PositionAsOf"}) {
			t.Errorf("read %v, want AllPositionItems then PositionAsOf", reads)
		}
	})
}

// TestSummariesEqualAStraightforwardSum writes random documents, restated
// at random dates, and checks every summary against a sum worked out
// directly from the documents as written: each document counts at its
// latest version dated on or before the date, unless its latest version
// withdrew the position; the reported figures come from unfunded
// commitment items and statements alike. Calls and distributions are
// pending or completed, dated by a date of their own (some after the next
// date asked for) or by their document, and some state typed lines: fees
// outside commitment, returns of excess capital called, carry. On every
// date the performance's called, paid-in, outstanding, returned paid-in
// and DPI are the summary's, exactly: the API has one DPI.
func TestSummariesEqualAStraightforwardSum(t *testing.T) {
	ctx := context.Background()
	dates := []fund.Date{date("2024-01-31"), date("2024-03-31"), date("2024-06-30"), date("2024-09-30"), date("2024-12-31")}
	statuses := []fund.Status{fund.StatusPending, fund.StatusCompleted}
	// seen counts the summaries that exercised each rule, so that a change
	// of the random documents cannot leave one untested.
	seen := map[string]int{}

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
		// typed splits amount into lines of the types given, in order, that
		// add up to it exactly; each line's effect on unfunded commitment is
		// one of effects[i], chosen at random.
		typed := func(amount fund.Money, types []fund.TransactionType, effects [][]fund.UnfundedEffect) []fund.Transaction {
			var out []fund.Transaction
			rest := amount
			for i, ty := range types {
				part := rest
				if i < len(types)-1 {
					part = *upTo(rest)
				}
				rest = rest.Sub(part)
				out = append(out, fund.Transaction{Type: ty, Amount: part, Unfunded: effects[i][rng.IntN(len(effects[i]))]})
			}
			return out
		}
		// dated is a date 0 to 99 days after d, or none (the document's).
		dated := func(d fund.Date) fund.Date {
			if rng.IntN(2) == 0 {
				return fund.Date{}
			}
			return fund.MustDate(d.Time().AddDate(0, 0, rng.IntN(100)).Format("2006-01-02"))
		}
		prefix := fmt.Sprintf("S%02d_", seed)
		positionIDs := []string{prefix + "P0", prefix + "P1", prefix + "P2"}
		written := map[string][]fund.Document{} // document → its versions, in order
		m := positionstest.NewMemory(clock)
		ps := positions.NewAnalytics(m)

		for v := 0; v < 10; v++ {
			docID := fmt.Sprintf("%sD%d", prefix, rng.IntN(4))
			d := fund.Document{ID: docID, DocumentFields: fund.DocumentFields{FundID: prefix + "F", Kind: fund.KindCapitalAccountStatement, Title: "random", Currency: "USD", AsOf: dates[rng.IntN(len(dates))]}}
			for i, pos := range positionIDs {
				if rng.IntN(3) == 0 {
					continue
				}
				p := fund.Position{ID: pos, InvestorID: fmt.Sprintf("%sI%d", prefix, i)}
				if rng.IntN(3) > 0 {
					c := &fund.CapitalCallItem{Amount: cents(1_000_000), Status: statuses[rng.IntN(2)], CallDetails: fund.CallDetails{DueDate: dated(d.AsOf)}}
					if rng.IntN(3) == 0 {
						c.Transactions = typed(c.Amount, []fund.TransactionType{"investment", "management_fee_outside_commitment"},
							[][]fund.UnfundedEffect{{fund.Reduces}, {fund.NoEffect}})
					}
					p.CapitalCall = c
				}
				if rng.IntN(2) == 0 {
					x := &fund.DistributionItem{Amount: cents(300_000), Status: statuses[rng.IntN(2)], DistributionDetails: fund.DistributionDetails{PaymentDate: dated(d.AsOf)}}
					x.Withholding = upTo(x.Amount)
					if rng.IntN(2) == 0 {
						x.Transactions = typed(x.Amount, []fund.TransactionType{"return_of_excess_capital_investments", "carry", "recallable_return_of_capital", "income"},
							[][]fund.UnfundedEffect{{fund.Increases, fund.NoEffect}, {fund.NoEffect}, {fund.Increases}, {fund.NoEffect}})
					} else {
						x.Recallable = upTo(x.Amount)
					}
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
				if rng.IntN(3) == 0 { // a statement whose A.2 reports unfunded commitment, and maybe the commitment
					unfunded := cents(2_000_000)
					c := &fund.CapitalAccount{PeriodStart: dates[0], BeginningUnfundedCommitment: &unfunded, EndingUnfundedCommitment: &unfunded}
					if rng.IntN(2) == 0 {
						total := unfunded.Add(cents(1_000_000))
						c.TotalCommitment = &total
					}
					p.CapitalAccount = c
				}
				d.Positions = append(d.Positions, p)
			}
			if len(d.Positions) == 0 {
				continue
			}
			m.Restate(d)
			written[docID] = append(written[docID], d)
		}

		for _, pos := range positionIDs {
			for _, asOf := range append([]fund.Date{{}}, dates...) {
				want, known, rules := straightforwardSum(written, pos, asOf)
				got, err := ps.Summary(ctx, fund.Operator, pos, asOf)
				if !known {
					if fund.ErrorCode(err) != fund.ENOTFOUND {
						t.Errorf("seed %d, %s: got %v, want ENOTFOUND", seed, pos, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("seed %d, %s on %s: %v", seed, pos, asOf, err)
				}
				for _, r := range rules {
					seen[r]++
				}
				if g := summaryOf(got); !reflect.DeepEqual(g, want) {
					t.Errorf("seed %d, %s on %q:\ngot  %+v\nwant %+v", seed, pos, asOf, g, want)
				}
				if asOf.IsZero() {
					continue // a performance is always on a date
				}
				p, err := ps.Performance(ctx, fund.Operator, pos, asOf)
				if err != nil {
					t.Fatalf("seed %d, performance of %s on %s: %v", seed, pos, asOf, err)
				}
				if g, w := []string{p.Called.String(), p.PaidIn.String(), p.Outstanding.String(), p.PaidInReturned.String(), multiple(p.Multiples.DPI)},
					[]string{want.called, want.paid, want.outstanding, want.returned, want.dpi}; !slices.Equal(g, w) {
					t.Errorf("seed %d, performance of %s on %s: called, paid in, outstanding, returned, DPI = %v, the summary's are %v", seed, pos, asOf, g, w)
				}
				if (got.DPI == nil) != (p.Multiples.DPI == nil) || got.DPI != nil && !got.DPI.Equal(*p.Multiples.DPI) {
					t.Errorf("seed %d, %s on %s: the summary's DPI %v, the performance's %v", seed, pos, asOf, got.DPI, p.Multiples.DPI)
				}
			}
		}
	}
	for _, rule := range []string{"a pending call", "a completed call due after the date", "a completed call paid in",
		"a completed distribution paid after the date", "returned paid-in", "a carry line", "a call outside commitment"} {
		if seen[rule] < 5 {
			t.Errorf("only %d summaries had %s: the random documents no longer test it", seen[rule], rule)
		}
	}
}

// lineTreatment is how the model counts the typed lines the random
// documents state, written out here rather than read from
// fund.TransactionTypes: ILPA's "Den−" (returned paid-in), excluded
// carry, and the rest distributed ("Num").
var lineTreatment = map[fund.TransactionType]string{
	"return_of_excess_capital_investments": "returned",
	"carry":                                "excluded",
	"recallable_return_of_capital":         "distributed",
	"income":                               "distributed",
}

// straightforwardSum works a position's summary out from the documents as
// written, without the positions package; known is false when no latest
// version reports the position. rules names the rules the summary
// exercised.
func straightforwardSum(written map[string][]fund.Document, pos string, asOf fund.Date) (w want, known bool, rules []string) {
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
	// paidBy says whether a completed item dated when (or, undated, on its
	// document's date) has paid by asOf: any date when there is none.
	paidBy := func(status fund.Status, when, docDate fund.Date) bool {
		if when.IsZero() {
			when = docDate
		}
		return status == fund.StatusCompleted && (asOf.IsZero() || !asOf.Before(when))
	}
	rule := func(r string) {
		if !slices.Contains(rules, r) {
			rules = append(rules, r)
		}
	}
	var called, paid, returned, distributedLines, reduces, increases []fund.Money
	var gross, grossPending, grossCompleted, withheld, net, recallable []fund.Money
	// The reports of unfunded commitment and of commitment: unfunded
	// commitment items and statements' A.2, the later date winning, then
	// the greater document, then within a document the statement.
	type report struct {
		from   *counted
		amount fund.Money
	}
	var unfunded, commitment *report
	offer := func(r **report, c *counted, m *fund.Money) {
		if m != nil && (*r == nil || (*r).from.asOf.Before(c.asOf) || (c.asOf == (*r).from.asOf && c.doc >= (*r).from.doc)) {
			*r = &report{c, *m}
		}
	}
	for i := range all {
		c := &all[i]
		w.documents = append(w.documents, fmt.Sprintf("%s@%d", c.doc, c.version))
		if x := c.p.CapitalCall; x != nil {
			w.calls++
			called = append(called, x.Amount)
			switch {
			case paidBy(x.Status, x.DueDate, c.asOf):
				paid = append(paid, x.Amount)
				rule("a completed call paid in")
			case x.Status == fund.StatusPending:
				rule("a pending call")
			default:
				rule("a completed call due after the date")
			}
			// A call without typed lines is one investment line, which
			// reduces unfunded commitment; a fee outside commitment does not.
			reduces = append(reduces, x.Amount)
			for _, l := range x.Transactions {
				if l.Unfunded != fund.Reduces {
					reduces = append(reduces, fund.Money{}.Sub(l.Amount))
					rule("a call outside commitment")
				}
			}
		}
		if x := c.p.Distribution; x != nil {
			w.distributions++
			gross, withheld = append(gross, x.Amount), append(withheld, *x.Withholding)
			net = append(net, x.Amount.Sub(*x.Withholding))
			if x.Status == fund.StatusPending {
				grossPending = append(grossPending, x.Amount)
			} else {
				grossCompleted = append(grossCompleted, x.Amount)
			}
			isPaid := paidBy(x.Status, x.PaymentDate, c.asOf)
			if x.Status == fund.StatusCompleted && !isPaid {
				rule("a completed distribution paid after the date")
			}
			if x.Transactions == nil {
				// Today's line items are all distributed; the recallable
				// part raises unfunded commitment.
				recallable = append(recallable, *x.Recallable)
				if isPaid {
					distributedLines = append(distributedLines, x.Amount)
				}
			}
			for _, l := range x.Transactions {
				if l.Unfunded == fund.Increases {
					recallable = append(recallable, l.Amount)
				}
				switch lineTreatment[l.Type] {
				case "returned":
					if isPaid {
						returned = append(returned, l.Amount)
						rule("returned paid-in")
					}
				case "distributed":
					if isPaid {
						distributedLines = append(distributedLines, l.Amount)
					}
				case "excluded":
					rule("a carry line")
				default:
					panic("no treatment for " + l.Type)
				}
			}
		}
		if u := c.p.UnfundedCommitment; u != nil {
			w.unfundeds++
			offer(&unfunded, c, &u.Amount)
			offer(&commitment, c, u.Commitment)
		}
		if a := c.p.CapitalAccount; a != nil { // after the item: the statement wins within its document
			offer(&unfunded, c, a.EndingUnfundedCommitment)
			offer(&commitment, c, a.TotalCommitment)
		}
	}
	increases = recallable
	w.called, w.paid = fund.Sum(called...).String(), fund.Sum(paid...).String()
	w.outstanding, w.returned = fund.Sum(called...).Sub(fund.Sum(paid...)).String(), fund.Sum(returned...).String()
	w.gross, w.grossPending, w.grossCompleted = fund.Sum(gross...).String(), fund.Sum(grossPending...).String(), fund.Sum(grossCompleted...).String()
	w.withheld, w.net, w.recallable = fund.Sum(withheld...).String(), fund.Sum(net...).String(), fund.Sum(recallable...).String()
	w.curr = "USD"
	if unfunded != nil {
		w.reported, w.unfundedSource = unfunded.amount.String(), fmt.Sprintf("%s@%d", unfunded.from.doc, unfunded.from.version)
	}
	if commitment != nil {
		c := commitment.amount
		computed := c.Sub(fund.Sum(reduces...)).Add(fund.Sum(increases...))
		w.commitment, w.computed, w.commitmentSource = c.String(), computed.String(), fmt.Sprintf("%s@%d", commitment.from.doc, commitment.from.version)
		if unfunded != nil {
			w.diff = unfunded.amount.Sub(computed).String()
		}
	}
	// DPI: the distributed lines paid ÷ the net paid-in capital, paid-in
	// less returned, rounded once, half away from zero, to 6 places; none
	// when nothing is left paid in (returns at least what was paid).
	if den := fund.Sum(paid...).Sub(fund.Sum(returned...)).Decimal(); den.Sign() > 0 {
		w.dpi = fund.Sum(distributedLines...).Decimal().DivRound(den, 6).StringFixed(6)
	}
	return w, known, rules
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

// TestARefusedPositionsItemsReadAsAnUnknownPositions: the items of a
// position the caller may not see answer what an unknown position's do,
// with the same reads, with or without a kind.
func TestARefusedPositionsItemsReadAsAnUnknownPositions(t *testing.T) {
	ps, m := handWritten()
	ctx := context.Background()
	// Another investor than INV_B, whose PB is.
	refuse := fund.Latest(fund.Viewer{Investor: "INV_OTHER"})
	for _, kind := range []fund.ItemKind{"", fund.CapitalCall, fund.UnfundedCommitment} {
		var costs [2][]string
		for i, pos := range []string{"PB", "P_NONE"} {
			m.ResetReads()
			if _, _, err := ps.Items(ctx, refuse, pos, kind, 10, nil); fund.ErrorCode(err) != fund.ENOTFOUND {
				t.Fatalf("items of %s (kind %q): %v, want ENOTFOUND", pos, kind, err)
			}
			costs[i] = m.Reads()
		}
		if !slices.Equal(costs[0], costs[1]) {
			t.Errorf("kind %q: a refused position read %v, an unknown one %v", kind, costs[0], costs[1])
		}
		m.ResetReads()
		if _, _, err := ps.Items(ctx, fund.Operator, "PB", kind, 10, nil); err != nil && kind == "" {
			t.Errorf("kind %q: the position's own reader got %v", kind, err)
		}
	}
	if _, err := ps.CapitalCallIn(ctx, refuse, "PB", "E1"); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Errorf("a refused capital call: %v, want ENOTFOUND", err)
	}
}

// TestReportedFiguresAreTheMostRecentByDate works out by hand which report
// of unfunded commitment and of commitment a summary takes: the most recent
// by date of the unfunded commitment items (dated by their notice) and the
// statements' A.2 (dated by their period end), ties by the later write,
// then the greater document ID, and within one document the statement's.
// Position PR (INV_R, FUND_R), every call completed:
//
//	U1 2024-01-15 call 200,000 due 01-31; unfunded 800,000 of 1,000,000
//	S1 2024-03-31 statement from 01-01: NAV 0 + 200,000 = 200,000; A.2 1,000,000 − 200,000 = 800,000
//	U2 2024-05-02 call 100,000 due 05-20; unfunded 700,000 of 1,000,000
//	S2 2024-06-30 statement from 04-01: 200,000 + 100,000 = 300,000; the commitment raised to 1,200,000
//	              at the final close (A.2 row 113 +200,000): 800,000 − 100,000 + 200,000 = 900,000
//	U3 2024-08-30 call 50,000 due 09-15, no unfunded commitment stated
//	S3 2024-09-30 statement from 07-01: 300,000 + 50,000 = 350,000; A.2 900,000 − 50,000 = 850,000
//	U4 2024-09-30 call 150,000 due 10-15 (issued the day S3 closes); unfunded 700,000 of 1,200,000
//	S4 2024-12-31 statement from 10-01: 350,000 + 150,000 = 500,000; A.2 850,000 − 150,000 = 700,000;
//	              the same document also states an unfunded commitment item of 650,000
func TestReportedFiguresAreTheMostRecentByDate(t *testing.T) {
	m := positionstest.NewMemory(clock)
	money := func(s string) *fund.Money { v := fund.MustMoney(s); return &v }
	var written []fund.Document
	doc := func(id string, kind fund.Kind, asOf string, p fund.Position) {
		p.ID, p.InvestorID = "PR", "INV_R"
		written = append(written, m.Restate(fund.Document{ID: id, Positions: []fund.Position{p}, DocumentFields: fund.DocumentFields{FundID: "FUND_R", Kind: kind, Title: id, AsOf: date(asOf), Currency: "USD"}}))
	}
	call := func(amount, due string) *fund.CapitalCallItem {
		return &fund.CapitalCallItem{Amount: fund.MustMoney(amount), Status: fund.StatusCompleted, CallDetails: fund.CallDetails{DueDate: date(due)}}
	}
	unfunded := func(amount, commitment string) *fund.UnfundedCommitmentItem {
		return &fund.UnfundedCommitmentItem{Amount: fund.MustMoney(amount), Status: fund.StatusActive, UnfundedDetails: fund.UnfundedDetails{UnfundedLines: fund.UnfundedLines{Commitment: money(commitment)}}}
	}
	statement := func(start, beginning, contributions, ending, commitment, beginningUnfunded, other, endingUnfunded string) *fund.CapitalAccount {
		c := &fund.CapitalAccount{PeriodStart: date(start), BeginningNAV: fund.MustMoney(beginning), Contributions: money(contributions), EndingNAV: fund.MustMoney(ending),
			TotalCommitment: money(commitment), BeginningUnfundedCommitment: money(beginningUnfunded), LessContributions: money("-" + contributions),
			EndingUnfundedCommitment: money(endingUnfunded)}
		if other != "" {
			c.OtherUnfundedAdjustment = money(other)
		}
		return c
	}
	doc("U1", fund.KindCapitalCallNotice, "2024-01-15", fund.Position{CapitalCall: call("200000", "2024-01-31"), UnfundedCommitment: unfunded("800000", "1000000")})
	doc("S1", fund.KindCapitalAccountStatement, "2024-03-31", fund.Position{CapitalAccount: statement("2024-01-01", "0", "200000", "200000", "1000000", "1000000", "", "800000")})
	doc("U2", fund.KindCapitalCallNotice, "2024-05-02", fund.Position{CapitalCall: call("100000", "2024-05-20"), UnfundedCommitment: unfunded("700000", "1000000")})
	doc("S2", fund.KindCapitalAccountStatement, "2024-06-30", fund.Position{CapitalAccount: statement("2024-04-01", "200000", "100000", "300000", "1200000", "800000", "200000", "900000")})
	doc("U3", fund.KindCapitalCallNotice, "2024-08-30", fund.Position{CapitalCall: call("50000", "2024-09-15")})
	doc("S3", fund.KindCapitalAccountStatement, "2024-09-30", fund.Position{CapitalAccount: statement("2024-07-01", "300000", "50000", "350000", "1200000", "900000", "", "850000")})
	doc("U4", fund.KindCapitalCallNotice, "2024-09-30", fund.Position{CapitalCall: call("150000", "2024-10-15"), UnfundedCommitment: unfunded("700000", "1200000")})
	doc("S4", fund.KindCapitalAccountStatement, "2024-12-31", fund.Position{CapitalAccount: statement("2024-10-01", "350000", "150000", "500000", "1200000", "850000", "", "700000"),
		UnfundedCommitment: unfunded("650000", "1200000")})
	ps := positions.NewAnalytics(m)

	nothingDistributed := want{returned: "0.00", gross: "0.00", grossPending: "0.00", grossCompleted: "0.00", withheld: "0.00", net: "0.00",
		recallable: "0.00", dpi: "0.000000", curr: "USD"}
	cases := []struct {
		name, asOf                             string
		called, paid, outstanding              string
		commitment, reported, computed         string
		calls, unfundeds                       int
		commitmentSource, unfundedSource, docs string
	}{
		{"U1 alone reports both figures", "2024-02-29", "200000.00", "200000.00", "0.00", "1000000.00", "800000.00", "800000.00", 1, 1, "U1@1", "U1@1", "U1@1"},
		// 1,000,000 − 200,000; S1 (03-31) is more recent than U1 (01-15).
		{"S1's A.2 is more recent than U1's item", "2024-03-31", "200000.00", "200000.00", "0.00", "1000000.00", "800000.00", "800000.00", 1, 1, "S1@1", "S1@1", "U1@1 S1@1"},
		// 1,000,000 − 300,000.
		{"U2's item is more recent than S1's A.2", "2024-05-31", "300000.00", "300000.00", "0.00", "1000000.00", "700000.00", "700000.00", 2, 2, "U2@1", "U2@1", "U1@1 S1@1 U2@1"},
		// 1,200,000 − 300,000: U2's 700,000 of 1,000,000 is stale, older than S2.
		{"S2's A.2 is more recent than U2's stale item, and raises the commitment", "2024-06-30", "300000.00", "300000.00", "0.00", "1200000.00", "900000.00", "900000.00", 2, 2,
			"S2@1", "S2@1", "U1@1 S1@1 U2@1 S2@1"},
		// 1,200,000 − 500,000: U4 and S3 are both of 09-30 and written at
		// once, so the greater document ID, U4, is the more recent
		// (S3's 850,000 would be a difference of 150,000). U4's call is
		// completed but due on 10-15: called (so no longer unfunded) and
		// outstanding on 09-30, not paid in: 200,000 + 100,000 + 50,000.
		{"a tie of dates and writes goes to the greater document ID", "2024-09-30", "500000.00", "350000.00", "150000.00", "1200000.00", "700000.00", "700000.00", 4, 3,
			"U4@1", "U4@1", "U1@1 S1@1 U2@1 S2@1 U3@1 S3@1 U4@1"},
		// S4's statement says 700,000, its own item 650,000.
		{"within one document the statement's A.2 counts before its item", "2024-12-31", "500000.00", "500000.00", "0.00", "1200000.00", "700000.00", "700000.00", 4, 4,
			"S4@1", "S4@1", "U1@1 S1@1 U2@1 S2@1 U3@1 S3@1 U4@1 S4@1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := ps.Summary(context.Background(), fund.Operator, "PR", date(c.asOf))
			if err != nil {
				t.Fatal(err)
			}
			w := nothingDistributed
			w.called, w.paid, w.outstanding = c.called, c.paid, c.outstanding
			w.commitment, w.reported, w.computed, w.diff = c.commitment, c.reported, c.computed, "0.00"
			w.calls, w.unfundeds, w.commitmentSource, w.unfundedSource = c.calls, c.unfundeds, c.commitmentSource, c.unfundedSource
			w.documents = strings.Fields(c.docs)
			if got := summaryOf(s); !reflect.DeepEqual(got, w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
		})
	}
	t.Run("the order of the items read changes nothing", func(t *testing.T) {
		var items []fund.PositionItem
		for _, d := range written {
			items = append(items, d.Items()...)
		}
		want := summaryOf(positions.Summarize("PR", fund.Date{}, items))
		slices.Reverse(items)
		if got := summaryOf(positions.Summarize("PR", fund.Date{}, items)); !reflect.DeepEqual(got, want) {
			t.Errorf("reversed: %+v\nin order: %+v", got, want)
		}
		if want.reported != "700000.00" || want.unfundedSource != "S4@1" {
			t.Errorf("reported %s from %s, want S4's statement's 700000.00", want.reported, want.unfundedSource)
		}
	})
}
