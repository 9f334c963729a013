package fund

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// CapitalAccount is one position's capital account statement for a period,
// in the rows of ILPA Reporting Template v2.0 (January 2025): section A.1,
// "NAV Reconciliation and Summary of Fees, Expenses & Carried Interest", and
// section A.2, "Commitment Reconciliation", at the level an administrator
// reports them. The period runs from PeriodStart to the document's as-of
// date, both days included.
//
// Each line is declared once, here: its JSON name (json tag), ILPA's row
// label (doc tag) and row number (ilpa tag), the sign ILPA's convention
// allows (sign tag) and its role in its section's roll-forward (roll tag).
// CapitalLines lists them; Validate, the docs and the tests derive from
// them.
//
// Signs follow ILPA's convention exactly: an amount is signed by its effect
// on the LP's capital (A.1) or on the unfunded commitment (A.2), so every
// roll-forward is a plain sum. sign:"+" lines are never negative, sign:"-"
// lines never positive, sign:"±" lines either.
//
// Absent lines: BeginningNAV and EndingNAV are always present (zero at
// inception). Every other line is optional and nil when absent, never zero:
// an absent line counts as zero in its section's roll-forward and stays
// absent in answers. Section A.2 is
// optional as a whole; once any of its lines is given, its beginning and
// ending unfunded commitment are required.
//
// The carried interest lines are memos, as in ILPA's template: rows 96–103
// reconcile the carry balance and feed only the NAV gross of carry, never
// the ending NAV net of carry, because ILPA has the gains (rows 92 and 93)
// reported net of carry already. Total Commitment is a memo too: ILPA's
// Ending Unfunded Commitment formula does not use it.
type CapitalAccount struct {
	PeriodStart Date `json:"periodStart" doc:"Required: the first day of the period; the document's 'asOf' is its last, and must not come before it."`

	// A.1 NAV Reconciliation (rows 12–95, and memos from 96–103).
	BeginningNAV             Money  `json:"beginningNav" ilpa:"A.1 row 12" sign:"±" roll:"beginning" doc:"Beginning NAV – Net of Accrued/Earned/Paid Carried Interest"`
	Contributions            *Money `json:"contributions,omitempty" ilpa:"A.1 row 13" sign:"+" roll:"movement" doc:"Contributions – Cash & Non-Cash"`
	Distributions            *Money `json:"distributions,omitempty" ilpa:"A.1 row 14" sign:"-" roll:"movement" doc:"Distributions – Cash & Non-Cash"`
	OfferingSyndicationCosts *Money `json:"offeringSyndicationCosts,omitempty" ilpa:"A.1 row 15" sign:"-" roll:"movement" doc:"Offering/Syndication Costs"`
	PlacementFees            *Money `json:"placementFees,omitempty" ilpa:"A.1 row 16" sign:"-" roll:"movement" doc:"Placement Fees"`
	PartnerTransfers         *Money `json:"partnerTransfers,omitempty" ilpa:"A.1 row 17" sign:"±" roll:"movement" doc:"Partner Transfers"`
	ManagementFeesGross      *Money `json:"managementFeesGross,omitempty" ilpa:"A.1 row 21" sign:"-" roll:"movement" doc:"(Management Fees – Gross of Offsets, Waivers & Rebates)"`
	ManagementFeeRebate      *Money `json:"managementFeeRebate,omitempty" ilpa:"A.1 row 22" sign:"+" roll:"movement" doc:"Less Management Fee Rebate (input positive values)"`
	FeeWaivers               *Money `json:"feeWaivers,omitempty" ilpa:"A.1 row 23" sign:"+" roll:"movement" doc:"Less Fee Waivers (input positive values)"`
	ManagementFeeOffsets     *Money `json:"managementFeeOffsets,omitempty" ilpa:"A.1 row 24" sign:"+" roll:"movement" doc:"Less Offsets to Management Fees (Applied During Period) (input positive values)"`
	// The two expense blocks at their totals net of offsets: ILPA's rows
	// 27–33 and 36–60 are the administrator's detail behind them.
	AdviserRelatedPersonsExpenses *Money `json:"adviserRelatedPersonsExpenses,omitempty" ilpa:"A.1 row 34" sign:"-" roll:"movement" doc:"(Expenses Allocated/Paid to Investment Adviser or Related Persons – Net of Offsets)"`
	PartnershipExpenses           *Money `json:"partnershipExpenses,omitempty" ilpa:"A.1 row 61" sign:"-" roll:"movement" doc:"(External Partnership Expenses - Net of Offsets, Waivers & Rebates"`
	InvestmentIncome              *Money `json:"investmentIncome,omitempty" ilpa:"A.1 row 90" sign:"±" roll:"movement" doc:"Total Investment Income"`
	NetRealizedGainLoss           *Money `json:"netRealizedGainLoss,omitempty" ilpa:"A.1 row 92" sign:"±" roll:"movement" doc:"Net Realized Gain / (Loss)"`
	NetUnrealizedGainLoss         *Money `json:"netUnrealizedGainLoss,omitempty" ilpa:"A.1 row 93" sign:"±" roll:"movement" doc:"Net Unrealized Gain / (Loss)"`
	EndingNAV                     Money  `json:"endingNav" ilpa:"A.1 row 95" sign:"±" roll:"ending" doc:"Ending NAV – Net of Accrued/Earned/Paid Carried Interest"`
	// Either sign: an accrual is negative for the LP, and its reversal when
	// values fall is positive (RT-Guide §XII signs by effect on the holder).
	CarriedInterestAccruedEarned *Money `json:"carriedInterestAccruedEarned,omitempty" ilpa:"A.1 row 100" sign:"±" roll:"memo" doc:"Carried Interest Accrued/Earned (Total)"`
	CarriedInterestPaid          *Money `json:"carriedInterestPaid,omitempty" ilpa:"A.1 row 101" sign:"+" roll:"memo" doc:"Carried Interest – Paid During the Period (input positive values)"`

	// A.2 Commitment Reconciliation (rows 108–114).
	TotalCommitment                *Money `json:"totalCommitment,omitempty" ilpa:"A.2 row 108" sign:"+" roll:"memo" doc:"Total Commitment"`
	BeginningUnfundedCommitment    *Money `json:"beginningUnfundedCommitment,omitempty" ilpa:"A.2 row 109" sign:"+" roll:"beginning" doc:"Beginning Unfunded Commitment"`
	LessContributions              *Money `json:"lessContributions,omitempty" ilpa:"A.2 row 110" sign:"-" roll:"movement" doc:"(Less Contributions)"`
	PlusRecallableDistributions    *Money `json:"plusRecallableDistributions,omitempty" ilpa:"A.2 row 111" sign:"+" roll:"movement" doc:"Plus Recallable Distributions"`
	LessExpiredReleasedCommitments *Money `json:"lessExpiredReleasedCommitments,omitempty" ilpa:"A.2 row 112" sign:"-" roll:"movement" doc:"(Less Expired/Released Commitments)"`
	OtherUnfundedAdjustment        *Money `json:"otherUnfundedAdjustment,omitempty" ilpa:"A.2 row 113" sign:"±" roll:"movement" doc:"+/- Other Unfunded Adjustment"`
	EndingUnfundedCommitment       *Money `json:"endingUnfundedCommitment,omitempty" ilpa:"A.2 row 114" sign:"+" roll:"ending" doc:"Ending Unfunded Commitment"`
}

