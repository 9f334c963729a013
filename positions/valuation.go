package positions

import (
	"sort"

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
	// Age is how old the statement it starts from is on the date taken;
	// nil without a statement (pooled: when no position has one).
	Age *NAVAge
}

// NAVAge is a NAV's age on the date it is taken.
type NAVAge struct {
	// Days is the days from the statement's period end to the date taken;
	// StaleAfter the last date on which the NAV is fresh (Freshness), and
	// Stale whether the date taken is after it. Pooled, they are the
	// oldest NAV's age, the earliest StaleAfter and whether any NAV is
	// stale, and StalePositions lists the positions whose NAV is stale, in
	// the order pooled.
	Days           int
	StaleAfter     fund.Date
	Stale          bool
	StalePositions []string
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
	// Called, PaidIn and Outstanding are a summary's (Figures): the calls'
	// paid-in lines, all of them, those of the calls paid, and the rest.
	// PaidInReturned is the returned paid-in lines of the distributions
	// paid, and Distributed their distributed lines. The multiples divide
	// by PaidIn − PaidInReturned, ILPA's net paid-in capital.
	Called, PaidIn, Outstanding, PaidInReturned, Distributed fund.Money
	Multiples                                                PaidInMultiples
	IRR                                                      IRR
	// Flows are the typed lines counted, by date; the terminal NAV, dated
	// AsOf, is the last flow of IRR.Flows when there is a NAV.
	Flows []PerformanceFlow
	// Reconciliations are one per statement counted, by period end.
	Reconciliations []Reconciliation
	// Documents are the versions counted, by as-of date then document.
	Documents []Source
	// Freshness is the bound the NAV's staleness was judged by.
	Freshness Freshness
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
	// As a position's (Performance), summed.
	Called, PaidIn, Outstanding, PaidInReturned, Distributed fund.Money
	Multiples                                                PaidInMultiples
	IRR                                                      IRR
}

const (
	// IRRNoNAV: no NAV is known on the date (no statement dated on or before
	// it, or a pool with a position that has none), so the IRR, which needs a
	// terminal value, is not computed.
	IRRNoNAV IRRStatus = "no_nav"
	// IRRStaleNAV: one rate was found, as with IRROK, but its terminal value
	// is a stale NAV (NAVAge.Stale; pooled, some NAV pooled is stale), so
	// the rate rests on a NAV a newer statement was due to replace.
	IRRStaleNAV IRRStatus = "stale_nav"
)

// IRRStatuses are every IRRStatus, in the order the API lists them.
func IRRStatuses() []IRRStatus {
	return []IRRStatus{IRROK, IRRStaleNAV, IRRNoFlows, IRRNoSignChange, IRRMultipleRoots, IRRNotConverged, IRRUndatedFlow, IRRNoNAV}
}

// Solved says whether the status comes with a rate found: IRROK or
// IRRStaleNAV.
func (s IRRStatus) Solved() bool { return s == IRROK || s == IRRStaleNAV }

// typedLine is one typed line of a call or a distribution among a
// position's items, dated when cash moves.
type typedLine struct {
	fund.Transaction
	date fund.Date
	item *fund.PositionItem
	call bool
}

// typedLinesOf lists the typed lines of the calls and distributions among
// items, each dated by its item's date, or its document's as-of date when
// the item has none.
func typedLinesOf(items []fund.PositionItem) []typedLine {
	var out []typedLine
	for i := range items {
		it := &items[i]
		if it.Kind != fund.CapitalCall && it.Kind != fund.Distribution {
			continue
		}
		d := it.FlowDate()
		for _, l := range it.TypedLines() {
			out = append(out, typedLine{Transaction: l, date: d, item: it, call: it.Kind == fund.CapitalCall})
		}
	}
	return out
}

// signed is a line's amount from the LP's side: money paid in negative,
// money back positive. An excluded line is signed by its item's side.
func (l typedLine) signed() fund.Money {
	if l.call {
		return fund.Money{}.Sub(l.Amount)
	}
	return l.Amount
}

// inflow says whether the line is money back that the figures count
// (distributed or returned paid-in).
func (l typedLine) inflow() bool {
	n := l.Info().Net
	return n == fund.Distributed || n == fund.PaidInReturned
}

