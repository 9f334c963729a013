package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guregu/dynamo/v2"
)

// The registries of positions as known at an instant. A position's
// registry row carries RegisteredAt, the creation instant of the document
// version that first named it (store.go's confirm), so a position counts
// from that instant. That version's commit instant follows its creation
// by the time it took to stage: a knownAt inside that gap counts the
// position a moment before its document is known.

// fundsHeldAt returns, for investor inv, the funds in which it held a
// position registered at or before at: its registry rows (GSI2,
// INVESTOR#<inv>), one Query per 1 MB (about 4,000 positions).
func (s *Store) fundsHeldAt(ctx context.Context, inv string, at time.Time, reads *Reads) (map[string]bool, error) {
	rows, err := s.queryCounted(ctx, s.table.Get(AttrGSI2PK, InvestorGSI2PK(inv)).Index(IndexGSI2), reads)
	if err != nil {
		return nil, fmt.Errorf("positions of investor %s: %w", inv, err)
	}
	out := map[string]bool{}
	for i := range rows {
		if !rows[i].CreatedAt.After(at) {
			out[rows[i].FundID] = true
		}
	}
	return out, nil
}

// investorsRegisteredAt returns the investors holding a position of
// fundID registered at or before at: the fund's registry rows, one Query
// per 1 MB.
func (s *Store) investorsRegisteredAt(ctx context.Context, fundID string, at time.Time, reads *Reads) (map[string]bool, error) {
	q := s.table.Get(AttrPK, FundPK(fundID)).Range(AttrSK, dynamo.BeginsWith, FundPositionPrefix).Consistent(true)
	rows, err := s.queryCounted(ctx, q, reads)
	if err != nil {
		return nil, fmt.Errorf("positions of fund %s: %w", fundID, err)
	}
	out := map[string]bool{}
	for i := range rows {
		if !rows[i].CreatedAt.After(at) {
			out[rows[i].InvestorID] = true
		}
	}
	return out, nil
}

// queryCounted reads every item of q, counting its requests in reads.
func (s *Store) queryCounted(ctx context.Context, q *dynamo.Query, reads *Reads) ([]Item, error) {
	var out []Item
	var from dynamo.PagingKey
	for {
		if from != nil {
			q = q.StartFrom(from)
		}
		if err := reads.spend(1); err != nil {
			return nil, err
		}
		iter := q.RequestLimit(1).Iter()
		got, err := collectOf[Item](ctx, iter)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		from, err = iter.LastEvaluatedKey(ctx)
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return nil, err
		}
		if from == nil {
			return out, nil
		}
	}
}