// The sections of a capital account statement.
const (
	SectionNAV        = "A.1" // NAV Reconciliation
	SectionCommitment = "A.2" // Commitment Reconciliation
)

// CapitalLine is one declared line of a CapitalAccount.
type CapitalLine struct {
	Name    string // the JSON name: "beginningNav"
	Field   string // the Go name: "BeginningNAV"
	Section string // SectionNAV or SectionCommitment
	Row     int    // ILPA's row in the template's "Reporting Template" sheet
	Label   string // ILPA's row label, exactly
	Sign    string // "+", "-" or "±"
	Role    string // "beginning", "movement", "ending" or "memo"
	index   int
}

// Get returns the line's amount in c, or nil when it is absent.
func (l CapitalLine) Get(c *CapitalAccount) *Money {
	v := reflect.ValueOf(c).Elem().Field(l.index)
	if m, ok := v.Addr().Interface().(*Money); ok {
		return m
	}
	return v.Interface().(*Money)
}

// Set sets the line's amount in c; nil makes an optional line absent (and a
// required one zero).
func (l CapitalLine) Set(c *CapitalAccount, m *Money) {
	v := reflect.ValueOf(c).Elem().Field(l.index)
	if v.Type() == reflect.TypeFor[Money]() {
		var z Money
		if m != nil {
			z = *m
		}
		v.Set(reflect.ValueOf(z))
		return
	}
	v.Set(reflect.ValueOf(m))
}

