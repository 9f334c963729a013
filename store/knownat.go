package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// Reads as known at an instant: a document counts at
// its latest version committed at or before the instant, and did not exist
// before its first. Commit instants rise with versions within a document
// (commitRequest stamps each after its predecessor's), so the version known
// at an instant is the latest entry at or before it in the document's
// instant index (VersionInstantSK), which every commit writes in its
// transaction: the head's one GetItem answers when the latest version is
// old enough, otherwise one Query of the index (Limit 1) names the version
// and one GetItem reads its record, whatever the number of versions.

// VersionRef names one committed version of a document.
type VersionRef struct {
	DocumentID  string
	FundID      string
	Version     int
	CommitID    string
	CommittedAt time.Time
	AsOf        fund.Date
	Voided      bool
	// Latest says the version is the document's latest one.
	Latest bool
}

// VersionAt returns the document's latest version committed at or before
// at. It returns ENOTFOUND when the document is unknown or had no committed
// version then (its first commit came later).
func (s *Store) VersionAt(ctx context.Context, doc string, at time.Time) (VersionRef, error) {
	h, err := s.head(ctx, doc)
	if err != nil {
		return VersionRef{}, err
	}
	if h == nil {
		return VersionRef{}, notFound(doc)
	}
	ref, _, err := s.recordAtFrom(ctx, h, at)
	return ref, err
}

// recordAtFrom is VersionAt from the document's head h, already read,
// with the version's history record, which the search reads for a version
// below the head's (nil for the head's own version, which needs no read).
func (s *Store) recordAtFrom(ctx context.Context, h *Item, at time.Time) (VersionRef, *Item, error) {
	if !h.CommittedAt.After(at) {
		return VersionRef{DocumentID: h.DocumentID, FundID: h.FundID, Version: h.Version, CommitID: h.CommitID,
			CommittedAt: h.CommittedAt, AsOf: h.AsOf, Voided: h.Voided, Latest: true}, nil, nil
	}
	lo, loAt, err := s.versionNumberAt(ctx, h, at, h.Version)
	if err != nil {
		return VersionRef{}, nil, err
	}
	if lo == 0 {
		return VersionRef{}, nil, notFound(h.DocumentID)
	}
	rec, err := s.versionRecord(ctx, h.DocumentID, lo)
	if err != nil {
		return VersionRef{}, nil, fmt.Errorf("document %s version %d: %w", h.DocumentID, lo, err)
	}
	if rec == nil {
		return VersionRef{}, nil, fmt.Errorf("document %s version %d: no history record", h.DocumentID, lo)
	}
	return VersionRef{DocumentID: h.DocumentID, FundID: rec.FundID, Version: rec.Version, CommitID: rec.CommitID,
		CommittedAt: loAt, AsOf: rec.AsOf, Voided: rec.Voided}, rec, nil
}

// The document routes' reads as known at an instant, as a viewer sees
// them. Each reads the document's head first (one GetItem), and answers a
// document of a fund the viewer does not cover ENOTFOUND from it, before
// the search, exactly as an unknown document (which costs that GetItem
// too); then the search (VersionAt), then the version's immutable records.
// None reads a record of a version later than the one known, and each
// costs what the same read of the latest version costs, plus the search's
// 1 + ⌈log₂ n⌉ GetItems.

// known is the version of a document known at an instant: the head it was
// found from, and its history record (nil until recordOf reads it).
type known struct {
	VersionRef
	head   *Item
	record *Item
}

// knownAt finds the version of doc known at the view's instant, after
// deciding from the head that the viewer may read it.
func (r View) knownAt(ctx context.Context, doc string) (known, error) {
	h, err := r.s.head(ctx, doc)
	if err != nil {
		return known{}, err
	}
	if h == nil || !r.rd.Administers(h.FundID) {
		return known{}, notFound(doc)
	}
	at := r.rd.KnownAt
	if !r.rd.Past {
		at = h.CommittedAt // the latest version
	}
	ref, rec, err := r.s.recordAtFrom(ctx, h, at)
	if err != nil {
		return known{}, err
	}
	return known{VersionRef: ref, head: h, record: rec}, nil
}

// Known names the version of doc the view reads: the latest, or the one
// known at the view's instant (Store.VersionAt). A document of a fund the
// viewer does not cover is ENOTFOUND, decided from the head.
func (r View) Known(ctx context.Context, doc string) (VersionRef, error) {
	k, err := r.knownAt(ctx, doc)
	return k.VersionRef, err
}

