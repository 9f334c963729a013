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
)

// A snapshot's layout in the destination, its manifest, and the steps that
// publish it.

// Manifest records one published snapshot.
type Manifest struct {
	// SchemaVersion is the SchemaVersion that wrote the snapshot: an
	// incremental run builds only on a snapshot of its own version (see
	// incrementable, and docs/export.md, "Schema versions").
	SchemaVersion int       `json:"schemaVersion"`
	SnapshotDate  string    `json:"snapshotDate"`
	RunID         string    `json:"runId"`
	Table         string    `json:"table"`
	Segments      int       `json:"segments"`
	ItemsScanned  int64     `json:"itemsScanned"`
	StartedAt     time.Time `json:"startedAt"`
	FinishedAt    time.Time `json:"finishedAt"`
	// Kind is "full" (a Scan of the table) or "incremental" (the snapshot
	// Base plus the documents changed since its CompleteUpTo).
	Kind string `json:"kind,omitempty"`
	// CompleteUpTo is the snapshot's high-water mark: every commit made
	// before it is in the snapshot (later ones may be too). The next
	// incremental export reads the documents changed since.
	CompleteUpTo time.Time `json:"completeUpTo,omitzero"`
	// SettleMargin is how long before the run's start (by the store's
	// clock) CompleteUpTo lies: how long a commit may take to appear in
	// the change index (Config.Settle), as a Go duration such as "5m0s".
	SettleMargin string `json:"settleMargin,omitempty"`
	// Base names the snapshot an incremental export started from (its
	// date and run ID); DocumentsChanged counts the documents it read again.
	Base             string `json:"base,omitempty"`
	DocumentsChanged int    `json:"documentsChanged,omitempty"`
	// ChangedSince is the base's high-water mark, where an incremental
	// export began reading the change index: its base was complete up to
	// that instant, the base's start less its settle margin.
	ChangedSince time.Time `json:"changedSince,omitzero"`
	// DocumentsInSettleMargin counts those of DocumentsChanged whose
	// latest commit came before the base started (by the store's clock),
	// inside its settle margin: the base may already hold them, but a commit may take up to
	// the margin to appear in the change index, so it could not be sure,
	// and they are read again. Why says so in a sentence.
	DocumentsInSettleMargin int    `json:"documentsInSettleMargin,omitempty"`
	Why                     string `json:"why,omitempty"`
	// Capacity is the DynamoDB capacity the run consumed, as DynamoDB
	// reported it to the store's client (store.Store.Consumed) from the
	// moment the run held its lease: its Scan or change-index Queries, its
	// reads, and the lease's renewals.
	Capacity Capacity `json:"capacity"`
	// Slot is where the snapshot's symlink files are (SymlinkKey): the
	// manifest, one object, is the commit point of every table of the
	// date, whose Athena view reads the symlink files of the slot the
	// manifest names (see publish and DDL). A manifest written before
	// slots existed has none.
	Slot     string            `json:"slot,omitempty"`
	Datasets []DatasetManifest `json:"datasets"`
}

// Capacity is DynamoDB capacity units consumed.
type Capacity struct {
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
}

// DatasetManifest is one dataset of a snapshot.
type DatasetManifest struct {
	Name  string         `json:"name"`
	Rows  int64          `json:"rows"`
	Bytes int64          `json:"bytes"`
	Files []FileManifest `json:"files"`
}

