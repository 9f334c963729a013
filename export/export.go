// Package export writes a snapshot of the table as typed Parquet datasets
// for Athena: the store's stream of committed records (a parallel Scan,
// the only Scan in the program) feeds an external sort per dataset; each
// dataset is then joined with the documents' commit heads, so that every
// document appears at exactly one committed version, and written as Parquet
// files rolled near a target size; the snapshot is published only when
// every file is complete. The datasets are declared once, in datasets.go:
// their sorts, writers, Parquet schemas and Athena DDL derive from that
// table. The package knows nothing of DynamoDB: keys, stored items and the
// commit protocol stay in package store. The protocol is described in
// docs/export.md.
//
// Files: export.go runs an export; scan.go turns the record stream into
// sorted rows; datasets.go declares the datasets and joins their rows with
// the heads; rows.go holds the row types; writer.go writes Parquet files;
// manifest.go lays out and publishes the snapshot; lease.go keeps two runs
// of one date apart; sink.go writes to a directory or S3; ddl.go derives
// the Athena DDL.
package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
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
	// buffer is spilled to disk (default 32,768, about 10 MB).
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
	Dataset string        // for EventFile, EventDataset and EventTable
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
	EventPage     EventKind = "page"      // a Scan request has been answered (Items: its items, Key: the PK of its last item)
	EventScan     EventKind = "scanned"   // the Scan has finished
	EventReread   EventKind = "reread"    // a document's version (Key: its partition) or a position (Key: its registry item) was read again
	EventFile     EventKind = "file"      // a data file is complete (not yet published)
	EventDataset  EventKind = "dataset"   // every file of a dataset is complete
	EventTable    EventKind = "published" // a dataset's table now reads this run
	EventManifest EventKind = "manifest"  // the snapshot's manifest is published
	EventCleaned  EventKind = "cleaned"   // files of earlier runs of the date are deleted
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

	// The lease comes first: a run that may not publish writes nothing.
	runID := newRunID(cfg.Now().UTC())
	l := newLease(&cfg, runID)
	if err := l.acquire(ctx, cfg.LeaseWait); err != nil {
		return nil, err
	}
	defer l.release(ctx)
	start := cfg.Now().UTC()
	ctx, stop := context.WithCancelCause(ctx)
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		l.keep(ctx, stop)
	}()
	defer func() {
		stop(nil)
		<-kept
	}()
	m, err := run(ctx, cfg, start, runID, l)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrLeaseLost) {
		return nil, cause
	}
	return m, err
}

// run is one export while the lease is held.
func run(ctx context.Context, cfg Config, start time.Time, runID string, l *lease) (*Manifest, error) {
	tmp, err := os.MkdirTemp(cfg.TempDir, "fundsvc-export-*")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer os.RemoveAll(tmp)

	x := &exporter{cfg: cfg, tmp: tmp, start: start, runID: runID, lease: l}
	x.sorts = newSorts(tmp)
	m := &Manifest{
		SchemaVersion: SchemaVersion, SnapshotDate: cfg.Date.String(), RunID: x.runID,
		Table: cfg.Store.TableName(), Segments: cfg.Segments, StartedAt: start,
	}
	if err := x.scan(ctx); err != nil {
		return nil, err
	}
	m.ItemsScanned = x.items.Load()
	x.event(Event{Kind: EventScan, Items: m.ItemsScanned})

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
		c.MemoryRows = 32_768
	}
	if c.Compression == "" {
		c.Compression = "zstd"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Progress == nil {
		c.Progress = &Progress{}
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = time.Minute
	}
}

type exporter struct {
	cfg   Config
	tmp   string
	start time.Time
	runID string
	sorts *sorts
	items atomic.Int64
	lease *lease
	onEv  sync.Mutex
}

func (x *exporter) event(e Event) {
	if x.cfg.OnEvent != nil {
		x.onEv.Lock()
		defer x.onEv.Unlock()
		e.Elapsed = x.cfg.Now().Sub(x.start)
		x.cfg.OnEvent(e)
	}
}
