package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"golang.org/x/sync/errgroup"
)

// Incremental exports: the previous snapshot plus the documents changed
// since its high-water mark (Manifest.CompleteUpTo), found through the
// store's change index (store.Store.ChangedSince: Queries, never a Scan)
// and read at their committed version through the store. The files they
// change are rewritten, every other file is reused by reference (see
// merge.go). The protocol is described in docs/export.md.

// increment is what an incremental run changes.
type increment struct {
	base  *Manifest
	docs  map[clusterKey]bool // the changed documents, by fund and document
	funds map[string]bool     // their funds: each one's positions are computed again
	// itemsFrom is, for each changed document, the first version whose
	// items the run read (store.CommitHead.ItemsFrom): the versions before
	// it were committed before the base's high-water mark, and the base
	// holds them.
	itemsFrom map[clusterKey]int
}

// replaces reports whether the run replaces the previous snapshot's row r
// of dataset d: every row of a changed document (a changed fund's, in
// positions) but, in a dataset of every version, the rows of the versions
// the run does not write again (dataset.history).
func (in *increment) replaces(d *dataset, r any) bool {
	k := clusterOf(r)
	switch {
	case d.name == "positions":
		return in.funds[k[0]]
	case !in.docs[k]:
		return false
	case d.history != nil:
		return int(r.(versioned).version()) >= d.history(in.itemsFrom[k])
	}
	return true
}

// versioned is a row of a dataset of every version.
type versioned interface{ version() int32 }

// ranges are the key ranges the run replaces in dataset, in order.
func (in *increment) ranges(dataset string) []keyRange {
	var out []keyRange
	if dataset == "positions" {
		for f := range in.funds {
			out = append(out, keyRange{clusterKey{f, ""}, clusterKey{f, "\xff"}})
		}
	} else {
		for k := range in.docs {
			out = append(out, keyRange{k, k})
		}
	}
	slices.SortFunc(out, func(a, b keyRange) int { return a.lo.compare(b.lo) })
	return out
}

// latestManifest reads the published manifest of the latest date on or
// before date; nil if there is none.
func latestManifest(ctx context.Context, sink Sink, date fund.Date) (*Manifest, error) {
	keys, err := sink.List(ctx, "_manifests/")
	if err != nil {
		return nil, fmt.Errorf("export: list snapshots: %w", err)
	}
	best := ""
	for _, k := range keys {
		d, ok := manifestDate(k)
		if ok && d <= date.String() && d > best {
			best = d
		}
	}
	if best == "" {
		return nil, nil
	}
	return readManifest(ctx, sink, fund.MustDate(best))
}

// manifestDate is the snapshot date of a published manifest's key.
func manifestDate(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "_manifests/snapshot_date=")
	if !ok {
		return "", false
	}
	d, ok := strings.CutSuffix(rest, "/manifest.json")
	if !ok {
		return "", false
	}
	_, err := fund.ParseDate(d)
	return d, err == nil
}

// readManifest reads the published manifest of date; nil if there is none.
func readManifest(ctx context.Context, sink Sink, date fund.Date) (*Manifest, error) {
	body, err := sink.Get(ctx, ManifestKey(date))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("export: read the snapshot of %s: %w", date, err)
	}
	var m Manifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("export: the snapshot of %s: %w", date, err)
	}
	return &m, nil
}

// incrementable says why an incremental run cannot start from m, if it
// cannot: it then exports in full.
func incrementable(m *Manifest, table string) string {
	switch {
	case m == nil:
		return "no earlier snapshot"
	case m.SchemaVersion != SchemaVersion:
		return fmt.Sprintf("the snapshot of %s has schema version %d", m.SnapshotDate, m.SchemaVersion)
	case m.Table != table:
		return fmt.Sprintf("the snapshot of %s is of table %s", m.SnapshotDate, m.Table)
	case m.CompleteUpTo.IsZero():
		return fmt.Sprintf("the snapshot of %s records no high-water mark", m.SnapshotDate)
	}
	for _, name := range Datasets {
		d, ok := m.Dataset(name)
		if !ok {
			return fmt.Sprintf("the snapshot of %s has no %s", m.SnapshotDate, name)
		}
		for _, f := range d.Files {
			if f.First == (clusterKey{}) {
				return fmt.Sprintf("the files of the snapshot of %s record no key ranges", m.SnapshotDate)
			}
		}
	}
	return ""
}

