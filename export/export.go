package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"golang.org/x/sync/errgroup"
)

// Config is one export run.
type Config struct {
	// Store is the table to export.
	Store *store.Store
	Sink  Sink
	// Date is the snapshot date, the value of the snapshot_date partition.
	Date fund.Date
	// Segments is the number of parallel Scan segments (default 4).
	Segments int
	// PageItems caps the items of one Scan request (default
	// store.DefaultPageItems: 16,384 ÷ Segments, at least 256; DynamoDB
	// also ends a page at 1 MB). Each segment holds its current page
	// decoded in memory, so the pages in flight hold about 16,384 items
	// whatever the number of segments.
	PageItems int
	// TargetFileBytes is where files are rolled (default 128 MiB).
	TargetFileBytes int64
	// RowGroupRows caps the rows of one Parquet row group (default 1,048,576).
	RowGroupRows int64
	// MemoryRows caps the rows held in memory by the sort before the largest
	// buffer is spilled to disk (default 131,072, about 40 MB).
	MemoryRows int
	// Compression is "zstd" (default) or "snappy".
	Compression string
	// TempDir holds sort runs and page buffers (default os.TempDir()).
	TempDir string
	// Progress, if set, is updated while the export runs.
	Progress *Progress
	// OnEvent, if set, is called after each step (see Event), never by two
	// goroutines at once; the step waits for it to return.
	OnEvent func(Event)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// LeaseDuration is how long the per-date export lease lasts unless
	// renewed (default 1 minute); the run renews it every third of that.
	// A run that crashed blocks its date for at most this long. The clocks
	// of the machines that export must agree to well within it.
	LeaseDuration time.Duration
	// LeaseWait is how long to wait for another run of the same date to
	// finish before refusing with ErrExportRunning (default 0: refuse at
	// once).
	LeaseWait time.Duration
	// SinceLast makes the run incremental: the latest published snapshot
	// of a date on or before Date, plus the documents changed since its
	// high-water mark, read through the store's change index (no Scan).
	// Files the changes do not touch are reused by reference. Without an
	// earlier snapshot (or with one an incremental run cannot start from,
	// see Manifest.Kind), the run is a full export.
	SinceLast bool
	// Settle is how long a commit may take to become visible in the
	// store's change index (default store.ChangeSettleMargin). A snapshot
	// is complete up to its start, by the store's clock, less Settle.
	Settle time.Duration
}

// Progress counts the work done so far; a progress bar reads it.
type Progress struct {
	ItemsScanned atomic.Int64
	RowsWritten  atomic.Int64
	BytesWritten atomic.Int64
}

// Event reports one finished step of an export.
type Event struct {
	Kind    EventKind
	Dataset string        // for EventFile, EventDataset and EventStaged
	Key     string        // for EventFile: the file's key; for EventPage, a partition key; for EventReread, what was read
	Items   int64         // for EventScan: items scanned
	Rows    int64         // rows of the file, the dataset or the snapshot
	Bytes   int64         // bytes of the file, the dataset or the snapshot
	Files   int           // for EventDataset: files written
	Elapsed time.Duration // since the run started
}

// EventKind names a step.
type EventKind string

// The steps, in the order they happen.
const (
	EventPage     EventKind = "page"     // a Scan request has been answered (Items: its items, Key: the PK of its last item)
	EventScan     EventKind = "scanned"  // the Scan has finished
	EventChanges  EventKind = "changes"  // an incremental run found its changed documents (Items: how many; Key: from when, and why, as Manifest.Why)
	EventReread   EventKind = "reread"   // a document's version (Key: its partition) or a position (Key: its registry item) was read again
	EventReused   EventKind = "reused"   // a file of the previous snapshot is part of this one, unchanged (incremental)
	EventFile     EventKind = "file"     // a data file is complete (not yet published)
	EventDataset  EventKind = "dataset"  // every file of a dataset is complete
	EventStaged   EventKind = "staged"   // a dataset's symlink file is written in the run's slot, which no table reads yet
	EventManifest EventKind = "manifest" // the snapshot's manifest is published: every table reads this run
	EventCleaned  EventKind = "cleaned"  // files of earlier runs of the date are deleted
)

// Run exports the table and publishes the snapshot.
func Run(ctx context.Context, cfg Config) (*Manifest, error) {
	if cfg.Date.IsZero() {
		return nil, errors.New("export: no snapshot date")
	}
	if cfg.Sink == nil {
		return nil, errors.New("export: no destination")
	}
	if cfg.Store == nil {
		return nil, errors.New("export: no table")
	}
	cfg.defaults()
	if _, err := codec(cfg.Compression); err != nil {
		return nil, err
	}
	if err := checkPlans(); err != nil {
		return nil, err
	}

	// The lease comes first: a run that may not publish writes nothing.
	runID := newRunID(cfg.Now().UTC())
	l := newLease(&cfg, cfg.Date, runID)
	if err := l.acquire(ctx, cfg.LeaseWait); err != nil {
		return nil, err
	}
	defer l.release(ctx)
	leases := []*lease{l}
	var base *Manifest
	if cfg.SinceLast {
		b, bl, err := baseOf(ctx, &cfg, runID)
		if bl != nil {
			defer bl.release(ctx)
			leases = append(leases, bl)
		}
		if err != nil {
			return nil, err
		}
		base = b
	}
	start := cfg.Now().UTC()
	ctx, stop := context.WithCancelCause(ctx)
	var kept sync.WaitGroup
	for _, l := range leases {
		kept.Go(func() { l.keep(ctx, stop) })
	}
	defer func() {
		stop(nil)
		kept.Wait()
	}()
	m, err := run(ctx, cfg, start, runID, leases, base)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrLeaseLost) {
		return nil, cause
	}
	return m, err
}

