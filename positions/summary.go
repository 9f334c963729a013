package positions

import (
	"sort"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/shopspring/decimal"
)

// The arithmetic of positions: pure functions over the items a position's
// documents report. The reads that gather them are in read.go.

// ByStatus is an amount split by the status of the items that add up to it.
type ByStatus struct {
	Total, Pending, Completed fund.Money
}

func (b *ByStatus) add(s fund.Status, m fund.Money) {
	b.Total = b.Total.Add(m)
	switch s {
	case fund.StatusPending:
		b.Pending = b.Pending.Add(m)
	case fund.StatusCompleted:
		b.Completed = b.Completed.Add(m)
	}
}

func (b *ByStatus) addAll(o ByStatus) {
	b.Total, b.Pending, b.Completed = b.Total.Add(o.Total), b.Pending.Add(o.Pending), b.Completed.Add(o.Completed)
}

// Source is one document version that figures came from.
type Source struct {
	DocumentID string
	Version    int
	AsOf       fund.Date
}

// Figures are a position's money, or the sum of several positions' in one
// currency.
type Figures struct {
	Currency string
	// Commitment is the total commitment, as the most recent report of it
	// states it (see Summarize); nil when none does.
	Commitment *fund.Money
	// Called is the capital the calls counted call, pending or completed.
	// PaidIn is what they have paid in: the completed calls, each due on or
	// before the date (any, when the summary has none). Outstanding is
	// Called − PaidIn, called and not yet paid in.
	Called, PaidIn, Outstanding fund.Money
	// PaidInReturned is the paid-in capital that distributions paid back
	// (their typed lines of ILPA's returns of excess capital called), on
	// the same terms as PaidIn.
	PaidInReturned fund.Money
	// Distributed is gross; Withholding the tax withheld from it;
	// DistributedNet what reached the investor (gross − withholding).
	Distributed, Withholding, DistributedNet ByStatus
	// Recallable is the part of the distributions that may be called again:
	// their typed lines that increase unfunded commitment.
	Recallable fund.Money
	// UnfundedReported is the most recently reported unfunded commitment
	// (see Summarize); nil when none is reported.
	UnfundedReported *fund.Money
	// UnfundedComputed is Commitment plus the net effect of the calls' and
	// distributions' typed lines on it (fund.UnfundedChange: less the lines
	// that reduce it, plus those that increase it; with only today's line
	// items, Commitment − Called + Recallable), and
	// UnfundedDifference is UnfundedReported − UnfundedComputed; each is nil
	// when a figure it needs is.
	UnfundedComputed, UnfundedDifference *fund.Money
	// DPI is the one DPI of the API, as a position's performance computes
	// it (Multiples): the distributed lines of the distributions paid, as
	// PaidIn is, divided by PaidIn − PaidInReturned; nil when nothing was
	// paid in.
	DPI *decimal.Decimal
	// distributedLines is the DPI's numerator.
	distributedLines fund.Money

	CapitalCalls, Distributions, UnfundedCommitments int
}

// Summary is where one position stands: what its documents report, each
// at one version, added up exactly.
type Summary struct {
	PositionID string
	FundID     string
	InvestorID string
	// AsOf is the date the summary is taken at; zero for every document.
	AsOf fund.Date
	Figures
	// CommitmentSource and UnfundedSource name the documents the reported
	// commitment and unfunded commitment came from: an unfunded commitment
	// item's or a capital account statement's.
	CommitmentSource, UnfundedSource *Source
	// Documents are the versions counted, by as-of date then document.
	Documents []Source
}

