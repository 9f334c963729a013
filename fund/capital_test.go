package fund

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func mp(s string) *Money { m := MustMoney(s); return &m }

// ILPA's own sample: the LP #5 column of the Reporting Template v2.0 workbook
// (RT, sheet "Reporting Template"), as /work/shared/ilpa-reference.md §1–2
// reads it. The QTD column gives every input row. For YTD and ITD the
// reference gives only the formula rows (R18, R25, R82, R91, R94, R100), so
// each subtotal is entered on one line of its block, and the split of R18 takes
// the contributions from A.2 row 110 (whose negative they are) and leaves the
// rest on distributions. Every column ends at the same NAV, 45,673,600.
var (
	periodEnd = MustDate("2025-03-31")

	ilpaQTD = CapitalAccount{
		PeriodStart:                    MustDate("2025-01-01"),
		BeginningNAV:                   MustMoney("45067000"),
		Contributions:                  mp("0"),
		Distributions:                  mp("-1250000"),
		OfferingSyndicationCosts:       mp("0"),
		PlacementFees:                  mp("0"),
		PartnerTransfers:               mp("0"),
		ManagementFeesGross:            mp("-187500"),
		ManagementFeeRebate:            mp("0"),
		FeeWaivers:                     mp("0"),
		ManagementFeeOffsets:           mp("82600"),
		AdviserRelatedPersonsExpenses:  mp("-1250"),  // R34 = R27..R31 (−500 −250 −250 −250 + 0) + R33 (0)
		PartnershipExpenses:            mp("-46750"), // R61 = R59 (−46,750) + R60 (0)
		InvestmentIncome:               mp("9500"),   // R90 = 500 + 8,000 + 1,000
		NetRealizedGainLoss:            mp("1000000"),
		NetUnrealizedGainLoss:          mp("1000000"),
		EndingNAV:                      MustMoney("45673600"),
		CarriedInterestAccruedEarned:   mp("-300000"),
		CarriedInterestPaid:            mp("50000"),
		TotalCommitment:                mp("50000000"),
		BeginningUnfundedCommitment:    mp("18500000"),
		LessContributions:              mp("0"),
		PlusRecallableDistributions:    mp("0"),
		LessExpiredReleasedCommitments: mp("0"),
		OtherUnfundedAdjustment:        mp("0"),
		EndingUnfundedCommitment:       mp("18500000"),
	}
	ilpaYTD = CapitalAccount{
		PeriodStart:                    MustDate("2025-01-01"),
		BeginningNAV:                   MustMoney("38196000"),
		Contributions:                  mp("5000000"),  // −A.2 F110
		Distributions:                  mp("-5000000"), // R18 (0) less the contributions
		ManagementFeesGross:            mp("-396000"),  // R25
		PartnershipExpenses:            mp("-154780"),  // R82 − R25 = R34 + R61
		InvestmentIncome:               mp("28380"),    // R91 − R82 = R90
		NetRealizedGainLoss:            mp("8000000"),  // R94
		EndingNAV:                      MustMoney("45673600"),
		CarriedInterestAccruedEarned:   mp("-1500000"), // R100
		TotalCommitment:                mp("50000000"),
		BeginningUnfundedCommitment:    mp("23500000"),
		LessContributions:              mp("-5000000"),
		PlusRecallableDistributions:    mp("0"),
		LessExpiredReleasedCommitments: mp("0"),
		OtherUnfundedAdjustment:        mp("0"),
		EndingUnfundedCommitment:       mp("18500000"),
	}
	ilpaITD = CapitalAccount{
		PeriodStart:                    MustDate("2019-07-01"),
		BeginningNAV:                   MustMoney("0"),
		Contributions:                  mp("35000000"),  // −A.2 G110
		Distributions:                  mp("-19040000"), // R18 (15,960,000) less the contributions
		ManagementFeesGross:            mp("-5061479"),  // R25
		PartnershipExpenses:            mp("-548429"),   // R82 − R25 = R34 + R61
		InvestmentIncome:               mp("223508"),    // R91 − R82 = R90
		NetRealizedGainLoss:            mp("35100000"),  // R94
		EndingNAV:                      MustMoney("45673600"),
		CarriedInterestAccruedEarned:   mp("-6250000"), // R100
		TotalCommitment:                mp("50000000"),
		BeginningUnfundedCommitment:    mp("50000000"), // G109 = E108, the total commitment
		LessContributions:              mp("-35000000"),
		PlusRecallableDistributions:    mp("4000000"),
		LessExpiredReleasedCommitments: mp("0"),
		OtherUnfundedAdjustment:        mp("-500000"),
		EndingUnfundedCommitment:       mp("18500000"),
	}
)

