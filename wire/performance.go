package wire

import (
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/shopspring/decimal"
)

// The performance answers: a position's NAV, flows, multiples and net IRR
// (positions.Performance), pooled per currency for an investor or a fund,
// and the reconciliation of statements to notices.

// Conventions states, in every performance answer, the rules its figures
// follow (docs/analytics.md, "Performance: NAV, net IRR and multiples").
type Conventions struct {
	FlowDates string `json:"flowDates" doc:"How flows are dated and which documents count."`
	PaidIn    string `json:"paidIn" doc:"What is called, paid in and outstanding, and which items are cash."`
	Netting   string `json:"netting" doc:"What is netted, and what is not."`
	NAV       string `json:"nav" doc:"Where the NAV comes from and how it is rolled forward."`
	NAVAge    string `json:"navAge" doc:"How the NAV's age is counted and when the NAV is stale: the bound this server applies (FUNDSVC_NAV_STALE_AFTER, by default one quarter plus 45 days) and how a quarter is counted."`
	IRR       string `json:"irr" doc:"How the net IRR is computed, and when it is annualised."`
	Rounding  string `json:"rounding" doc:"How figures are rounded."`
}

// ConventionsFor is the one statement of the conventions, with the NAV
// staleness bound f.
func ConventionsFor(f positions.Freshness) Conventions {
	c := performanceConventions
	c.NAVAge = f.Convention()
	return c
}

// performanceConventions are the conventions but navAge, which states the
// bound configured.
var performanceConventions = Conventions{
	FlowDates: "A call's typed lines are dated by its due date, a distribution's by its payment date, either by its document's asOf when it has none. Each document counts at its latest version dated on or before asOf.",
	PaidIn:    "Called is every call counted, pending or completed. Paid-in is what the completed calls dated on or before asOf have paid in (ILPA's contributions); outstanding is called less paid-in. Only completed items dated on or before asOf are cash: they alone are paid in, distributed, rolled into the NAV and counted by DPI, RVPI, TVPI and the IRR. The multiples divide by paid-in less paidInReturned (returns of excess capital called).",
	Netting:   "Paid-in and distributed are gross (no netting of calls against distributions). The IRR sums the flows of one date into one, as a spreadsheet's XIRR does.",
	NAV:       "The ending NAV of the latest capital account statement whose period ends on or before asOf, plus the paid-in and less the distributed lines dated after its period end up to asOf (status rolled_forward); absent with status no_statement when there is none.",
	IRR:       "Net IRR: XIRR over the typed lines counted by ILPA's net methodology (contributions negative, distributions and returns of excess capital positive) and the NAV as a terminal value dated asOf, actual/365 from the first date, solved by bracketing and bisection to 1e-10; when there is no single root the status says why and no rate is given; a rate found on a stale NAV has status stale_nav. A span of less than a year (365 days) from the first flow to asOf is not annualised (the GIPS standards): the answer gives its cumulativeReturn and no rate.",
	Rounding:  "Money is exact. DPI, RVPI and TVPI are exact quotients rounded once, half away from zero, to 6 places, with RVPI = TVPI − DPI; the IRR and the cumulative return are rounded half away from zero to 6 places (0.123457 is 12.3457%).",
}

