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

// performanceAnalytics is a positions.Analytics over
// positionstest.PerformanceFixtures, each document first held to what the
// API accepts.
func performanceAnalytics(t *testing.T) (*positions.Analytics, *positionstest.Memory) {
	t.Helper()
	m := positionstest.NewMemory(clock)
	for _, d := range positionstest.PerformanceFixtures() {
		d.Normalize()
		if err := d.Validate(100); err != nil {
			t.Fatalf("fixture %s: %v", d.ID, err)
		}
		m.Restate(d)
	}
	return positions.NewAnalytics(m), m
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
// solved are the case's, netted per date, and its span is theirs. A span
// of a year or more is annualised, its rate within 1e-6 of LibreOffice's;
// a shorter one has no rate (the GIPS standards). Either way the
// cumulative return is LibreOffice's rate over the span, (1 + rate)^(days
// ÷ 365) − 1, within 1e-6.
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
	if !irr.Status.Solved() {
		t.Fatalf("IRR status %s, want a rate found (LibreOffice: %v)", irr.Status, calc)
	}
	days := daysBetween(want[0].Date, want[len(want)-1].Date)
	if irr.Days != days {
		t.Errorf("IRR over %d days, want %d", irr.Days, days)
	}
	switch {
	case days >= 365 && (!irr.Annualised || irr.Rate == nil):
		t.Errorf("a span of %d days is not annualised (rate %v)", days, irr.Rate)
	case days >= 365 && math.Abs(irr.Rate.InexactFloat64()-calc) > 1e-6:
		t.Errorf("IRR = %s, LibreOffice Calc's XIRR = %.10f", irr.Rate, calc)
	case days < 365 && (irr.Annualised || irr.Rate != nil):
		t.Errorf("a span of %d days is annualised: rate %v", days, irr.Rate)
	}
	cumulative := math.Pow(1+calc, float64(days)/365) - 1
	if irr.CumulativeReturn == nil || math.Abs(irr.CumulativeReturn.InexactFloat64()-cumulative) > 1e-6 {
		t.Errorf("cumulative return %v, LibreOffice's rate over %d days gives %.10f", irr.CumulativeReturn, days, cumulative)
	}
	checkRoot(t, irr)
}

func daysBetween(a, b fund.Date) int {
	return int(math.Round(b.Time().Sub(a.Time()).Hours() / 24))
}

// checkRoot holds an IRR of status ok, whatever its span, to the flows it
// solved, without XIRR: its days are their span, it is annualised exactly
// when that span is a year or more, and its cumulative return c, rounded
// to 6 places, is within 1e-6 of a root of their net present value over
// the span, Σ amount ÷ (1 + c)^(days from the first ÷ span): the NPV
// changes sign between c − 1e-6 and c + 1e-6.
func checkRoot(t *testing.T, irr positions.IRR) {
	t.Helper()
	if !irr.Status.Solved() || len(irr.Flows) < 2 || irr.CumulativeReturn == nil {
		t.Fatalf("IRR %s over %v with cumulative return %v, want a rate found", irr.Status, irr.Flows, irr.CumulativeReturn)
	}
	span := daysBetween(irr.Flows[0].Date, irr.Flows[len(irr.Flows)-1].Date)
	if irr.Days != span {
		t.Errorf("IRR over %d days, its flows span %d", irr.Days, span)
	}
	if irr.Annualised != (span >= 365) || irr.Annualised != (irr.Rate != nil) {
		t.Errorf("a span of %d days: annualised %v, rate %v", span, irr.Annualised, irr.Rate)
	}
	npv := func(c float64) float64 {
		var sum float64
		for _, f := range irr.Flows {
			sum += f.Amount.Decimal().InexactFloat64() / math.Pow(1+c, float64(daysBetween(irr.Flows[0].Date, f.Date))/float64(span))
		}
		return sum
	}
	c := irr.CumulativeReturn.InexactFloat64()
	if lo, hi := npv(c-1e-6), npv(c+1e-6); (lo > 0) == (hi > 0) {
		t.Errorf("cumulative return %s is no root of the flows' NPV %v: %v at −1e-6, %v at +1e-6", irr.CumulativeReturn, irr.Flows, lo, hi)
	}
}

// perfWant is a performance's figures as strings; "" is absent.
type perfWant struct {
	nav                                                string // "rolled_forward 340000.00 from S2@2: 310000.00 + 50000.00 − 20000.00"
	called, paidIn, outstanding, returned, distributed string
	dpi, rvpi, tvpi, mult                              string
	irr                                                string   // "ok over 242 days, not annualised", or the status
	irrFlows                                           []string // the flows the IRR solved: "2023-01-31 -200000.00"
	flows                                              []string
	reconciliations                                    []string
	documents                                          []string
}

func multiple(d *decimal.Decimal) string {
	if d == nil {
		return ""
	}
	return d.StringFixed(positions.MultipleScale)
}

