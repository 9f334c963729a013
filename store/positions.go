package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// The reads of the position pivot: a position's items across documents
// (GSI2, POSITION#<pos>), its capital call in one document (GSI1), and the
// registry rows of a fund (its partition) or an investor (GSI2,
// INVESTOR#<inv>). Package positions computes over what they return.

// PositionItems lists a position's latest items across every document with
// one Query of GSI2 (POSITION#<pos>), ordered by kind then document; kind,
// when set, keeps one kind through a terminated sort-key prefix. Each item
// carries the document version it came from; the items of one position in
// one document are always written together, so they show one version.
func (s *Store) PositionItems(ctx context.Context, pos string, kind fund.ItemKind, limit int, start PageKey) ([]fund.PositionItem, PageKey, error) {
	items, next, err := queryPage(ctx, s.positionItemsQuery(pos, kind), IndexGSI2, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("items of position %s: %w", pos, err)
	}
	return positionItemsOf(items), next, nil
}

// positionItemsQuery is the Query of GSI2 that PositionItems and
// StoredPositionItems read pages of.
func (s *Store) positionItemsQuery(pos string, kind fund.ItemKind) *dynamo.Query {
	q := s.table.Get(AttrGSI2PK, PositionGSI2PK(pos)).Index(IndexGSI2)
	if kind != "" {
		q = q.Range(AttrGSI2SK, dynamo.BeginsWith, PositionKindPrefix(kind))
	}
	return q
}

// AllPositionItems returns every latest item of a position across
// documents, ordered by kind then document, with one Query of GSI2
// (POSITION#<pos>) followed page by page. A document whose latest version
// no longer reports the position has none among them: its line was
// withdrawn.
func (s *Store) AllPositionItems(ctx context.Context, pos string) ([]fund.PositionItem, error) {
	items, err := queryAll(ctx, s.table.Get(AttrGSI2PK, PositionGSI2PK(pos)).Index(IndexGSI2))
	if err != nil {
		return nil, fmt.Errorf("items of position %s: %w", pos, err)
	}
	return positionItemsOf(items), nil
}

func positionItemsOf(items []Item) []fund.PositionItem {
	out := make([]fund.PositionItem, 0, len(items))
	for i := range items {
		out = append(out, items[i].PositionItem())
	}
	return out
}

// CapitalCallIn returns a position's capital call in one document with one
// Query of GSI1 (CAPITAL_CALL#<pos>#<doc>). It returns ENOTFOUND if there is
// none.
func (s *Store) CapitalCallIn(ctx context.Context, pos, doc string) (fund.PositionItem, error) {
	var it Item
	err := s.table.Get(AttrGSI1PK, PositionItemGSI1PK(fund.CapitalCall, pos, doc)).
		Index(IndexGSI1).Range(AttrGSI1SK, dynamo.Equal, GSI1LatestSK).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) {
		return fund.PositionItem{}, fund.Errorf(fund.ENOTFOUND, "no capital call for position %s in document %s", pos, doc)
	}
	if err != nil {
		return fund.PositionItem{}, fmt.Errorf("capital call of position %s in document %s: %w", pos, doc, err)
	}
	return it.PositionItem(), nil
}

// FundPositions lists a fund's registered positions with one Query of the
// fund partition, resuming at start; the key to resume from is nil at the
// end.
func (s *Store) FundPositions(ctx context.Context, fundID string, limit int, start PageKey) ([]fund.Registered, PageKey, error) {
	q := s.table.Get(AttrPK, FundPK(fundID)).Range(AttrSK, dynamo.BeginsWith, FundPositionPrefix)
	items, next, err := queryPage(ctx, q, "", limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("positions of fund %s: %w", fundID, err)
	}
	out := make([]fund.Registered, 0, len(items))
	for i := range items {
		out = append(out, registered(&items[i]))
	}
	return out, next, nil
}

func registered(it *Item) fund.Registered {
	return fund.Registered{PositionID: it.PositionID, FundID: it.FundID, InvestorID: it.InvestorID, Currency: it.Currency, RegisteredAt: it.CreatedAt}
}

// maxRegistryReads bounds the Queries one call of InvestorPositions makes,
// and registryReadRows the rows each reads when the caller sees only some:
// a caller who sees few or none of an investor's positions costs a bounded
// read, not one Query per position.
const (
	maxRegistryReads = 2
	registryReadRows = 1000
)

// InvestorPositions lists up to limit of an investor's registered positions
// that v may read, resuming at start, with at most two Queries of GSI2
// (INVESTOR#<inv>). When v sees some funds only, each Query reads up to
// 1,000 rows. A page ends after its last
// position, so the next one starts right after it, and it has a key to go on
// from only when a position it may hold follows, or when the reads were used
// up first (the page may then hold fewer than limit, even none).
func (s *Store) InvestorPositions(ctx context.Context, v fund.Viewer, inv string, limit int, start PageKey) ([]fund.Registered, PageKey, error) {
	q := s.table.Get(AttrGSI2PK, InvestorGSI2PK(inv)).Index(IndexGSI2)
	filtered := v.SeesSomeFunds()
	read := limit
	if filtered {
		read = max(limit, registryReadRows)
	}
	var out []fund.Registered
	var last *Item // the row of out's last position
	next := start
	for range maxRegistryReads {
		items, n, err := queryPage(ctx, q, IndexGSI2, read, next)
		if err != nil {
			return nil, nil, fmt.Errorf("positions of investor %s: %w", inv, err)
		}
		for i := range items {
			r := registered(&items[i])
			if !v.MayReadPosition(r.FundID, r.InvestorID) {
				continue
			}
			if len(out) == limit { // one more follows the page
				return out, indexPageKey(last, IndexGSI2), nil
			}
			out, last = append(out, r), &items[i]
		}
		if next = n; next == nil {
			break
		}
		if len(out) == limit && !filtered { // v reads every row, and n proves one follows
			return out, next, nil
		}
	}
	return out, next, nil
}