// Summarize adds up the items a position's documents report, each document
// at the one version that counts, into a summary. Items of other positions
// must not be passed.
//
// The reported unfunded commitment is the most recent of the unfunded
// commitment items (dated by their document's as-of date) and the ending
// unfunded commitments (A.2 row 114) of the capital account statements
// (dated by their period end, their document's as-of date); the commitment
// likewise, of the items that state one and the statements' total
// commitments (A.2 row 108). "Most recent" is moreRecent's order, and a
// statement before an unfunded commitment item of the same document. A
// statement adds no other figure; Evaluate reads it.
func Summarize(pos string, asOf fund.Date, items []fund.PositionItem) Summary {
	s := Summary{PositionID: pos, AsOf: asOf}
	docs := map[string]Source{}
	var commitment, unfunded reported
	var change fund.Money // the calls' and distributions' net effect on unfunded commitment
	for i := range items {
		it := &items[i]
		s.FundID, s.InvestorID, s.Currency = it.FundID, it.InvestorID, it.Currency
		docs[it.DocumentID] = Source{DocumentID: it.DocumentID, Version: it.DocumentVersion, AsOf: it.AsOf}
		paid := it.Paid() && (asOf.IsZero() || it.FlowDate().Compare(asOf) <= 0)
		switch it.Kind {
		case fund.CapitalCall:
			s.CapitalCalls++
			s.Called = s.Called.Add(it.Amount)
			if paid {
				s.PaidIn = s.PaidIn.Add(it.Amount)
			}
			change = change.Add(fund.UnfundedChange(it.TypedLines()))
		case fund.Distribution:
			s.Distributions++
			withheld := orZero(it.Withholding)
			s.Distributed.add(it.Status, it.Amount)
			s.Withholding.add(it.Status, withheld)
			s.DistributedNet.add(it.Status, it.Amount.Sub(withheld))
			lines := it.TypedLines()
			change = change.Add(fund.UnfundedChange(lines))
			for _, l := range lines {
				if l.Unfunded == fund.Increases {
					s.Recallable = s.Recallable.Add(l.Amount)
				}
				switch l.Info().Net {
				case fund.Distributed:
					if paid {
						s.distributedLines = s.distributedLines.Add(l.Amount)
					}
				case fund.PaidInReturned:
					if paid {
						s.PaidInReturned = s.PaidInReturned.Add(l.Amount)
					}
				}
			}
		case fund.UnfundedCommitment:
			s.UnfundedCommitments++
			unfunded.offer(it, &it.Amount)
			commitment.offer(it, it.Commitment)
		case fund.Statement:
			if ca := it.CapitalAccount; ca != nil {
				unfunded.offer(it, ca.EndingUnfundedCommitment)
				commitment.offer(it, ca.TotalCommitment)
			}
		}
	}
	s.UnfundedReported, s.UnfundedSource = unfunded.figure()
	s.Commitment, s.CommitmentSource = commitment.figure()
	s.deriveUnfunded(change)
	s.deriveDPI()
	for _, d := range docs {
		s.Documents = append(s.Documents, d)
	}
	sort.Slice(s.Documents, func(i, j int) bool {
		a, b := s.Documents[i], s.Documents[j]
		if c := a.AsOf.Compare(b.AsOf); c != 0 {
			return c < 0
		}
		return a.DocumentID < b.DocumentID
	})
	return s
}

// reported is the most recent report of one figure among those offered.
type reported struct {
	from   *fund.PositionItem
	amount fund.Money
}

// offer keeps m, reported by it, when it is more recent than the report
// kept: by moreRecent, and within one document a statement's figure before
// an unfunded commitment item's, so the choice never depends on read order.
// A nil m is no report.
func (r *reported) offer(it *fund.PositionItem, m *fund.Money) {
	if m == nil {
		return
	}
	if r.from != nil && !moreRecent(it, r.from) &&
		(moreRecent(r.from, it) || it.DocumentID != r.from.DocumentID || it.Kind != fund.Statement) {
		return
	}
	r.from, r.amount = it, *m
}

// figure returns the amount reported and its source; nil, nil when none was.
func (r *reported) figure() (*fund.Money, *Source) {
	if r.from == nil {
		return nil, nil
	}
	amount := r.amount
	return &amount, sourceOf(r.from)
}

