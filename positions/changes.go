package positions

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/shopspring/decimal"
)

// "Why did this number move": the document versions committed
// in a window of instants (from, to] that changed a position's figures,
// each with the figures before and after it and its contribution. The
// position is read as known at from (reportedKnownAt's rules), then after
// each version committed in the window, in commit order, as known at that
// version's commit instant: exactly as a read with knownAt set to it
// answers, but for versions of other documents committed in the very same
// instant, which come after it in commit order (instant, then document,
// then version). So the figures after the last version are the read as
// known at to, and every money figure's contributions add up to its
// change from from to to, exactly.

// MaxChangeVersions bounds the versions one read of a window covers (each
// costs a read as known at its instant of its document): a window in
// which the position's documents committed more is answered 400 before
// any of them is read.
const MaxChangeVersions = 50

// VersionLister lists the versions of a document committed in a window
// (the store's DocumentVersionsBetween): the events of those committed
// after from and at or before to, in version order, at most limit+1.
type VersionLister interface {
	DocumentVersionsBetween(ctx context.Context, doc string, from, to time.Time, limit int) ([]fund.Event, error)
}

// FigureKind says how a figure changes: a money figure adds up, a ratio
// (a multiple, a rate) does not.
type FigureKind string

const (
	FigureMoney FigureKind = "money"
	FigureRatio FigureKind = "ratio"
)

// Figure is one figure of an answer, named by its path in the answer's
// JSON (distributed.gross.total), exact; Value is nil when the answer
// leaves it out.
type Figure struct {
	Name  string
	Kind  FigureKind
	Value *decimal.Decimal
}

// FigureChange is one figure before and after.
type FigureChange struct {
	Name          string
	Kind          FigureKind
	Before, After *decimal.Decimal
	// Contribution is After − Before, exact, for a money figure present on
	// both sides; nil otherwise (a ratio, or a figure absent on a side).
	Contribution *decimal.Decimal
}

// Changed reports whether the figure differs.
func (c FigureChange) Changed() bool {
	if c.Before == nil || c.After == nil {
		return (c.Before == nil) != (c.After == nil)
	}
	return !c.Before.Equal(*c.After)
}

// CompareFigures pairs the figures of two reads, which list the same
// figures in the same order.
func CompareFigures(before, after []Figure) []FigureChange {
	out := make([]FigureChange, len(before))
	for i, b := range before {
		a := after[i]
		c := FigureChange{Name: b.Name, Kind: b.Kind, Before: b.Value, After: a.Value}
		if b.Kind == FigureMoney && b.Value != nil && a.Value != nil {
			d := a.Value.Sub(*b.Value)
			c.Contribution = &d
		}
		out[i] = c
	}
	return out
}

// moneyFigure is a money figure; nil when m is.
func moneyFigure(name string, m *fund.Money) Figure {
	f := Figure{Name: name, Kind: FigureMoney}
	if m != nil {
		d := m.Decimal()
		f.Value = &d
	}
	return f
}

func ratioFigure(name string, d *decimal.Decimal) Figure {
	return Figure{Name: name, Kind: FigureRatio, Value: d}
}

// SummaryFigures are a summary's figures, named as the summary's answer
// names them.
func SummaryFigures(s Summary) []Figure {
	f := s.Figures
	out := []Figure{moneyFigure("commitment", f.Commitment), moneyFigure("called", &f.Called), moneyFigure("paidIn", &f.PaidIn),
		moneyFigure("outstanding", &f.Outstanding), moneyFigure("paidInReturned", &f.PaidInReturned)}
	for _, b := range []struct {
		name string
		by   *ByStatus
	}{{"gross", &f.Distributed}, {"withholding", &f.Withholding}, {"net", &f.DistributedNet}} {
		out = append(out, moneyFigure("distributed."+b.name+".total", &b.by.Total), moneyFigure("distributed."+b.name+".pending", &b.by.Pending),
			moneyFigure("distributed."+b.name+".completed", &b.by.Completed))
	}
	return append(out, moneyFigure("recallable", &f.Recallable), moneyFigure("unfunded.reported", f.UnfundedReported),
		moneyFigure("unfunded.computed", f.UnfundedComputed), moneyFigure("unfunded.difference", f.UnfundedDifference), ratioFigure("dpi", f.DPI))
}

