package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// FundInvestors returns a page of the investors holding positions of
// fundID, by investor ID: one Query of the fund's notes.
func (s *Store) FundInvestors(ctx context.Context, fundID string, limit int, start PageKey) ([]string, PageKey, error) {
	q := s.table.Get(AttrPK, FundPK(fundID)).Range(AttrSK, dynamo.BeginsWith, FundInvestorPrefix).Consistent(true)
	items, next, err := queryPage(ctx, q, "", limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("investors of fund %s: %w", fundID, err)
	}
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, items[i].InvestorID)
	}
	return out, next, nil
}

// InvestorFunds returns a page of the funds investor inv holds positions
// of, by fund ID: one Query of its notes in its registry partition.
func (s *Store) InvestorFunds(ctx context.Context, inv string, limit int, start PageKey) ([]string, PageKey, error) {
	q := s.table.Get(AttrGSI1PK, InvestorsGSI1PK(inv)).Index(IndexGSI1).
		Range(AttrGSI1SK, dynamo.BeginsWith, FundInvestorGSI1SK(inv, ""))
	items, next, err := queryPage(ctx, q, IndexGSI1, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("funds of investor %s: %w", inv, err)
	}
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, items[i].FundID)
	}
	return out, next, nil
}

// registry is the sharded GSI1 registry of funds or of investors.
type registry struct {
	shard  func(int) string // the partition key of a shard
	prefix string           // of every sort key: FUND# or INVESTOR#
	id     func(*Item) string
}

// registryCursor is where a registry listing resumes: a shard, and the last
// ID listed in it.
type registryCursor struct {
	Shard int    `json:"shard"`
	After string `json:"after,omitempty"`
}

// maxRegistryRequests bounds the Queries of one registry page: a page goes
// through shards, and an entity of many rows (an investor in many funds)
// may fill a request with one ID.
const maxRegistryRequests = RegistryShards + 4

// page lists up to limit IDs, shard by shard and by ID within a shard. Each
// ID is listed once: its rows sort together (its record first), and the
// next request starts after the last of them. A page may hold fewer than
// limit IDs, even none, while next is not nil.
func (r registry) page(ctx context.Context, s *Store, limit int, start PageKey) ([]string, PageKey, error) {
	var cur registryCursor
	if len(start) > 0 {
		if err := json.Unmarshal(start, &cur); err != nil || cur.Shard < 0 || cur.Shard >= RegistryShards {
			return nil, nil, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
		}
	}
	ids := []string{}
	for range maxRegistryRequests {
		q := s.table.Get(AttrGSI1PK, r.shard(cur.Shard)).Index(IndexGSI1)
		if cur.After != "" {
			// "$" sorts after the "#" that ends an ID in a sort key and
			// before every character of an ID.
			q = q.Range(AttrGSI1SK, dynamo.Greater, r.prefix+cur.After+"$")
		} else {
			q = q.Range(AttrGSI1SK, dynamo.BeginsWith, r.prefix)
		}
		iter := q.SearchLimit(limit - len(ids) + 1).RequestLimit(1).Iter()
		rows, err := collectOf[Item](ctx, iter)
		if err != nil {
			return nil, nil, err
		}
		for i := range rows {
			id := r.id(&rows[i])
			if id == "" || id == cur.After {
				continue
			}
			if len(ids) == limit {
				return ids, registryKey(cur), nil
			}
			ids, cur.After = append(ids, id), id
		}
		lek, err := iter.LastEvaluatedKey(ctx)
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return nil, nil, err
		}
		if lek == nil {
			if cur.Shard+1 == RegistryShards {
				return ids, nil, nil
			}
			cur = registryCursor{Shard: cur.Shard + 1}
		}
		if len(ids) == limit {
			return ids, registryKey(cur), nil
		}
	}
	return ids, registryKey(cur), nil
}

func registryKey(c registryCursor) PageKey {
	b, _ := json.Marshal(c) // an int and a string always encode
	return b
}

// AllFunds returns a page of the IDs of every fund, of a record or of
// documents, from the funds' registry (GSI1, eventually consistent).
func (s *Store) AllFunds(ctx context.Context, limit int, start PageKey) ([]string, PageKey, error) {
	ids, next, err := fundRegistry.page(ctx, s, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("funds: %w", err)
	}
	return ids, next, nil
}

// AllInvestors returns a page of the IDs of every investor, of a record or
// of positions, from the investors' registry (GSI1, eventually consistent).
func (s *Store) AllInvestors(ctx context.Context, limit int, start PageKey) ([]string, PageKey, error) {
	ids, next, err := investorRegistry.page(ctx, s, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("investors: %w", err)
	}
	return ids, next, nil
}
