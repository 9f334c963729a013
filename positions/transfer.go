package positions

import (
	"context"

	"github.com/fundsvc/fundsvc/fund"
)

// Holding is what a transfer of interest moves from a position: its
// balances on the effective date, as rd reads them, and where its capital
// account comes from.
type Holding struct {
	PositionID, FundID, InvestorID, Currency string
	AsOf                                     fund.Date
	fund.Balances
	// NAV is the capital account's valuation: its statement, and whether
	// it was rolled forward from it (Status NAVRolledForward). With no
	// statement, the capital account is zero and Status says so.
	NAV NAV
}

// Holding reads a position's balances on asOf, with one read of its items
// as Summary makes. The measures are the summary's and the performance's
// on that date:
//
//   - Commitment: the most recent reported (zero if none is).
//   - Unfunded: the most recent reported, else the one computed from the
//     commitment and the notices, else zero.
//   - PaidIn: the completed calls due on or before asOf.
//   - Distributed, Withholding, DistributedNet: the completed
//     distributions, gross, withheld and net.
//   - Recallable: the distributions' lines that may be called again.
//   - CapitalAccount: the NAV on asOf, from the latest statement, rolled
//     forward by the notices after it (zero without a statement).
//
// It returns ENOTFOUND for a position no document dated on or before asOf
// reports, or that rd's viewer may not read.
func (s *Analytics) Holding(ctx context.Context, rd fund.Read, pos string, asOf fund.Date) (Holding, error) {
	identity, items, err := s.reportedAs(ctx, rd, pos, asOf)
	if err != nil {
		return Holding{}, err
	}
	if len(items) == 0 {
		return Holding{}, fund.Errorf(fund.ENOTFOUND, "position %s holds nothing on %s: no document dated on or before it reports it", pos, asOf)
	}
	sum, perf := summed(pos, asOf, identity, items), s.evaluated(pos, asOf, identity, items)
	h := Holding{PositionID: pos, FundID: sum.FundID, InvestorID: sum.InvestorID, Currency: sum.Currency, AsOf: asOf, NAV: perf.NAV,
		Balances: fund.Balances{PaidIn: sum.PaidIn, Distributed: sum.Distributed.Completed, Withholding: sum.Withholding.Completed,
			DistributedNet: sum.DistributedNet.Completed, Recallable: sum.Recallable}}
	for _, m := range []struct {
		to   *fund.Money
		from []*fund.Money
	}{
		{&h.Commitment, []*fund.Money{sum.Commitment}},
		{&h.Unfunded, []*fund.Money{sum.UnfundedReported, sum.UnfundedComputed}},
		{&h.CapitalAccount, []*fund.Money{perf.NAV.Value}},
	} {
		for _, f := range m.from {
			if f != nil {
				*m.to = *f
				break
			}
		}
	}
	return h, nil
}
