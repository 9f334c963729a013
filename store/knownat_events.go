package store

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// The versions of one document committed in a window of instants, for
// "why did this number move" (issue 25's changes routes). Commit instants
// rise with versions within a document (commitRequest), so the versions
// committed in (from, to] are a run of version numbers: from the one after
// the version known at from to the version known at to. Each end is found
// by a binary search over the versions' events, as VersionAt's is, and
// the run's events are then read with one Query, newest version last.

// DocumentVersionsBetween returns the events of doc's versions committed
// after from and at or before to, in version order (commit order), at
// most limit+1 of them: more than limit returned means more exist. None
// when the document is unknown or its latest version was committed at or
// before from. Reads: the head's GetItem, then, when the latest version
// is later than from, at most 2·⌈log₂ n⌉ GetItems of events for the two
// searches and one Query of at most limit+1 events, whatever the number
// n of versions.
func (s *Store) DocumentVersionsBetween(ctx context.Context, doc string, from, to time.Time, limit int) ([]fund.Event, error) {
	h, err := s.head(ctx, doc)
	if err != nil || h == nil || !headInstant(h).After(from) || !to.After(from) {
		return nil, err
	}
	last, err := s.versionNumberAt(ctx, h, to, 0)
	if err != nil || last == 0 {
		return nil, err
	}
	// The first version after last was committed after to, so after from;
	// when last is the head's, the head was checked to be.
	after := min(last+1, h.Version)
	first, err := s.versionNumberAt(ctx, h, from, after)
	if err != nil || first >= last {
		return nil, err
	}
	hi := min(last, first+1+limit)
	var items []eventItem
	err = s.table.Get(AttrPK, EventPK(doc)).Range(AttrSK, dynamo.Between, EventSK(first+1), EventSK(hi)).
		Consistent(true).All(ctx, &items)
	if err != nil {
		return nil, fmt.Errorf("events of document %s versions %d to %d: %w", doc, first+1, hi, err)
	}
	if len(items) != hi-first {
		return nil, fmt.Errorf("events of document %s versions %d to %d: %d found: %w", doc, first+1, hi, len(items), ErrNoCommitInstant)
	}
	out := make([]fund.Event, 0, len(items))
	for i := range items {
		e, err := items[i].event()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// versionNumberAt is the number of the latest version of h's document
// committed at or before at (0: none), searched among the versions below
// after, a version known to be committed later than at (0: the search
// starts from the head's): one GetItem of an event per step.
func (s *Store) versionNumberAt(ctx context.Context, h *Item, at time.Time, after int) (int, error) {
	hi := after
	if hi == 0 {
		if !headInstant(h).After(at) {
			return h.Version, nil
		}
		hi = h.Version
	}
	// lo's instant is at or before at (0: none), hi's after it.
	lo := 0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		t, err := s.commitInstant(ctx, h.DocumentID, mid)
		if err != nil {
			return 0, err
		}
		if t.After(at) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, nil
}