var capitalLines = sync.OnceValue(func() []CapitalLine {
	t := reflect.TypeFor[CapitalAccount]()
	var out []CapitalLine
	for i := range t.NumField() {
		f := t.Field(i)
		ilpa := f.Tag.Get("ilpa")
		if ilpa == "" {
			continue // the period
		}
		var l CapitalLine
		section, row, _ := strings.Cut(ilpa, " row ")
		l.Row, _ = strconv.Atoi(row)
		l.Name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
		l.Field, l.Section, l.Label, l.Sign, l.Role, l.index = f.Name, section, f.Tag.Get("doc"), f.Tag.Get("sign"), f.Tag.Get("roll"), i
		if l.Row == 0 || (section != SectionNAV && section != SectionCommitment) ||
			!slices.Contains([]string{"+", "-", "±"}, l.Sign) || !slices.Contains([]string{"beginning", "movement", "ending", "memo"}, l.Role) ||
			(f.Type != reflect.TypeFor[Money]() && f.Type != reflect.TypeFor[*Money]()) {
			panic("fund: capital account line " + f.Name + " needs a Money type and ilpa, sign, roll and doc tags")
		}
		out = append(out, l)
	}
	return out
})

// CapitalLines lists the lines of a capital account statement in the
// template's order.
func CapitalLines() []CapitalLine { return capitalLines() }

// Validate checks a statement whose period ends on periodEnd (the
// document's asOf); field names it in errors ("positions[0].capitalAccount").
// It returns EINVALID, naming the first offending field, when the period
// ends before it starts, when a line has a sign ILPA's convention forbids,
// when A.2 is given without its beginning or ending unfunded commitment, or
// when a section does not roll forward exactly: the message names the
// section and the difference, which is the sum of the beginning and the
// movements less the stated ending.
func (c *CapitalAccount) Validate(field string, periodEnd Date) error {
	if c.PeriodStart.IsZero() {
		return Invalid(field+".periodStart", "is required (YYYY-MM-DD)")
	}
	if periodEnd.IsZero() {
		return Invalid("asOf", "is required (YYYY-MM-DD): it ends the capital account's period")
	}
	if periodEnd.Before(c.PeriodStart) {
		return Invalid(field+".periodStart", "the period must end on or after it starts: it starts %s but the document's asOf, its end, is %s", c.PeriodStart, periodEnd)
	}
	a2 := false
	for _, l := range CapitalLines() {
		m := l.Get(c)
		if m == nil {
			continue
		}
		if l.Section == SectionCommitment {
			a2 = true
		}
		switch {
		case l.Sign == "+" && m.Sign() < 0:
			return Invalid(field+"."+l.Name, "%s row %d %q is entered positive (ILPA's sign convention), got %s", l.Section, l.Row, l.Label, m)
		case l.Sign == "-" && m.Sign() > 0:
			return Invalid(field+"."+l.Name, "%s row %d %q is entered negative (ILPA's sign convention), got %s", l.Section, l.Row, l.Label, m)
		}
	}
	if err := c.rollForward(field, SectionNAV, "beginning NAV", "ending NAV"); err != nil {
		return err
	}
	if !a2 {
		return nil
	}
	if c.BeginningUnfundedCommitment == nil {
		return Invalid(field+".beginningUnfundedCommitment", "is required when any line of A.2 (Commitment Reconciliation) is given")
	}
	if c.EndingUnfundedCommitment == nil {
		return Invalid(field+".endingUnfundedCommitment", "is required when any line of A.2 (Commitment Reconciliation) is given")
	}
	return c.rollForward(field, SectionCommitment, "beginning unfunded commitment", "ending unfunded commitment")
}

// rollForward checks that the section's beginning plus its movements equals
// its stated ending, exactly: ILPA's formula rows (A.1 row 95, A.2 row 114)
// are plain sums because the sign of each line is carried by its amount.
func (c *CapitalAccount) rollForward(field, section, beginning, ending string) error {
	var sum, stated Money
	var endName string
	for _, l := range CapitalLines() {
		m := l.Get(c)
		if l.Section != section || m == nil {
			continue
		}
		switch l.Role {
		case "beginning", "movement":
			sum = sum.Add(*m)
		case "ending":
			stated, endName = *m, l.Name
		}
	}
	if sum.Equal(stated) {
		return nil
	}
	return Invalid(field+"."+endName, "%s does not roll forward: %s plus the movements is %s but %s is %s (difference %s)",
		section, beginning, sum, ending, stated, sum.Sub(stated))
}