// FileManifest is one Parquet file.
type FileManifest struct {
	Key   string `json:"key"`
	URI   string `json:"uri"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
	// First and Last are the cluster keys of the file's first and last
	// rows (fund and document; fund and position for positions): the key
	// range an incremental export rewrites the file for.
	First clusterKey `json:"first"`
	Last  clusterKey `json:"last"`
}

// Totals are the rows and bytes of every dataset of m.
func (m *Manifest) Totals() (rows, bytes int64) {
	for _, d := range m.Datasets {
		rows, bytes = rows+d.Rows, bytes+d.Bytes
	}
	return rows, bytes
}

// settleMargin is m's SettleMargin; a manifest written before it was
// recorded used the store's.
func (m *Manifest) settleMargin() time.Duration {
	if d, err := time.ParseDuration(m.SettleMargin); err == nil {
		return d
	}
	return store.ChangeSettleMargin
}

// symlinkText is the symlink file Athena reads d through: its files' URIs,
// one a line (empty for a dataset with none).
func (d DatasetManifest) symlinkText() []byte {
	var b strings.Builder
	for _, f := range d.Files {
		b.WriteString(f.URI + "\n")
	}
	return []byte(b.String())
}

// Dataset returns the named dataset of m.
func (m *Manifest) Dataset(name string) (DatasetManifest, bool) {
	for _, d := range m.Datasets {
		if d.Name == name {
			return d, true
		}
	}
	return DatasetManifest{}, false
}

// Keys of a snapshot, relative to the destination.

// DataPrefix holds every file of one dataset and date, of every run.
func DataPrefix(dataset string, date fund.Date) string {
	return dataset + "/snapshot_date=" + date.String() + "/"
}

// runPrefix holds the files of one run.
func runPrefix(dataset string, date fund.Date, runID string) string {
	return DataPrefix(dataset, date) + "run=" + runID + "/"
}

// Slots are the two places a date's symlink files alternate between: a
// run writes the slot the published manifest does not name, which no
// table reads, and then switches every table at once by publishing its
// manifest, which names it.
var Slots = [2]string{"a", "b"}

// otherSlot is the slot a run of a date whose published manifest is cur
// (nil: none) writes.
func otherSlot(cur *Manifest) string {
	if cur != nil && cur.Slot == Slots[0] {
		return Slots[1]
	}
	return Slots[0]
}

// SymlinkKey is the symlink file of a dataset, date and slot: the list of
// the Parquet files its table reads (Athena's SymlinkTextInputFormat) when
// the date's manifest names the slot.
func SymlinkKey(dataset string, date fund.Date, slot string) string {
	return symlinkDatePrefix(dataset, date) + "slot=" + slot + "/symlink.txt"
}

// symlinkDatePrefix holds the symlink files of a dataset and date, in
// both slots (and, from before slots, its one symlink.txt).
func symlinkDatePrefix(dataset string, date fund.Date) string {
	return SymlinkRoot(dataset) + "snapshot_date=" + date.String() + "/"
}

// SymlinkRoot is the location of a dataset's table of symlink files.
func SymlinkRoot(dataset string) string { return "_symlink/" + dataset + "/" }

// HiveTableKey reports whether key is one of the objects only the
// Hive-style tables read (symlink files and DDL), which an Iceberg export
// leaves out.
func HiveTableKey(key string) bool {
	return strings.HasPrefix(key, "_symlink/") || strings.HasPrefix(key, "_ddl/")
}

// ManifestKey is the published manifest of a date: the snapshot's commit
// point, which the table SnapshotsTable reads.
func ManifestKey(date fund.Date) string {
	return "_manifests/snapshot_date=" + date.String() + "/manifest.json"
}

// DDLKey holds the Athena statements of a dataset (or of SnapshotsTable).
func DDLKey(dataset string) string { return "_ddl/" + dataset + ".sql" }

// publish makes the written files the snapshot of the date, with one
// commit point for every table: the manifest. Each dataset's symlink file
// is written first into the slot the published manifest does not name
// (otherSlot), where no table reads it; then the manifest, naming that
// slot, replaces the published one in one PUT, and every table's view
// (see DDL) reads the new run from then on. A run that stops before that
// PUT leaves every table on the earlier snapshot, one that stops after it
// every table on the new one. Only then are the symlink files of the
// other slot deleted, and after them the files of earlier or crashed runs
// of the same date, but for those that a published snapshot names
// (incremental snapshots reuse files of earlier ones; see filesInUse): no
// symlink file ever names a deleted file. Each of these steps (the DDL
// and the symlinks, the manifest, the deletions) starts by renewing the
// run's leases (see exporter.hold), and a step that outlasts a third of
// the lease renews them again before its next write.
func (x *exporter) publish(ctx context.Context, m *Manifest) error {
	if err := x.hold(ctx); err != nil {
		return err
	}
	// The DDL is the same for every run of a destination.
	for _, name := range append([]string{SnapshotsTable}, Datasets...) {
		if err := x.holdIfStale(ctx); err != nil {
			return err
		}
		if err := x.cfg.Sink.Put(ctx, DDLKey(name), []byte(DDL(name, x.cfg.Sink.URI(""))+"\n")); err != nil {
			return fmt.Errorf("export: write DDL of %s: %w", name, err)
		}
	}
	// The published manifest changes only under the date's lease, which
	// the run holds.
	cur, err := readManifest(ctx, x.cfg.Sink, x.cfg.Date)
	if err != nil {
		return err
	}
	m.Slot = otherSlot(cur)
	// Every dataset's list is written, an empty one too, so that the slot
	// holds nothing of a run that stopped before its commit.
	for _, name := range Datasets {
		d, _ := m.Dataset(name)
		if err := x.holdIfStale(ctx); err != nil {
			return err
		}
		if err := x.cfg.Sink.Put(ctx, SymlinkKey(name, x.cfg.Date, m.Slot), d.symlinkText()); err != nil {
			return fmt.Errorf("export: stage %s: %w", name, err)
		}
		x.event(Event{Kind: EventStaged, Dataset: name, Rows: d.Rows, Bytes: d.Bytes})
	}
	m.FinishedAt = x.cfg.Now().UTC()
	c := x.cfg.Store.Consumed().Sub(x.consumed).Total()
	m.Capacity = Capacity{ReadUnits: c.Read, WriteUnits: c.Write}
	// One line: Athena's JSON SerDe reads a record per line.
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := x.hold(ctx); err != nil {
		return err
	}
	if err := x.cfg.Sink.Put(ctx, ManifestKey(x.cfg.Date), append(body, '\n')); err != nil {
		return fmt.Errorf("export: publish manifest: %w", err)
	}
	rows, size := m.Totals()
	x.event(Event{Kind: EventManifest, Rows: rows, Bytes: size})
	// The manifest names the base's files now, so a run of the base's
	// date keeps them (filesInUse): the cleanup needs only this date's
	// lease. (The base's is still renewed, and released at the end.)
	x.leases = x.leases[:1]

	// The other slot's lists (and a list from before slots) name files
	// about to be deleted: they go first.
	var lists []string
	for _, name := range Datasets {
		keys, err := x.cfg.Sink.List(ctx, symlinkDatePrefix(name, x.cfg.Date))
		if err != nil {
			return fmt.Errorf("export: list earlier symlink files of %s: %w", name, err)
		}
		for _, k := range keys {
			if k != SymlinkKey(name, x.cfg.Date, m.Slot) {
				lists = append(lists, k)
			}
		}
	}
	inUse, err := x.filesInUse(ctx)
	if err != nil {
		return err
	}
	var stale []string
	for _, name := range Datasets {
		keys, err := x.cfg.Sink.List(ctx, DataPrefix(name, x.cfg.Date))
		if err != nil {
			return fmt.Errorf("export: list earlier runs of %s: %w", name, err)
		}
		keep := runPrefix(name, x.cfg.Date, x.runID)
		for _, k := range keys {
			if !strings.HasPrefix(k, keep) && !inUse[k] {
				stale = append(stale, k)
			}
		}
	}
	if err := x.hold(ctx); err != nil {
		return err
	}
	if err := x.cfg.Sink.Delete(ctx, lists); err != nil {
		return fmt.Errorf("export: delete the other slot's symlink files: %w", err)
	}
	if err := x.cfg.Sink.Delete(ctx, stale); err != nil {
		return fmt.Errorf("export: delete earlier runs: %w", err)
	}
	x.event(Event{Kind: EventCleaned})
	return x.moveIntoSlots(ctx)
}

// moveIntoSlots moves the snapshots published before slots into slots, so
// that the views read them. It takes each date whose tables still have a
// symlink file of their own (snapshot_date=…/symlink.txt), under that
// date's lease; a date whose lease another run holds is left to a later
// run. The lists of the date's manifest's files are written to slot a, the
// manifest is published again naming it, and the old files are deleted,
// the first dataset's last. So a run that stops half way is taken up by
// the next.
func (x *exporter) moveIntoSlots(ctx context.Context) error {
	keys, err := x.cfg.Sink.List(ctx, SymlinkRoot(Datasets[0]))
	if err != nil {
		return fmt.Errorf("export: list the symlink files of %s: %w", Datasets[0], err)
	}
	for _, k := range keys {
		rest, _ := strings.CutPrefix(k, SymlinkRoot(Datasets[0])+"snapshot_date=")
		d, ok := strings.CutSuffix(rest, "/symlink.txt")
		date, err := fund.ParseDate(d)
		if !ok || err != nil {
			continue
		}
		l := newLease(&x.cfg, date, x.runID)
		if err := l.acquire(ctx, 0); errors.Is(err, ErrExportRunning) {
			continue
		} else if err != nil {
			return err
		}
		err = x.moveDateIntoSlots(ctx, l, date)
		l.release(ctx)
		if err != nil {
			return err
		}
	}
	return nil
}

// moveDateIntoSlots moves date's snapshot into slot a, holding its lease l.
func (x *exporter) moveDateIntoSlots(ctx context.Context, l *lease, date fund.Date) error {
	m, err := readManifest(ctx, x.cfg.Sink, date)
	if err != nil {
		return err
	}
	if m != nil && m.Slot == "" {
		m.Slot = Slots[0]
		for _, name := range Datasets {
			d, _ := m.Dataset(name)
			if err := l.holdIfStale(ctx); err != nil {
				return err
			}
			if err := x.cfg.Sink.Put(ctx, SymlinkKey(name, date, m.Slot), d.symlinkText()); err != nil {
				return fmt.Errorf("export: move the snapshot of %s into a slot: %w", date, err)
			}
		}
		// An Iceberg export's destination keeps no symlink files: a
		// snapshot from before slots in it is left as it is.
		if _, err := x.cfg.Sink.Get(ctx, SymlinkKey(Datasets[0], date, m.Slot)); errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		body, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if err := l.hold(ctx); err != nil {
			return err
		}
		if err := x.cfg.Sink.Put(ctx, ManifestKey(date), append(body, '\n')); err != nil {
			return fmt.Errorf("export: move the snapshot of %s into a slot: %w", date, err)
		}
	}
	// Without a manifest the old files name a run that never published.
	var old []string
	for _, name := range slices.Backward(Datasets) {
		old = append(old, symlinkDatePrefix(name, date)+"symlink.txt")
	}
	for _, k := range old {
		if err := x.cfg.Sink.Delete(ctx, []string{k}); err != nil {
			return fmt.Errorf("export: delete the symlink files of %s from before slots: %w", date, err)
		}
	}
	return nil
}

// filesInUse are the data files that published snapshots name, of the
// run's date and later: an incremental snapshot names files of its base,
// whose date is never later than its own, so only those can name files of
// this date. (A run that is building such a snapshot holds its base date's
// lease, so no run of that date is deleting meanwhile; see baseOf.)
func (x *exporter) filesInUse(ctx context.Context) (map[string]bool, error) {
	keys, err := x.cfg.Sink.List(ctx, "_manifests/")
	if err != nil {
		return nil, fmt.Errorf("export: list snapshots: %w", err)
	}
	inUse := map[string]bool{}
	for _, k := range keys {
		d, ok := manifestDate(k)
		if !ok || d < x.cfg.Date.String() {
			continue
		}
		m, err := readManifest(ctx, x.cfg.Sink, fund.MustDate(d))
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		for _, ds := range m.Datasets {
			for _, f := range ds.Files {
				inUse[f.Key] = true
			}
		}
	}
	return inUse, nil
}
