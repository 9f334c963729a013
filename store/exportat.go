package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// What the export reads of every committed version, so that a snapshot
// can answer "as known at an instant" (docs/export.md): when each version
// was committed, and the position items of each, not only of the latest.
// The commit instant of a version is its event's (events.go): every commit
// transaction puts one, with the instant it stamps on the head.

// VersionCommit is when one committed version of a document was committed:
// the CommittedAt of its event, which is its head's.
type VersionCommit struct {
	FundID, DocumentID string
	Version            int
	CommittedAt        time.Time
}

func (VersionCommit) committedRecord() {}

// versionCommit is the commit of an event item read whole or projected.
func versionCommit(it *Item) VersionCommit {
	return VersionCommit{FundID: it.FundID, DocumentID: it.DocumentID, Version: it.Version, CommittedAt: it.CommittedAt.UTC()}
}

// isEventItem reports whether a stored item is the event of a version.
func isEventItem(it *Item) bool { return it.Type == TypeEvent && strings.HasPrefix(it.PK, EventPK("")) }

// eventProjection is what the export reads of an event: not the positions
// it touched, which can be the bulk of the item.
func eventProjection(q *dynamo.Query) *dynamo.Query {
	return q.Project(AttrPK, AttrSK, "'Type'", "FundID", "DocumentID", "Version", "CommittedAt")
}

// VersionCommits reads the commit of every version of a document that has
// an event, oldest first: one strongly consistent Query of its events'
// partition (more only if it pages). The export reads it for a document
// whose events its Scan did not all meet (committed while it ran).
func (s *Store) VersionCommits(ctx context.Context, doc string) ([]VersionCommit, error) {
	items, err := queryAll(ctx, eventProjection(s.table.Get(AttrPK, EventPK(doc)).Consistent(true)))
	if err != nil {
		return nil, fmt.Errorf("store: the events of document %s: %w", doc, err)
	}
	out := make([]VersionCommit, 0, len(items))
	for i := range items {
		out = append(out, versionCommit(&items[i]))
	}
	return out, nil
}

// commitsSince reads a document's events from version top down, newest
// first, up to and including the first one below top committed before
// since: top's, the versions' committed at or after since, and the one
// before them (none when every version up to top was). One strongly
// consistent Query, which reads only as many events as it returns, more or
// less a page.
func (s *Store) commitsSince(ctx context.Context, doc string, top int, since time.Time) ([]VersionCommit, error) {
	q := s.table.Get(AttrPK, EventPK(doc)).Range(AttrSK, dynamo.Between, EventSK(1), EventSK(top)).
		Order(dynamo.Descending).Consistent(true)
	it := eventProjection(q).Iter()
	var out []VersionCommit
	var item Item
	for it.Next(ctx, &item) {
		c := versionCommit(&item)
		out = append(out, c)
		if c.CommittedAt.Before(since) && c.Version < top {
			break
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("store: the events of document %s: %w", doc, err)
	}
	return out, nil
}

// CommitItems reads the items of one kind of one version of a document
// from its version partition (commitID names it): immutable, and complete
// since before the version committed. One strongly consistent Query on one
// partition, never a Scan.
func (s *Store) CommitItems(ctx context.Context, doc, commitID string, kind fund.ItemKind) ([]VersionItem, error) {
	it := s.table.Get(AttrPK, VersionPK(doc, commitID)).Range(AttrSK, dynamo.BeginsWith, VersionPositionsPrefix).
		Filter("$ = ?", "Type", kind.Type()).Consistent(true).Iter()
	var out []VersionItem
	for {
		var item Item
		if !it.Next(ctx, &item) {
			break
		}
		rec, _, err := committedRecord(&item)
		if err != nil {
			return nil, err
		}
		r, ok := rec.(VersionItem)
		if !ok {
			return nil, fmt.Errorf("store: re-read %s / %s: not a position item", item.PK, item.SK)
		}
		out = append(out, r)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("store: re-read commit %s of document %s: %w", commitID, doc, err)
	}
	return out, nil
}
