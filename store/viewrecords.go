package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

func investorNotFound(inv string) error {
	return fund.Errorf(fund.ENOTFOUND, "investor %s not found", inv)
}

// Fund returns fundID as the viewer sees it: ENOTFOUND for a fund that has
// neither a record nor a document, and for one the viewer may not read (an
// administrator's, decided before any read; an investor's, after one
// BatchGet of its note in the fund). As known at the view's instant, a
// fund that had neither then is ENOTFOUND, and the record is the one in
// force then (fundsAt); the viewer is decided as now, before any read of
// the past.
func (r View) Fund(ctx context.Context, fundID string) (fund.Fund, error) {
	if r.rd.Investor != "" {
		if err := r.reads.spend(1); err != nil {
			return fund.Fund{}, err
		}
		held, err := r.s.HoldsPositionIn(ctx, r.rd.Investor, []string{fundID})
		if err != nil {
			return fund.Fund{}, err
		}
		if len(held) == 0 {
			return fund.Fund{}, fundNotFound(fundID)
		}
	} else if err := r.FundVisible(fundID); err != nil {
		return fund.Fund{}, err
	}
	if before, err := r.beforeFeed(ctx); err != nil || before {
		return fund.Fund{}, cmp.Or(err, fundNotFound(fundID))
	}
	fs, err := r.funds(ctx, []string{fundID})
	if err != nil {
		return fund.Fund{}, err
	}
	if len(fs) == 0 {
		return fund.Fund{}, fundNotFound(fundID)
	}
	return fs[0], nil
}

// FundsPage returns a page of the funds the viewer may read, with their
// records: for an administrator of every fund, every fund, from the
// registry; for an administrator of some funds, those of them that exist,
// by ID; for an investor, the funds it holds positions of, by ID. Then one
// BatchGet of the page's funds. A page may hold fewer than limit funds
// while next is not nil. As known at the view's instant, the funds that
// did not exist then are left out (an investor's, also those it held no
// position of then), and the others carry their records then.
func (r View) FundsPage(ctx context.Context, limit int, start PageKey) ([]fund.Fund, PageKey, error) {
	if before, err := r.beforeFeed(ctx); err != nil || before {
		return []fund.Fund{}, nil, err // no fund existed then
	}
	if err := r.reads.spend(1); err != nil {
		return nil, nil, err
	}
	var ids []string
	var next PageKey
	var err error
	switch {
	case r.rd.Investor != "":
		ids, next, err = r.s.InvestorFunds(ctx, r.rd.Investor, limit, start)
		if err == nil && r.rd.Past {
			var held map[string]bool
			if held, err = r.s.fundsHeldAt(ctx, r.rd.Investor, r.rd.KnownAt, r.reads); err == nil {
				ids = slices.DeleteFunc(ids, func(id string) bool { return !held[id] })
			}
		}
	case r.rd.AllFunds:
		ids, next, err = r.s.AllFunds(ctx, limit, start)
	default:
		ids, next, err = listPage(r.rd.Funds, limit, start)
	}
	if err != nil {
		return nil, nil, err
	}
	fs, err := r.funds(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	return fs, next, nil
}

// funds reads the funds of ids with their records, in the order of ids,
// as the view sees them: those that exist now, by a record or by
// documents (one consistent BatchGet of their fund items and records), or
// those that existed at its instant with their records then (fundsAt). An
// ID repeated in ids is read once.
func (r View) funds(ctx context.Context, ids []string) ([]fund.Fund, error) {
	if r.rd.Past {
		return r.fundsAt(ctx, ids)
	}
	ids = uniq(ids)
	if len(ids) == 0 {
		return []fund.Fund{}, nil
	}
	keys := make([]dynamo.Keyed, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, dynamo.Keys{FundPK(id), FundSK}, dynamo.Keys{FundPK(id), RecordSK})
	}
	rows, err := r.s.batchRows(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("funds: %w", err)
	}
	found := map[string]*fund.Fund{}
	for _, row := range rows {
		id := rowString(row, "FundID")
		f := found[id]
		if f == nil {
			f = &fund.Fund{ID: id}
			found[id] = f
		}
		if rowString(row, "Type") == TypeFundRecord {
			var it fundRecordItem
			if err := it.UnmarshalDynamoItem(row); err != nil {
				return nil, fmt.Errorf("record of fund %s: %w", id, err)
			}
			f.Record = it.record()
		}
	}
	out := []fund.Fund{}
	for _, id := range ids {
		if f := found[id]; f != nil {
			out = append(out, *f)
		}
	}
	return out, nil
}

// listPage pages through a token's own list of IDs, sorted: the page key is
// the last ID listed.
func listPage(all []string, limit int, start PageKey) ([]string, PageKey, error) {
	sorted := slices.Sorted(slices.Values(uniq(all)))
	var after string
	if len(start) > 0 {
		if err := json.Unmarshal(start, &after); err != nil || after == "" {
			return nil, nil, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
		}
	}
	i, _ := slices.BinarySearch(sorted, after)
	if i < len(sorted) && sorted[i] == after {
		i++
	}
	sorted = sorted[i:]
	if len(sorted) <= limit {
		return sorted, nil, nil
	}
	b, _ := json.Marshal(sorted[limit-1])
	return sorted[:limit], b, nil
}