// baseOf finds the snapshot an incremental run starts from, nil if it
// must export in full. Its files become this run's, so a rerun of its
// date must not delete them meanwhile: unless it is of the run's own date,
// the run holds the base date's lease too (returned, to be kept and
// released), and reads the base again once it holds it.
func baseOf(ctx context.Context, cfg *Config, runID string) (*Manifest, *lease, error) {
	b, err := latestManifest(ctx, cfg.Sink, cfg.Date)
	if err != nil || b == nil {
		return nil, nil, err
	}
	date, err := fund.ParseDate(b.SnapshotDate)
	if err != nil {
		return nil, nil, fmt.Errorf("export: the snapshot of %s: %w", b.SnapshotDate, err)
	}
	var bl *lease
	if date != cfg.Date {
		bl = newLease(cfg, date, runID)
		if err := bl.acquire(ctx, cfg.LeaseWait); err != nil {
			return nil, nil, err
		}
		if b, err = readManifest(ctx, cfg.Sink, date); err != nil {
			return nil, bl, err
		}
	}
	if incrementable(b, cfg.Store.TableName()) != "" {
		return nil, bl, nil
	}
	return b, bl, nil
}

// run is one export while the leases are held.
func run(ctx context.Context, cfg Config, start time.Time, runID string, leases []*lease, base *Manifest) (*Manifest, error) {
	tmp, err := os.MkdirTemp(cfg.TempDir, "fundsvc-export-*")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer os.RemoveAll(tmp)

	x := &exporter{cfg: cfg, tmp: tmp, start: start, runID: runID, leases: leases, consumed: cfg.Store.Consumed()}
	x.sorts = newSorts(tmp)
	m := &Manifest{
		SchemaVersion: SchemaVersion, SnapshotDate: cfg.Date.String(), RunID: x.runID,
		Table: cfg.Store.TableName(), Segments: cfg.Segments, StartedAt: start, Kind: "full",
		// Every commit made before the Scan started is in it, once the
		// commit has landed: Settle bounds how long that takes. The clock
		// is the store's, which stamps the commits.
		CompleteUpTo: cfg.Store.Now().UTC().Add(-cfg.Settle), SettleMargin: cfg.Settle.String(),
	}
	x.mark = m.CompleteUpTo
	if base != nil {
		x.inc = &increment{base: base, docs: map[clusterKey]bool{}, funds: map[string]bool{}, itemsFrom: map[clusterKey]int{}}
		m.Kind, m.Base, m.Segments = "incremental", base.SnapshotDate+"/"+base.RunID, 0
		if err := x.readChanges(ctx, m); err != nil {
			return nil, err
		}
	} else {
		if err := x.scan(ctx); err != nil {
			return nil, err
		}
		m.ItemsScanned = x.items.Load()
		x.event(Event{Kind: EventScan, Items: m.ItemsScanned})
	}
	if err := x.resolveVersions(ctx); err != nil {
		return nil, err
	}

	if m.Datasets, err = x.write(ctx); err != nil {
		return nil, err
	}
	if err := x.publish(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

func (c *Config) defaults() {
	if c.Segments <= 0 {
		c.Segments = 4
	}
	if c.PageItems <= 0 {
		c.PageItems = store.DefaultPageItems(c.Segments)
	}
	if c.TargetFileBytes <= 0 {
		c.TargetFileBytes = 128 << 20
	}
	if c.RowGroupRows <= 0 {
		c.RowGroupRows = 1 << 20
	}
	if c.MemoryRows <= 0 {
		c.MemoryRows = 131_072
	}
	c.Compression = cmp.Or(c.Compression, "zstd")
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Progress == nil {
		c.Progress = &Progress{}
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = time.Minute
	}
	if c.Settle <= 0 {
		c.Settle = store.ChangeSettleMargin
	}
}

type exporter struct {
	cfg   Config
	tmp   string
	start time.Time
	runID string
	sorts *sorts
	items atomic.Int64
	// leases are the run's own date's and, in an incremental run from
	// another date's snapshot, that date's.
	leases []*lease
	inc    *increment // nil in a full export
	// mark is the snapshot's high-water mark (Manifest.CompleteUpTo):
	// every version committed before it was whole when the Scan started.
	mark time.Time
	// consumed is the store's consumed capacity when the run began.
	consumed store.Consumption
	refsMu   sync.Mutex // the positions' references (see addRef)
	onEv     sync.Mutex
}

// hold renews every lease of the run (see lease.hold), at once.
func (x *exporter) hold(ctx context.Context) error {
	return x.eachLease(func(l *lease) error { return l.hold(ctx) })
}

// holdIfStale renews the run's leases if a third of their duration has
// passed since the last renewal: a step of several writes renews once at
// its start (hold), and again only if it runs long.
func (x *exporter) holdIfStale(ctx context.Context) error {
	return x.eachLease(func(l *lease) error { return l.holdIfStale(ctx) })
}

func (x *exporter) eachLease(fn func(*lease) error) error {
	if len(x.leases) == 1 {
		return fn(x.leases[0])
	}
	var g errgroup.Group
	for _, l := range x.leases {
		g.Go(func() error { return fn(l) })
	}
	return g.Wait()
}

func (x *exporter) event(e Event) {
	if x.cfg.OnEvent != nil {
		x.onEv.Lock()
		defer x.onEv.Unlock()
		e.Elapsed = x.cfg.Now().Sub(x.start)
		x.cfg.OnEvent(e)
	}
}
