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
// allow is decided on the first read, before any other, so a refused
// position costs what an unknown one does. It returns the identity of the
// position (fund, investor, currency) read from any of its items, and
// ENOTFOUND if no document reports it or allow refuses it.
func (s *Store) reported(ctx context.Context, pos string, asOf fund.Date, owner *Registered, allow Allow) (fund.PositionItem, []fund.PositionItem, error) {
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
	if allow != nil && !allow(identity.FundID, identity.InvestorID) {
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

// Summary sums up a position on a date (zero: every document), each
// document counted at its latest version dated on or before it. It returns
// ENOTFOUND if no document reports the position; a position whose documents
// all come later has a summary of zeros.
func (s *Store) Summary(ctx context.Context, pos string, asOf fund.Date) (Summary, error) {
	return s.SummaryFor(ctx, pos, asOf, nil)
}

// Allow is a caller's access rule for a position of fundID held by
// investorID; nil allows every position.
type Allow func(fundID, investorID string) bool

// SummaryFor is Summary for a caller that allow may refuse: it decides right
// after the position's first read, before any further one, and returns
// ENOTFOUND, as for an unknown position, if allow refuses.
func (s *Store) SummaryFor(ctx context.Context, pos string, asOf fund.Date, allow Allow) (Summary, error) {
	return s.summary(ctx, pos, asOf, nil, allow)
}

// summary is SummaryFor counting, when owner is set, only the items of
// owner's fund and investor.
func (s *Store) summary(ctx context.Context, pos string, asOf fund.Date, owner *Registered, allow Allow) (Summary, error) {
	identity, items, err := s.reported(ctx, pos, asOf, owner, allow)
	if err != nil {
		return Summary{}, err
	}
	return summed(pos, asOf, identity, items), nil
}

// summed is Summarize of a position's items, named by its identity (fund,
// investor, currency).
func summed(pos string, asOf fund.Date, identity fund.PositionItem, items []fund.PositionItem) Summary {
	sum := Summarize(pos, asOf, items)
	sum.FundID, sum.InvestorID, sum.Currency = identity.FundID, identity.InvestorID, identity.Currency
	return sum
}

// evaluated is Evaluate of a position's items, named by its identity.
func (s *Store) evaluated(pos string, asOf fund.Date, identity fund.PositionItem, items []fund.PositionItem) Performance {
	p := Evaluate(pos, asOf, items, s.Freshness)
	p.FundID, p.InvestorID, p.Currency = identity.FundID, identity.InvestorID, identity.Currency
	return p
}

// Cashflows lists a position's contributions and distributions on a date
// (zero: every document) in date order, with running totals, read like
// Summary. Flows of one date are ordered contributions first, then by
// document. It returns ENOTFOUND if no document reports the position.
func (s *Store) Cashflows(ctx context.Context, pos string, asOf fund.Date) (fund.PositionItem, []Cashflow, error) {
	return s.CashflowsFor(ctx, pos, asOf, nil)
}

// CashflowsFor is Cashflows for a caller that allow may refuse (see
// SummaryFor).
func (s *Store) CashflowsFor(ctx context.Context, pos string, asOf fund.Date, allow Allow) (fund.PositionItem, []Cashflow, error) {
	identity, items, err := s.reported(ctx, pos, asOf, nil, allow)
	if err != nil {
		return fund.PositionItem{}, nil, err
	}
	return identity, CashflowsOf(items, asOf), nil
}

// InvestorSummary sums up the investor's positions that keep accepts (the
// caller's access rule) on a date, up to limit of them from start (see
// VisibleOfInvestor), each as Summary does, several at a time, and returns
// the key of the next page. Each position counts only the items whose fund
// and investor are the ones its registry row names: the row authorized the
// read, so nothing else may be added in. Positions no document reports are
// left out. It returns ENOTFOUND if, on the first page, no position is left.
func (s *Store) InvestorSummary(ctx context.Context, inv string, asOf fund.Date, keep func(Registered) bool, filtered bool, limit int, start []byte) (InvestorSummary, []byte, error) {
	return s.investorSummary(ctx, inv, asOf, keep, filtered, limit, start, func(ctx context.Context, r Registered) (Summary, error) {
		return s.summary(ctx, r.PositionID, asOf, &r, nil)
	})
}

// investorSummary is InvestorSummary reading each position with read.
func (s *Store) investorSummary(ctx context.Context, inv string, asOf fund.Date, keep func(Registered) bool, filtered bool, limit int, start []byte, read func(context.Context, Registered) (Summary, error)) (InvestorSummary, []byte, error) {
	regs, next, err := s.VisibleOfInvestor(ctx, inv, keep, filtered, limit, start)
	if err != nil {
		return InvestorSummary{}, nil, err
	}
	sums := make([]*Summary, len(regs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, r := range regs {
		g.Go(func() error {
			sum, err := read(gctx, r)
			if fund.ErrorCode(err) == fund.ENOTFOUND {
				return nil
			}
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
	if len(found) == 0 && start == nil && next == nil {
		return InvestorSummary{}, nil, fund.Errorf(fund.ENOTFOUND, "investor %s not found", inv)
	}
	return SumUp(inv, asOf, found), next, nil
}

// PerformanceFor works out a position's performance on asOf (see
// Evaluate), each document counted at its latest version dated on or
// before it, read as SummaryFor reads: allow decides right after the first
// read, and a refused position returns ENOTFOUND at the cost of an unknown
// one.
func (s *Store) PerformanceFor(ctx context.Context, pos string, asOf fund.Date, allow Allow) (Performance, error) {
	return s.performance(ctx, pos, asOf, nil, allow)
}

// performance is PerformanceFor counting, when owner is set, only the
// items of owner's fund and investor.
func (s *Store) performance(ctx context.Context, pos string, asOf fund.Date, owner *Registered, allow Allow) (Performance, error) {
	identity, items, err := s.reported(ctx, pos, asOf, owner, allow)
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
// positions that keep accepts on asOf, up to limit of them from start,
// read as InvestorSummary reads them (the same pages, the same rule that a
// position counts only the items of its registry row's fund and investor,
// at most 8 positions read at a time), and pools the page's positions per
// currency. It returns the key of the next page, and ENOTFOUND if, on the
// first page, no position is left.
func (s *Store) InvestorPerformance(ctx context.Context, inv string, asOf fund.Date, keep func(Registered) bool, filtered bool, limit int, start []byte) (InvestorPerformance, []byte, error) {
	return s.investorPerformance(ctx, inv, asOf, keep, filtered, limit, start, s.performanceOf(asOf))
}

// performanceOf reads a registered position's performance on asOf,
// counting only the items of its row's fund and investor.
func (s *Store) performanceOf(asOf fund.Date) func(context.Context, Registered) (Performance, error) {
	return func(ctx context.Context, r Registered) (Performance, error) {
		return s.performance(ctx, r.PositionID, asOf, &r, nil)
	}
}

// investorPerformance is InvestorPerformance reading each position with
// read.
func (s *Store) investorPerformance(ctx context.Context, inv string, asOf fund.Date, keep func(Registered) bool, filtered bool, limit int, start []byte, read func(context.Context, Registered) (Performance, error)) (InvestorPerformance, []byte, error) {
	regs, next, err := s.VisibleOfInvestor(ctx, inv, keep, filtered, limit, start)
	if err != nil {
		return InvestorPerformance{}, nil, err
	}
	found, err := s.performances(ctx, regs, read)
	if err != nil {
		return InvestorPerformance{}, nil, err
	}
	if len(found) == 0 && start == nil && next == nil {
		return InvestorPerformance{}, nil, fund.Errorf(fund.ENOTFOUND, "investor %s not found", inv)
	}
	return InvestorPerformance{InvestorID: inv, AsOf: asOf, Positions: found, Totals: poolByCurrency(asOf, found), Freshness: s.Freshness}, next, nil
}

// performances reads the performance of each registered position with
// read, 8 at a time, and returns those some document reports, by position
// ID.
func (s *Store) performances(ctx context.Context, regs []Registered, read func(context.Context, Registered) (Performance, error)) ([]Performance, error) {
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
// with no positions.
func (s *Store) FundPerformance(ctx context.Context, fundID string, asOf fund.Date, maxPositions int) (FundPerformance, error) {
	return s.fundPerformance(ctx, fundID, asOf, maxPositions, s.performanceOf(asOf))
}

// fundPerformance is FundPerformance reading each position with read.
func (s *Store) fundPerformance(ctx context.Context, fundID string, asOf fund.Date, maxPositions int, read func(context.Context, Registered) (Performance, error)) (FundPerformance, error) {
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
// caller checks first) answers an empty page.
func (s *Store) DocumentReconciliation(ctx context.Context, doc string, limit int, start []byte) (DocumentReconciliation, []byte, error) {
	statements, next, err := s.r.DocumentStatements(ctx, doc, limit, start)
	if err != nil {
		return DocumentReconciliation{}, nil, err
	}
	out, err := s.reconcileAll(ctx, doc, statements, func(ctx context.Context, st *fund.PositionItem, owner *Registered) ([]fund.PositionItem, error) {
		_, items, err := s.reported(ctx, st.PositionID, st.AsOf, owner, nil)
		return items, err
	})
	return out, next, err
}

// reconcileAll reconciles each statement with the items read counts for
// its position on the statement's date, of the statement's fund and
// investor (owner), 8 statements at a time.
func (s *Store) reconcileAll(ctx context.Context, doc string, statements []fund.PositionItem, read func(context.Context, *fund.PositionItem, *Registered) ([]fund.PositionItem, error)) (DocumentReconciliation, error) {
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
