// Package positions serves the position pivot: a position's items across
// documents (GSI2), the positions of a fund or an investor, and per-position
// analysis of a document.
package positions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/guregu/dynamo/v2"
)

// Store reads positions from the fund table.
type Store struct {
	table dynamo.Table
	docs  *store.Store
}

// NewStore returns a Store over the table of s.
func NewStore(s *store.Store) *Store { return &Store{table: s.Table(), docs: s} }

// Registered is a position as the fund partition records it: one fund plus
// one investor.
type Registered struct {
	PositionID string
	FundID     string
	InvestorID string
	Currency   string
	CreatedAt  time.Time
}

func registered(it *store.Item) Registered {
	return Registered{PositionID: it.PositionID, FundID: it.FundID, InvestorID: it.InvestorID, Currency: it.Currency, CreatedAt: it.CreatedAt}
}

// Items lists a position's latest items across every document with one
// Query of GSI2 (POSITION#<pos>), ordered by kind then document; kind, when
// set, keeps one kind through a terminated sort-key prefix. Each item carries
// the document version it came from; the items of one position in one
// document are always written together, so they show one version.
func (s *Store) Items(ctx context.Context, pos string, kind fund.ItemKind, limit int, start store.PageKey) ([]fund.PositionItem, store.PageKey, error) {
	q := s.table.Get(store.AttrGSI2PK, store.PositionGSI2PK(pos)).Index(store.IndexGSI2)
	if kind != "" {
		q = q.Range(store.AttrGSI2SK, dynamo.BeginsWith, store.PositionKindPrefix(kind))
	}
	items, next, err := store.QueryPage(ctx, q, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("items of position %s: %w", pos, err)
	}
	out := make([]fund.PositionItem, 0, len(items))
	for i := range items {
		out = append(out, items[i].PositionItem())
	}
	return out, next, nil
}

// CapitalCallIn returns a position's capital call in one document with one
// Query of GSI1 (CAPITAL_CALL#<pos>#<doc>). It returns ENOTFOUND if there is
// none.
func (s *Store) CapitalCallIn(ctx context.Context, pos, doc string) (fund.PositionItem, error) {
	var it store.Item
	err := s.table.Get(store.AttrGSI1PK, store.PositionItemGSI1PK(fund.CapitalCall, pos, doc)).
		Index(store.IndexGSI1).Range(store.AttrGSI1SK, dynamo.Equal, store.GSI1LatestSK).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) {
		return fund.PositionItem{}, fund.Errorf(fund.ENOTFOUND, "no capital call for position %s in document %s", pos, doc)
	}
	if err != nil {
		return fund.PositionItem{}, fmt.Errorf("capital call of position %s in document %s: %w", pos, doc, err)
	}
	return it.PositionItem(), nil
}

// maxRegistryReads bounds the Queries one call of VisibleOfInvestor makes,
// and registryReadRows the rows each reads when the caller sees only some:
// a caller who sees few or none of an investor's positions costs a bounded
// read, not one Query per position.
const (
	maxRegistryReads = 2
	registryReadRows = 1000
)

// VisibleOfInvestor lists up to limit of an investor's positions that keep
// accepts (the caller's access rule), resuming at start, with at most two
// Queries of GSI2 (INVESTOR#<inv>). filtered says keep may refuse some: each
// Query then reads up to 1,000 rows. A page ends after its last position, so
// the next one starts right after it; it may hold fewer than limit (even
// none) with a key to go on from when the reads were used up first.
func (s *Store) VisibleOfInvestor(ctx context.Context, inv string, keep func(Registered) bool, filtered bool, limit int, start store.PageKey) ([]Registered, store.PageKey, error) {
	q := s.table.Get(store.AttrGSI2PK, store.InvestorGSI2PK(inv)).Index(store.IndexGSI2)
	read := limit
	if filtered {
		read = max(limit, registryReadRows)
	}
	var out []Registered
	next := start
	for range maxRegistryReads {
		items, n, err := store.QueryPage(ctx, q, read, next)
		if err != nil {
			return nil, nil, fmt.Errorf("positions of investor %s: %w", inv, err)
		}
		for i := range items {
			r := registered(&items[i])
			if !keep(r) {
				continue
			}
			out = append(out, r)
			if len(out) == limit {
				if i == len(items)-1 {
					return out, n, nil
				}
				return out, store.IndexPageKey(&items[i], store.IndexGSI2), nil
			}
		}
		if next = n; next == nil {
			break
		}
	}
	return out, next, nil
}

// OfFund lists a fund's positions with one Query of the fund partition.
func (s *Store) OfFund(ctx context.Context, fundID string, limit int, start store.PageKey) ([]Registered, store.PageKey, error) {
	q := s.table.Get(store.AttrPK, store.FundPK(fundID)).Range(store.AttrSK, dynamo.BeginsWith, store.FundPositionPrefix)
	return s.list(ctx, q, limit, start, "positions of fund "+fundID)
}

func (s *Store) list(ctx context.Context, q *dynamo.Query, limit int, start store.PageKey, what string) ([]Registered, store.PageKey, error) {
	items, next, err := store.QueryPage(ctx, q, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make([]Registered, 0, len(items))
	for i := range items {
		out = append(out, registered(&items[i]))
	}
	return out, next, nil
}

// Analysis is what one document reports for one position: how many items of
// each kind and their exact totals.
type Analysis struct {
	PositionID          string
	InvestorID          string
	CapitalCalls        int
	TotalCalled         fund.Money
	Distributions       int
	TotalDistributed    fund.Money
	UnfundedCommitments int
	TotalUnfunded       fund.Money
}

// Analyze computes the per-position analysis of one document version.
func Analyze(d fund.Document) []Analysis {
	out := make([]Analysis, 0, len(d.Positions))
	for _, p := range d.Positions {
		a := Analysis{PositionID: p.ID, InvestorID: p.InvestorID}
		if c := p.CapitalCall; c != nil {
			a.CapitalCalls, a.TotalCalled = a.CapitalCalls+1, a.TotalCalled.Add(c.Amount)
		}
		if x := p.Distribution; x != nil {
			a.Distributions, a.TotalDistributed = a.Distributions+1, a.TotalDistributed.Add(x.Amount)
		}
		if u := p.UnfundedCommitment; u != nil {
			a.UnfundedCommitments, a.TotalUnfunded = a.UnfundedCommitments+1, a.TotalUnfunded.Add(u.Amount)
		}
		out = append(out, a)
	}
	return out
}