// statementOf returns a statement item's capital account; an item read
// without one (none is stored so) counts as an account whose ending NAV is
// the item's amount.
func statementOf(it *fund.PositionItem) *fund.CapitalAccount {
	if it.CapitalAccount != nil {
		return it.CapitalAccount
	}
	return &fund.CapitalAccount{EndingNAV: it.Amount}
}

// Evaluate works out a position's performance on asOf (never zero) from
// the items its documents report on that date, each document at its latest
// version dated on or before it (what Analytics.Performance reads), its
// NAV's staleness judged by fresh. Items of other positions must not be
// passed. The conventions are in
// docs/analytics.md, "Performance: NAV, net IRR and multiples":
//
//   - the flows are the typed lines of the calls and distributions paid
//     (completed) and dated on or before asOf, dated by the item's date (a
//     call's due date, a distribution's payment date) or else its
//     document's as-of date, and signed from the LP's side: a pending item
//     is not cash yet, nor one dated after asOf. Excluded lines (carry,
//     clawback) are listed but counted in no figure;
//   - Called is the paid-in lines of every call counted, PaidIn those of
//     the calls paid, Outstanding the rest; PaidInReturned the returned
//     lines and Distributed the distributed lines (gross of withholding) of
//     the distributions paid; the multiples divide by PaidIn −
//     PaidInReturned;
//   - the NAV is the ending NAV of the statement with the latest period end
//     on or before asOf, rolled forward by the lines dated after that period
//     end; its age is the days from that period end to asOf, and it is
//     stale when asOf is after fresh.LastFresh of the period end;
//   - the IRR solves the counted flows and the NAV dated asOf; with no NAV
//     it is not computed (IRRNoNAV), and a rate found on a stale NAV is
//     IRRStaleNAV;
//   - every statement counted is reconciled to the notices of its period.
func Evaluate(pos string, asOf fund.Date, items []fund.PositionItem, fresh Freshness) Performance {
	p := Performance{PositionID: pos, AsOf: asOf, Freshness: fresh}
	docs := map[string]Source{}
	var statements []*fund.PositionItem
	var latest *fund.PositionItem
	for i := range items {
		it := &items[i]
		p.FundID, p.InvestorID, p.Currency = it.FundID, it.InvestorID, it.Currency
		docs[it.DocumentID] = Source{DocumentID: it.DocumentID, Version: it.DocumentVersion, AsOf: it.AsOf}
		if it.Kind == fund.Statement && it.AsOf.Compare(asOf) <= 0 {
			statements = append(statements, it)
			if latest == nil || moreRecent(it, latest) {
				latest = it
			}
		}
	}
	all := typedLinesOf(items)
	var lines []typedLine // the lines of the items paid by asOf: cash that moved
	for _, l := range all {
		if l.Info().Net == fund.PaidIn {
			p.Called = p.Called.Add(l.Amount)
		}
		if l.item.Paid() && l.date.Compare(asOf) <= 0 {
			lines = append(lines, l)
		}
	}
	var flows []Flow
	for _, l := range lines {
		p.Flows = append(p.Flows, PerformanceFlow{Date: l.date, Type: l.Type, Net: l.Info().Net, Amount: l.signed(),
			DocumentID: l.item.DocumentID, Version: l.item.DocumentVersion, PositionID: l.item.PositionID, Status: l.item.Status})
		switch l.Info().Net {
		case fund.PaidIn:
			p.PaidIn = p.PaidIn.Add(l.Amount)
		case fund.PaidInReturned:
			p.PaidInReturned = p.PaidInReturned.Add(l.Amount)
		case fund.Distributed:
			p.Distributed = p.Distributed.Add(l.Amount)
		default:
			continue
		}
		flows = append(flows, Flow{Date: l.date, Amount: l.signed()})
	}
	p.Outstanding = p.Called.Sub(p.PaidIn)
	sortFlows(p.Flows)

	p.NAV = navOf(latest, lines, asOf, fresh)
	p.Multiples = Multiples(NetPaidIn(p.PaidIn, p.PaidInReturned), p.Distributed, p.NAV.Value)
	p.IRR = irrOf(flows, p.NAV, asOf)

	sort.Slice(statements, func(i, j int) bool {
		a, b := statements[i], statements[j]
		if c := a.AsOf.Compare(b.AsOf); c != 0 {
			return c < 0
		}
		return moreRecent(b, a)
	})
	for _, st := range statements {
		p.Reconciliations = append(p.Reconciliations, reconcile(st, all, items))
	}
	p.Documents = sortedSources(docs)
	return p
}