// deriveUnfunded computes the unfunded commitment that follows from the
// commitment and change, the net effect of the typed lines on it, and its
// difference from the one reported.
func (f *Figures) deriveUnfunded(change fund.Money) {
	f.UnfundedComputed, f.UnfundedDifference = nil, nil
	if f.Commitment == nil {
		return
	}
	computed := f.Commitment.Add(change)
	f.UnfundedComputed = &computed
	if f.UnfundedReported != nil {
		diff := f.UnfundedReported.Sub(computed)
		f.UnfundedDifference = &diff
	}
}

// deriveDPI derives Outstanding and the DPI, which Multiples divides
// exactly and rounds once.
func (f *Figures) deriveDPI() {
	f.Outstanding = f.Called.Sub(f.PaidIn)
	f.DPI = Multiples(NetPaidIn(f.PaidIn, f.PaidInReturned), f.distributedLines, nil).DPI
}

// moreRecent orders reports: the later as-of date, then the later write,
// then the greater document ID, so the choice never depends on read order.
func moreRecent(a, b *fund.PositionItem) bool {
	if c := a.AsOf.Compare(b.AsOf); c != 0 {
		return c > 0
	}
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.DocumentID > b.DocumentID
}

func sourceOf(it *fund.PositionItem) *Source {
	return &Source{DocumentID: it.DocumentID, Version: it.DocumentVersion, AsOf: it.AsOf}
}

func orZero(m *fund.Money) fund.Money {
	if m == nil {
		return fund.Money{}
	}
	return *m
}

// Counted splits a position's latest items (one document's at its latest
// version each) by date: the items that count on asOf (every one when asOf
// is zero), and, for each document whose latest version is dated after asOf
// but has earlier versions, that version: one of those earlier versions may
// count instead, and only a read of the document's history can tell.
func Counted(latest []fund.PositionItem, asOf fund.Date) (counted []fund.PositionItem, later map[string]int) {
	later = map[string]int{}
	for _, it := range latest {
		switch {
		case asOf.IsZero() || it.AsOf.Compare(asOf) <= 0:
			counted = append(counted, it)
		case it.DocumentVersion > 1:
			later[it.DocumentID] = it.DocumentVersion
		}
	}
	return counted, later
}

// Cashflow is one dated contribution (a capital call) or distribution, with
// the position's cumulative totals after it.
type Cashflow struct {
	Date       fund.Date // a call's due date, a distribution's payment date, or else the document's as-of date
	Kind       fund.ItemKind
	DocumentID string
	Version    int
	Status     fund.Status
	Amount     fund.Money
	// Withholding and Net (Amount − Withholding) are a distribution's.
	Withholding, Net fund.Money

	// Cumulative totals of the flows paid (completed, and dated on or
	// before the date asked for) up to and including this one: CumulativePaidIn and CumulativeDistributed (gross), and
	// CumulativeNetCashflow = CumulativeDistributed − withholding −
	// CumulativePaidIn, what the investor has received net of what it has
	// paid. A pending flow is listed and moves none of them.
	CumulativePaidIn, CumulativeDistributed, CumulativeNetCashflow fund.Money
}

// CashflowsOf orders the calls and distributions among items by date and
// runs their cumulative totals, which count the flows paid by asOf (every
// completed one when asOf is zero), as a summary's PaidIn does.
func CashflowsOf(items []fund.PositionItem, asOf fund.Date) []Cashflow {
	var out []Cashflow
	for _, it := range items {
		if it.Kind != fund.CapitalCall && it.Kind != fund.Distribution {
			continue
		}
		f := Cashflow{Date: it.FlowDate(), Kind: it.Kind, DocumentID: it.DocumentID, Version: it.DocumentVersion, Status: it.Status, Amount: it.Amount}
		if it.Kind == fund.Distribution {
			f.Withholding = orZero(it.Withholding)
			f.Net = it.Amount.Sub(f.Withholding)
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if c := a.Date.Compare(b.Date); c != 0 {
			return c < 0
		}
		if a.Kind != b.Kind {
			return a.Kind == fund.CapitalCall
		}
		return a.DocumentID < b.DocumentID
	})
	var paid, distributed, withheld fund.Money
	for i := range out {
		f := &out[i]
		switch {
		case f.Status != fund.StatusCompleted, !asOf.IsZero() && f.Date.Compare(asOf) > 0:
		case f.Kind == fund.CapitalCall:
			paid = paid.Add(f.Amount)
		default:
			distributed, withheld = distributed.Add(f.Amount), withheld.Add(f.Withholding)
		}
		f.CumulativePaidIn, f.CumulativeDistributed, f.CumulativeNetCashflow = paid, distributed, distributed.Sub(withheld).Sub(paid)
	}
	return out
}

