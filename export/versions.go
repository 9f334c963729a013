package export

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/fundsvc/fundsvc/store"
)

// Every committed version of every document, with the instant it was
// committed and the instant the next one superseded it, so that a snapshot
// answers "as known at an instant" (docs/export.md): document_versions
// carries both instants, and the *_versions datasets every committed
// version's position items. Before the datasets are written, the heads,
// the history records and the versions' commits (their events) are joined
// once into the committed versions, which the writers then follow.

// committedVersion is one committed version of a document, as the
// datasets count it.
type committedVersion struct {
	FundID, DocumentID string
	Version            int
	CommitID           string
	// CommittedAt is the version's commit instant; SupersededAt the next
	// version's, zero for the latest.
	CommittedAt, SupersededAt time.Time
	// Reread says that the Scan may have caught the version's partition
	// short, so its items are read again (a version before the latest;
	// the latest is checked against its head, see store.CommitHead).
	Reread bool
}

// resolveVersions joins the heads, the history records (document_versions'
// sort) and the commits the Scan or the changed documents' reads found,
// document by document, into x.sorts.versions: for each head, its
// versions up to its own, from the first an incremental run writes again
// (the version before the first whose items it read; every version in a
// full export). A version's instant is its event's. A full export reads
// the events of a document again (one Query) when its Scan did not meet
// every one, as it can miss those committed while it runs. A version whose
// commit is still not found is given the head's commit instant for the
// latest version, else its creation instant, moved past the version
// before's.
//
// A version before the latest committed at or after the snapshot's
// high-water mark (Manifest.CompleteUpTo) may have been staged while the
// Scan ran, after the Scan passed its partition: its items are read again
// from the partition. Every version committed before the mark was
// complete before the Scan started.
func (x *exporter) resolveVersions(ctx context.Context) error {
	out := x.sorts.versions
	hm, err := x.sorts.heads.iterate()
	if err != nil {
		return err
	}
	defer hm.Close()
	rm, err := x.sorts.rows[versionsDataset].(*sorter[documentVersionRow]).iterate()
	if err != nil {
		return err
	}
	defer rm.Close()
	cm, err := x.sorts.commits.iterate()
	if err != nil {
		return err
	}
	defer cm.Close()
	rows := &peeker[documentVersionRow]{src: rm}
	commits := &peeker[store.VersionCommit]{src: cm}
	var hist []documentVersionRow
	for {
		h, ok, err := hm.next()
		if err != nil {
			return err
		}
		if !ok {
			return out.settle()
		}
		from := x.versionsFrom(&h)
		// The document's history records of versions from..head, in order.
		hist = hist[:0]
		for {
			r, err := rows.peek()
			if err != nil {
				return err
			}
			if r == nil || byDocument(r.FundID, r.DocumentID, h.FundID, h.DocumentID) > 0 {
				break
			}
			rows.take()
			if r.FundID == h.FundID && r.DocumentID == h.DocumentID && int(r.Version) >= from && int(r.Version) <= h.Version {
				hist = append(hist, *r)
			}
		}
		at := map[int]time.Time{}
		for {
			c, err := commits.peek()
			if err != nil {
				return err
			}
			if c == nil || byDocument(c.FundID, c.DocumentID, h.FundID, h.DocumentID) > 0 {
				break
			}
			commits.take()
			if c.FundID == h.FundID && c.DocumentID == h.DocumentID {
				at[c.Version] = c.CommittedAt
			}
		}
		if err := x.fileVersions(ctx, &h, hist, at, out); err != nil {
			return err
		}
	}
}

// versionsFrom is the first version of h's document whose rows this run
// writes in document_versions (see dataset.history).
func (x *exporter) versionsFrom(h *store.CommitHead) int {
	return datasets[versionsDataset].history(max(h.ItemsFrom, 1))
}

// fileVersions files the committed versions of one document (see
// resolveVersions): hist its history records of the versions the run
// writes, at the commits found of them.
func (x *exporter) fileVersions(ctx context.Context, h *store.CommitHead, hist []documentVersionRow, at map[int]time.Time, out *sorter[committedVersion]) error {
	missing := false
	for i := range hist {
		_, ok := at[int(hist[i].Version)]
		missing = missing || !ok
	}
	if missing && x.inc == nil {
		commits, err := x.cfg.Store.VersionCommits(ctx, h.DocumentID)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		for _, c := range commits {
			at[c.Version] = c.CommittedAt
		}
		x.event(Event{Kind: EventReread, Dataset: "document_versions", Key: store.EventPK(h.DocumentID), Rows: int64(len(commits))})
	}
	versions := make([]committedVersion, len(hist))
	var prev time.Time
	for i := range hist {
		r := &hist[i]
		v := committedVersion{FundID: r.FundID, DocumentID: r.DocumentID, Version: int(r.Version), CommitID: r.CommitID}
		c, ok := at[v.Version]
		switch {
		case ok:
		case v.Version == h.Version && !h.CommittedAt.IsZero():
			c = h.CommittedAt
		default:
			c = r.CreatedAt
			if !prev.IsZero() && !c.After(prev) {
				c = prev.Add(time.Millisecond)
			}
		}
		v.CommittedAt, prev = c.UTC(), c
		v.Reread = x.inc == nil && v.Version != h.Version && !v.CommittedAt.Before(x.mark)
		if i > 0 {
			versions[i-1].SupersededAt = v.CommittedAt
		}
		versions[i] = v
	}
	for _, v := range versions {
		if err := addSpilling(x, out, v); err != nil {
			return err
		}
	}
	return nil
}

// newVersionsSort is the sort of the committed versions, by fund, document
// and version.
func newVersionsSort(dir string) *sorter[committedVersion] {
	return newSorter(dir, "versions", func(a, b *committedVersion) int {
		return cmp.Or(byDocument(a.FundID, a.DocumentID, b.FundID, b.DocumentID), cmp.Compare(a.Version, b.Version))
	})
}

// documentVersions is one document's committed versions, as the writers
// of its datasets follow them.
type documentVersions struct {
	all      []committedVersion // oldest first
	byCommit map[string]int     // index in all
}

// of returns the committed version of commitID, nil if none is.
func (d *documentVersions) of(commitID string) *committedVersion {
	if i, ok := d.byCommit[commitID]; ok {
		return &d.all[i]
	}
	return nil
}

// versionsOf reads, from vp, the committed versions of the document (fund,
// doc) into d, passing over those of documents before it.
func versionsOf(vp *peeker[committedVersion], fundID, doc string, d *documentVersions) error {
	d.all = d.all[:0]
	clear(d.byCommit)
	if d.byCommit == nil {
		d.byCommit = map[string]int{}
	}
	for {
		v, err := vp.peek()
		if err != nil {
			return err
		}
		if v == nil {
			return nil
		}
		c := byDocument(v.FundID, v.DocumentID, fundID, doc)
		if c > 0 {
			return nil
		}
		vp.take()
		if c == 0 {
			d.byCommit[v.CommitID] = len(d.all)
			d.all = append(d.all, *v)
		}
	}
}
