package positions

import (
	"github.com/fundsvc/fundsvc/fund"
)

// A position's performance on a date: its NAV (from capital account
// statements, rolled forward by later flows), the flows that net IRR and
// the multiples count (by ILPA transaction type), and the reconciliation of
// each statement to the notices. The conventions are in docs/analytics.md,
// "Performance: NAV, net IRR and multiples".

// NAVStatus says where a NAV came from.
type NAVStatus string

const (
	// NAVStatement: the ending NAV of a statement whose period ends on the
	// date asked for.
	NAVStatement NAVStatus = "statement"
	// NAVRolledForward: the ending NAV of the latest statement before the
	// date, plus the contributions and less the distributions dated after
	// its period end, up to the date.
	NAVRolledForward NAVStatus = "rolled_forward"
	// NAVNoStatement: no statement is dated on or before the date, so no
	// NAV (nor TVPI, RVPI or IRR).
	NAVNoStatement NAVStatus = "no_statement"
	// NAVIncomplete: pooled figures where some positions have no NAV; the
	// NAV is absent rather than a partial sum.
	NAVIncomplete NAVStatus = "incomplete"
)

// NAV is a position's (or pooled positions') net asset value on a date.
type NAV struct {
	Status NAVStatus
	// Value is nil unless Status is NAVStatement or NAVRolledForward.
	Value *fund.Money
	// Statement is the statement it starts from, and StatementNAV that
	// statement's ending NAV (positions only).
	Statement    *Source
	StatementNAV *fund.Money
	// ContributionsAfter and DistributionsAfter are what rolled it forward
	// (both positive amounts): Value = StatementNAV + ContributionsAfter −
	// DistributionsAfter.
	ContributionsAfter, DistributionsAfter fund.Money
}

// PerformanceFlow is one dated typed line that net IRR and the multiples
// count, signed from the LP's side (contributions negative), with the item
// it comes from.
type PerformanceFlow struct {
	Date       fund.Date // a call's due date, a distribution's payment date, or else the document's as-of date
	Type       fund.TransactionType
	Net        fund.NetTreatment
	Amount     fund.Money // signed from the LP's side
	DocumentID string
	Version    int
	PositionID string
	Status     fund.Status
}

// Reconciliation compares one statement with the notices of its period.
type Reconciliation struct {
	Statement   Source
	PositionID  string
	PeriodStart fund.Date
	PeriodEnd   fund.Date
	// Contributions: the statement's A.1 row 13 (absent counts as zero)
	// against the paid-in lines of the calls dated in the period;
	// Difference = Statement − Notices.
	Contributions Compared
	// Distributions: minus the statement's A.1 row 14 (a positive
	// amount) against the distributed and returned lines of the
	// distributions dated in the period.
	Distributions Compared
	// EndingUnfunded: the statement's A.2 row 114 against the unfunded
	// commitment computed at the period end (commitment less the lines that
	// reduce it plus those that increase it, dated up to the period end);
	// nil when the statement has no A.2 or no commitment is known.
	EndingUnfunded *Compared
}

// Compared is a stated figure against the one computed from notices.
type Compared struct {
	Statement, Notices, Difference fund.Money
}

// Performance is a position's performance on a date.
type Performance struct {
	PositionID, FundID, InvestorID, Currency string
	AsOf                                     fund.Date
	NAV                                      NAV
	// PaidIn is the paid-in lines less the returned ones (ILPA's net TVPI
	// denominator, a positive amount); Distributed the distributed lines.
	PaidIn, Distributed fund.Money
	Multiples           PaidInMultiples
	IRR                 IRR
	// Flows are the typed lines counted, by date; the terminal NAV, dated
	// AsOf, is the last flow of IRR.Flows when there is a NAV.
	Flows []PerformanceFlow
	// Reconciliations are one per statement counted, by period end.
	Reconciliations []Reconciliation
	// Documents are the versions counted, by as-of date then document.
	Documents []Source
}

// PooledPerformance pools the flows and NAVs of several positions in one
// currency, as ILPA's fund-level net IRR and TVPI do.
type PooledPerformance struct {
	Currency string
	AsOf     fund.Date
	// Positions counts the positions pooled; PositionsWithoutNAV those with
	// no statement, which leave NAV incomplete.
	Positions, PositionsWithoutNAV int
	NAV                            NAV
	PaidIn, Distributed            fund.Money
	Multiples                      PaidInMultiples
	IRR                            IRR
}