type NAV struct {
	Status             string          `json:"status" doc:"'statement': a statement's period ends on 'asOf'; 'rolled_forward': the latest statement before 'asOf', plus the paid-in and less the distributed lines dated after it; 'no_statement': no statement on or before 'asOf', so no NAV; 'incomplete' (pooled): some position has no NAV, so the pool has none."`
	Value              *fund.Money     `json:"value,omitempty" doc:"Absent without a statement (or, pooled, when incomplete)."`
	Statement          *DocumentSource `json:"statement,omitempty" doc:"The statement the NAV starts from (positions only)."`
	StatementNAV       *fund.Money     `json:"statementNav,omitempty" doc:"That statement's ending NAV (A.1 row 95)."`
	ContributionsAfter *fund.Money     `json:"contributionsAfter,omitempty" doc:"The paid-in lines paid after the statement's period end, up to 'asOf', added to it."`
	DistributionsAfter *fund.Money     `json:"distributionsAfter,omitempty" doc:"The distributed and returned lines paid after the statement's period end, up to 'asOf', subtracted from it."`
	AgeDays            *int            `json:"ageDays,omitempty" doc:"The days from the period end of the statement the NAV starts from to 'asOf' (0 when status is 'statement'); pooled, the oldest NAV's. Absent without a statement (conventions.navAge)."`
	StaleAfter         string          `json:"staleAfter,omitempty" doc:"The last 'asOf' on which this NAV is fresh: the statement's period end plus the bound conventions.navAge states; pooled, the earliest of the NAVs'. Absent without a statement."`
	Stale              *bool           `json:"stale,omitempty" doc:"Whether 'asOf' is after 'staleAfter': a newer statement was due, and the NAV rolled forward from an old one is still answered and counted; pooled, whether any NAV is. Absent without a statement."`
	StalePositions     []string        `json:"stalePositions,omitempty" doc:"Pooled only: the positions whose NAV is stale, by position ID; absent when none is."`
}

func navOf(n positions.NAV) NAV {
	w := NAV{Status: string(n.Status), Value: n.Value, Statement: SourceOf(n.Statement), StatementNAV: n.StatementNAV}
	if n.Statement != nil {
		c, d := n.ContributionsAfter, n.DistributionsAfter
		w.ContributionsAfter, w.DistributionsAfter = &c, &d
	}
	if a := n.Age; a != nil {
		days, stale := a.Days, a.Stale
		w.AgeDays, w.StaleAfter, w.Stale, w.StalePositions = &days, a.StaleAfter.String(), &stale, a.StalePositions
	}
	return w
}

// DatedAmount is one flow of an IRR: the flows of one date netted.
type DatedAmount struct {
	EffectiveDate string     `json:"effectiveDate" doc:"The date of the flows netted: their effective date."`
	Amount        fund.Money `json:"amount" doc:"The flows of the date netted, signed from the investor's side: contributions negative, distributions and the terminal NAV positive."`
}

type IRR struct {
	Rate             string        `json:"rate,omitempty" doc:"The annual rate, rounded half away from zero to 6 places ('0.123457' is 12.3457%); only with status 'ok' or 'stale_nav' and a span of a year or more ('annualised'): a shorter span's return is not annualised (GIPS)."`
	CumulativeReturn string        `json:"cumulativeReturn,omitempty" doc:"The return over the whole span at the rate found: (1 + rate)^(days/365) − 1."`
	Annualised       bool          `json:"annualised" doc:"Whether the span is a year or more, so that the rate is given."`
	Days             int           `json:"days" doc:"The span, in days, from the first flow to the last (the terminal NAV's date)."`
	Status           string        `json:"status" doc:"'ok': one root; 'stale_nav': one root, but the terminal NAV is stale (nav.stale; pooled, some NAV pooled is), so the rate rests on a NAV a newer statement was due to replace; 'no_flows'; 'no_sign_change': no root; 'multiple_roots'; 'not_converged': a root outside −99.999999% to 1,000,000% a year; 'undated_flow'; 'no_nav': no terminal value."`
	Flows            []DatedAmount `json:"flows" doc:"The flows solved, netted per date, in date order; with a NAV, the last is the terminal value dated 'asOf'."`
}

func irrOf(r positions.IRR) IRR {
	w := IRR{Status: string(r.Status), Rate: fixed(r.Rate, positions.IRRScale), CumulativeReturn: fixed(r.CumulativeReturn, positions.IRRScale),
		Annualised: r.Annualised, Days: r.Days, Flows: make([]DatedAmount, 0, len(r.Flows))}
	for _, f := range r.Flows {
		w.Flows = append(w.Flows, DatedAmount{EffectiveDate: f.Date.String(), Amount: f.Amount})
	}
	return w
}

func fixed(d *decimal.Decimal, places int32) string {
	if d == nil {
		return ""
	}
	return d.StringFixed(places)
}