// sortFlows orders flows by date, then calls before distributions, then by
// document and position; the lines of one item keep their order.
func sortFlows(flows []PerformanceFlow) {
	sort.SliceStable(flows, func(i, j int) bool {
		a, b := flows[i], flows[j]
		if c := a.Date.Compare(b.Date); c != 0 {
			return c < 0
		}
		if ac, bc := isCall(a.Type), isCall(b.Type); ac != bc {
			return ac
		}
		if a.DocumentID != b.DocumentID {
			return a.DocumentID < b.DocumentID
		}
		return a.PositionID < b.PositionID
	})
}

func isCall(t fund.TransactionType) bool {
	d, _ := fund.TransactionTypeOf(t)
	return d.On == fund.OnCall
}

// navOf rolls the statement st (nil: none) forward to asOf by the lines
// dated after its period end, and judges its age by fresh.
func navOf(st *fund.PositionItem, lines []typedLine, asOf fund.Date, fresh Freshness) NAV {
	if st == nil {
		return NAV{Status: NAVNoStatement}
	}
	ending := statementOf(st).EndingNAV
	nav := NAV{Status: NAVStatement, Statement: sourceOf(st), StatementNAV: &ending}
	for _, l := range lines {
		if l.date.Compare(st.AsOf) <= 0 || l.date.Compare(asOf) > 0 {
			continue
		}
		switch {
		case l.Info().Net == fund.PaidIn:
			nav.ContributionsAfter = nav.ContributionsAfter.Add(l.Amount)
		case l.inflow():
			nav.DistributionsAfter = nav.DistributionsAfter.Add(l.Amount)
		}
	}
	if st.AsOf.Compare(asOf) != 0 {
		nav.Status = NAVRolledForward
	}
	value := ending.Add(nav.ContributionsAfter).Sub(nav.DistributionsAfter)
	nav.Value = &value
	nav.Age = ageOf(st, asOf, fresh)
	return nav
}

// irrOf solves flows with the terminal value nav dated asOf: none without a
// NAV's value (IRRNoNAV), and a rate found on a stale NAV is IRRStaleNAV.
func irrOf(flows []Flow, nav NAV, asOf fund.Date) IRR {
	if nav.Value == nil {
		return IRR{Status: IRRNoNAV}
	}
	r := XIRR(append(flows, Flow{Date: asOf, Amount: *nav.Value})).GIPS()
	if r.Status == IRROK && nav.Age != nil && nav.Age.Stale {
		r.Status = IRRStaleNAV
	}
	return r
}

// reconcile compares the statement st with the lines dated in its period
// and, when it has section A.2, its ending unfunded commitment with the one
// computed from the commitment and the lines dated up to its period end.
// items are the position's items, for the commitment when the statement
// states none.
func reconcile(st *fund.PositionItem, lines []typedLine, items []fund.PositionItem) Reconciliation {
	ca := statementOf(st)
	r := Reconciliation{Statement: *sourceOf(st), PositionID: st.PositionID, PeriodStart: ca.PeriodStart, PeriodEnd: st.AsOf}
	var contributions, distributions, change fund.Money
	for _, l := range lines {
		if l.date.Compare(r.PeriodEnd) > 0 {
			continue
		}
		change = change.Add(fund.UnfundedChange([]fund.Transaction{l.Transaction}))
		if l.date.Before(r.PeriodStart) {
			continue
		}
		switch {
		case l.Info().Net == fund.PaidIn:
			contributions = contributions.Add(l.Amount)
		case l.inflow():
			distributions = distributions.Add(l.Amount)
		}
	}
	r.Contributions = compared(orZero(ca.Contributions), contributions)
	r.Distributions = compared(fund.Money{}.Sub(orZero(ca.Distributions)), distributions)
	if ca.EndingUnfundedCommitment == nil {
		return r
	}
	commitment := ca.TotalCommitment
	if commitment == nil {
		var from *fund.PositionItem
		for i := range items {
			it := &items[i]
			if it.Kind == fund.UnfundedCommitment && it.Commitment != nil && it.AsOf.Compare(r.PeriodEnd) <= 0 &&
				(from == nil || moreRecent(it, from)) {
				from = it
			}
		}
		if from == nil {
			return r
		}
		commitment = from.Commitment
	}
	u := compared(*ca.EndingUnfundedCommitment, commitment.Add(change))
	r.EndingUnfunded = &u
	return r
}