// recordOf returns the known version's history record (one GetItem when
// the search did not read it).
func (s *Store) recordOf(ctx context.Context, k *known) (*Item, error) {
	rec := k.record
	if rec == nil {
		var err error
		if rec, err = s.versionRecord(ctx, k.DocumentID, k.Version); err != nil {
			return nil, fmt.Errorf("document %s version %d: %w", k.DocumentID, k.Version, err)
		}
	}
	if rec == nil {
		return nil, fmt.Errorf("document %s version %d: no history record", k.DocumentID, k.Version)
	}
	k.record = rec
	return rec, nil
}

// overviewAt is Overview as known at the view's instant: the version known then, read
// whole from its immutable partition (one Query), with the records of the
// OverviewHistory versions below it: from the head's recent versions when
// they hold them, otherwise one Query of each prefix of the history
// records, OverviewHistory records at most. It returns ENOTFOUND for an
// unknown document, one of a fund the viewer does not cover, and one
// first committed after at.
func (r View) overviewAt(ctx context.Context, doc string) (Snapshot, error) {
	k, err := r.knownAt(ctx, doc)
	if err != nil {
		return Snapshot{}, err
	}
	d, err := r.s.readVersion(ctx, doc, k.CommitID)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Document: d, FromVersion: true}
	if err := r.s.earlierVersions(ctx, doc, k.head, k.Version, &snap); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// documentPositionAt is DocumentPosition as known at the view's instant: the position's
// items in the version known then, with one Query of that version's
// partition. kind, when not empty, keeps the item of that kind only. It
// returns ENOTFOUND as overviewAt does, and for a position (or an item of
// kind) the version does not report.
func (r View) documentPositionAt(ctx context.Context, doc, pos string, kind fund.ItemKind) (int, []fund.PositionItem, error) {
	k, err := r.knownAt(ctx, doc)
	if err != nil {
		return 0, nil, err
	}
	items, err := r.s.VersionPosition(ctx, doc, k.CommitID, pos)
	if err != nil {
		return 0, nil, err
	}
	if kind != "" {
		items = slices.DeleteFunc(items, func(it fund.PositionItem) bool { return it.Kind != kind })
		if len(items) == 0 {
			return 0, nil, fund.Errorf(fund.ENOTFOUND, "no %s for position %s in document %s", kind.Type(), pos, doc)
		}
	}
	if len(items) == 0 {
		return 0, nil, fund.Errorf(fund.ENOTFOUND, "position %s not found in document %s", pos, doc)
	}
	fund.SortItems(items)
	return k.Version, items, nil
}

// capitalAt is the first page of Capital as known at the view's instant: the capital
// activity and capital calls of the version known then, read from its
// partition (one Query), and the first limit capital activities of the
// versions below it, newest first (one Query of at most limit+1 history
// records). The key it returns resumes below them, at the same version,
// as a later page of Capital does. It returns ENOTFOUND as overviewAt
// does.
func (r View) capitalAt(ctx context.Context, doc string, limit int) (Capital, PageKey, error) {
	k, err := r.knownAt(ctx, doc)
	if err != nil {
		return Capital{}, nil, err
	}
	d, err := r.s.readVersion(ctx, doc, k.CommitID)
	if err != nil {
		return Capital{}, nil, err
	}
	c := Capital{FundID: k.head.FundID, Version: k.Version}
	c.ofVersion(d)
	next, err := r.s.earlierActivities(ctx, doc, &c, k.Version, limit)
	if err != nil {
		return Capital{}, nil, err
	}
	return c, next, nil
}

// Document is the version of doc the view reads, whole: Overview's
// document, or, as known at the view's instant, the version known then
// read from its immutable partition (one Query). It returns ENOTFOUND as
// Overview does.
func (r View) Document(ctx context.Context, doc string) (fund.Document, error) {
	if !r.rd.Past {
		snap, err := r.Overview(ctx, doc)
		return snap.Document, err
	}
	k, err := r.knownAt(ctx, doc)
	if err != nil {
		return fund.Document{}, err
	}
	return r.s.readVersion(ctx, doc, k.CommitID)
}

// CommitInstants returns the commit instants of a document's versions lo to
// hi, from their events, with one strongly consistent Query of its events.
func (s *Store) CommitInstants(ctx context.Context, doc string, lo, hi int) (map[int]time.Time, error) {
	out := map[int]time.Time{}
	if hi < lo {
		return out, nil
	}
	var evs []eventItem
	err := s.table.Get(AttrPK, EventPK(doc)).Range(AttrSK, dynamo.Between, EventSK(max(lo, 1)), EventSK(hi)).
		Project("Version", "CommittedAt").Consistent(true).All(ctx, &evs)
	if err != nil {
		return nil, fmt.Errorf("commit instants of document %s: %w", doc, err)
	}
	for _, e := range evs {
		out[e.Version] = e.CommittedAt
	}
	return out, nil
}