// Amounts are a performance's capital called, paid in and still
// outstanding, returned and distributed (see the conventions' paidIn).
type Amounts struct {
	Called         fund.Money `json:"called" doc:"Capital called: the paid-in lines of every call counted, pending or completed."`
	PaidIn         fund.Money `json:"paidIn" doc:"Capital paid in (ILPA's contributions, inside and outside commitment): the paid-in lines of the calls paid (completed and dated on or before asOf)."`
	Outstanding    fund.Money `json:"outstanding" doc:"called − paidIn: called and not yet paid in."`
	PaidInReturned fund.Money `json:"paidInReturned" doc:"The returned paid-in lines (returns of excess capital called) of the distributions paid; the multiples divide by paidIn − paidInReturned."`
	Distributed    fund.Money `json:"distributed" doc:"The distributed lines of the distributions paid (completed and dated on or before asOf), gross of withholding."`
}

// Multiples are DPI, RVPI and TVPI, each absent when the status says so.
type Multiples struct {
	DPI    string `json:"dpi,omitempty" doc:"distributed ÷ (paidIn − paidInReturned), rounded half away from zero to 6 places; absent when nothing is left paid in."`
	RVPI   string `json:"rvpi,omitempty" doc:"tvpi − dpi, so that tvpi = dpi + rvpi exactly; absent without a NAV."`
	TVPI   string `json:"tvpi,omitempty" doc:"(distributed + NAV) ÷ (paidIn − paidInReturned), rounded half away from zero to 6 places; absent without a NAV."`
	Status string `json:"multiplesStatus" doc:"'ok': all three; 'no_nav': DPI only; 'no_paid_in': none."`
}

func multiplesOf(m positions.PaidInMultiples) Multiples {
	return Multiples{DPI: fixed(m.DPI, positions.MultipleScale), RVPI: fixed(m.RVPI, positions.MultipleScale),
		TVPI: fixed(m.TVPI, positions.MultipleScale), Status: string(m.Status)}
}

type PerformanceFlow struct {
	EffectiveDate   string     `json:"effectiveDate" doc:"When the money moved: the call's due date or the distribution's payment date, else its document's asOf."`
	TransactionType string     `json:"transactionType" doc:"The line's ILPA transaction type."`
	NetTreatment    string     `json:"netTreatment" doc:"How net IRR and TVPI count it: paid_in, paid_in_returned, distributed or excluded."`
	Amount          fund.Money `json:"amount" doc:"The line's amount, signed from the investor's side: contributions negative."`
	DocumentID      string     `json:"documentId" doc:"The document that reports the item."`
	Version         int        `json:"version" doc:"The version of that document counted."`
	PositionID      string     `json:"positionId" doc:"The position."`
	Status          string     `json:"status" doc:"The item's status: completed, as only paid items are flows."`
}

type Compared struct {
	Statement  fund.Money `json:"statement" doc:"The figure the statement states."`
	Notices    fund.Money `json:"notices" doc:"The figure computed from the notices."`
	Difference fund.Money `json:"difference" doc:"statement − notices; \"0.00\" when they reconcile."`
}

type Reconciliation struct {
	Statement      DocumentSource `json:"statement" doc:"The statement reconciled."`
	PositionID     string         `json:"positionId" doc:"The position."`
	PeriodStart    string         `json:"periodStart" doc:"The first day of the statement's period."`
	PeriodEnd      string         `json:"periodEnd" doc:"The statement's document's as-of date."`
	Contributions  Compared       `json:"contributions" doc:"A.1 row 13 (absent counts as zero) against the paid-in lines dated in the period."`
	Distributions  Compared       `json:"distributions" doc:"Minus A.1 row 14 (a positive amount) against the distributed and returned lines dated in the period."`
	EndingUnfunded *Compared      `json:"endingUnfunded,omitempty" doc:"A.2 row 114 against the commitment (A.2 row 108, else the latest unfunded commitment's) plus each line's effect on unfunded commitment up to the period end; absent when the statement has no A.2 or no commitment is known."`
}

