package positions

import (
	"context"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The later pages of a fan-out read whose first page was read from the
// latest versions: its cursor pins the instant the first page was read at,
// and every later page is read as known at that instant. Reading each of
// a page's positions as known at an instant costs a ledger Query and one
// Query per document that reports it, where the latest read costs one
// Query; but a fund none of whose documents was committed since the
// instant reads the same from its latest versions as at the instant. So
// each fund of the page is asked once whether it changed since (its event
// feed, Reader.FundChangedSince), and only the positions of a fund that
// did are read as known at the instant: paging on at once through a
// listing costs what the first page did, plus one Query per fund.

// pinnedFunds answers, once per fund for one read, whether a fund's
// documents changed since the instant, and finds the versions known then
// for the positions of those that did.
type pinnedFunds struct {
	r        Reader
	at       time.Time
	versions *knownVersions
	changed  onceEach[bool]
}

func newPinnedFunds(r Reader, at time.Time) *pinnedFunds {
	return &pinnedFunds{r: r, at: at, versions: newKnownVersions(r, at)}
}

// since reports whether the fund changed since the instant, asking the
// Reader the first time.
func (p *pinnedFunds) since(ctx context.Context, fundID string) (bool, error) {
	return p.changed.get(ctx, fundID, func() (bool, error) { return p.r.FundChangedSince(ctx, fundID, p.at) })
}

// pinnedReported is a registered position's items on asOf as known at the
// instant: from the latest versions when its fund has not changed since,
// otherwise as reportedKnownAtIn reads them. A position registered after
// the instant did not exist then.
func (s *Store) pinnedReported(ctx context.Context, p *pinnedFunds, r Registered, asOf fund.Date) (fund.PositionItem, []fund.PositionItem, error) {
	if r.RegisteredAt.After(p.at) {
		return fund.PositionItem{}, nil, unregistered(r)
	}
	changed, err := p.since(ctx, r.FundID)
	if err != nil {
		return fund.PositionItem{}, nil, err
	}
	if !changed {
		return s.reported(ctx, r.PositionID, asOf, &r, nil)
	}
	return s.reportedKnownAtIn(ctx, r.PositionID, asOf, p.at, nil, &r, p.versions)
}

// InvestorSummaryPinned is a later page of InvestorSummary, whose first
// page was read from the latest versions at the instant at: the same
// listing, each position as known at at (see pinnedFunds).
func (s *Store) InvestorSummaryPinned(ctx context.Context, inv string, asOf fund.Date, at time.Time, keep func(Registered) bool, filtered bool, limit int, start []byte) (InvestorSummary, []byte, error) {
	p := newPinnedFunds(s.r, at)
	return s.investorSummary(ctx, inv, asOf, keep, filtered, limit, start, func(ctx context.Context, r Registered) (Summary, error) {
		identity, items, err := s.pinnedReported(ctx, p, r, asOf)
		if err != nil {
			return Summary{}, err
		}
		return summed(r.PositionID, asOf, identity, items), nil
	})
}

// InvestorPerformancePinned is a later page of InvestorPerformance read as
// InvestorSummaryPinned reads.
func (s *Store) InvestorPerformancePinned(ctx context.Context, inv string, asOf fund.Date, at time.Time, keep func(Registered) bool, filtered bool, limit int, start []byte) (InvestorPerformance, []byte, error) {
	p := newPinnedFunds(s.r, at)
	return s.investorPerformance(ctx, inv, asOf, keep, filtered, limit, start, func(ctx context.Context, r Registered) (Performance, error) {
		identity, items, err := s.pinnedReported(ctx, p, r, asOf)
		if err != nil {
			return Performance{}, err
		}
		return s.evaluated(r.PositionID, asOf, identity, items), nil
	})
}