// PerformanceFigures are a performance's figures, named as the
// performance's answer names them.
func PerformanceFigures(p Performance) []Figure {
	return []Figure{moneyFigure("nav.value", p.NAV.Value), moneyFigure("called", &p.Called), moneyFigure("paidIn", &p.PaidIn),
		moneyFigure("outstanding", &p.Outstanding), moneyFigure("paidInReturned", &p.PaidInReturned), moneyFigure("distributed", &p.Distributed),
		ratioFigure("dpi", p.Multiples.DPI), ratioFigure("rvpi", p.Multiples.RVPI), ratioFigure("tvpi", p.Multiples.TVPI),
		ratioFigure("irr.rate", p.IRR.Rate), ratioFigure("irr.cumulativeReturn", p.IRR.CumulativeReturn)}
}

// VersionChange is one version committed in the window that changed a
// figure: its event (document, version, type, commit instant) and the
// figures it changed, the others left out.
type VersionChange struct {
	Event   fund.Event
	Figures []FigureChange
}

// Changes is a position's figures moved by the versions of a window.
type Changes struct {
	PositionID, FundID, InvestorID, Currency string
	AsOf                                     fund.Date
	From, To                                 time.Time
	// KnownAtFrom and KnownAtTo say whether some document's version then
	// reported the position; when not, its figures then are those of no
	// item (zeros, and absent where an answer leaves them out).
	KnownAtFrom, KnownAtTo bool
	// Figures are every figure, as known at From (Before) and at To
	// (After).
	Figures []FigureChange
	// Versions are the versions that changed a figure, in commit order;
	// a version committed in the window that changed none is left out.
	Versions []VersionChange
}

// SummaryChanges is the summary's figures (SummaryFigures) on asOf moved
// by the versions committed after from and at or before to.
func (s *Analytics) SummaryChanges(ctx context.Context, v fund.Viewer, pos string, asOf fund.Date, from, to time.Time) (Changes, error) {
	return s.changes(ctx, v, pos, asOf, from, to, func(items []fund.PositionItem) []Figure {
		return SummaryFigures(Summarize(pos, asOf, items))
	})
}

// PerformanceChanges is the performance's figures (PerformanceFigures) on
// asOf moved by the versions committed after from and at or before to.
func (s *Analytics) PerformanceChanges(ctx context.Context, v fund.Viewer, pos string, asOf fund.Date, from, to time.Time) (Changes, error) {
	return s.changes(ctx, v, pos, asOf, from, to, func(items []fund.PositionItem) []Figure {
		return PerformanceFigures(Evaluate(pos, asOf, items, s.Freshness))
	})
}

// docState is what one document counts for a position as known at an
// instant: the items of its version known then (none: not known, a void,
// or the position withdrawn), and, when that version is dated after asOf,
// those of its latest earlier version dated on or before it.
type docState struct {
	known, earlier []fund.PositionItem
}

