package positions

import (
	"context"
	"slices"

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
	sum := Summarize(pos, asOf, items)
	sum.FundID, sum.InvestorID, sum.Currency = identity.FundID, identity.InvestorID, identity.Currency
	return sum, nil
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
	return identity, CashflowsOf(items), nil
}

// InvestorSummary sums up the investor's positions that keep accepts (the
// caller's access rule) on a date, up to limit of them from start (see
// VisibleOfInvestor), each as Summary does, several at a time, and returns
// the key of the next page. Each position counts only the items whose fund
// and investor are the ones its registry row names: the row authorized the
// read, so nothing else may be added in. Positions no document reports are
// left out. It returns ENOTFOUND if, on the first page, no position is left.
func (s *Store) InvestorSummary(ctx context.Context, inv string, asOf fund.Date, keep func(Registered) bool, filtered bool, limit int, start []byte) (InvestorSummary, []byte, error) {
	regs, next, err := s.VisibleOfInvestor(ctx, inv, keep, filtered, limit, start)
	if err != nil {
		return InvestorSummary{}, nil, err
	}
	sums := make([]*Summary, len(regs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, r := range regs {
		g.Go(func() error {
			sum, err := s.summary(gctx, r.PositionID, asOf, &r, nil)
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
