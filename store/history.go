package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// Reads of the history records (keys.go): a version's document record and
// capital activity, keyed by version after the latest view, read newest
// first a page at a time.

// historyCursor is where a page of history records newest first resumes:
// below version Before. It is a PageKey of its own (JSON), which the api
// seals into a cursor like every other.
type historyCursor struct {
	Before  int    `json:"b"`
	Version int    `json:"v,omitempty"` // the version a capital page shows
	FundID  string `json:"f,omitempty"`
}

func (c historyCursor) key() PageKey {
	b, _ := json.Marshal(c) // a struct of strings, ints and a bool always encodes
	return b
}

func readHistoryCursor(k PageKey) (historyCursor, error) {
	var c historyCursor
	if err := json.Unmarshal(k, &c); err != nil || c.Before < 1 {
		return c, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
	}
	return c, nil
}

// versionRecords reads the history records under prefix (DocumentVersionPrefix
// or ActivityVersionPrefix) of versions lo to hi, oldest first, with one
// strongly consistent Query.
func (s *Store) versionRecords(ctx context.Context, doc, prefix string, lo, hi int) ([]Item, error) {
	if hi < lo {
		return nil, nil
	}
	from, to := VersionRange(prefix, lo, hi)
	items, err := queryAll(ctx, s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Between, from, to).Consistent(true))
	if err != nil {
		return nil, fmt.Errorf("history of document %s: %w", doc, err)
	}
	return items, nil
}

// pageBelow reads one page of at most limit history records under prefix
// with versions below before, newest first, with up to pageRequests
// strongly consistent Queries (filter, when not empty, with its args,
// leaves some out). It returns the records and the version the next page
// starts below, 0 when no record follows.
func (s *Store) pageBelow(ctx context.Context, doc, prefix string, before, limit int, filter string, args ...any) ([]Item, int, error) {
	if before <= 1 {
		return nil, 0, nil
	}
	lo, hi := VersionRange(prefix, 1, before-1)
	q := s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Between, lo, hi).Order(dynamo.Descending).Consistent(true)
	if filter != "" {
		q = q.Filter(filter, args...)
	}
	items, next, err := queryPage(ctx, q, "", limit, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("history of document %s: %w", doc, err)
	}
	if next == nil {
		return items, 0, nil
	}
	var last map[string]string // a PageKey: the key of the last record read (page.go)
	if err := json.Unmarshal(next, &last); err != nil {
		return nil, 0, err
	}
	v, ok := VersionOfSK(last[AttrSK])
	if !ok {
		return nil, 0, fmt.Errorf("history of document %s: a page ended at %q", doc, last[AttrSK])
	}
	return items, v, nil
}

// historyPage returns up to limit of the version records of latest's
// document, up to latest's version, whose asOf lies between from and to
// (either may be zero for an open end; every version of the end date
// included), newest first, resuming at start; the key to resume from is
// nil at the end. It reads one Query of up to limit+1 records, or up to
// pageRequests of them when from or to leaves some out (the page may then
// hold fewer than limit, with a key to go on).
func (s *Store) historyPage(ctx context.Context, latest *Item, from, to fund.Date, limit int, start PageKey) ([]fund.DocumentHeader, PageKey, error) {
	doc := latest.DocumentID
	before := latest.Version + 1
	if len(start) > 0 {
		c, err := readHistoryCursor(start)
		if err != nil {
			return nil, nil, err
		}
		before = min(c.Before, before)
	}
	filter, args := asOfFilter(from, to)
	records, next, err := s.pageBelow(ctx, doc, DocumentVersionPrefix, before, limit, filter, args...)
	if err != nil {
		return nil, nil, err
	}
	out := make([]fund.DocumentHeader, 0, len(records))
	for i := range records {
		out = append(out, records[i].Header())
	}
	var key PageKey
	if next > 0 {
		key = historyCursor{Before: next}.key()
	}
	return out, key, nil
}

// asOfFilter is the filter expression that keeps the records dated from
// from to to (either zero for an open end).
func asOfFilter(from, to fund.Date) (string, []any) {
	switch {
	case !from.IsZero() && !to.IsZero():
		return "$ BETWEEN ? AND ?", []any{"AsOf", from.String(), to.String()}
	case !from.IsZero():
		return "$ >= ?", []any{"AsOf", from.String()}
	case !to.IsZero():
		return "$ <= ?", []any{"AsOf", to.String()}
	}
	return "", nil
}

// latestRecord reads the latest document record with one GetItem. It
// returns ENOTFOUND for an unknown document.
func (s *Store) latestRecord(ctx context.Context, doc string) (*Item, error) {
	var it Item
	err := s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Equal, DocumentLatestSK).Consistent(true).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) {
		return nil, notFound(doc)
	}
	if err != nil {
		return nil, fmt.Errorf("latest document %s: %w", doc, err)
	}
	return &it, nil
}