func reconciliationsOf(rs []positions.Reconciliation) []Reconciliation {
	return renderAll(rs, func(r positions.Reconciliation) Reconciliation {
		w := Reconciliation{Statement: *SourceOf(&r.Statement), PositionID: r.PositionID, PeriodStart: r.PeriodStart.String(),
			PeriodEnd: r.PeriodEnd.String(), Contributions: Compared(r.Contributions), Distributions: Compared(r.Distributions)}
		if r.EndingUnfunded != nil {
			c := Compared(*r.EndingUnfunded)
			w.EndingUnfunded = &c
		}
		return w
	})
}

// PositionPerformance is a position's performance on a date.
type PositionPerformance struct {
	PositionID string `json:"positionId" doc:"The position."`
	FundID     string `json:"fundId" doc:"The position's fund."`
	InvestorID string `json:"investorId" doc:"The position's investor."`
	Currency   string `json:"currency" doc:"The position's currency."`
	AsOf       string `json:"asOf" doc:"The date taken: 'asOf' as asked, or today (UTC)."`
	NAV        NAV    `json:"nav" doc:"The position's NAV on asOf."`
	Amounts
	Multiples
	IRR             IRR               `json:"irr" doc:"The position's net IRR on asOf."`
	Flows           []PerformanceFlow `json:"flows" doc:"Every typed line of the items paid (completed and dated on or before asOf), the excluded ones listed too, by date, calls first, then by document."`
	Reconciliations []Reconciliation  `json:"reconciliations" doc:"One per statement counted, by period end."`
	Documents       []DocumentSource  `json:"documents" doc:"The document versions counted, by as-of date, then document ID."`
	// Conventions are stated once per answer: here for one position
	// (PerformanceOf), at the top of an investor's answer.
	Conventions *Conventions `json:"conventions,omitempty" doc:"Present on '/v1/positions/{positionId}/performance'; an investor's answer states them once, at its top level."`
	Basis       *Basis       `json:"basis,omitempty" doc:"What the performance was read on; present on '/v1/positions/{positionId}/performance' (an investor's answer lists its positions without it)."`
}

// PerformanceOf is a position's performance with its conventions.
func PerformanceOf(p positions.Performance) PositionPerformance {
	w := positionPerformanceOf(p)
	c := ConventionsFor(p.Freshness)
	w.Conventions = &c
	return w
}

// positionPerformanceOf is a position's performance without conventions,
// as an investor's answer lists it.
func positionPerformanceOf(p positions.Performance) PositionPerformance {
	w := PositionPerformance{PositionID: p.PositionID, FundID: p.FundID, InvestorID: p.InvestorID, Currency: p.Currency,
		AsOf: p.AsOf.String(), NAV: navOf(p.NAV), Amounts: Amounts{p.Called, p.PaidIn, p.Outstanding, p.PaidInReturned, p.Distributed},
		Multiples: multiplesOf(p.Multiples), IRR: irrOf(p.IRR), Flows: make([]PerformanceFlow, 0, len(p.Flows)),
		Reconciliations: reconciliationsOf(p.Reconciliations), Documents: sourcesOf(p.Documents)}
	for _, f := range p.Flows {
		w.Flows = append(w.Flows, PerformanceFlow{EffectiveDate: f.Date.String(), TransactionType: string(f.Type), NetTreatment: string(f.Net), Amount: f.Amount,
			DocumentID: f.DocumentID, Version: f.Version, PositionID: f.PositionID, Status: string(f.Status)})
	}
	return w
}

// PooledPerformance is several positions' performance in one currency,
// their flows and NAVs pooled.
type PooledPerformance struct {
	Currency            string `json:"currency" doc:"The currency of the positions pooled."`
	Positions           int    `json:"positions" doc:"The positions pooled."`
	PositionsWithoutNAV int    `json:"positionsWithoutNav" doc:"Pooled positions that have no NAV on the date; when any, the pooled NAV is 'incomplete'."`
	NAV                 NAV    `json:"nav" doc:"The positions' NAVs summed: absent (incomplete) when one has none."`
	Amounts
	Multiples
	IRR IRR `json:"irr" doc:"The net IRR of the pooled flows, with the pooled NAV as the terminal value."`
}

