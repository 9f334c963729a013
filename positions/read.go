package positions

import (
	"context"
	"slices"
	"sort"

	"github.com/fundsvc/fundsvc/fund"
	"golang.org/x/sync/errgroup"
)

// reported returns the items that count for a position on a date: from
// every document that reports it, the items of the document's latest
// version dated on or before asOf (every latest version when asOf is zero).
//
// One read (AllPositionItems) gives the latest items of every document.
// Only a document whose latest version is dated after asOf but that has
// earlier versions needs more (PositionAsOf), read in parallel across such
// documents. A document whose latest version no longer reports the position
// does not count at any date: its line was withdrawn.
//
// v is decided on the first read, before any other, so a refused position
// costs what an unknown one does. It returns the identity of the position
// (fund, investor, currency) read from any of its items, and ENOTFOUND if
// no document reports it or v may not read it.
func (s *Analytics) reported(ctx context.Context, pos string, asOf fund.Date, owner *Registered, v fund.Viewer) (fund.PositionItem, []fund.PositionItem, error) {
	latest, err := s.r.AllPositionItems(ctx, pos)
	if err != nil {
		return fund.PositionItem{}, nil, err
	}
	if owner != nil {
		latest = slices.DeleteFunc(latest, func(it fund.PositionItem) bool {
			return it.FundID != owner.FundID || it.InvestorID != owner.InvestorID
		})
	}
	if len(latest) == 0 {
		return fund.PositionItem{}, nil, fund.Errorf(fund.ENOTFOUND, "position %s not found", pos)
	}
	identity := latest[0]
	if !v.MayReadPosition(identity.FundID, identity.InvestorID) {
		return fund.PositionItem{}, nil, fund.Errorf(fund.ENOTFOUND, "position %s not found", pos)
	}
	counted, later := Counted(latest, asOf)
	if len(later) == 0 {
		return identity, counted, nil
	}
	docs := make([]string, 0, len(later))
	for doc := range later {
		docs = append(docs, doc)
	}
	earlier := make([][]fund.PositionItem, len(docs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, doc := range docs {
		g.Go(func() (err error) {
			earlier[i], err = s.r.PositionAsOf(gctx, doc, pos, asOf, later[doc])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fund.PositionItem{}, nil, err
	}
	for _, items := range earlier {
		counted = append(counted, items...)
	}
	return identity, counted, nil
}

// Summary sums up a position on a date (zero: every document) as rd sees
// it: each document counted at its latest version dated on or before the
// date, from the latest versions or as known at rd's instant (knownat.go).
// rd's viewer is decided right after the position's first read, before any
// further one: a position it may not read is ENOTFOUND, as an unknown one,
// at the same cost. A position whose documents all come later has a
// summary of zeros.
func (s *Analytics) Summary(ctx context.Context, rd fund.Read, pos string, asOf fund.Date) (Summary, error) {
	identity, items, err := s.reportedAs(ctx, rd, pos, asOf)
	if err != nil {
		return Summary{}, err
	}
	return summed(pos, asOf, identity, items), nil
}

// reportedAs is reported, or reportedKnownAt as known at rd's instant, for
// rd's viewer.
func (s *Analytics) reportedAs(ctx context.Context, rd fund.Read, pos string, asOf fund.Date) (fund.PositionItem, []fund.PositionItem, error) {
	if rd.Past {
		return s.reportedKnownAtIn(ctx, pos, asOf, rd.KnownAt, rd.Viewer, nil, nil)
	}
	return s.reported(ctx, pos, asOf, nil, rd.Viewer)
}

// anyone reads every position: a fan-out's reads, whose registry row (or
// statement) the caller's viewer authorized already.
var anyone = fund.Operator.Viewer

// summed is Summarize of a position's items, named by its identity (fund,
// investor, currency).
func summed(pos string, asOf fund.Date, identity fund.PositionItem, items []fund.PositionItem) Summary {
	sum := Summarize(pos, asOf, items)
	sum.FundID, sum.InvestorID, sum.Currency = identity.FundID, identity.InvestorID, identity.Currency
	return sum
}

// evaluated is Evaluate of a position's items, named by its identity.
func (s *Analytics) evaluated(pos string, asOf fund.Date, identity fund.PositionItem, items []fund.PositionItem) Performance {
	p := Evaluate(pos, asOf, items, s.Freshness)
	p.FundID, p.InvestorID, p.Currency = identity.FundID, identity.InvestorID, identity.Currency
	return p
}

// Cashflows lists a position's contributions and distributions on a date
// (zero: every document) in date order, with running totals, read as
// Summary reads. Flows of one date are ordered contributions first, then
// by document. It returns ENOTFOUND if no document reports the position,
// or rd's viewer may not read it.
func (s *Analytics) Cashflows(ctx context.Context, rd fund.Read, pos string, asOf fund.Date) (fund.PositionItem, []Cashflow, error) {
	identity, items, err := s.reportedAs(ctx, rd, pos, asOf)
	if err != nil {
		return fund.PositionItem{}, nil, err
	}
	return identity, CashflowsOf(items, asOf), nil
}

// InvestorSummary sums up the investor's positions that rd's viewer may
// read on a date, up to limit of them from start (see VisibleOfInvestor),
// each as Summary does, several at a time, and returns the key of the next
// page; each page is read as pageRead says (the latest versions, or as
// known at an instant). Each position counts only the items whose fund and
// investor are the ones its registry row names: the row authorized the
// read, so nothing else may be added in. Positions no document reports are
// left out. It returns ENOTFOUND if, on the first page, no position is
// left.
func (s *Analytics) InvestorSummary(ctx context.Context, rd fund.Read, inv string, asOf fund.Date, limit int, start []byte) (InvestorSummary, []byte, error) {
	pr := s.pageRead(rd, asOf, start)
	regs, next, err := s.VisibleOfInvestor(ctx, rd.Viewer, inv, limit, pr.start)
	if err != nil {
		return InvestorSummary{}, nil, err
	}
	sums := make([]*Summary, len(regs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, r := range regs {
		g.Go(func() error {
			identity, items, err := pr.read(gctx, r)
			if fund.ErrorCode(err) == fund.ENOTFOUND {
				return nil
			}
			sum := summed(r.PositionID, asOf, identity, items)
			sums[i] = &sum
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return InvestorSummary{}, nil, err
	}
	var found []Summary
	for _, sum := range sums {
		if sum != nil {
			found = append(found, *sum)
		}
	}
	if len(found) == 0 && pr.start == nil && next == nil {
		return InvestorSummary{}, nil, fund.Errorf(fund.ENOTFOUND, "investor %s not found", inv)
	}
	return SumUp(inv, asOf, found), pr.next(next), nil
}

// Performance works out a position's performance on asOf (see Evaluate),
// each document counted at its latest version dated on or before it, read
// as Summary reads: rd's viewer decides right after the first read, and a
// refused position returns ENOTFOUND at the cost of an unknown one.
func (s *Analytics) Performance(ctx context.Context, rd fund.Read, pos string, asOf fund.Date) (Performance, error) {
	identity, items, err := s.reportedAs(ctx, rd, pos, asOf)
	if err != nil {
		return Performance{}, err
	}
	return s.evaluated(pos, asOf, identity, items), nil
}

// InvestorPerformance is an investor's positions' performance on a date:
// each position on its own, by ID, and pooled per currency (Pool), never
// adding currencies.
type InvestorPerformance struct {
	InvestorID string
	AsOf       fund.Date
	Positions  []Performance       // by position ID
	Totals     []PooledPerformance // by currency
	Freshness  Freshness           // the bound the NAVs' staleness was judged by
}

// InvestorPerformance works out the performance of the investor's
// positions that rd's viewer may read on asOf, up to limit of them from
// start, read as InvestorSummary reads them (the same pages, the same rule
// that a position counts only the items of its registry row's fund and
// investor, at most 8 positions read at a time), and pools the page's
// positions per currency. It returns the key of the next page, and
// ENOTFOUND if, on the first page, no position is left.
func (s *Analytics) InvestorPerformance(ctx context.Context, rd fund.Read, inv string, asOf fund.Date, limit int, start []byte) (InvestorPerformance, []byte, error) {
	pr := s.pageRead(rd, asOf, start)
	regs, next, err := s.VisibleOfInvestor(ctx, rd.Viewer, inv, limit, pr.start)
	if err != nil {
		return InvestorPerformance{}, nil, err
	}
	found, err := s.performances(ctx, regs, s.evaluatedBy(asOf, pr.read))
	if err != nil {
		return InvestorPerformance{}, nil, err
	}
	if len(found) == 0 && pr.start == nil && next == nil {
		return InvestorPerformance{}, nil, fund.Errorf(fund.ENOTFOUND, "investor %s not found", inv)
	}
	return InvestorPerformance{InvestorID: inv, AsOf: asOf, Positions: found, Totals: poolByCurrency(asOf, found), Freshness: s.Freshness}, pr.next(next), nil
}

// evaluatedBy reads a registered position's performance on asOf from the
// items read finds.
func (s *Analytics) evaluatedBy(asOf fund.Date, read positionRead) func(context.Context, Registered) (Performance, error) {
	return func(ctx context.Context, r Registered) (Performance, error) {
		identity, items, err := read(ctx, r)
		if err != nil {
			return Performance{}, err
		}
		return s.evaluated(r.PositionID, asOf, identity, items), nil
	}
}

// performances reads the performance of each registered position with
// read, 8 at a time, and returns those some document reports, by position
// ID.
func (s *Analytics) performances(ctx context.Context, regs []Registered, read func(context.Context, Registered) (Performance, error)) ([]Performance, error) {
	perfs := make([]*Performance, len(regs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, r := range regs {
		g.Go(func() error {
			p, err := read(gctx, r)
			if fund.ErrorCode(err) == fund.ENOTFOUND {
				return nil
			}
			perfs[i] = &p
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var found []Performance
	for _, p := range perfs {
		if p != nil {
			found = append(found, *p)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].PositionID < found[j].PositionID })
	return found, nil
}

// poolByCurrency pools performances per currency, by currency.
func poolByCurrency(asOf fund.Date, perfs []Performance) []PooledPerformance {
	byCurrency := map[string][]Performance{}
	for _, p := range perfs {
		byCurrency[p.Currency] = append(byCurrency[p.Currency], p)
	}
	var out []PooledPerformance
	for cur, ps := range byCurrency {
		out = append(out, Pool(cur, asOf, ps))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Currency < out[j].Currency })
	return out
}

// FundPerformance is a fund's positions' performance pooled per currency.
type FundPerformance struct {
	FundID string
	AsOf   fund.Date
	// Positions counts the positions pooled: the fund's registered
	// positions that some document reports on their row's fund and
	// investor.
	Positions  int
	Currencies []PooledPerformance // by currency
	Freshness  Freshness           // the bound the NAVs' staleness was judged by
}

// FundPerformance pools the performance of every position of a fund on
// asOf, per currency, as ILPA's fund-level net IRR and TVPI do. It reads
// the fund's registry first, at most maxPositions+1 rows, and returns
// EINVALID naming the bound, before reading any position, when the fund
// has more than maxPositions positions; then each position as
// InvestorPerformance does, 8 at a time. It returns ENOTFOUND for a fund
// with no positions. As known at rd's instant: fundPerformanceKnownAt.
func (s *Analytics) FundPerformance(ctx context.Context, rd fund.Read, fundID string, asOf fund.Date, maxPositions int) (FundPerformance, error) {
	if rd.Past {
		return s.fundPerformanceKnownAt(ctx, fundID, asOf, rd.KnownAt, maxPositions)
	}
	return s.fundPerformance(ctx, fundID, asOf, maxPositions, s.evaluatedBy(asOf, s.latestRead(asOf)))
}

// fundPerformance is FundPerformance reading each position with read.
func (s *Analytics) fundPerformance(ctx context.Context, fundID string, asOf fund.Date, maxPositions int, read func(context.Context, Registered) (Performance, error)) (FundPerformance, error) {
	var regs []Registered
	var start []byte
	for {
		page, next, err := s.r.FundPositions(ctx, fundID, maxPositions+1-len(regs), start)
		if err != nil {
			return FundPerformance{}, err
		}
		regs = append(regs, page...)
		if len(regs) > maxPositions {
			return FundPerformance{}, fund.Errorf(fund.EINVALID, "fund %s has more than %d positions, the most its performance pools", fundID, maxPositions)
		}
		if next == nil {
			break
		}
		start = next
	}
	if len(regs) == 0 {
		return FundPerformance{}, fund.Errorf(fund.ENOTFOUND, "fund %s not found", fundID)
	}
	found, err := s.performances(ctx, regs, read)
	if err != nil {
		return FundPerformance{}, err
	}
	return FundPerformance{FundID: fundID, AsOf: asOf, Positions: len(found), Currencies: poolByCurrency(asOf, found), Freshness: s.Freshness}, nil
}

// DocumentReconciliation is the reconciliation of a document's capital
// account statements, each to the notices of its period.
type DocumentReconciliation struct {
	DocumentID string
	// Version is the document's latest version, whose statements these
	// are; 0 when the page holds none.
	Version         int
	Reconciliations []Reconciliation // by position, as the page lists them
}

// DocumentReconciliation reconciles one page (up to limit, from start) of
// the statements in a document's latest version: each to the notices its
// position's documents report on the statement's period end (the
// document's as-of date), counting only the items of the statement's fund
// and investor. Reads: one for the page, then, for each statement, those
// of a position's performance on that date (8 positions at a time). A
// document without statements (or one the caller may not see, which the
// caller checks first) answers an empty page. As known at rd's instant,
// version is the document's version known then:
// documentReconciliationKnownAt; otherwise only its ID is read.
func (s *Analytics) DocumentReconciliation(ctx context.Context, rd fund.Read, version fund.DocumentHeader, limit int, start []byte) (DocumentReconciliation, []byte, error) {
	if rd.Past {
		return s.documentReconciliationKnownAt(ctx, version, rd.KnownAt, limit, start)
	}
	doc := version.ID
	statements, next, err := s.r.DocumentStatements(ctx, doc, limit, start)
	if err != nil {
		return DocumentReconciliation{}, nil, err
	}
	out, err := s.reconcileAll(ctx, doc, statements, func(ctx context.Context, st *fund.PositionItem, owner *Registered) ([]fund.PositionItem, error) {
		_, items, err := s.reported(ctx, st.PositionID, st.AsOf, owner, anyone)
		return items, err
	})
	return out, next, err
}

// reconcileAll reconciles each statement with the items read counts for
// its position on the statement's date, of the statement's fund and
// investor (owner), 8 statements at a time.
func (s *Analytics) reconcileAll(ctx context.Context, doc string, statements []fund.PositionItem, read func(context.Context, *fund.PositionItem, *Registered) ([]fund.PositionItem, error)) (DocumentReconciliation, error) {
	out := DocumentReconciliation{DocumentID: doc, Reconciliations: make([]Reconciliation, len(statements))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range statements {
		st := &statements[i]
		out.Version = st.DocumentVersion
		g.Go(func() error {
			owner := Registered{PositionID: st.PositionID, FundID: st.FundID, InvestorID: st.InvestorID}
			items, err := read(gctx, st, &owner)
			if err != nil {
				return err
			}
			out.Reconciliations[i] = reconcile(st, typedLinesOf(items), items)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return DocumentReconciliation{}, err
	}
	return out, nil
}