func compared(statement, notices fund.Money) Compared {
	return Compared{Statement: statement, Notices: notices, Difference: statement.Sub(notices)}
}

// sortedSources lists the document versions by as-of date, then document.
func sortedSources(docs map[string]Source) []Source {
	out := make([]Source, 0, len(docs))
	for _, d := range docs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if c := a.AsOf.Compare(b.AsOf); c != 0 {
			return c < 0
		}
		return a.DocumentID < b.DocumentID
	})
	return out
}

// Pool pools the performances of positions held in currency (callers pass
// one currency's) on asOf, as ILPA's fund-level net IRR and TVPI do: their
// counted flows together, paid-in and distributed summed, and the sum of
// their NAVs as the terminal value when every position has one (rolled
// forward if any is). When a position has none the NAV is incomplete: no
// value, DPI alone, and no IRR (IRRNoNAV). No positions pool to no NAV.
// A rate found while some NAV pooled is stale is IRRStaleNAV.
// The pooled NAV's age is its oldest NAV's, its StaleAfter the earliest,
// and it names the positions whose NAV is stale, in their order, also when
// it is incomplete.
func Pool(currency string, asOf fund.Date, perfs []Performance) PooledPerformance {
	out := PooledPerformance{Currency: currency, AsOf: asOf, Positions: len(perfs)}
	var flows []Flow
	var nav fund.Money
	status := NAVStatement
	var age *NAVAge // of the NAVs pooled
	for _, p := range perfs {
		out.Called, out.PaidIn, out.Outstanding = out.Called.Add(p.Called), out.PaidIn.Add(p.PaidIn), out.Outstanding.Add(p.Outstanding)
		out.PaidInReturned, out.Distributed = out.PaidInReturned.Add(p.PaidInReturned), out.Distributed.Add(p.Distributed)
		for _, f := range p.Flows {
			if f.Net != fund.Excluded {
				flows = append(flows, Flow{Date: f.Date, Amount: f.Amount})
			}
		}
		if p.NAV.Value == nil {
			out.PositionsWithoutNAV++
			continue
		}
		nav = nav.Add(*p.NAV.Value)
		if a := p.NAV.Age; a != nil {
			if age == nil {
				age = &NAVAge{StaleAfter: a.StaleAfter}
			}
			age.Days = max(age.Days, a.Days)
			if !a.StaleAfter.IsZero() && (age.StaleAfter.IsZero() || a.StaleAfter.Before(age.StaleAfter)) {
				age.StaleAfter = a.StaleAfter
			}
			if a.Stale {
				age.Stale = true
				age.StalePositions = append(age.StalePositions, p.PositionID)
			}
		}
		out.NAV.ContributionsAfter = out.NAV.ContributionsAfter.Add(p.NAV.ContributionsAfter)
		out.NAV.DistributionsAfter = out.NAV.DistributionsAfter.Add(p.NAV.DistributionsAfter)
		if p.NAV.Status == NAVRolledForward {
			status = NAVRolledForward
		}
	}
	switch {
	case len(perfs) == 0:
		out.NAV = NAV{Status: NAVNoStatement}
	case out.PositionsWithoutNAV > 0:
		out.NAV = NAV{Status: NAVIncomplete}
	default:
		out.NAV.Status, out.NAV.Value = status, &nav
	}
	out.NAV.Age = age
	out.Multiples = Multiples(NetPaidIn(out.PaidIn, out.PaidInReturned), out.Distributed, out.NAV.Value)
	out.IRR = irrOf(flows, out.NAV, asOf)
	return out
}
