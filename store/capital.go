package store

import (
	"github.com/fundsvc/fundsvc/fund"

	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/guregu/dynamo/v2"
)

// Capital is a page of a document's capital entities at one version: on
// the first page, the version's capital activity and its capital calls;
// on every page, a page of the earlier versions' capital activities,
// newest first.
type Capital struct {
	FundID     string
	Version    int
	Latest     *fund.ActivityRecord // first page only; nil when the version has none
	Activities []fund.ActivityRecord
	Calls      []fund.PositionItem // first page only
}

// Capital reads a page of a document's capital entities. The first page
// (start nil) is read with one Query over the sort keys that begin with
// "CAPITAL_", extended down to the commit head (which sorts just before
// them) so the read can be checked for consistency; the capital account
// statements in that range are filtered out: they are read (and paid for)
// but not returned. Its earlier capital activities come from the head's
// recent versions when they hold the page (recentActivities); otherwise,
// and on each later page, they are one Query of at most limit+1 history
// records, newest first, below the version the first page read, which
// later pages keep; the key to resume from is nil at the end. Its first
// page as known at the view's instant is capitalAt's, whose key a later
// page resumes as any other. It returns ENOTFOUND for an unknown document
// and for one of a fund the viewer does not cover.
func (r View) Capital(ctx context.Context, doc string, limit int, start PageKey) (Capital, PageKey, error) {
	if r.rd.Past && len(start) == 0 {
		return r.capitalAt(ctx, doc, limit)
	}
	if err := r.authorize(ctx, doc); err != nil {
		return Capital{}, nil, err
	}
	s := r.s
	if len(start) > 0 {
		cur, err := readHistoryCursor(start)
		if err != nil {
			return Capital{}, nil, err
		}
		c := Capital{FundID: cur.FundID, Version: cur.Version}
		next, err := s.earlierActivities(ctx, doc, &c, cur.Before, limit)
		if err = r.visible(doc, c.FundID, err); err != nil {
			return Capital{}, nil, err
		}
		return c, next, nil
	}
	lo, hi := CapitalRange()
	items, err := queryAll(ctx, s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Between, lo, hi).
		Filter("$ <> ?", "Type", TypeCapitalAccount).Consistent(true))
	if err != nil {
		return Capital{}, nil, fmt.Errorf("capital of document %s: %w", doc, err)
	}
	p := classify(items)
	if p.head == nil {
		return Capital{}, nil, notFound(doc)
	}
	c := Capital{FundID: p.head.FundID, Version: p.head.Version}
	next, ok, err := recentActivities(p.head, &c, limit)
	if err == nil && !ok {
		next, err = s.earlierActivities(ctx, doc, &c, p.head.Version, limit)
	}
	if err != nil {
		return Capital{}, nil, err
	}
	if p.consistent() {
		if p.latestActivity != nil {
			a := p.latestActivity.Activity()
			c.Latest = &a
		}
		for _, it := range p.livePositions() {
			if it.Kind == fund.CapitalCall {
				c.Calls = append(c.Calls, it)
			}
		}
	} else {
		d, err := s.readVersion(ctx, doc, p.head.CommitID)
		if err != nil {
			return Capital{}, nil, err
		}
		c.ofVersion(d)
	}
	if err := r.visible(doc, c.FundID, nil); err != nil {
		return Capital{}, nil, err
	}
	return c, next, nil
}

// ofVersion sets c's capital activity and capital calls to those of d, a
// whole version.
func (c *Capital) ofVersion(d fund.Document) {
	if d.CapitalActivity != nil {
		c.Latest = &fund.ActivityRecord{CapitalActivity: *d.CapitalActivity, Version: d.Version}
	}
	for _, it := range d.Items() {
		if it.Kind == fund.CapitalCall {
			c.Calls = append(c.Calls, it)
		}
	}
}

// recentActivities sets c's first page of earlier capital activities from
// the head's recent versions, when they hold the page and tell whether
// another follows (ok), so the first page needs no read of history
// records: when they reach back to version 1, or hold more than limit
// capital activities.
func recentActivities(head *Item, c *Capital, limit int) (next PageKey, ok bool, err error) {
	recent, err := decodeRecent(head.Recent)
	if err != nil {
		return nil, false, fmt.Errorf("document %s: the head's recent versions: %w", head.DocumentID, err)
	}
	var earlier []fund.ActivityRecord
	oldest := head.Version
	for _, r := range recent {
		if r.Version >= head.Version {
			continue
		}
		oldest = min(oldest, r.Version)
		if r.Activity != nil {
			earlier = append(earlier, fund.ActivityRecord{CapitalActivity: *r.Activity, Version: r.Version})
		}
	}
	slices.SortFunc(earlier, func(a, b fund.ActivityRecord) int { return cmp.Compare(b.Version, a.Version) })
	switch {
	case len(earlier) > limit:
		c.Activities = earlier[:limit]
		return historyCursor{Before: earlier[limit-1].Version, Version: c.Version, FundID: c.FundID}.key(), true, nil
	case oldest <= 1:
		c.Activities = earlier
		return nil, true, nil
	}
	return nil, false, nil
}

// earlierActivities sets c's page of the capital activities of the
// versions below before, newest first, and returns the key of the next
// page (nil at the end).
func (s *Store) earlierActivities(ctx context.Context, doc string, c *Capital, before, limit int) (PageKey, error) {
	records, next, err := s.pageBelow(ctx, doc, ActivityVersionPrefix, before, limit, "")
	if err != nil {
		return nil, err
	}
	c.Activities = make([]fund.ActivityRecord, 0, len(records))
	for i := range records {
		c.Activities = append(c.Activities, records[i].Activity())
	}
	if next == 0 {
		return nil, nil
	}
	return historyCursor{Before: next, Version: c.Version, FundID: c.FundID}.key(), nil
}