// irrOf renders an IRR's status, and when a rate was found its span and
// whether it is annualised.
func irrOf(irr positions.IRR) string {
	if !irr.Status.Solved() {
		return string(irr.Status)
	}
	a := "not annualised"
	if irr.Annualised {
		a = "annualised"
	}
	return fmt.Sprintf("%s over %d days, %s", irr.Status, irr.Days, a)
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
	w := perfWant{nav: navOf(p.NAV), called: p.Called.String(), paidIn: p.PaidIn.String(), outstanding: p.Outstanding.String(),
		returned: p.PaidInReturned.String(), distributed: p.Distributed.String(),
		dpi: multiple(p.Multiples.DPI), rvpi: multiple(p.Multiples.RVPI), tvpi: multiple(p.Multiples.TVPI), mult: string(p.Multiples.Status),
		irr: irrOf(p.IRR)}
	for _, f := range p.IRR.Flows {
		w.irrFlows = append(w.irrFlows, fmt.Sprintf("%s %s", f.Date, f.Amount))
	}
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

// The flows of PerformanceFixtures, as performanceOf renders them. N2's
// call (100,000, due 2023-05-15) is pending: called and outstanding, but
// not paid in, so no flow.
var (
	q1N1 = []string{
		"2023-01-31 investment paid_in -190000.00 N1@1 Q1 completed",
		"2023-01-31 management_fee_inside_commitment paid_in -10000.00 N1@1 Q1 completed",
	}
	q1ToJune = append(slices.Clone(q1N1),
		"2023-06-25 return_of_capital distributed 50000.00 N3@1 Q1 completed",
		"2023-06-25 gain_loss distributed 30000.00 N3@1 Q1 completed",
	)
	q1S1 = "S1@1 Q1 2023-01-01..2023-03-31 contributions 200000.00 vs 200000.00 (0.00), distributions 0.00 vs 0.00 (0.00), unfunded 800000.00 vs 800000.00 (0.00)"
	// The reconciliation compares a statement with every notice of its
	// period, pending or completed, so N2's pending call is among the
	// notices' contributions. Unfunded with no commitment stated: N1's
	// 1,000,000 − 190,000 − 10,000 (N1) − 100,000 (N2) = 700,000; N3's
	// lines leave it.
	q1S2 = "S2@2 Q1 2023-04-01..2023-06-30 contributions 100000.00 vs 100000.00 (0.00), distributions 80000.00 vs 80000.00 (0.00), unfunded 700000.00 vs 700000.00 (0.00)"
	// Q2's statement is off from its notices: contributions 105,000 against
	// M1's 90,000 + 10,000; distributions 42,000 against M2's 40,000;
	// unfunded 435,000 against 500,000 − 90,000 (the fee outside
	// commitment moves nothing) + 30,000 (recallable) = 440,000.
	q2S2 = "S2@2 Q2 2023-01-01..2023-06-30 contributions 105000.00 vs 100000.00 (5000.00), distributions 42000.00 vs 40000.00 (2000.00), unfunded 435000.00 vs 440000.00 (-5000.00)"
	q4G2 = "G2@1 Q4 2022-01-01..2022-12-31 contributions 1000.00 vs 1000.00 (0.00), distributions 0.00 vs 0.00 (0.00), unfunded none"
)

// TestPerformanceWorkedOutByHand: the performance of PerformanceFixtures'
// positions, every figure worked out by hand. Only the lines of items
// paid by the date (completed, and dated on or before it) are flows: they
// alone are paid in or distributed, roll the NAV forward, and count in the
// multiples and the IRR. Called counts every call; outstanding is called
// less paid-in. An IRR over less than 365 days is not annualised (the
// GIPS standards): it has a cumulative return and no rate.
func TestPerformanceWorkedOutByHand(t *testing.T) {
	ps, m := performanceAnalytics(t)
	ctx := context.Background()
	for _, c := range []struct {
		name, pos, asOf string
		want            perfWant
		histories       int
		// cumulative is the IRR's cumulative return when two flows make it
		// a plain quotient; libreOffice says that the IRR's flows are
		// LibreOffice's case "<pos> on <asOf>" (checkIRR). Every IRR of
		// status ok is held to its flows' NPV (checkRoot).
		cumulative  string
		libreOffice bool
	}{
		{name: "Q1 on 2023-09-30, N2's pending call called and outstanding but no flow", pos: "Q1", asOf: "2023-09-30",
			want: perfWant{
				// S2 v2's 310,000 (v1's 300,000 is ignored) + N4's 50,000 − N5's 20,000.
				nav: "rolled_forward 340000.00 from S2@2: 310000.00 + 50000.00 − 20000.00",
				// Called 200,000 (N1) + 100,000 (N2) + 50,000 (N4); paid in N1's and N4's.
				called: "350000.00", paidIn: "250000.00", outstanding: "100000.00", returned: "0.00", distributed: "100000.00",
				// 100,000 ÷ 250,000 = 0.4; 440,000 ÷ 250,000 = 1.76; RVPI = TVPI − DPI.
				dpi: "0.400000", rvpi: "1.360000", tvpi: "1.760000", mult: "ok",
				// 2023-01-31 to 2023-09-30: 28 + 31 + 30 + 31 + 30 + 31 + 31 + 30 days.
				irr:      "ok over 242 days, not annualised",
				irrFlows: []string{"2023-01-31 -200000.00", "2023-06-25 80000.00", "2023-08-10 -50000.00", "2023-09-05 20000.00", "2023-09-30 340000.00"},
				flows: append(slices.Clone(q1ToJune),
					"2023-08-10 investment paid_in -50000.00 N4@1 Q1 completed",
					"2023-09-05 return_of_capital distributed 20000.00 N5@1 Q1 completed"),
				reconciliations: []string{q1S1, q1S2},
				documents:       []string{"N1@1", "S1@1", "N2@1", "N3@1", "S2@2", "N4@1", "N5@1"},
			}},
		{name: "Q1 on 2023-06-30", pos: "Q1", asOf: "2023-06-30",
			want: perfWant{
				// The restated statement ends on the date: its NAV as stated.
				nav:    "statement 310000.00 from S2@2: 310000.00 + 0.00 − 0.00",
				called: "300000.00", paidIn: "200000.00", outstanding: "100000.00", returned: "0.00", distributed: "80000.00",
				// 80,000 ÷ 200,000 = 0.4; 390,000 ÷ 200,000 = 1.95.
				dpi: "0.400000", rvpi: "1.550000", tvpi: "1.950000", mult: "ok",
				irr:      "ok over 150 days, not annualised",
				irrFlows: []string{"2023-01-31 -200000.00", "2023-06-25 80000.00", "2023-06-30 310000.00"},
				flows:    q1ToJune, reconciliations: []string{q1S1, q1S2},
				documents: []string{"N1@1", "S1@1", "N2@1", "N3@1", "S2@2"},
			}},
		{name: "Q1 on 2023-05-10", pos: "Q1", asOf: "2023-05-10",
			want: perfWant{
				// N2 counts as a document, so its call as called, but it is
				// pending and due on 2023-05-15: neither a flow nor in the
				// roll-forward.
				nav:    "rolled_forward 205000.00 from S1@1: 205000.00 + 0.00 − 0.00",
				called: "300000.00", paidIn: "200000.00", outstanding: "100000.00", returned: "0.00", distributed: "0.00",
				// 205,000 ÷ 200,000 = 1.025.
				dpi: "0.000000", rvpi: "1.025000", tvpi: "1.025000", mult: "ok",
				irr:      "ok over 99 days, not annualised",
				irrFlows: []string{"2023-01-31 -200000.00", "2023-05-10 205000.00"},
				flows:    q1N1, reconciliations: []string{q1S1},
				documents: []string{"N1@1", "S1@1", "N2@1"},
			},
			// S2's versions are dated after the date: its history is read (and shows none).
			histories: 1,
			// 205,000 ÷ 200,000 − 1.
			cumulative: "0.025000", libreOffice: true},
		{name: "Q2 on 2023-09-30", pos: "Q2", asOf: "2023-09-30",
			want: perfWant{
				// 73,000 + N4's 30,000 (the recall).
				nav: "rolled_forward 103000.00 from S2@2: 73000.00 + 30000.00 − 0.00",
				// Every call completed and due by the date. The call outside
				// commitment counts as paid in: 90,000 + 10,000 + 30,000.
				called: "130000.00", paidIn: "130000.00", outstanding: "0.00", returned: "0.00", distributed: "40000.00",
				// 40,000 ÷ 130,000 = 0.3076923…; 143,000 ÷ 130,000 = 1.1.
				dpi: "0.307692", rvpi: "0.792308", tvpi: "1.100000", mult: "ok",
				// 2023-02-15 to 2023-09-30: 13 + 31 + 30 + 31 + 30 + 31 + 31 + 30 days.
				irr:      "ok over 227 days, not annualised",
				irrFlows: []string{"2023-02-15 -100000.00", "2023-05-10 40000.00", "2023-08-15 -30000.00", "2023-09-30 103000.00"},
				flows: []string{
					"2023-02-15 investment paid_in -90000.00 M1@1 Q2 completed",
					"2023-02-15 management_fee_outside_commitment paid_in -10000.00 M1@1 Q2 completed",
					"2023-05-10 recallable_return_of_capital distributed 30000.00 M2@1 Q2 completed",
					"2023-05-10 income distributed 10000.00 M2@1 Q2 completed",
					"2023-08-15 investment paid_in -30000.00 N4@1 Q2 completed",
				},
				reconciliations: []string{q2S2},
				documents:       []string{"M1@1", "M2@1", "S2@2", "N4@1"},
			},
			libreOffice: true},
		{name: "Q3, with no statement, has DPI but no NAV, RVPI, TVPI or IRR", pos: "Q3", asOf: "2023-09-30",
			want: perfWant{
				nav:    "no_statement",
				called: "50000.00", paidIn: "50000.00", outstanding: "0.00", returned: "0.00", distributed: "20000.00",
				// The carry line is listed but counted nowhere: 20,000 ÷ 50,000.
				dpi: "0.400000", mult: "no_nav", irr: "no_nav",
				flows: []string{
					"2023-02-15 investment paid_in -50000.00 M1@1 Q3 completed",
					"2023-05-10 income distributed 20000.00 M2@1 Q3 completed",
					"2023-05-10 carry excluded 5000.00 M2@1 Q3 completed",
				},
				documents: []string{"M1@1", "M2@1"},
			}},
		{name: "Q4 on 2022-12-31, a span of 364 days, is not annualised", pos: "Q4", asOf: "2022-12-31",
			want: perfWant{nav: "statement 1100.00 from G2@1: 1100.00 + 0.00 − 0.00",
				called: "1000.00", paidIn: "1000.00", outstanding: "0.00", returned: "0.00", distributed: "0.00",
				dpi: "0.000000", rvpi: "1.100000", tvpi: "1.100000", mult: "ok",
				irr:             "ok over 364 days, not annualised",
				irrFlows:        []string{"2022-01-01 -1000.00", "2022-12-31 1100.00"},
				flows:           []string{"2022-01-01 investment paid_in -1000.00 G1@1 Q4 completed"},
				reconciliations: []string{q4G2}, documents: []string{"G1@1", "G2@1"}},
			// 1,100 ÷ 1,000 − 1 (LibreOffice's annual rate, 10.0288%, is 1.1^(365/364) − 1).
			cumulative: "0.100000", libreOffice: true},
		{name: "Q4 on 2023-09-30, a span of 637 days, is annualised", pos: "Q4", asOf: "2023-09-30",
			want: perfWant{nav: "rolled_forward 1100.00 from G2@1: 1100.00 + 0.00 − 0.00",
				called: "1000.00", paidIn: "1000.00", outstanding: "0.00", returned: "0.00", distributed: "0.00",
				dpi: "0.000000", rvpi: "1.100000", tvpi: "1.100000", mult: "ok",
				// 365 + 272 days.
				irr:             "stale_nav over 637 days, annualised",
				irrFlows:        []string{"2022-01-01 -1000.00", "2023-09-30 1100.00"},
				flows:           []string{"2022-01-01 investment paid_in -1000.00 G1@1 Q4 completed"},
				reconciliations: []string{q4G2}, documents: []string{"G1@1", "G2@1"}},
			// 1,100 ÷ 1,000 − 1 over the span; the rate is 1.1^(365/637) − 1 = 5.6131%.
			cumulative: "0.100000", libreOffice: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m.ResetReads()
			p, err := ps.Performance(ctx, fund.Operator, c.pos, date(c.asOf))
			if err != nil {
				t.Fatal(err)
			}
			if got := performanceOf(p); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
			if p.FundID != "FUND_P" || p.PositionID != c.pos || p.AsOf != date(c.asOf) {
				t.Errorf("identity %s %s %s", p.FundID, p.PositionID, p.AsOf)
			}
			switch {
			case c.want.irr == "no_nav":
				if p.IRR.Rate != nil || p.IRR.CumulativeReturn != nil {
					t.Errorf("IRR %v, cumulative %v with status %s", p.IRR.Rate, p.IRR.CumulativeReturn, p.IRR.Status)
				}
			case c.libreOffice:
				checkIRR(t, c.pos+" on "+c.asOf, p.IRR)
			default:
				checkRoot(t, p.IRR)
			}
			if c.cumulative != "" && multiple(p.IRR.CumulativeReturn) != c.cumulative {
				t.Errorf("cumulative return %v, want %s", p.IRR.CumulativeReturn, c.cumulative)
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
	return fmt.Sprintf("%s %d positions, %d without NAV; NAV %s; called %s, paid in %s, outstanding %s, returned %s, distributed %s; DPI %s RVPI %s TVPI %s (%s); IRR %s",
		p.Currency, p.Positions, p.PositionsWithoutNAV, navOf(p.NAV), p.Called, p.PaidIn, p.Outstanding, p.PaidInReturned, p.Distributed,
		multiple(p.Multiples.DPI), multiple(p.Multiples.RVPI), multiple(p.Multiples.TVPI), p.Multiples.Status, irrOf(p.IRR))
}

// Pooled figures of the fixtures on 2023-09-30.
const (
	// Q4 alone: its NAV rolled forward, TVPI 1,100 ÷ 1,000, over 637 days.
	pooledEUR = "EUR 1 positions, 0 without NAV; NAV rolled_forward 1100.00; called 1000.00, paid in 1000.00, outstanding 0.00, returned 0.00, distributed 0.00; DPI 0.000000 RVPI 1.100000 TVPI 1.100000 (ok); IRR stale_nav over 637 days, annualised"
	// Q1 + Q2 + Q3: Q3 has no NAV. Called 350,000 + 130,000 + 50,000, paid
	// in 250,000 + 130,000 + 50,000 (N2's 100,000 is pending), distributed
	// 100,000 + 40,000 + 20,000; DPI 160,000 ÷ 430,000 = 0.3720930…
	pooledUSD = "USD 3 positions, 1 without NAV; NAV incomplete; called 530000.00, paid in 430000.00, outstanding 100000.00, returned 0.00, distributed 160000.00; DPI 0.372093 RVPI  TVPI  (no_nav); IRR no_nav"
)

func TestPoolingWorkedOutByHand(t *testing.T) {
	ps, m := performanceAnalytics(t)
	ctx := context.Background()
	asOf := date("2023-09-30")

	t.Run("Q1 and Q2 pool their flows and NAVs", func(t *testing.T) {
		var perfs []positions.Performance
		for _, pos := range []string{"Q1", "Q2"} {
			p, err := ps.Performance(ctx, fund.Operator, pos, asOf)
			if err != nil {
				t.Fatal(err)
			}
			perfs = append(perfs, p)
		}
		pool := positions.Pool("USD", asOf, perfs)
		// NAV 340,000 + 103,000, rolled forward by 50,000 + 30,000 and 20,000;
		// called 350,000 + 130,000, paid in 250,000 + 130,000, distributed
		// 100,000 + 40,000; DPI 140,000 ÷ 380,000 = 0.3684210…, TVPI
		// 583,000 ÷ 380,000 = 1.5342105…, RVPI 1.534211 − 0.368421. The
		// flows span 2023-01-31 to 2023-09-30, as Q1's.
		want := "USD 2 positions, 0 without NAV; NAV rolled_forward 443000.00; called 480000.00, paid in 380000.00, outstanding 100000.00, returned 0.00, distributed 140000.00; DPI 0.368421 RVPI 1.165790 TVPI 1.534211 (ok); IRR ok over 242 days, not annualised"
		if got := pooledOf(pool); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if !pool.NAV.ContributionsAfter.Equal(fund.MustMoney("80000")) || !pool.NAV.DistributionsAfter.Equal(fund.MustMoney("20000")) {
			t.Errorf("rolled forward by %s and %s, want 80000 and 20000", pool.NAV.ContributionsAfter, pool.NAV.DistributionsAfter)
		}
		// Both positions' flows, netted per date, and the pooled NAV.
		var flows []string
		for _, f := range pool.IRR.Flows {
			flows = append(flows, fmt.Sprintf("%s %s", f.Date, f.Amount))
		}
		if want := []string{"2023-01-31 -200000.00", "2023-02-15 -100000.00", "2023-05-10 40000.00", "2023-06-25 80000.00",
			"2023-08-10 -50000.00", "2023-08-15 -30000.00", "2023-09-05 20000.00", "2023-09-30 443000.00"}; !slices.Equal(flows, want) {
			t.Errorf("IRR flows %v, want %v", flows, want)
		}
		checkRoot(t, pool.IRR)
	})

	t.Run("Q1 and Q2 on 2023-06-30 pool two statements' NAVs as stated", func(t *testing.T) {
		var perfs []positions.Performance
		for _, pos := range []string{"Q1", "Q2"} {
			p, _ := ps.Performance(ctx, fund.Operator, pos, date("2023-06-30"))
			perfs = append(perfs, p)
		}
		if pool := positions.Pool("USD", date("2023-06-30"), perfs); pool.NAV.Status != positions.NAVStatement || !pool.NAV.Value.Equal(fund.MustMoney("383000")) {
			t.Errorf("NAV %s, want statement 383000.00 (310,000 + 73,000)", navOf(pool.NAV))
		}
	})

	t.Run("the fund pools per currency, and a position without NAV leaves its currency's NAV incomplete", func(t *testing.T) {
		m.ResetReads()
		f, err := ps.FundPerformance(ctx, fund.Operator, "FUND_P", asOf, 4)
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
		if f.Currencies[1].NAV.Value != nil || f.Currencies[1].IRR.Rate != nil || f.Currencies[1].IRR.CumulativeReturn != nil {
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
		_, err := ps.FundPerformance(ctx, fund.Operator, "FUND_P", asOf, 3)
		if fund.ErrorCode(err) != fund.EINVALID || !strings.Contains(err.Error(), "more than 3 positions") {
			t.Fatalf("got %v, want EINVALID naming the bound", err)
		}
		if reads := m.Reads(); !slices.Equal(reads, []string{"FundPositions"}) {
			t.Errorf("read %v, want FundPositions alone", reads)
		}
	})

	t.Run("a fund with no positions is not found", func(t *testing.T) {
		m.ResetReads()
		if _, err := ps.FundPerformance(ctx, fund.Operator, "FUND_NONE", asOf, 4); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
		if reads := m.Reads(); !slices.Equal(reads, []string{"FundPositions"}) {
			t.Errorf("read %v, want FundPositions alone", reads)
		}
	})

	t.Run("an investor's positions pool per currency, never adding currencies", func(t *testing.T) {
		m.ResetReads()
		inv, next, err := ps.InvestorPerformance(ctx, fund.Operator, "INV_P1", asOf, 10, nil)
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
		usd := "USD 1 positions, 0 without NAV; NAV rolled_forward 340000.00; called 350000.00, paid in 250000.00, outstanding 100000.00, returned 0.00, distributed 100000.00; DPI 0.400000 RVPI 1.360000 TVPI 1.760000 (ok); IRR ok over 242 days, not annualised"
		if !slices.Equal(ids, []string{"Q1", "Q4"}) || !slices.Equal(totals, []string{pooledEUR, usd}) {
			t.Errorf("positions %v, totals\n%s", ids, strings.Join(totals, "\n"))
		}
		reads := m.Reads()
		slices.Sort(reads)
		if want := []string{"AllPositionItems", "AllPositionItems", "InvestorPositions"}; !slices.Equal(reads, want) {
			t.Errorf("read %v, want %v", reads, want)
		}
		q1, err := ps.Performance(ctx, fund.Operator, "Q1", asOf)
		if got := inv.Totals[1].IRR; err != nil || !reflect.DeepEqual(got, q1.IRR) {
			t.Errorf("Q1 pooled alone has IRR %+v, Q1's own is %+v (%v)", got, q1.IRR, err)
		}
		checkRoot(t, inv.Totals[1].IRR)

		inv, _, err = ps.InvestorPerformance(ctx, fund.Operator, "INV_P2", asOf, 10, nil)
		// Q2 + Q3: DPI 60,000 ÷ 180,000.
		want := "USD 2 positions, 1 without NAV; NAV incomplete; called 180000.00, paid in 180000.00, outstanding 0.00, returned 0.00, distributed 60000.00; DPI 0.333333 RVPI  TVPI  (no_nav); IRR no_nav"
		if err != nil || len(inv.Totals) != 1 || pooledOf(inv.Totals[0]) != want {
			t.Errorf("INV_P2: %v, %+v", err, inv.Totals)
		}
		if _, _, err := ps.InvestorPerformance(ctx, fund.Latest(fund.Viewer{Funds: []string{}}), "INV_P2", asOf, 10, nil); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Errorf("an investor with no visible position: %v, want ENOTFOUND", err)
		}
	})
}

func TestDocumentReconciliationWorkedOutByHand(t *testing.T) {
	ps, m := performanceAnalytics(t)
	ctx := context.Background()

	t.Run("a statement document reconciles each position's statement of its latest version", func(t *testing.T) {
		m.ResetReads()
		r, next, err := ps.DocumentReconciliation(ctx, fund.Operator, fund.DocumentHeader{ID: "S2"}, 10, nil)
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
			r, next, err := ps.DocumentReconciliation(ctx, fund.Operator, fund.DocumentHeader{ID: "S2"}, 1, start)
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
		r, next, err := ps.DocumentReconciliation(ctx, fund.Operator, fund.DocumentHeader{ID: "N1"}, 10, nil)
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
	ps, m := performanceAnalytics(t)
	ctx := context.Background()
	asOf := date("2023-04-15")
	// Another investor than INV_P1, whose Q1 is.
	refuse := fund.Latest(fund.Viewer{Investor: "INV_OTHER"})
	for _, pos := range []string{"Q1", "Q_NONE"} {
		m.ResetReads()
		if _, err := ps.Performance(ctx, refuse, pos, asOf); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("%s: got %v, want ENOTFOUND", pos, err)
		}
		if reads := m.Reads(); !slices.Equal(reads, []string{"AllPositionItems"}) {
			t.Errorf("%s read %v, want only AllPositionItems", pos, reads)
		}
	}
	m.ResetReads()
	if _, err := ps.Performance(ctx, fund.Operator, "Q1", asOf); err != nil {
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
	ps, _ := performanceAnalytics(t)
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
			s, err := ps.Summary(context.Background(), fund.Operator, "Q2", date(c.asOf))
			if err != nil {
				t.Fatal(err)
			}
			got := []string{s.PaidIn.String(), s.Recallable.String(), optional(s.UnfundedComputed), optional(s.UnfundedReported), optional(s.UnfundedDifference)}
			if want := []string{c.paid, c.recallable, c.computed, c.reported, c.difference}; !slices.Equal(got, want) {
				t.Errorf("paid, recallable, computed, reported, difference = %v, want %v", got, want)
			}
		})
	}
	t.Run("a statement without section A.2 adds no figure, but its document is counted", func(t *testing.T) {
		s, err := ps.Summary(context.Background(), fund.Operator, "Q4", date("2022-12-31"))
		if err != nil {
			t.Fatal(err)
		}
		if !s.PaidIn.Equal(fund.MustMoney("1000")) || s.CapitalCalls != 1 || len(s.Documents) != 2 {
			t.Errorf("paid %s, %d calls, documents %v", s.PaidIn, s.CapitalCalls, s.Documents)
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
	call.Kind, call.DocumentID, call.AsOf, call.DueDate, call.Amount = fund.CapitalCall, "C1", fund.MustDate("2024-02-01"), fund.MustDate("2024-02-15"), fund.MustMoney("100.00")
	carry := base
	carry.Kind, carry.DocumentID, carry.AsOf, carry.PaymentDate, carry.Amount = fund.Distribution, "D1", fund.MustDate("2024-04-10"), fund.MustDate("2024-04-20"), fund.MustMoney("30.00")
	carry.Transactions = []fund.Transaction{{Type: "carry", Amount: fund.MustMoney("20.00"), Unfunded: fund.NoEffect},
		{Type: "clawback", Amount: fund.MustMoney("10.00"), Unfunded: fund.NoEffect}}
	later := base
	later.Kind, later.DocumentID, later.AsOf = fund.Statement, "S2", fund.MustDate("2024-06-30")
	later.CapitalAccount = &fund.CapitalAccount{PeriodStart: fund.MustDate("2024-04-01"), BeginningNAV: fund.MustMoney("100.00"), EndingNAV: fund.MustMoney("100.00")}

	p := positions.Evaluate("P", fund.MustDate("2024-05-31"), []fund.PositionItem{statement, call, carry}, positions.DefaultFreshness)
	if p.NAV.Status != positions.NAVRolledForward || p.NAV.Value == nil || !p.NAV.Value.Equal(fund.MustMoney("100.00")) ||
		p.NAV.ContributionsAfter.Sign() != 0 || p.NAV.DistributionsAfter.Sign() != 0 {
		t.Errorf("NAV %+v, want S1's 100.00 rolled forward by nothing", p.NAV)
	}
	if !p.PaidIn.Equal(fund.MustMoney("100.00")) || p.Distributed.Sign() != 0 || len(p.Flows) != 3 {
		t.Errorf("paid-in %s, distributed %s, %d flows; want 100.00, 0 and 3 (the call and both excluded lines listed)", p.PaidIn, p.Distributed, len(p.Flows))
	}
	for _, f := range p.IRR.Flows {
		if f.Date == carry.PaymentDate {
			t.Errorf("the IRR solves a flow on the carry's date: %+v", p.IRR.Flows)
		}
	}
	p = positions.Evaluate("P", fund.MustDate("2024-06-30"), []fund.PositionItem{statement, call, carry, later}, positions.DefaultFreshness)
	r := p.Reconciliations[len(p.Reconciliations)-1]
	if r.Statement.DocumentID != "S2" || r.Distributions.Notices.Sign() != 0 || r.Distributions.Difference.Sign() != 0 {
		t.Errorf("S2's reconciliation %+v, want no distributions from the notices", r)
	}
}

// restated returns the document id of docs with its capital calls
// completed, as the next version to write: the pending call paid.
func restated(docs []fund.Document, id string) fund.Document {
	for _, d := range docs {
		if d.ID != id {
			continue
		}
		ps := slices.Clone(d.Positions)
		for i := range ps {
			if c := ps[i].CapitalCall; c != nil {
				paid := *c
				paid.Status = fund.StatusCompleted
				ps[i].CapitalCall = &paid
			}
		}
		d.Positions = ps
		return d
	}
	panic("no document " + id)
}

// TestAPendingCallIsCalledAndOutstandingButNotPaidIn follows Q1's N2, a
// call of 100,000 due 2023-05-15, through the summary and the performance:
// pending (PerformanceFixtures), it is called and outstanding but not paid
// in, no flow, not in the roll-forward of the NAV, the multiples or the
// IRR; restated as completed (N2 v2), it is paid in from its due date on,
// and the IRR's flows are then LibreOffice's cases. Before its due date a
// completed call is still outstanding. Either way it is owed, so the
// unfunded commitment computed counts it, and the summary's DPI is the
// performance's.
func TestAPendingCallIsCalledAndOutstandingButNotPaidIn(t *testing.T) {
	ps, m := performanceAnalytics(t)
	ctx := context.Background()
	type want struct {
		asOf, called, paidIn, outstanding, dpi, tvpi, computed string
		nav                                                    string
		irrFlows                                               []string
		n2Flow                                                 bool   // whether N2's line is among the flows
		libreOffice                                            string // the LibreOffice case of the IRR's flows, if any
	}
	check := func(t *testing.T, w want) {
		t.Helper()
		asOf := date(w.asOf)
		s, err := ps.Summary(ctx, fund.Operator, "Q1", asOf)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ps.Performance(ctx, fund.Operator, "Q1", asOf)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{w.called, w.paidIn, w.outstanding, "0.00", w.dpi, w.computed}
		if got := []string{s.Called.String(), s.PaidIn.String(), s.Outstanding.String(), s.PaidInReturned.String(), multiple(s.DPI), optional(s.UnfundedComputed)}; !slices.Equal(got, want) {
			t.Errorf("summary: called, paid in, outstanding, returned, DPI, unfunded computed = %v, want %v", got, want)
		}
		got := performanceOf(p)
		if g := []string{got.called, got.paidIn, got.outstanding, got.returned, got.dpi}; !slices.Equal(g, want[:5]) {
			t.Errorf("performance: called, paid in, outstanding, returned, DPI = %v, want %v", g, want[:5])
		}
		if got.nav != w.nav || got.tvpi != w.tvpi || !slices.Equal(got.irrFlows, w.irrFlows) {
			t.Errorf("NAV %s, TVPI %s, IRR flows %v\nwant %s, %s, %v", got.nav, got.tvpi, got.irrFlows, w.nav, w.tvpi, w.irrFlows)
		}
		n2 := slices.ContainsFunc(p.Flows, func(f positions.PerformanceFlow) bool { return f.DocumentID == "N2" })
		if n2 != w.n2Flow {
			t.Errorf("N2 among the flows: %v, want %v (%v)", n2, w.n2Flow, got.flows)
		}
		if w.libreOffice != "" {
			checkIRR(t, w.libreOffice, p.IRR)
		} else {
			checkRoot(t, p.IRR)
		}
	}

	// Pending. Unfunded computed: 1,000,000 − 200,000 (N1) − 100,000 (N2),
	// and − 50,000 (N4) from August.
	for _, w := range []want{
		{asOf: "2023-05-10", called: "300000.00", paidIn: "200000.00", outstanding: "100000.00", dpi: "0.000000", computed: "700000.00",
			// 205,000 ÷ 200,000.
			tvpi: "1.025000", nav: "rolled_forward 205000.00 from S1@1: 205000.00 + 0.00 − 0.00",
			irrFlows: []string{"2023-01-31 -200000.00", "2023-05-10 205000.00"}, libreOffice: "Q1 on 2023-05-10"},
		// Past its due date, still pending: it does not roll S1's NAV forward.
		{asOf: "2023-05-31", called: "300000.00", paidIn: "200000.00", outstanding: "100000.00", dpi: "0.000000", computed: "700000.00",
			tvpi: "1.025000", nav: "rolled_forward 205000.00 from S1@1: 205000.00 + 0.00 − 0.00",
			irrFlows: []string{"2023-01-31 -200000.00", "2023-05-31 205000.00"}},
		// 100,000 ÷ 250,000; 440,000 ÷ 250,000.
		{asOf: "2023-09-30", called: "350000.00", paidIn: "250000.00", outstanding: "100000.00", dpi: "0.400000", computed: "650000.00",
			tvpi: "1.760000", nav: "rolled_forward 340000.00 from S2@2: 310000.00 + 50000.00 − 20000.00",
			irrFlows: []string{"2023-01-31 -200000.00", "2023-06-25 80000.00", "2023-08-10 -50000.00", "2023-09-05 20000.00", "2023-09-30 340000.00"}},
	} {
		t.Run("pending, on "+w.asOf, func(t *testing.T) { check(t, w) })
	}
	t.Run("pending, the cash flows list N2 and leave it out of the cumulative totals", func(t *testing.T) {
		_, flows, err := ps.Cashflows(ctx, fund.Operator, "Q1", date("2023-09-30"))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(flows, func(f positions.Cashflow) bool { return f.DocumentID == "N2" })
		if i < 1 || flows[i].Status != fund.StatusPending || !flows[i].CumulativePaidIn.Equal(flows[i-1].CumulativePaidIn) ||
			!flows[len(flows)-1].CumulativePaidIn.Equal(fund.MustMoney("250000")) {
			t.Errorf("cash flows %+v: want N2 pending, moving nothing, and 250,000 paid in at the end", flows)
		}
	})

	m.Restate(restated(positionstest.PerformanceFixtures(), "N2"))
	for _, w := range []want{
		// Completed, but due on 2023-05-15: on 05-10 still outstanding, not
		// paid in and no flow, exactly as when pending.
		{asOf: "2023-05-10", called: "300000.00", paidIn: "200000.00", outstanding: "100000.00", dpi: "0.000000", computed: "700000.00",
			tvpi: "1.025000", nav: "rolled_forward 205000.00 from S1@1: 205000.00 + 0.00 − 0.00",
			irrFlows: []string{"2023-01-31 -200000.00", "2023-05-10 205000.00"}, libreOffice: "Q1 on 2023-05-10"},
		// Paid in on 05-15, after S1's period: it rolls the NAV forward,
		// 205,000 + 100,000; TVPI 305,000 ÷ 300,000 = 1.0166…
		{asOf: "2023-05-31", called: "300000.00", paidIn: "300000.00", outstanding: "0.00", dpi: "0.000000", computed: "700000.00",
			tvpi: "1.016667", nav: "rolled_forward 305000.00 from S1@1: 205000.00 + 100000.00 − 0.00",
			irrFlows: []string{"2023-01-31 -200000.00", "2023-05-15 -100000.00", "2023-05-31 305000.00"}, n2Flow: true},
		// 80,000 ÷ 300,000 = 0.2666…; 390,000 ÷ 300,000 = 1.3.
		{asOf: "2023-06-30", called: "300000.00", paidIn: "300000.00", outstanding: "0.00", dpi: "0.266667", computed: "700000.00",
			tvpi: "1.300000", nav: "statement 310000.00 from S2@2: 310000.00 + 0.00 − 0.00",
			irrFlows: []string{"2023-01-31 -200000.00", "2023-05-15 -100000.00", "2023-06-25 80000.00", "2023-06-30 310000.00"},
			n2Flow:   true, libreOffice: "Q1 on 2023-06-30"},
		// 100,000 ÷ 350,000 = 0.2857142…; 440,000 ÷ 350,000 = 1.2571428…
		{asOf: "2023-09-30", called: "350000.00", paidIn: "350000.00", outstanding: "0.00", dpi: "0.285714", computed: "650000.00",
			tvpi: "1.257143", nav: "rolled_forward 340000.00 from S2@2: 310000.00 + 50000.00 − 20000.00",
			irrFlows: []string{"2023-01-31 -200000.00", "2023-05-15 -100000.00", "2023-06-25 80000.00", "2023-08-10 -50000.00", "2023-09-05 20000.00", "2023-09-30 340000.00"},
			n2Flow:   true, libreOffice: "Q1 on 2023-09-30"},
	} {
		t.Run("completed, on "+w.asOf, func(t *testing.T) { check(t, w) })
	}
	t.Run("completed, Q1 and Q2 pool as LibreOffice's case", func(t *testing.T) {
		asOf := date("2023-09-30")
		var perfs []positions.Performance
		for _, pos := range []string{"Q1", "Q2"} {
			p, err := ps.Performance(ctx, fund.Operator, pos, asOf)
			if err != nil {
				t.Fatal(err)
			}
			perfs = append(perfs, p)
		}
		pool := positions.Pool("USD", asOf, perfs)
		// Paid in 350,000 + 130,000; DPI 140,000 ÷ 480,000 = 0.2916666…,
		// TVPI 583,000 ÷ 480,000 = 1.2145833…
		want := "USD 2 positions, 0 without NAV; NAV rolled_forward 443000.00; called 480000.00, paid in 480000.00, outstanding 0.00, returned 0.00, distributed 140000.00; DPI 0.291667 RVPI 0.922916 TVPI 1.214583 (ok); IRR ok over 242 days, not annualised"
		if got := pooledOf(pool); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		checkIRR(t, "Q1 and Q2 pooled on 2023-09-30", pool.IRR)
	})
	t.Run("completed, the cash flows count N2", func(t *testing.T) {
		_, flows, err := ps.Cashflows(ctx, fund.Operator, "Q1", date("2023-09-30"))
		if err != nil {
			t.Fatal(err)
		}
		if last := flows[len(flows)-1]; !last.CumulativePaidIn.Equal(fund.MustMoney("350000")) {
			t.Errorf("cumulative paid in %s at the end, want 350,000", last.CumulativePaidIn)
		}
	})
}

// TestTheSummaryAndThePerformanceHaveOneDPI works out by hand one
// position's DPI on several dates, from the summary and from the
// performance, which must agree exactly: the distributed typed lines of the
// distributions paid (completed, paid on or before the date) divided by
// the paid-in capital less the paid-in capital returned (ILPA's return of
// excess capital called), not the gross distributions by the calls.
// Position PE (INV_E, FUND_E), no statement (so DPI alone):
//
//	C1 2025-01-10  call 100,000 completed, due 2025-01-31
//	C2 2025-03-01  call 50,000 pending, due 2025-03-20; v2 (written last) completed
//	X1 2025-04-01  distribution 35,000 completed, paid 2025-04-15: return of excess
//	               capital called 10,000 + income 20,000 + carry 5,000 (excluded)
//	X2 2025-05-01  distribution 12,000 completed, paid 2025-06-15: gain 12,000
func TestTheSummaryAndThePerformanceHaveOneDPI(t *testing.T) {
	m := positionstest.NewMemory(clock)
	ps := positions.NewAnalytics(m)
	ctx := context.Background()
	doc := func(id string, kind fund.Kind, asOf string, p fund.Position) fund.Document {
		p.ID, p.InvestorID = "PE", "INV_E"
		d := fund.Document{ID: id, Positions: []fund.Position{p}, DocumentFields: fund.DocumentFields{FundID: "FUND_E", Kind: kind, Title: id, AsOf: date(asOf), Currency: "USD"}}
		d.Normalize()
		if err := d.Validate(100); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return d
	}
	call := func(id, asOf, amount string, status fund.Status, due string) fund.Document {
		return doc(id, fund.KindCapitalCallNotice, asOf, fund.Position{CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(amount), Status: status,
			CallDetails: fund.CallDetails{DueDate: date(due)}}})
	}
	dist := func(id, asOf, amount, paid string, lines ...fund.Transaction) fund.Document {
		return doc(id, fund.KindDistributionNotice, asOf, fund.Position{Distribution: &fund.DistributionItem{Amount: fund.MustMoney(amount), Status: fund.StatusCompleted,
			DistributionDetails: fund.DistributionDetails{PaymentDate: date(paid)}, Transactions: lines}})
	}
	line := func(ty fund.TransactionType, amount string) fund.Transaction {
		return fund.Transaction{Type: ty, Amount: fund.MustMoney(amount)}
	}
	m.Restate(call("C1", "2025-01-10", "100000", fund.StatusCompleted, "2025-01-31"))
	m.Restate(call("C2", "2025-03-01", "50000", fund.StatusPending, "2025-03-20"))
	m.Restate(dist("X1", "2025-04-01", "35000", "2025-04-15",
		line("return_of_excess_capital_investments", "10000"), line("income", "20000"), line("carry", "5000")))
	m.Restate(dist("X2", "2025-05-01", "12000", "2025-06-15", line("gain_loss", "12000")))

	type want struct{ asOf, called, paidIn, outstanding, returned, distributedLines, gross, dpi string }
	check := func(t *testing.T, w want) {
		t.Helper()
		s, err := ps.Summary(ctx, fund.Operator, "PE", date(w.asOf))
		if err != nil {
			t.Fatal(err)
		}
		p, err := ps.Performance(ctx, fund.Operator, "PE", date(w.asOf))
		if err != nil {
			t.Fatal(err)
		}
		got := []string{s.Called.String(), s.PaidIn.String(), s.Outstanding.String(), s.PaidInReturned.String(), p.Distributed.String(), s.Distributed.Total.String(), multiple(s.DPI)}
		if want := []string{w.called, w.paidIn, w.outstanding, w.returned, w.distributedLines, w.gross, w.dpi}; !slices.Equal(got, want) {
			t.Errorf("called, paid in, outstanding, returned, distributed lines, gross distributions, DPI = %v, want %v", got, want)
		}
		if s.DPI == nil || p.Multiples.DPI == nil || !s.DPI.Equal(*p.Multiples.DPI) || p.Multiples.Status != positions.MultiplesNoNAV {
			t.Errorf("the summary's DPI %v, the performance's %v (%s)", s.DPI, p.Multiples.DPI, p.Multiples.Status)
		}
		if pf := []string{p.Called.String(), p.PaidIn.String(), p.Outstanding.String(), p.PaidInReturned.String()}; !slices.Equal(pf, got[:4]) {
			t.Errorf("the performance's called, paid in, outstanding, returned %v, the summary's %v", pf, got[:4])
		}
	}
	for _, w := range []want{
		{"2025-01-31", "100000.00", "100000.00", "0.00", "0.00", "0.00", "0.00", "0.000000"},
		// C2 is called, pending: outstanding.
		{"2025-03-31", "150000.00", "100000.00", "50000.00", "0.00", "0.00", "0.00", "0.000000"},
		// X1: income 20,000 ÷ (100,000 − 10,000 returned) = 0.2222…; carry counts
		// nowhere; the gross 35,000 ÷ 100,000 would say 0.35.
		{"2025-04-30", "150000.00", "100000.00", "50000.00", "10000.00", "20000.00", "35000.00", "0.222222"},
		// X2 is counted (its notice is dated 05-01) but paid on 06-15.
		{"2025-05-31", "150000.00", "100000.00", "50000.00", "10000.00", "20000.00", "47000.00", "0.222222"},
		// (20,000 + 12,000) ÷ 90,000 = 0.3555…
		{"2025-06-30", "150000.00", "100000.00", "50000.00", "10000.00", "32000.00", "47000.00", "0.355556"},
	} {
		t.Run("C2 pending, on "+w.asOf, func(t *testing.T) { check(t, w) })
	}
	m.Restate(call("C2", "2025-03-01", "50000", fund.StatusCompleted, "2025-03-20"))
	for _, w := range []want{
		// Completed, and due on 03-20: outstanding until then.
		{"2025-03-10", "150000.00", "100000.00", "50000.00", "0.00", "0.00", "0.00", "0.000000"},
		// 32,000 ÷ (150,000 − 10,000) = 0.2285714…
		{"2025-06-30", "150000.00", "150000.00", "0.00", "10000.00", "32000.00", "47000.00", "0.228571"},
	} {
		t.Run("C2 completed, on "+w.asOf, func(t *testing.T) { check(t, w) })
	}
}