// readChanges finds the documents changed since the base's high-water
// mark and files their committed records in the sorts, as the Scan does
// for a full export, together with what the positions of their funds need
// from the base.
func (x *exporter) readChanges(ctx context.Context, m *Manifest) error {
	base := x.inc.base
	// Every commit made before the mark is visible in the change index by
	// now (the store's settle margin). The period asked ends now, not at
	// the mark: the index holds each document's latest commit only, so a
	// document committed before the mark and again after it is found by
	// its later commit. Such changes are read now and again by the next
	// run, which starts at the mark.
	// The clock is the store's, which stamps the commits.
	now := x.cfg.Store.Now().UTC()
	m.CompleteUpTo = now.Add(-x.cfg.Settle)
	changes, err := x.cfg.Store.ChangedSince(ctx, base.CompleteUpTo, now)
	if err != nil {
		return fmt.Errorf("export: documents changed since %s: %w", base.CompleteUpTo.Format("2006-01-02T15:04:05.000Z"), err)
	}
	byDoc := map[string]store.Change{}
	for _, c := range changes {
		byDoc[c.DocumentID] = c
	}
	for _, c := range byDoc {
		x.inc.docs[clusterKey{c.FundID, c.DocumentID}] = true
		x.inc.funds[c.FundID] = true
		if c.CommittedAt.Before(base.CompleteUpTo.Add(base.settleMargin())) {
			m.DocumentsInSettleMargin++
		}
	}
	m.DocumentsChanged = len(byDoc)
	m.ChangedSince, m.Why = base.CompleteUpTo, whyReadSince(base, m)
	x.event(Event{Kind: EventChanges, Items: int64(m.DocumentsChanged), Key: m.Why})

	records := make(chan store.Record, 4096)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(records)
		rg, rctx := errgroup.WithContext(gctx)
		rg.SetLimit(8)
		for _, c := range byDoc {
			rg.Go(func() error { return x.readDocument(rctx, c.DocumentID, records) })
		}
		return rg.Wait()
	})
	g.Go(func() error {
		for rec := range records {
			if h, ok := rec.(store.CommitHead); ok {
				x.inc.itemsFrom[clusterKey{h.FundID, h.DocumentID}] = h.ItemsFrom
			}
			rows, err := rowsOf(rec)
			if err != nil {
				return err
			}
			for _, row := range rows {
				if err := x.sorts.add(row, x.cfg.MemoryRows); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	if err := x.baseRegistry(ctx); err != nil {
		return err
	}
	return x.sorts.settle()
}

// whyReadSince says, in a sentence for the log and the manifest, from
// which instant an incremental run m read the changes over base, and why
// documents committed before the base started are among them.
func whyReadSince(base, m *Manifest) string {
	mark := base.CompleteUpTo.Format(time.RFC3339Nano)
	margin := base.settleMargin()
	why := fmt.Sprintf("read the %d documents committed since %s, the high-water mark of the snapshot %s (its start less its %s settle margin)",
		m.DocumentsChanged, mark, m.Base, margin)
	if m.DocumentsInSettleMargin > 0 {
		why += fmt.Sprintf("; %d of them were committed before that snapshot started, inside the margin, and are read again "+
			"because a commit may take up to the margin to appear in the change index, so the snapshot could not be sure to hold them",
			m.DocumentsInSettleMargin)
	}
	return why
}

// readDocument reads one changed document at its latest committed version
// through the store (store.Store.DocumentRecords: its history records,
// the commits of its versions since the base's high-water mark, then those
// versions' immutable partitions) and sends its records, as the Scan would
// have yielded them.
func (x *exporter) readDocument(ctx context.Context, doc string, out chan<- store.Record) error {
	recs, err := x.cfg.Store.DocumentRecords(ctx, doc, x.inc.base.CompleteUpTo)
	if err != nil {
		return fmt.Errorf("export: changed document %s: %w", doc, err)
	}
	for _, r := range recs {
		if h, ok := r.(store.CommitHead); ok {
			items := 0
			for _, n := range h.Items {
				items += n
			}
			x.event(Event{Kind: EventReread, Key: h.VersionPartition(), Rows: int64(items)})
		}
		select {
		case out <- r:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// baseRegistry files the base's positions of the changed funds as their
// registry: what a position is (investor, currency, registration) does not
// change, and which documents report it is counted again.
func (x *exporter) baseRegistry(ctx context.Context) error {
	reg := x.sorts.rows[positionsDataset]
	d, _ := x.inc.base.Dataset("positions")
	return eachBaseRow(ctx, x, d.Files, x.inc.funds, func(p *positionRow) error {
		if !x.inc.funds[p.FundID] {
			return nil
		}
		row := *p
		row.DocumentCount, row.FirstAsOf, row.LastAsOf = 0, 0, 0
		reg.addRow(row)
		if reg.buffered() >= x.cfg.MemoryRows {
			return reg.spill()
		}
		return nil
	})
}

// referrer is a position-level row: it reports a position.
type referrer interface{ ref() positionRef }

// baseRef files, for the positions of the changed funds, the reference
// that r, a row of the previous snapshot of a document that did not
// change, makes to its position, if r is a position-level row of one of
// those funds. The positions dataset, written last, then counts every
// document that reports each of their positions: the changed documents'
// new rows (filed as writeItems writes them) and the others' rows, which
// the merge passes on (rewritten files) or reads for this (reused files
// whose range meets a changed fund).
func (x *exporter) baseRef(r any) error {
	rr, ok := r.(referrer)
	if !ok {
		return nil
	}
	ref := rr.ref()
	if !x.inc.funds[ref.FundID] || x.inc.docs[clusterKey{ref.FundID, ref.DocumentID}] {
		return nil
	}
	return x.addRef(ref)
}