func pooledOf(p positions.PooledPerformance) PooledPerformance {
	return PooledPerformance{Currency: p.Currency, Positions: p.Positions, PositionsWithoutNAV: p.PositionsWithoutNAV,
		NAV: navOf(p.NAV), Amounts: Amounts{p.Called, p.PaidIn, p.Outstanding, p.PaidInReturned, p.Distributed}, Multiples: multiplesOf(p.Multiples), IRR: irrOf(p.IRR)}
}

// InvestorPerformance is a page of an investor's positions' performance,
// pooled per currency over the page's positions.
type InvestorPerformance struct {
	InvestorID  string                `json:"investorId" doc:"The investor."`
	AsOf        string                `json:"asOf" doc:"The date of the figures."`
	Positions   []PositionPerformance `json:"positions" doc:"One page of the investor's positions' performance, by position ID."`
	Totals      []PooledPerformance   `json:"totals" doc:"One entry per currency, by currency, over this page's positions."`
	Next        string                `json:"next,omitempty" doc:"Opaque cursor of the next page of positions; absent on the last page."`
	Conventions Conventions           `json:"conventions" doc:"The rules the figures follow."`
	Basis       Basis                 `json:"basis" doc:"What the page was read on: each document at its latest version committed at or before basis.knownAt and dated on or before basis.asOf. A later page of a read with knownAt is read on its first page's basis, which its cursor pins; one of a read without it reads the latest versions."`
}

func InvestorPerformanceOf(p positions.InvestorPerformance) InvestorPerformance {
	return InvestorPerformance{InvestorID: p.InvestorID, AsOf: p.AsOf.String(), Positions: renderAll(p.Positions, positionPerformanceOf),
		Totals: renderAll(p.Totals, pooledOf), Conventions: ConventionsFor(p.Freshness)}
}

// FundPerformance is a fund's positions' performance pooled per currency.
type FundPerformance struct {
	FundID      string              `json:"fundId" doc:"The fund."`
	AsOf        string              `json:"asOf" doc:"The date of the figures."`
	Positions   int                 `json:"positions" doc:"The positions pooled: the fund's registered positions that some document reports."`
	Currencies  []PooledPerformance `json:"currencies" doc:"The pooled figures, one per currency the positions are held in."`
	Conventions Conventions         `json:"conventions" doc:"The rules the figures follow."`
	Basis       Basis               `json:"basis" doc:"What the answer was read on: each document at its latest version committed at or before basis.knownAt and dated on or before basis.asOf."`
}

func FundPerformanceOf(p positions.FundPerformance) FundPerformance {
	return FundPerformance{FundID: p.FundID, AsOf: p.AsOf.String(), Positions: p.Positions, Currencies: renderAll(p.Currencies, pooledOf),
		Conventions: ConventionsFor(p.Freshness)}
}

// DocumentReconciliation is a page of a document's statements, each
// reconciled with the notices of its period.
type DocumentReconciliation struct {
	DocumentID      string           `json:"documentId" doc:"The document."`
	Version         int              `json:"version" doc:"The document's latest version (with knownAt, its version known then), whose statements these are."`
	Reconciliations []Reconciliation `json:"reconciliations" doc:"One page of the document's statements, each reconciled with the notices of its period."`
	Next            string           `json:"next,omitempty" doc:"Opaque cursor of the next page of statements; absent on the last page."`
	Basis           Basis            `json:"basis" doc:"What the page was read on: the document's version known at basis.knownAt (its latest committed at or before it), and the notices as known then. asOf is null: this route takes none. A later page of a read with knownAt is read on its first page's basis, which its cursor pins; one of a read without it reads the latest versions."`
}

func DocumentReconciliationOf(r positions.DocumentReconciliation, version int) DocumentReconciliation {
	return DocumentReconciliation{DocumentID: r.DocumentID, Version: version, Reconciliations: reconciliationsOf(r.Reconciliations)}
}