// changes reads the window. v is decided on the ledger's Query, the
// first read, as reportedKnownAt decides; the versions of every document
// in the window are listed before any item is read, and more than
// MaxChangeVersions of them is EINVALID. ENOTFOUND when the position has
// no claim, v may not read it, or no document's version reports it as
// known at from, at to, or after any version between.
func (s *Analytics) changes(ctx context.Context, v fund.Viewer, pos string, asOf fund.Date, from, to time.Time, figures func([]fund.PositionItem) []Figure) (Changes, error) {
	lister, ok := s.r.(VersionLister)
	if !ok {
		return Changes{}, fmt.Errorf("positions: the reader does not list a document's versions")
	}
	notFound := fund.Errorf(fund.ENOTFOUND, "position %s not found", pos)
	claim, docs, err := s.r.PositionDocuments(ctx, pos, MaxKnownAtDocuments)
	if err != nil {
		return Changes{}, err
	}
	if claim.PositionID == "" || !v.MayReadPosition(claim.FundID, claim.InvestorID) {
		return Changes{}, notFound
	}
	if len(docs) > MaxKnownAtDocuments {
		return Changes{}, fund.Invalid("positionId", "position %s has been reported by more than %d documents, the most a read of its changes covers; read them from the export", pos, MaxKnownAtDocuments)
	}
	listed := make([][]fund.Event, len(docs))
	if err := eachAtOnce(ctx, len(docs), func(ctx context.Context, i int) (err error) {
		listed[i], err = lister.DocumentVersionsBetween(ctx, docs[i], from, to, MaxChangeVersions)
		return err
	}); err != nil {
		return Changes{}, err
	}
	var events []fund.Event
	for _, evs := range listed {
		events = append(events, evs...)
	}
	if len(events) > MaxChangeVersions {
		return Changes{}, fund.Invalid("from", "the position's documents committed more than %d versions between from and to, the most one read covers; narrow the window", MaxChangeVersions)
	}
	slices.SortFunc(events, func(a, b fund.Event) int {
		return cmp.Or(a.Timestamp.Compare(b.Timestamp), cmp.Compare(a.Data.DocumentID, b.Data.DocumentID), cmp.Compare(a.Data.Version, b.Data.Version))
	})
	// Every document as known at from, and each version's document as
	// known at its instant: independent reads, made 8 at a time.
	initial := make([]docState, len(docs))
	after := make([]docState, len(events))
	if err := eachAtOnce(ctx, len(docs)+len(events), func(ctx context.Context, i int) (err error) {
		if i < len(docs) {
			initial[i], err = s.docStateAt(ctx, docs[i], pos, asOf, from)
		} else {
			e := events[i-len(docs)]
			after[i-len(docs)], err = s.docStateAt(ctx, e.Data.DocumentID, pos, asOf, e.Timestamp)
		}
		return err
	}); err != nil {
		return Changes{}, err
	}

	state := make(map[string]docState, len(docs))
	for i, doc := range docs {
		state[doc] = initial[i]
	}
	out := Changes{PositionID: pos, FundID: claim.FundID, InvestorID: claim.InvestorID, Currency: claim.Currency, AsOf: asOf, From: from, To: to}
	start, known := s.countedIn(state, asOf)
	out.KnownAtFrom = known
	ever := known
	first := figures(start)
	last := first
	for i, e := range events {
		state[e.Data.DocumentID] = after[i]
		items, known := s.countedIn(state, asOf)
		ever = ever || known
		out.KnownAtTo = known
		now := figures(items)
		var moved []FigureChange
		for _, c := range CompareFigures(last, now) {
			if c.Changed() {
				moved = append(moved, c)
			}
		}
		if len(moved) > 0 {
			out.Versions = append(out.Versions, VersionChange{Event: e, Figures: moved})
		}
		last = now
	}
	if len(events) == 0 {
		out.KnownAtTo = out.KnownAtFrom
	}
	if !ever {
		return Changes{}, notFound
	}
	out.Figures = CompareFigures(first, last)
	return out, nil
}

// docStateAt reads what doc counts for pos on asOf as known at at:
// reportedKnownAt's reads of one document.
func (s *Analytics) docStateAt(ctx context.Context, doc, pos string, asOf fund.Date, at time.Time) (docState, error) {
	known, err := s.r.PositionKnownAt(ctx, doc, pos, at)
	if err != nil || len(known) == 0 {
		return docState{}, err
	}
	st := docState{known: known}
	if _, later := Counted(known, asOf); later[doc] > 0 {
		st.earlier, err = s.r.PositionAsOf(ctx, doc, pos, asOf, later[doc])
	}
	return st, err
}

// countedIn is the items that count with each document at its state, in
// the order reportedKnownAt counts them, and whether any document's
// version reports the position.
func (s *Analytics) countedIn(state map[string]docState, asOf fund.Date) ([]fund.PositionItem, bool) {
	var known []fund.PositionItem
	for _, st := range state {
		known = append(known, st.known...)
	}
	if len(known) == 0 {
		return nil, false
	}
	slices.SortStableFunc(known, func(a, b fund.PositionItem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.DocumentID, b.DocumentID))
	})
	counted, later := Counted(known, asOf)
	docs := make([]string, 0, len(later))
	for doc := range later {
		docs = append(docs, doc)
	}
	slices.Sort(docs)
	for _, doc := range docs {
		counted = append(counted, state[doc].earlier...)
	}
	return counted, true
}