// InvestorSummary is an investor's positions summed up, each on its own and
// totalled per currency: amounts in different currencies are never added.
type InvestorSummary struct {
	InvestorID string
	AsOf       fund.Date
	Positions  []Summary // by position ID
	Totals     []Totals  // by currency
}

// Totals are the figures of an investor's positions held in one currency:
// each the sum of the positions' figures, but DPI, which divides the totals.
// A position that states no commitment adds nothing to Commitment,
// UnfundedComputed or UnfundedDifference (PositionsWithoutCommitment counts
// them), nor one without a reported unfunded commitment to
// UnfundedReported or UnfundedDifference; each of these stays nil while no
// position adds to it.
type Totals struct {
	Figures
	Positions                  int
	PositionsWithoutCommitment int
}

// SumUp totals an investor's position summaries per currency, the
// positions ordered by ID and the totals by currency.
func SumUp(inv string, asOf fund.Date, sums []Summary) InvestorSummary {
	out := InvestorSummary{InvestorID: inv, AsOf: asOf, Positions: append([]Summary(nil), sums...)}
	totals := map[string]*Totals{}
	for _, sum := range sums {
		t := totals[sum.Currency]
		if t == nil {
			t = &Totals{Figures: Figures{Currency: sum.Currency}}
			totals[sum.Currency] = t
		}
		t.add(sum.Figures)
	}
	sort.Slice(out.Positions, func(i, j int) bool { return out.Positions[i].PositionID < out.Positions[j].PositionID })
	for _, t := range totals {
		t.deriveDPI()
		out.Totals = append(out.Totals, *t)
	}
	sort.Slice(out.Totals, func(i, j int) bool { return out.Totals[i].Currency < out.Totals[j].Currency })
	return out
}

// add adds one position's figures; deriveDPI must follow.
func (t *Totals) add(f Figures) {
	t.Positions++
	t.Called, t.PaidIn, t.PaidInReturned = t.Called.Add(f.Called), t.PaidIn.Add(f.PaidIn), t.PaidInReturned.Add(f.PaidInReturned)
	t.distributedLines = t.distributedLines.Add(f.distributedLines)
	t.Distributed.addAll(f.Distributed)
	t.Withholding.addAll(f.Withholding)
	t.DistributedNet.addAll(f.DistributedNet)
	t.Recallable = t.Recallable.Add(f.Recallable)
	t.CapitalCalls += f.CapitalCalls
	t.Distributions += f.Distributions
	t.UnfundedCommitments += f.UnfundedCommitments
	for _, sum := range []struct{ total, m **fund.Money }{
		{&t.Commitment, &f.Commitment}, {&t.UnfundedReported, &f.UnfundedReported},
		{&t.UnfundedComputed, &f.UnfundedComputed}, {&t.UnfundedDifference, &f.UnfundedDifference},
	} {
		if *sum.m != nil {
			*sum.total = addTo(*sum.total, **sum.m)
		}
	}
	if f.Commitment == nil {
		t.PositionsWithoutCommitment++
	}
}

func addTo(total *fund.Money, m fund.Money) *fund.Money {
	sum := m
	if total != nil {
		sum = total.Add(m)
	}
	return &sum
}