// mayReadInvestor returns ENOTFOUND unless the viewer may read inv's
// record: an investor its own, an administrator of every fund any, an
// administrator of some funds those holding positions of them (one
// BatchGet of the investor's notes in them).
func (r View) mayReadInvestor(ctx context.Context, inv string) error {
	switch {
	case r.rd.Investor != "":
		if inv != r.rd.Investor {
			return investorNotFound(inv)
		}
	case !r.rd.AllFunds:
		held, err := r.s.HoldsPositionIn(ctx, inv, r.rd.Funds)
		if err != nil {
			return err
		}
		if len(held) == 0 {
			return investorNotFound(inv)
		}
	}
	return nil
}

// MayWriteInvestor returns ENOTFOUND unless the viewer, an administrator,
// may write inv's record: an administrator of every fund any investor's,
// an administrator of some funds those of the investors holding positions
// of them.
func (r View) MayWriteInvestor(ctx context.Context, inv string) error {
	if r.rd.Investor != "" {
		return &fund.Error{Code: fund.EFORBIDDEN, Message: "investor tokens may not write records"}
	}
	return r.mayReadInvestor(ctx, inv)
}

// Investor returns inv as the viewer sees it: ENOTFOUND for an investor
// that has neither a record nor a position, and for one the viewer may not
// read (decided before its record is read). As known at the view's
// instant, an investor that had neither a record nor a registered position
// then is ENOTFOUND, and the record is the one in force then
// (investorsAt); the viewer is decided as now, before any read of the
// past.
func (r View) Investor(ctx context.Context, inv string) (fund.Investor, error) {
	if !r.rd.AllFunds && r.rd.Investor == "" {
		if err := r.reads.spend(1); err != nil {
			return fund.Investor{}, err
		}
	}
	if err := r.mayReadInvestor(ctx, inv); err != nil {
		return fund.Investor{}, err
	}
	if r.rd.Past {
		if before, err := r.beforeFeed(ctx); err != nil || before {
			return fund.Investor{}, cmp.Or(err, investorNotFound(inv))
		}
		is, err := r.investorsAt(ctx, []string{inv}, nil)
		if err != nil || len(is) == 0 {
			return fund.Investor{}, cmp.Or(err, investorNotFound(inv))
		}
		return is[0], nil
	}
	is, err := r.s.Investors(ctx, []string{inv}, false)
	if err != nil {
		return fund.Investor{}, err
	}
	if len(is) > 0 {
		return is[0], nil
	}
	// No record: the investor is known from its positions. An administrator
	// of some funds has seen its note; the others ask the registry.
	if r.rd.AllFunds || r.rd.Investor != "" {
		ok, err := r.s.investorRegistered(ctx, inv)
		if err != nil {
			return fund.Investor{}, err
		}
		if !ok {
			return fund.Investor{}, investorNotFound(inv)
		}
	}
	return fund.Investor{ID: inv}, nil
}

// InvestorsPage returns a page of investors with their records: with
// fundID, those holding positions of it (the viewer must administer it:
// ENOTFOUND otherwise, and for a fund that does not exist); without, every
// investor, for an administrator of every fund (EINVALID on fundId for any
// other viewer). As known at the view's instant, the page of IDs is listed
// as now, then the investors that did not exist then (of a fund: that held
// no position of it then) are left out, and the others carry their records
// then.
func (r View) InvestorsPage(ctx context.Context, fundID string, limit int, start PageKey) ([]fund.Investor, PageKey, error) {
	if err := r.reads.spend(1); err != nil {
		return nil, nil, err
	}
	var ids []string
	var next PageKey
	var err error
	var registered map[string]bool // as known at an instant, a fund's investors then
	switch {
	case fundID != "":
		if err := r.FundVisible(fundID); err != nil {
			return nil, nil, err
		}
		if before, err := r.beforeFeed(ctx); err != nil || before {
			// Nothing existed then: the fund is unknown, as below.
			if err == nil && start == nil {
				err = fundNotFound(fundID)
			}
			return []fund.Investor{}, nil, err
		}
		ids, next, err = r.s.FundInvestors(ctx, fundID, limit, start)
		if err == nil && r.rd.Past {
			if registered, err = r.s.investorsRegisteredAt(ctx, fundID, r.rd.KnownAt, r.reads); err == nil {
				ids = slices.DeleteFunc(ids, func(id string) bool { return !registered[id] })
			}
		}
		if err == nil && len(ids) == 0 && start == nil {
			// An empty first page of a fund with neither a record nor a
			// document is an unknown fund.
			var fs []fund.Fund
			if fs, err = r.funds(ctx, []string{fundID}); err == nil && len(fs) == 0 {
				err = fundNotFound(fundID)
			}
		}
	case r.rd.AllFunds && r.rd.Investor == "":
		if before, err := r.beforeFeed(ctx); err != nil || before {
			return []fund.Investor{}, nil, err // no investor existed then
		}
		ids, next, err = r.s.AllInvestors(ctx, limit, start)
	default:
		err = fund.Invalid("fundId", "is required: your token does not cover every fund, so name one of its funds")
	}
	if err != nil {
		return nil, nil, err
	}
	var is []fund.Investor
	if r.rd.Past {
		// A fund's investor known then held a position of it then: it
		// existed, record or not.
		is, err = r.investorsAt(ctx, ids, registered)
	} else {
		is, err = r.s.Investors(ctx, ids, true)
	}
	if err != nil {
		return nil, nil, err
	}
	return is, next, nil
}

// beforeFeed reports whether the view reads as known at an instant before
// the event feed's start, when nothing existed (Store.BeforeFeed); a read
// of the latest versions never is.
func (r View) beforeFeed(ctx context.Context) (bool, error) {
	if !r.rd.Past {
		return false, nil
	}
	return r.s.BeforeFeed(ctx, r.rd.KnownAt, r.reads)
}
