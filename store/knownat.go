package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// Reads as known at an instant (issue 25's knownAt): a document counts at
// its latest version committed at or before the instant, and did not exist
// before its first. Commit instants rise with versions within a document
// (commitRequest stamps each after its predecessor's), so the version known
// at an instant is found by a binary search over the document's events,
// which carry the instant of every committed version (events.go): the
// head's one GetItem answers when the latest version is old enough, and
// each step of the search is one GetItem of an event, so a document of n
// versions costs at most 2 + ⌈log₂ n⌉ GetItems whatever the instant.

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
	return s.versionAtFrom(ctx, h, at)
}

// versionAtFrom is VersionAt from the document's head h, already read.
func (s *Store) versionAtFrom(ctx context.Context, h *Item, at time.Time) (VersionRef, error) {
	if !headInstant(h).After(at) {
		return VersionRef{DocumentID: h.DocumentID, FundID: h.FundID, Version: h.Version, CommitID: h.CommitID,
			CommittedAt: headInstant(h), AsOf: h.AsOf, Voided: h.Voided, Latest: true}, nil
	}
	// The largest version below the head's whose instant is at or before
	// at: lo's instant is known to be at or before it (0: none), hi's after.
	lo, hi := 0, h.Version
	var loAt time.Time
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		t, err := s.commitInstant(ctx, h.DocumentID, mid)
		if err != nil {
			return VersionRef{}, err
		}
		if t.After(at) {
			hi = mid
		} else {
			lo, loAt = mid, t
		}
	}
	if lo == 0 {
		return VersionRef{}, notFound(h.DocumentID)
	}
	rec, err := s.versionRecord(ctx, h.DocumentID, lo)
	if err != nil {
		return VersionRef{}, fmt.Errorf("document %s version %d: %w", h.DocumentID, lo, err)
	}
	if rec == nil {
		// The earlier layout keys records by date (keys.go); Version
		// finds them there.
		d, err := s.Version(ctx, h.DocumentID, lo)
		if err != nil {
			return VersionRef{}, err
		}
		return VersionRef{DocumentID: d.ID, FundID: d.FundID, Version: d.Version, CommitID: d.CommitID,
			CommittedAt: loAt, AsOf: d.AsOf, Voided: d.Voided}, nil
	}
	return VersionRef{DocumentID: h.DocumentID, FundID: rec.FundID, Version: rec.Version, CommitID: rec.CommitID,
		CommittedAt: loAt, AsOf: rec.AsOf, Voided: rec.Voided}, nil
}

// headInstant is the instant the head's version was committed: a head
// written before commit instants were kept has its version's CreatedAt,
// as the backfill indexes it.
func headInstant(h *Item) time.Time {
	if h.CommittedAt.IsZero() {
		return h.CreatedAt
	}
	return h.CommittedAt
}

// ErrNoCommitInstant is returned, wrapped, when a version has no event to
// give its commit instant: the versions committed before the feed have
// theirs once `fundsvc changes backfill` has run.
var ErrNoCommitInstant = errors.New("no commit instant recorded for this version; run `fundsvc changes backfill`")

// commitInstant reads the commit instant of one version from its event,
// with one strongly consistent GetItem.
func (s *Store) commitInstant(ctx context.Context, doc string, version int) (time.Time, error) {
	var ev eventItem
	err := s.table.Get(AttrPK, EventPK(doc)).Range(AttrSK, dynamo.Equal, EventSK(version)).
		Project("CommittedAt").Consistent(true).One(ctx, &ev)
	if errors.Is(err, dynamo.ErrNotFound) {
		return time.Time{}, fmt.Errorf("document %s version %d: %w", doc, version, ErrNoCommitInstant)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("commit instant of document %s version %d: %w", doc, version, err)
	}
	return ev.CommittedAt, nil
}
