package positions_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/positions/positionstest"
	"github.com/shopspring/decimal"
)

// performanceStore is a positions.Store over positionstest.PerformanceFixtures,
// each document first held to what the API accepts.
func performanceStore(t *testing.T) (*positions.Store, *positionstest.Memory) {
	t.Helper()
	m := positionstest.NewMemory(clock)
	for _, d := range positionstest.PerformanceFixtures() {
		d.Normalize()
		if err := d.Validate(100); err != nil {
			t.Fatalf("fixture %s: %v", d.ID, err)
		}
		m.Restate(d)
	}
	return positions.NewStore(m), m
}

// libreOfficeIRRs reads what LibreOffice Calc 7.4.7.2 (Debian 12's
// libreoffice-calc 4:7.4.7-1+deb12u12) answered for the XIRR formulas of
// testdata/performance_cases.csv: the flows each case lists, as it read
// them, and its rate. The flows are the fixtures' counted lines and
// terminal NAVs worked out by hand below. To regenerate:
//
//	soffice --headless --convert-to 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false' \
//	  --outdir /tmp positions/testdata/performance_cases.csv && cp /tmp/performance_cases.csv positions/testdata/performance_libreoffice.csv
func libreOfficeIRRs(t *testing.T) (map[string][]positions.Flow, map[string]float64) {
	t.Helper()
	f, err := os.Open("testdata/performance_libreoffice.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	flows, rates := map[string][]positions.Flow{}, map[string]float64{}
	for _, r := range rows[1:] {
		if r[1] == "XIRR" {
			v, err := strconv.ParseFloat(r[2], 64)
			if err != nil {
				t.Fatalf("%s: LibreOffice answered %q, not a rate", r[0], r[2])
			}
			rates[r[0]] = v
			continue
		}
		flows[r[0]] = append(flows[r[0]], positions.Flow{Date: date(r[1]), Amount: fund.MustMoney(r[2])})
	}
	return flows, rates
}

// checkIRR holds irr to LibreOffice's XIRR of the case: the flows it
// solved are the case's, netted per date, and the rate agrees to 1e-6.
func checkIRR(t *testing.T, name string, irr positions.IRR) {
	t.Helper()
	flows, rates := libreOfficeIRRs(t)
	calc, ok := rates[name]
	if !ok {
		t.Fatalf("no case %q in testdata/performance_libreoffice.csv", name)
	}
	want := positions.NetFlows(flows[name])
	if len(irr.Flows) != len(want) {
		t.Fatalf("IRR solved %v, want the case's flows netted, %v", irr.Flows, want)
	}
	for i := range want {
		if irr.Flows[i].Date != want[i].Date || !irr.Flows[i].Amount.Equal(want[i].Amount) {
			t.Errorf("IRR flow %d = %s %s, want %s %s", i, irr.Flows[i].Date, irr.Flows[i].Amount, want[i].Date, want[i].Amount)
		}
	}
	if irr.Status != positions.IRROK {
		t.Fatalf("IRR status %s, want ok (LibreOffice: %v)", irr.Status, calc)
	}
	if got := irr.Rate.InexactFloat64(); math.Abs(got-calc) > 1e-6 {
		t.Errorf("IRR = %s, LibreOffice Calc's XIRR = %.10f", irr.Rate, calc)
	}
}

// perfWant is a performance's figures as strings; "" is absent.
type perfWant struct {
	nav                   string // "rolled_forward 340000.00 from S2@2: 310000.00 + 50000.00 − 20000.00"
	paidIn, distributed   string
	dpi, rvpi, tvpi, mult string
	irr                   string // the status; the rate is checked against LibreOffice
	flows                 []string
	reconciliations       []string
	documents             []string
}

func multiple(d *decimal.Decimal) string {
	if d == nil {
		return ""
	}
	return d.StringFixed(positions.MultipleScale)
}

func navOf(n positions.NAV) string {
	s := string(n.Status)
	if n.Value != nil {
		s += " " + n.Value.String()
	}
	if n.Statement != nil {
		s += fmt.Sprintf(" from %s: %s + %s − %s", sourceName(n.Statement), optional(n.StatementNAV), n.ContributionsAfter, n.DistributionsAfter)
	}
	return s
}

func reconciliationOf(r positions.Reconciliation) string {
	c := func(x positions.Compared) string {
		return fmt.Sprintf("%s vs %s (%s)", x.Statement, x.Notices, x.Difference)
	}
	u := "none"
	if r.EndingUnfunded != nil {
		u = c(*r.EndingUnfunded)
	}
	return fmt.Sprintf("%s %s %s..%s contributions %s, distributions %s, unfunded %s", sourceName(&r.Statement), r.PositionID,
		r.PeriodStart, r.PeriodEnd, c(r.Contributions), c(r.Distributions), u)
}

func performanceOf(p positions.Performance) perfWant {
	w := perfWant{nav: navOf(p.NAV), paidIn: p.PaidIn.String(), distributed: p.Distributed.String(),
		dpi: multiple(p.Multiples.DPI), rvpi: multiple(p.Multiples.RVPI), tvpi: multiple(p.Multiples.TVPI), mult: string(p.Multiples.Status),
		irr: string(p.IRR.Status)}
	for _, f := range p.Flows {
		w.flows = append(w.flows, fmt.Sprintf("%s %s %s %s %s@%d %s %s", f.Date, f.Type, f.Net, f.Amount, f.DocumentID, f.Version, f.PositionID, f.Status))
	}
	for _, r := range p.Reconciliations {
		w.reconciliations = append(w.reconciliations, reconciliationOf(r))
	}
	for _, d := range p.Documents {
		w.documents = append(w.documents, fmt.Sprintf("%s@%d", d.DocumentID, d.Version))
	}
	return w
}

// The flows of PerformanceFixtures, as performanceOf renders them.
var (
	q1N1 = []string{
		"2023-01-31 investment paid_in -190000.00 N1@1 Q1 Completed",
		"2023-01-31 management_fee_inside_commitment paid_in -10000.00 N1@1 Q1 Completed",
	}
	q1ToJune = append(slices.Clone(q1N1),
		"2023-05-15 investment paid_in -100000.00 N2@1 Q1 Pending",
		"2023-06-25 return_of_capital distributed 50000.00 N3@1 Q1 Completed",
		"2023-06-25 gain_loss distributed 30000.00 N3@1 Q1 Completed",
	)
	q1S1 = "S1@1 Q1 2023-01-01..2023-03-31 contributions 200000.00 vs 200000.00 (0.00), distributions 0.00 vs 0.00 (0.00), unfunded 800000.00 vs 800000.00 (0.00)"
	// Unfunded with no commitment stated: N1's 1,000,000 − 190,000 − 10,000
	// (N1) − 100,000 (N2) = 700,000; N3's lines leave it.
	q1S2 = "S2@2 Q1 2023-04-01..2023-06-30 contributions 100000.00 vs 100000.00 (0.00), distributions 80000.00 vs 80000.00 (0.00), unfunded 700000.00 vs 700000.00 (0.00)"
	// Q2's statement is off from its notices: contributions 105,000 against
	// M1's 90,000 + 10,000; distributions 42,000 against M2's 40,000;
	// unfunded 435,000 against 500,000 − 90,000 (the fee outside
	// commitment moves nothing) + 30,000 (recallable) = 440,000.
	q2S2 = "S2@2 Q2 2023-01-01..2023-06-30 contributions 105000.00 vs 100000.00 (5000.00), distributions 42000.00 vs 40000.00 (2000.00), unfunded 435000.00 vs 440000.00 (-5000.00)"
	q4G2 = "G2@1 Q4 2022-01-01..2022-12-31 contributions 1000.00 vs 1000.00 (0.00), distributions 0.00 vs 0.00 (0.00), unfunded none"
)

func TestPerformanceWorkedOutByHand(t *testing.T) {
	ps, m := performanceStore(t)
	ctx := context.Background()
	for _, c := range []struct {
		name, pos, asOf string
		want            perfWant
		histories       int
	}{
		{name: "Q1 on 2023-09-30", pos: "Q1", asOf: "2023-09-30",
			want: perfWant{
				// S2 v2's 310,000 (v1's 300,000 is ignored) + N4's 50,000 − N5's 20,000.
				nav:    "rolled_forward 340000.00 from S2@2: 310000.00 + 50000.00 − 20000.00",
				paidIn: "350000.00", distributed: "100000.00",
				// 100,000 ÷ 350,000 = 0.2857142…; 440,000 ÷ 350,000 = 1.2571428…;
				// RVPI = TVPI − DPI.
				dpi: "0.285714", rvpi: "0.971429", tvpi: "1.257143", mult: "ok", irr: "ok",
				flows: append(slices.Clone(q1ToJune),
					"2023-08-10 investment paid_in -50000.00 N4@1 Q1 Completed",
					"2023-09-05 return_of_capital distributed 20000.00 N5@1 Q1 Completed"),
				reconciliations: []string{q1S1, q1S2},
				documents:       []string{"N1@1", "S1@1", "N2@1", "N3@1", "S2@2", "N4@1", "N5@1"},
			}},
		{name: "Q1 on 2023-06-30", pos: "Q1", asOf: "2023-06-30",
			want: perfWant{
				// The restated statement ends on the date: its NAV as stated.
				nav:    "statement 310000.00 from S2@2: 310000.00 + 0.00 − 0.00",
				paidIn: "300000.00", distributed: "80000.00",
				// 80,000 ÷ 300,000 = 0.2666…; 390,000 ÷ 300,000 = 1.3.
				dpi: "0.266667", rvpi: "1.033333", tvpi: "1.300000", mult: "ok", irr: "ok",
				flows: q1ToJune, reconciliations: []string{q1S1, q1S2},
				documents: []string{"N1@1", "S1@1", "N2@1", "N3@1", "S2@2"},
			}},
		{name: "Q1 on 2023-05-10", pos: "Q1", asOf: "2023-05-10",
			want: perfWant{
				// N2 counts as a document, but its call is due on 2023-05-15:
				// not cash yet, so neither a flow nor in the roll-forward.
				nav:    "rolled_forward 205000.00 from S1@1: 205000.00 + 0.00 − 0.00",
				paidIn: "200000.00", distributed: "0.00",
				// 205,000 ÷ 200,000 = 1.025.
				dpi: "0.000000", rvpi: "1.025000", tvpi: "1.025000", mult: "ok", irr: "ok",
				flows: q1N1, reconciliations: []string{q1S1},
				documents: []string{"N1@1", "S1@1", "N2@1"},
			},
			// S2's versions are dated after the date: its history is read (and shows none).
			histories: 1},
		{name: "Q2 on 2023-09-30", pos: "Q2", asOf: "2023-09-30",
			want: perfWant{
				// 73,000 + N4's 30,000 (the recall).
				nav:    "rolled_forward 103000.00 from S2@2: 73000.00 + 30000.00 − 0.00",
				paidIn: "130000.00", distributed: "40000.00",
				// The call outside commitment counts as paid in: 90,000 + 10,000 +
				// 30,000. 40,000 ÷ 130,000 = 0.3076923…; 143,000 ÷ 130,000 = 1.1.
				dpi: "0.307692", rvpi: "0.792308", tvpi: "1.100000", mult: "ok", irr: "ok",
				flows: []string{
					"2023-02-15 investment paid_in -90000.00 M1@1 Q2 Completed",
					"2023-02-15 management_fee_outside_commitment paid_in -10000.00 M1@1 Q2 Completed",
					"2023-05-10 recallable_return_of_capital distributed 30000.00 M2@1 Q2 Completed",
					"2023-05-10 income distributed 10000.00 M2@1 Q2 Completed",
					"2023-08-15 investment paid_in -30000.00 N4@1 Q2 Completed",
				},
				reconciliations: []string{q2S2},
				documents:       []string{"M1@1", "M2@1", "S2@2", "N4@1"},
			}},
		{name: "Q3, with no statement, has DPI but no NAV, RVPI, TVPI or IRR", pos: "Q3", asOf: "2023-09-30",
			want: perfWant{
				nav:    "no_statement",
				paidIn: "50000.00", distributed: "20000.00",
				// The carry line is listed but counted nowhere: 20,000 ÷ 50,000.
				dpi: "0.400000", mult: "no_nav", irr: "no_nav",
				flows: []string{
					"2023-02-15 investment paid_in -50000.00 M1@1 Q3 Completed",
					"2023-05-10 income distributed 20000.00 M2@1 Q3 Completed",
					"2023-05-10 carry excluded 5000.00 M2@1 Q3 Completed",
				},
				documents: []string{"M1@1", "M2@1"},
			}},
		{name: "Q4 on 2022-12-31", pos: "Q4", asOf: "2022-12-31",
			want: perfWant{nav: "statement 1100.00 from G2@1: 1100.00 + 0.00 − 0.00", paidIn: "1000.00", distributed: "0.00",
				dpi: "0.000000", rvpi: "1.100000", tvpi: "1.100000", mult: "ok", irr: "ok",
				flows:           []string{"2022-01-01 investment paid_in -1000.00 G1@1 Q4 Completed"},
				reconciliations: []string{q4G2}, documents: []string{"G1@1", "G2@1"}}},
		{name: "Q4 on 2023-09-30", pos: "Q4", asOf: "2023-09-30",
			want: perfWant{nav: "rolled_forward 1100.00 from G2@1: 1100.00 + 0.00 − 0.00", paidIn: "1000.00", distributed: "0.00",
				dpi: "0.000000", rvpi: "1.100000", tvpi: "1.100000", mult: "ok", irr: "ok",
				flows:           []string{"2022-01-01 investment paid_in -1000.00 G1@1 Q4 Completed"},
				reconciliations: []string{q4G2}, documents: []string{"G1@1", "G2@1"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m.ResetReads()
			p, err := ps.PerformanceFor(ctx, c.pos, date(c.asOf), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := performanceOf(p); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
			if p.FundID != "FUND_P" || p.PositionID != c.pos || p.AsOf != date(c.asOf) {
				t.Errorf("identity %s %s %s", p.FundID, p.PositionID, p.AsOf)
			}
			if c.want.irr == "ok" {
				checkIRR(t, fmt.Sprintf("%s on %s", c.pos, c.asOf), p.IRR)
			} else if p.IRR.Rate != nil {
				t.Errorf("IRR %s with status %s", p.IRR.Rate, p.IRR.Status)
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
}

// pooledOf renders a pooled performance's figures.
func pooledOf(p positions.PooledPerformance) string {
	return fmt.Sprintf("%s %d positions, %d without NAV; NAV %s; paid in %s, distributed %s; DPI %s RVPI %s TVPI %s (%s); IRR %s",
		p.Currency, p.Positions, p.PositionsWithoutNAV, navOf(p.NAV), p.PaidIn, p.Distributed,
		multiple(p.Multiples.DPI), multiple(p.Multiples.RVPI), multiple(p.Multiples.TVPI), p.Multiples.Status, p.IRR.Status)
}

// Pooled figures of the fixtures on 2023-09-30.
const (
	// Q4 alone: its NAV rolled forward, TVPI 1,100 ÷ 1,000.
	pooledEUR = "EUR 1 positions, 0 without NAV; NAV rolled_forward 1100.00; paid in 1000.00, distributed 0.00; DPI 0.000000 RVPI 1.100000 TVPI 1.100000 (ok); IRR ok"
	// Q1 + Q2 + Q3: Q3 has no NAV. Paid in 350,000 + 130,000 + 50,000,
	// distributed 100,000 + 40,000 + 20,000; DPI 160,000 ÷ 530,000 = 0.3018867…
	pooledUSD = "USD 3 positions, 1 without NAV; NAV incomplete; paid in 530000.00, distributed 160000.00; DPI 0.301887 RVPI  TVPI  (no_nav); IRR no_nav"
)

func TestPoolingWorkedOutByHand(t *testing.T) {
	ps, m := performanceStore(t)
	ctx := context.Background()
	asOf := date("2023-09-30")

	t.Run("Q1 and Q2 pool their flows and NAVs", func(t *testing.T) {
		var perfs []positions.Performance
		for _, pos := range []string{"Q1", "Q2"} {
			p, err := ps.PerformanceFor(ctx, pos, asOf, nil)
			if err != nil {
				t.Fatal(err)
			}
			perfs = append(perfs, p)
		}
		pool := positions.Pool("USD", asOf, perfs)
		// NAV 340,000 + 103,000, rolled forward by 50,000 + 30,000 and 20,000;
		// paid in 350,000 + 130,000, distributed 100,000 + 40,000;
		// DPI 140,000 ÷ 480,000 = 0.2916666…, TVPI 583,000 ÷ 480,000 = 1.2145833…
		want := "USD 2 positions, 0 without NAV; NAV rolled_forward 443000.00; paid in 480000.00, distributed 140000.00; DPI 0.291667 RVPI 0.922916 TVPI 1.214583 (ok); IRR ok"
		if got := pooledOf(pool); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if !pool.NAV.ContributionsAfter.Equal(fund.MustMoney("80000")) || !pool.NAV.DistributionsAfter.Equal(fund.MustMoney("20000")) {
			t.Errorf("rolled forward by %s and %s, want 80000 and 20000", pool.NAV.ContributionsAfter, pool.NAV.DistributionsAfter)
		}
		checkIRR(t, "Q1 and Q2 pooled on 2023-09-30", pool.IRR)
	})

	t.Run("Q1 and Q2 on 2023-06-30 pool two statements' NAVs as stated", func(t *testing.T) {
		var perfs []positions.Performance
		for _, pos := range []string{"Q1", "Q2"} {
			p, _ := ps.PerformanceFor(ctx, pos, date("2023-06-30"), nil)
			perfs = append(perfs, p)
		}
		if pool := positions.Pool("USD", date("2023-06-30"), perfs); pool.NAV.Status != positions.NAVStatement || !pool.NAV.Value.Equal(fund.MustMoney("383000")) {
			t.Errorf("NAV %s, want statement 383000.00 (310,000 + 73,000)", navOf(pool.NAV))
		}
	})

	t.Run("the fund pools per currency, and a position without NAV leaves its currency's NAV incomplete", func(t *testing.T) {
		m.ResetReads()
		f, err := ps.FundPerformance(ctx, "FUND_P", asOf, 4)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range f.Currencies {
			got = append(got, pooledOf(c))
		}
		if want := []string{pooledEUR, pooledUSD}; !reflect.DeepEqual(got, want) || f.Positions != 4 || f.FundID != "FUND_P" {
			t.Errorf("%d positions, got\n%s\nwant\n%s", f.Positions, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		checkIRR(t, "Q4 on 2023-09-30", f.Currencies[0].IRR)
		if f.Currencies[1].NAV.Value != nil || f.Currencies[1].IRR.Rate != nil {
			t.Errorf("an incomplete NAV has value %v and IRR %v", f.Currencies[1].NAV.Value, f.Currencies[1].IRR.Rate)
		}
		// The registry in one read of up to 5 rows, then each position once.
		reads := m.Reads()
		slices.Sort(reads)
		if want := []string{"AllPositionItems", "AllPositionItems", "AllPositionItems", "AllPositionItems", "FundPositions"}; !slices.Equal(reads, want) {
			t.Errorf("read %v, want %v", reads, want)
		}
	})

	t.Run("a fund with more positions than the bound is refused before any position is read", func(t *testing.T) {
		m.ResetReads()
		_, err := ps.FundPerformance(ctx, "FUND_P", asOf, 3)
		if fund.ErrorCode(err) != fund.EINVALID || !strings.Contains(err.Error(), "more than 3 positions") {
			t.Fatalf("got %v, want EINVALID naming the bound", err)
		}
		if reads := m.Reads(); !slices.Equal(reads, []string{"FundPositions"}) {
			t.Errorf("read %v, want FundPositions alone", reads)
		}
	})

	t.Run("a fund with no positions is not found", func(t *testing.T) {
		m.ResetReads()
		if _, err := ps.FundPerformance(ctx, "FUND_NONE", asOf, 4); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
		if reads := m.Reads(); !slices.Equal(reads, []string{"FundPositions"}) {
			t.Errorf("read %v, want FundPositions alone", reads)
		}
	})

	t.Run("an investor's positions pool per currency, never adding currencies", func(t *testing.T) {
		m.ResetReads()
		all := func(positions.Registered) bool { return true }
		inv, next, err := ps.InvestorPerformance(ctx, "INV_P1", asOf, all, false, 10, nil)
		if err != nil || next != nil {
			t.Fatal(err, next)
		}
		var ids, totals []string
		for _, p := range inv.Positions {
			ids = append(ids, p.PositionID)
		}
		for _, c := range inv.Totals {
			totals = append(totals, pooledOf(c))
		}
		// Q1 alone in USD pools to Q1's own figures.
		usd := "USD 1 positions, 0 without NAV; NAV rolled_forward 340000.00; paid in 350000.00, distributed 100000.00; DPI 0.285714 RVPI 0.971429 TVPI 1.257143 (ok); IRR ok"
		if !slices.Equal(ids, []string{"Q1", "Q4"}) || !slices.Equal(totals, []string{pooledEUR, usd}) {
			t.Errorf("positions %v, totals\n%s", ids, strings.Join(totals, "\n"))
		}
		checkIRR(t, "Q1 on 2023-09-30", inv.Totals[1].IRR)
		reads := m.Reads()
		slices.Sort(reads)
		if want := []string{"AllPositionItems", "AllPositionItems", "InvestorPositions"}; !slices.Equal(reads, want) {
			t.Errorf("read %v, want %v", reads, want)
		}

		inv, _, err = ps.InvestorPerformance(ctx, "INV_P2", asOf, all, false, 10, nil)
		// Q2 + Q3: DPI 60,000 ÷ 180,000.
		want := "USD 2 positions, 1 without NAV; NAV incomplete; paid in 180000.00, distributed 60000.00; DPI 0.333333 RVPI  TVPI  (no_nav); IRR no_nav"
		if err != nil || len(inv.Totals) != 1 || pooledOf(inv.Totals[0]) != want {
			t.Errorf("INV_P2: %v, %+v", err, inv.Totals)
		}
		if _, _, err := ps.InvestorPerformance(ctx, "INV_P2", asOf, func(positions.Registered) bool { return false }, true, 10, nil); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Errorf("an investor with no visible position: %v, want ENOTFOUND", err)
		}
	})
}

func TestDocumentReconciliationWorkedOutByHand(t *testing.T) {
	ps, m := performanceStore(t)
	ctx := context.Background()

	t.Run("a statement document reconciles each position's statement of its latest version", func(t *testing.T) {
		m.ResetReads()
		r, next, err := ps.DocumentReconciliation(ctx, "S2", 10, nil)
		if err != nil || next != nil {
			t.Fatal(err, next)
		}
		var got []string
		for _, x := range r.Reconciliations {
			got = append(got, reconciliationOf(x))
		}
		if want := []string{q1S2, q2S2}; r.DocumentID != "S2" || r.Version != 2 || !slices.Equal(got, want) {
			t.Errorf("%s@%d got\n%s\nwant\n%s", r.DocumentID, r.Version, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// One read for the page, one per statement's position (no history:
		// every later document has a single version).
		reads := m.Reads()
		if want := []string{"DocumentStatements", "AllPositionItems", "AllPositionItems"}; !slices.Equal(reads, want) {
			t.Errorf("read %v, want %v", reads, want)
		}
	})

	t.Run("pages of one statement", func(t *testing.T) {
		var got []string
		var start []byte
		for i := 0; ; i++ {
			m.ResetReads()
			r, next, err := ps.DocumentReconciliation(ctx, "S2", 1, start)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range r.Reconciliations {
				got = append(got, reconciliationOf(x))
			}
			if reads := m.Reads(); !slices.Equal(reads, []string{"DocumentStatements", "AllPositionItems"}) {
				t.Errorf("page %d read %v", i, reads)
			}
			if next == nil {
				break
			}
			start = next
		}
		if want := []string{q1S2, q2S2}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("a document without statements answers none, after one read", func(t *testing.T) {
		m.ResetReads()
		r, next, err := ps.DocumentReconciliation(ctx, "N1", 10, nil)
		if err != nil || next != nil || len(r.Reconciliations) != 0 || r.Version != 0 {
			t.Errorf("got %+v, %v, %v", r, next, err)
		}
		if reads := m.Reads(); !slices.Equal(reads, []string{"DocumentStatements"}) {
			t.Errorf("read %v", reads)
		}
	})
}

// TestARefusedPositionsPerformanceCostsWhatAnUnknownOnes: allow decides on
// the first read, before S2's history, which Q1 needs on 2023-04-15.
func TestARefusedPositionsPerformanceCostsWhatAnUnknownOnes(t *testing.T) {
	ps, m := performanceStore(t)
	ctx := context.Background()
	asOf := date("2023-04-15")
	refuse := func(_, investorID string) bool { return investorID != "INV_P1" }
	for _, pos := range []string{"Q1", "Q_NONE"} {
		m.ResetReads()
		if _, err := ps.PerformanceFor(ctx, pos, asOf, refuse); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("%s: got %v, want ENOTFOUND", pos, err)
		}
		if reads := m.Reads(); !slices.Equal(reads, []string{"AllPositionItems"}) {
			t.Errorf("%s read %v, want only AllPositionItems", pos, reads)
		}
	}
	m.ResetReads()
	if _, err := ps.PerformanceFor(ctx, "Q1", asOf, func(string, string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if reads := m.Reads(); !slices.Equal(reads, []string{"AllPositionItems", "PositionAsOf"}) {
		t.Errorf("allowed, read %v, want AllPositionItems then PositionAsOf", reads)
	}
}

// TestSummariesFollowEachLinesEffectOnUnfunded: Q2's unfunded commitment
// computed from its typed lines goes up with a recallable distribution and
// down with the recall, and its call outside commitment, paid in, moves it
// not at all.
func TestSummariesFollowEachLinesEffectOnUnfunded(t *testing.T) {
	ps, _ := performanceStore(t)
	for _, c := range []struct {
		asOf                                             string
		paid, recallable, computed, reported, difference string
	}{
		// 500,000 − 90,000 (the 10,000 outside commitment moves nothing).
		{"2023-03-01", "100000.00", "0.00", "410000.00", "410000.00", "0.00"},
		// + 30,000 recallable.
		{"2023-05-31", "100000.00", "30000.00", "440000.00", "410000.00", "-30000.00"},
		// − 30,000 recalled; before the lines, 500,000 − 130,000 + 30,000 was 400,000.
		{"2023-09-30", "130000.00", "30000.00", "410000.00", "410000.00", "0.00"},
	} {
		t.Run("Q2 on "+c.asOf, func(t *testing.T) {
			s, err := ps.Summary(context.Background(), "Q2", date(c.asOf))
			if err != nil {
				t.Fatal(err)
			}
			got := []string{s.PaidIn.Total.String(), s.Recallable.String(), optional(s.UnfundedComputed), optional(s.UnfundedReported), optional(s.UnfundedDifference)}
			if want := []string{c.paid, c.recallable, c.computed, c.reported, c.difference}; !slices.Equal(got, want) {
				t.Errorf("paid, recallable, computed, reported, difference = %v, want %v", got, want)
			}
		})
	}
	t.Run("a statement without section A.2 adds no figure, but its document is counted", func(t *testing.T) {
		s, err := ps.Summary(context.Background(), "Q4", date("2022-12-31"))
		if err != nil {
			t.Fatal(err)
		}
		if !s.PaidIn.Total.Equal(fund.MustMoney("1000")) || s.CapitalCalls != 1 || len(s.Documents) != 2 {
			t.Errorf("paid %s, %d calls, documents %v", s.PaidIn.Total, s.CapitalCalls, s.Documents)
		}
	})
}

// TestCarryAfterAStatementMovesNoFigure: a distribution whose lines are
// carry and clawback (ILPA's "excluded" treatment), dated after a
// statement and inside a later one's period, is listed among the flows but
// moves neither the rolled-forward NAV, nor paid-in or distributed, nor the
// later statement's reconciliation.
func TestCarryAfterAStatementMovesNoFigure(t *testing.T) {
	m := func(s string) *fund.Money { v := fund.MustMoney(s); return &v }
	base := fund.PositionItem{FundID: "F", InvestorID: "I", PositionID: "P", Currency: "USD", Status: fund.StatusCompleted, DocumentVersion: 1}
	statement := base
	statement.Kind, statement.DocumentID, statement.AsOf = fund.Statement, "S1", fund.MustDate("2024-03-31")
	statement.CapitalAccount = &fund.CapitalAccount{PeriodStart: fund.MustDate("2024-01-01"), BeginningNAV: fund.MustMoney("0"),
		Contributions: m("100.00"), EndingNAV: fund.MustMoney("100.00")}
	statement.Amount = statement.CapitalAccount.EndingNAV
	call := base
	call.Kind, call.DocumentID, call.AsOf, call.Date, call.Amount = fund.CapitalCall, "C1", fund.MustDate("2024-02-01"), fund.MustDate("2024-02-15"), fund.MustMoney("100.00")
	carry := base
	carry.Kind, carry.DocumentID, carry.AsOf, carry.Date, carry.Amount = fund.Distribution, "D1", fund.MustDate("2024-04-10"), fund.MustDate("2024-04-20"), fund.MustMoney("30.00")
	carry.Transactions = []fund.Transaction{{Type: "carry", Amount: fund.MustMoney("20.00"), Unfunded: fund.NoEffect},
		{Type: "clawback", Amount: fund.MustMoney("10.00"), Unfunded: fund.NoEffect}}
	later := base
	later.Kind, later.DocumentID, later.AsOf = fund.Statement, "S2", fund.MustDate("2024-06-30")
	later.CapitalAccount = &fund.CapitalAccount{PeriodStart: fund.MustDate("2024-04-01"), BeginningNAV: fund.MustMoney("100.00"), EndingNAV: fund.MustMoney("100.00")}

	p := positions.Evaluate("P", fund.MustDate("2024-05-31"), []fund.PositionItem{statement, call, carry})
	if p.NAV.Status != positions.NAVRolledForward || p.NAV.Value == nil || !p.NAV.Value.Equal(fund.MustMoney("100.00")) ||
		p.NAV.ContributionsAfter.Sign() != 0 || p.NAV.DistributionsAfter.Sign() != 0 {
		t.Errorf("NAV %+v, want S1's 100.00 rolled forward by nothing", p.NAV)
	}
	if !p.PaidIn.Equal(fund.MustMoney("100.00")) || p.Distributed.Sign() != 0 || len(p.Flows) != 3 {
		t.Errorf("paid-in %s, distributed %s, %d flows; want 100.00, 0 and 3 (the call and both excluded lines listed)", p.PaidIn, p.Distributed, len(p.Flows))
	}
	for _, f := range p.IRR.Flows {
		if f.Date == carry.Date {
			t.Errorf("the IRR solves a flow on the carry's date: %+v", p.IRR.Flows)
		}
	}
	p = positions.Evaluate("P", fund.MustDate("2024-06-30"), []fund.PositionItem{statement, call, carry, later})
	r := p.Reconciliations[len(p.Reconciliations)-1]
	if r.Statement.DocumentID != "S2" || r.Distributions.Notices.Sign() != 0 || r.Distributions.Difference.Sign() != 0 {
		t.Errorf("S2's reconciliation %+v, want no distributions from the notices", r)
	}
}