func TestILPASampleColumnsRollForward(t *testing.T) {
	for name, c := range map[string]CapitalAccount{"QTD": ilpaQTD, "YTD": ilpaYTD, "ITD": ilpaITD} {
		t.Run("ILPA's "+name+" column validates and ends at 45,673,600 and 18,500,000 unfunded", func(t *testing.T) {
			if err := c.Validate("capitalAccount", periodEnd); err != nil {
				t.Fatal(err)
			}
			if c.EndingNAV.String() != "45673600.00" || c.EndingUnfundedCommitment.String() != "18500000.00" {
				t.Fatalf("ending NAV %s, ending unfunded %s", c.EndingNAV, c.EndingUnfundedCommitment)
			}
		})
	}
}

func TestBadStatementsAreRefused(t *testing.T) {
	const f = "positions[0].capitalAccount"
	tests := []struct {
		name      string
		change    func(c *CapitalAccount)
		end       Date
		wantField string
		wantMsg   string
	}{
		{"an ending NAV one cent above the roll-forward is refused naming A.1 and the difference",
			func(c *CapitalAccount) { c.EndingNAV = MustMoney("45673600.01") }, periodEnd,
			f + ".endingNav", "A.1 does not roll forward: beginning NAV plus the movements is 45673600.00 but ending NAV is 45673600.01 (difference -0.01)"},
		{"a management fee one cent larger is refused naming A.1 and the difference",
			func(c *CapitalAccount) { c.ManagementFeesGross = mp("-187500.01") }, periodEnd,
			f + ".endingNav", "A.1 does not roll forward: beginning NAV plus the movements is 45673599.99 but ending NAV is 45673600.00 (difference -0.01)"},
		{"carried interest is not a term of the roll-forward, so a statement that also deducts it does not roll forward",
			func(c *CapitalAccount) { c.EndingNAV = MustMoney("45373600") }, periodEnd,
			f + ".endingNav", "A.1 does not roll forward: beginning NAV plus the movements is 45673600.00 but ending NAV is 45373600.00 (difference 300000.00)"},
		{"an ending unfunded commitment one cent short is refused naming A.2 and the difference",
			func(c *CapitalAccount) { c.EndingUnfundedCommitment = mp("18499999.99") }, periodEnd,
			f + ".endingUnfundedCommitment", "A.2 does not roll forward: beginning unfunded commitment plus the movements is 18500000.00 but ending unfunded commitment is 18499999.99 (difference 0.01)"},
		{"a recallable distribution one cent larger is refused naming A.2 and the difference",
			func(c *CapitalAccount) { c.PlusRecallableDistributions = mp("0.01") }, periodEnd,
			f + ".endingUnfundedCommitment", "A.2 does not roll forward: beginning unfunded commitment plus the movements is 18500000.01 but ending unfunded commitment is 18500000.00 (difference 0.01)"},
		{"a period ending before it starts is refused",
			func(c *CapitalAccount) { c.PeriodStart = MustDate("2025-04-01") }, periodEnd,
			f + ".periodStart", "the period must end on or after it starts: it starts 2025-04-01 but the document's asOf, its end, is 2025-03-31"},
		{"a statement without a period start is refused",
			func(c *CapitalAccount) { c.PeriodStart = Date{} }, periodEnd,
			f + ".periodStart", "is required (YYYY-MM-DD)"},
		{"positive distributions are refused even when the statement rolls forward",
			func(c *CapitalAccount) {
				c.Distributions = mp("1250000")
				c.EndingNAV = MustMoney("48173600")
			}, periodEnd,
			f + ".distributions", `A.1 row 14 "Distributions – Cash & Non-Cash" is entered negative (ILPA's sign convention), got 1250000.00`},
		{"a negative management fee offset is refused",
			func(c *CapitalAccount) { c.ManagementFeeOffsets = mp("-82600") }, periodEnd,
			f + ".managementFeeOffsets", `A.1 row 24 "Less Offsets to Management Fees (Applied During Period) (input positive values)" is entered positive (ILPA's sign convention), got -82600.00`},
		{"a positive gross management fee is refused",
			func(c *CapitalAccount) { c.ManagementFeesGross = mp("187500") }, periodEnd,
			f + ".managementFeesGross", `A.1 row 21 "(Management Fees – Gross of Offsets, Waivers & Rebates)" is entered negative (ILPA's sign convention), got 187500.00`},
		{"negative carried interest paid is refused",
			func(c *CapitalAccount) { c.CarriedInterestPaid = mp("-50000") }, periodEnd,
			f + ".carriedInterestPaid", `A.1 row 101 "Carried Interest – Paid During the Period (input positive values)" is entered positive (ILPA's sign convention), got -50000.00`},
		{"positive contributions in A.2 are refused",
			func(c *CapitalAccount) { c.LessContributions = mp("5000000") }, periodEnd,
			f + ".lessContributions", `A.2 row 110 "(Less Contributions)" is entered negative (ILPA's sign convention), got 5000000.00`},
		{"A.2 lines without a beginning unfunded commitment are refused",
			func(c *CapitalAccount) { c.BeginningUnfundedCommitment = nil }, periodEnd,
			f + ".beginningUnfundedCommitment", "is required when any line of A.2 (Commitment Reconciliation) is given"},
		{"A.2 lines without an ending unfunded commitment are refused",
			func(c *CapitalAccount) { c.EndingUnfundedCommitment = nil }, periodEnd,
			f + ".endingUnfundedCommitment", "is required when any line of A.2 (Commitment Reconciliation) is given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ilpaQTD
			tt.change(&c)
			err := c.Validate(f, tt.end)
			var e *Error
			if !errors.As(err, &e) || e.Code != EINVALID || e.Field != tt.wantField || e.Message != tt.wantMsg {
				t.Fatalf("got %v\nwant invalid: %s: %s", err, tt.wantField, tt.wantMsg)
			}
		})
	}
}

