package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// The versions of one document committed in a window of instants, for
// "why did this number move" (the changes routes). Commit instants
// rise with versions within a document (commitRequest), so the versions
// committed in (from, to] are a run of version numbers: from the one after
// the version known at from to the version known at to. Each end is found
// as VersionAt finds a version (versionNumberAt: one Query of the instant
// index), and the run's events are then read with one Query, newest
// version last.

// DocumentVersionsBetween returns the events of doc's versions committed
// after from and at or before to, in version order (commit order), at
// most limit+1 of them: more than limit returned means more exist. None
// when the document is unknown or its latest version was committed at or
// before from. Reads: the head's GetItem, then, when the latest version
// is later than from, a Query of the instant index for each end and one
// Query of at most limit+1 events, whatever the number of versions.
func (s *Store) DocumentVersionsBetween(ctx context.Context, doc string, from, to time.Time, limit int) ([]fund.Event, error) {
	h, err := s.head(ctx, doc)
	if err != nil || h == nil || !h.CommittedAt.After(from) || !to.After(from) {
		return nil, err
	}
	last, _, err := s.versionNumberAt(ctx, h, to, 0)
	if err != nil || last == 0 {
		return nil, err
	}
	// The first version after last was committed after to, so after from;
	// when last is the head's, the head was checked to be.
	after := min(last+1, h.Version)
	first, _, err := s.versionNumberAt(ctx, h, from, after)
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
		return nil, fmt.Errorf("events of document %s versions %d to %d: %d found", doc, first+1, hi, len(items))
	}
	out := make([]fund.Event, 0, len(items))
	for i := range items {
		e, err := s.eventOf(ctx, &items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// versionNumberAt is the number of the latest version of h's document
// committed at or before at (0: none) and its commit instant. after, when
// not 0, is a version known to be committed later than at; 0: the search
// starts from the head's, which answers without a read when it was
// committed at or before at. Otherwise one Query of the instant index.
func (s *Store) versionNumberAt(ctx context.Context, h *Item, at time.Time, after int) (int, time.Time, error) {
	if after == 0 && !h.CommittedAt.After(at) {
		return h.Version, h.CommittedAt, nil
	}
	return s.indexedVersionAt(ctx, h.DocumentID, at)
}

// indexedVersionAt reads the latest entry of doc's instant index at or
// before at: one strongly consistent Query that reads one item. It returns
// version 0 when there is none (the document was first committed later).
func (s *Store) indexedVersionAt(ctx context.Context, doc string, at time.Time) (int, time.Time, error) {
	var it Item
	err := s.table.Get(AttrPK, EventPK(doc)).Range(AttrSK, dynamo.Between, VersionInstantLowSK, VersionInstantSK(at)).
		Order(dynamo.Descending).Limit(1).Consistent(true).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("the version of document %s known at %s: %w", doc, at.UTC().Format(time.RFC3339Nano), err)
	}
	return it.Version, it.CommittedAt, nil
}

// versionInstantItem is version's entry in its document's instant index.
func versionInstantItem(doc string, version int, committedAt time.Time) Item {
	return Item{PK: EventPK(doc), SK: VersionInstantSK(committedAt), Type: TypeVersionInstant, Version: version, CommittedAt: committedAt}
}

// MaxChangedSinceMonths bounds FundChangedSince's Queries: an instant more
// UTC months back than this counts as changed since, unread.
const MaxChangedSinceMonths = 2

// FundChangedSince reports whether a version of one of the fund's
// documents was committed after at, from the fund's event feed (GSI2,
// under the fund and UTC month): one Query of at most one event per UTC
// month from at's to the read instant's. An instant more than
// MaxChangedSinceMonths months back answers true without a read. The
// feed is a secondary index, eventually consistent: a commit of the last
// moment may not be seen yet, as a read of the latest view may not see
// it either.
func (s *Store) FundChangedSince(ctx context.Context, fundID string, at time.Time) (bool, error) {
	month := time.Date(at.UTC().Year(), at.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	now := s.ReadInstant()
	if month.AddDate(0, MaxChangedSinceMonths, 0).Before(now) {
		return true, nil
	}
	for ; !month.After(now); month = month.AddDate(0, 1, 0) {
		var evs []eventItem
		err := s.table.Get(AttrGSI2PK, FundEventsGSI2PK(fundID, month)).Index(IndexGSI2).
			Range(AttrGSI2SK, dynamo.GreaterOrEqual, EventsAfterSK(at)).Project(AttrPK).
			SearchLimit(1).RequestLimit(1).All(ctx, &evs)
		if err != nil {
			return false, fmt.Errorf("the events of fund %s since %s: %w", fundID, at.UTC().Format(time.RFC3339Nano), err)
		}
		if len(evs) > 0 {
			return true, nil
		}
	}
	return false, nil
}