func TestAbsentLinesCountAsZeroAndStayAbsent(t *testing.T) {
	t.Run("a statement of beginning and ending NAV alone validates when they are equal", func(t *testing.T) {
		c := CapitalAccount{PeriodStart: MustDate("2025-01-01"), BeginningNAV: MustMoney("100"), EndingNAV: MustMoney("100")}
		if err := c.Validate("c", periodEnd); err != nil {
			t.Fatal(err)
		}
		c.EndingNAV = MustMoney("100.01")
		if err := c.Validate("c", periodEnd); err == nil {
			t.Fatal("an ending NAV above the beginning with no movements validated")
		}
	})
	t.Run("absent lines are left out of its JSON", func(t *testing.T) {
		c := CapitalAccount{PeriodStart: MustDate("2025-01-01"), BeginningNAV: MustMoney("100"), Distributions: mp("-10"), EndingNAV: MustMoney("90")}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"periodStart":"2025-01-01","beginningNav":"100.00","distributions":"-10.00","endingNav":"90.00"}`; string(b) != want {
			t.Fatalf("got %s\nwant %s", b, want)
		}
	})
	t.Run("a one-day period, ending the day it starts, validates", func(t *testing.T) {
		c := ilpaQTD
		c.PeriodStart = periodEnd
		if err := c.Validate("c", periodEnd); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a carry reversal, positive for the LP, validates", func(t *testing.T) {
		c := ilpaQTD
		c.CarriedInterestAccruedEarned = mp("120000")
		if err := c.Validate("c", periodEnd); err != nil {
			t.Fatal(err)
		}
	})
}

// randomStatement builds a statement that rolls forward: every optional line
// present or absent at random, each amount of a sign ILPA allows.
func randomStatement(r *rand.Rand) CapitalAccount {
	amount := func(sign string) Money {
		m := MustMoney(fmt.Sprintf("%d.%02d", r.IntN(10_000_000), r.IntN(100)))
		if sign == "-" || (sign == "±" && r.IntN(2) == 0) {
			m = Money{}.Sub(m)
		}
		return m
	}
	c := CapitalAccount{PeriodStart: MustDate("2024-01-01")}
	a2 := r.IntN(2) == 0
	for _, l := range CapitalLines() {
		if l.Role == "ending" || (l.Section == SectionCommitment && !a2) || (l.Role != "beginning" && r.IntN(3) == 0) {
			continue
		}
		m := amount(l.Sign)
		l.Set(&c, &m)
	}
	c.EndingNAV = Sum(c.BeginningNAV, sumOf(&c, SectionNAV, "movement"))
	if a2 {
		moves := sumOf(&c, SectionCommitment, "movement")
		if moves.Sign() < 0 { // keep the unfunded commitment from going below zero
			b := c.BeginningUnfundedCommitment.Sub(moves)
			c.BeginningUnfundedCommitment = &b
		}
		end := c.BeginningUnfundedCommitment.Add(moves)
		c.EndingUnfundedCommitment = &end
	}
	return c
}

func sumOf(c *CapitalAccount, section, role string) Money {
	var s Money
	for _, l := range CapitalLines() {
		if m := l.Get(c); m != nil && l.Section == section && l.Role == role {
			s = s.Add(*m)
		}
	}
	return s
}

func TestRandomStatementsRollForwardAndOneCentIsCaught(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 1))
	cent := MustMoney("0.01")
	for i := range 2000 {
		c := randomStatement(r)
		if err := c.Validate("c", periodEnd); err != nil {
			t.Fatalf("statement %d built to roll forward: %v", i, err)
		}
		var present []CapitalLine
		for _, l := range CapitalLines() {
			if l.Get(&c) != nil {
				present = append(present, l)
			}
		}
		l := present[r.IntN(len(present))]
		// One cent in the direction the line's sign allows.
		d := cent
		if l.Sign == "-" || (l.Sign == "±" && r.IntN(2) == 0) {
			d = Money{}.Sub(cent)
		}
		bad := c
		m := l.Get(&c).Add(d)
		l.Set(&bad, &m)
		err := bad.Validate("c", periodEnd)
		if l.Role == "memo" {
			if err != nil {
				t.Fatalf("statement %d: a memo line %s moved by %s refused: %v", i, l.Name, d, err)
			}
			continue
		}
		diff := d
		if l.Role == "ending" {
			diff = Money{}.Sub(d)
		}
		var e *Error
		wantField := "c.endingNav"
		if l.Section == SectionCommitment {
			wantField = "c.endingUnfundedCommitment"
		}
		if !errors.As(err, &e) || e.Field != wantField ||
			!strings.HasPrefix(e.Message, l.Section+" does not roll forward: ") ||
			!strings.HasSuffix(e.Message, "(difference "+diff.String()+")") {
			t.Fatalf("statement %d: %s moved by %s: got %v, want %s naming %s and difference %s", i, l.Name, d, err, wantField, l.Section, diff)
		}
	}
}

// The mapping table in docs/analytics.md is the declaration's: each line's
// row there is derived from its tags.
func TestTheDocsMapEveryLine(t *testing.T) {
	b, err := os.ReadFile("../docs/analytics.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Capital account statements (ILPA RT v2.0 A.1/A.2)")
	if !ok {
		t.Fatal("docs/analytics.md has no capital account section")
	}
	roles := map[string]string{"beginning": "beginning", "movement": "added", "ending": "ending: must equal beginning plus the added lines", "memo": "memo, not in the roll-forward"}
	for _, l := range CapitalLines() {
		row := fmt.Sprintf("| `%s` | %s row %d | %s | %s | %s |", l.Name, l.Section, l.Row, l.Label, l.Sign, roles[l.Role])
		if !strings.Contains(section, row+"\n") {
			t.Errorf("docs/analytics.md lacks the row\n%s", row)
		}
	}
}

func TestTheDemoStatementsAreValid(t *testing.T) {
	n := 0
	for _, d := range DemoVersions() {
		d.Normalize()
		if err := d.Validate(DefaultMaxPositions); err != nil {
			t.Errorf("%s: %v", d.ID, err)
		}
		for _, p := range d.Positions {
			if p.CapitalAccount != nil {
				n++
			}
		}
	}
	if n != 9 {
		t.Errorf("%d demo statements, want 9 (three positions, Q3, Q4 and Q4 restated)", n)
	}
}
