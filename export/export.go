// Package export writes a snapshot of the table as typed Parquet datasets
// for Athena: a parallel Scan (the only Scan in the program) feeds an
// external sort per dataset; each dataset is then joined with the
// documents' commit heads, so that every document appears at exactly one
// committed version, and written as Parquet files rolled near a target
// size; the snapshot is published only when every file is complete. The
// protocol is described in docs/export.md.
package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/guregu/dynamo/v2"
	"golang.org/x/sync/errgroup"
)

// Config is one export run.
type Config struct {
	Table dynamo.Table
	Sink  Sink
	// Date is the snapshot date, the value of the snapshot_date partition.
	Date fund.Date
	// Segments is the number of parallel Scan segments (default 4).
	Segments int
	// PageItems caps the items of one Scan request (default: 16,384 ÷
	// Segments, at least 256; DynamoDB also ends a page at 1 MB). Each
	// segment holds its current page decoded in memory, so the pages in
	// flight hold about 16,384 items whatever the number of segments.
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

// Datasets lists the datasets in the order they are written.
var Datasets = []string{
	"documents", "document_versions", "capital_activities",
	"capital_calls", "distributions", "unfunded_commitments", "positions",
}

// Manifest records one published snapshot.
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	SnapshotDate  string            `json:"snapshotDate"`
	RunID         string            `json:"runId"`
	Table         string            `json:"table"`
	Segments      int               `json:"segments"`
	ItemsScanned  int64             `json:"itemsScanned"`
	StartedAt     time.Time         `json:"startedAt"`
	FinishedAt    time.Time         `json:"finishedAt"`
	Datasets      []DatasetManifest `json:"datasets"`
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
}

// Totals are the rows and bytes of every dataset of m.
func (m *Manifest) Totals() (rows, bytes int64) {
	for _, d := range m.Datasets {
		rows, bytes = rows+d.Rows, bytes+d.Bytes
	}
	return rows, bytes
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

// SymlinkKey is the one object that decides which files a dataset's table
// reads for a date (Athena's SymlinkTextInputFormat).
func SymlinkKey(dataset string, date fund.Date) string {
	return SymlinkRoot(dataset) + "snapshot_date=" + date.String() + "/symlink.txt"
}

// SymlinkRoot is the location of a dataset's table.
func SymlinkRoot(dataset string) string { return "_symlink/" + dataset + "/" }

// ManifestKey is the published manifest of a date.
func ManifestKey(date fund.Date) string {
	return "_manifests/snapshot_date=" + date.String() + "/manifest.json"
}

// DDLKey holds the CREATE EXTERNAL TABLE statement of a dataset.
func DDLKey(dataset string) string { return "_ddl/" + dataset + ".sql" }

// Run exports the table and publishes the snapshot.
func Run(ctx context.Context, cfg Config) (*Manifest, error) {
	if cfg.Date.IsZero() {
		return nil, errors.New("export: no snapshot date")
	}
	if cfg.Sink == nil {
		return nil, errors.New("export: no destination")
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
		Table: cfg.Table.Name(), Segments: cfg.Segments, StartedAt: start,
	}
	if err := x.scan(ctx); err != nil {
		return nil, err
	}
	m.ItemsScanned = x.items.Load()
	x.event(Event{Kind: EventScan, Items: m.ItemsScanned})
	if err := x.checkHeads(); err != nil {
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
		c.PageItems = DefaultPageItems(c.Segments)
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

// DefaultPageItems is the default Config.PageItems for a number of
// segments: the pages of all segments then hold about 16,384 items at
// once, decoded (some 1.6 KB each).
func DefaultPageItems(segments int) int { return max(256, 16_384/max(1, segments)) }

// scan reads every item over cfg.Segments parallel Scan segments. Workers
// decode and classify items; one collector owns the sorts, so the row
// budget is kept without locks.
func (x *exporter) scan(ctx context.Context) error {
	rows := make(chan any, 4096)
	g, gctx := errgroup.WithContext(ctx)
	workers, wctx := errgroup.WithContext(gctx)
	for seg := 0; seg < x.cfg.Segments; seg++ {
		workers.Go(func() error {
			return x.scanSegment(wctx, seg, func(row any) error {
				select {
				case rows <- row:
					return nil
				case <-wctx.Done():
					return wctx.Err()
				}
			})
		})
	}
	g.Go(func() error {
		err := workers.Wait()
		close(rows)
		return err
	})
	g.Go(func() error {
		for row := range rows {
			if err := x.sorts.add(row, x.cfg.MemoryRows); err != nil {
				return err
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	return x.sorts.settle()
}

// scanSegment reads one segment, a request of at most cfg.PageItems items
// at a time, and passes the row of each exported item to emit.
func (x *exporter) scanSegment(ctx context.Context, seg int, emit func(any) error) error {
	var from dynamo.PagingKey
	for {
		// Strongly consistent: a head that committed before the Scan read
		// it is seen with every record its commit wrote. With SearchLimit,
		// the iterator makes one request; the loop goes on from where it
		// stopped.
		scan := x.cfg.Table.Scan().Segment(seg, x.cfg.Segments).Consistent(true).SearchLimit(x.cfg.PageItems)
		if from != nil {
			scan = scan.StartFrom(from)
		}
		it := scan.Iter()
		// Raw first: the table holds records that are not entities
		// (idempotency records store Status as a number), and only exported
		// types are decoded.
		var page int64
		var last string
		for {
			var raw dynamo.Item
			if !it.Next(ctx, &raw) {
				break
			}
			page++
			if pk, ok := raw[store.AttrPK].(*types.AttributeValueMemberS); ok {
				last = pk.Value
			}
			x.items.Add(1)
			x.cfg.Progress.ItemsScanned.Add(1)
			if !exported(raw) {
				continue
			}
			var item store.Item
			if err := dynamo.UnmarshalItem(raw, &item); err != nil {
				return fmt.Errorf("export: decode item %v / %v: %w", raw[store.AttrPK], raw[store.AttrSK], err)
			}
			row, err := classify(&item)
			if err != nil {
				return err
			}
			if row == nil {
				continue
			}
			if err := emit(row); err != nil {
				return err
			}
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("export: scan segment %d of %d: %w", seg, x.cfg.Segments, err)
		}
		x.event(Event{Kind: EventPage, Items: page, Key: last})
		var err error
		if from, err = it.LastEvaluatedKey(ctx); err != nil {
			return fmt.Errorf("export: scan segment %d of %d: %w", seg, x.cfg.Segments, err)
		}
		if from == nil {
			return nil
		}
	}
}

// exportedTypes are the entities classify may turn into rows.
var exportedTypes = map[string]bool{
	store.TypeHead: true, store.TypeDocument: true, store.TypeCapitalActivity: true, store.TypePosition: true,
	store.TypeCapitalCall: true, store.TypeDistribution: true, store.TypeUnfundedCommitment: true,
}

// exported reports whether a raw item is of an exported type.
func exported(raw dynamo.Item) bool {
	t, ok := raw["Type"].(*types.AttributeValueMemberS)
	return ok && exportedTypes[t.Value]
}

// classify turns a stored item into the row it contributes, or nil.
// Only immutable records are exported: a version's history records and
// the items of its version partition, chosen later by the head (see join).
// The latest view is never read, so a restatement that is still being
// materialized cannot mix two versions into a snapshot.
func classify(it *store.Item) (any, error) {
	var err error
	switch {
	case it.Type == store.TypeHead && it.SK == store.HeadSK:
		return headRow{FundID: it.FundID, DocumentID: it.DocumentID, Version: int32(it.Version), CommitID: it.CommitID,
			Materialized: it.Materialized, PositionCount: int32(it.PositionCount)}, nil

	case it.Type == store.TypeDocument && strings.HasPrefix(it.PK, "DOC#") && it.SK != store.DocumentLatestSK:
		return documentVersionRow{documentRow: documentRow{
			FundID: it.FundID, DocumentID: it.DocumentID, Kind: it.Kind, Title: it.Title,
			AsOf: days(it.AsOf), Currency: it.Currency, PositionCount: int32(it.PositionCount),
			Version: int32(it.Version), CommitID: it.CommitID, CreatedAt: it.CreatedAt.UTC(), CreatedBy: it.CreatedBy,
		}}, nil

	case it.Type == store.TypeCapitalActivity && strings.HasPrefix(it.PK, "DOC#") && it.SK != store.CapitalActivityLatestSK:
		r := capitalActivityRow{
			FundID: it.FundID, DocumentID: it.DocumentID, DocumentVersion: int32(it.Version),
			AsOf: days(it.AsOf), Currency: it.Currency, Amount: mustDecimal(it.Amount, &err),
			Status: it.Status, ActivityDate: optDays(it.Date), Description: it.Description, CreatedAt: it.CreatedAt.UTC(),
		}
		return r, itemError(it, err)

	case it.Type == store.TypePosition && strings.HasPrefix(it.PK, "FUND#"):
		return positionRow{FundID: it.FundID, PositionID: it.PositionID, InvestorID: it.InvestorID,
			Currency: it.Currency, RegisteredAt: it.CreatedAt.UTC()}, nil
	}

	_, commitID, inVersion := store.ParseVersionPK(it.PK)
	kind, isPosition := store.ItemKindOfType(it.Type)
	if isPosition && it.PK == store.DocPK(it.DocumentID) && it.SK == store.PositionItemSK(kind, it.PositionID) {
		// The latest view is not exported, but it says how many items of
		// each kind the head's version has (see checkHeads).
		return latestRow{DocumentID: it.DocumentID, PositionID: it.PositionID, Kind: kindIndex(kind),
			Version: int32(it.Version), Tombstone: it.Tombstone}, nil
	}
	if !inVersion || !isPosition {
		return nil, nil
	}
	var row any
	switch kind {
	case fund.CapitalCall:
		row = capitalCallRow{
			FundID: it.FundID, DocumentID: it.DocumentID, InvestorID: it.InvestorID, PositionID: it.PositionID,
			DocumentVersion: int32(it.Version), AsOf: days(it.AsOf), Currency: it.Currency,
			Amount: mustDecimal(it.Amount, &err), Status: it.Status, DueDate: optDays(it.Date),
			Investment: optDecimal(it.Investment, &err), ManagementFee: optDecimal(it.ManagementFee, &err),
			FundExpenses: optDecimal(it.FundExpenses, &err), CreatedAt: it.CreatedAt.UTC(), CommitID: commitID,
		}
	case fund.Distribution:
		row = distributionRow{
			FundID: it.FundID, DocumentID: it.DocumentID, InvestorID: it.InvestorID, PositionID: it.PositionID,
			DocumentVersion: int32(it.Version), AsOf: days(it.AsOf), Currency: it.Currency,
			Amount: mustDecimal(it.Amount, &err), Status: it.Status, PaymentDate: optDays(it.Date),
			ReturnOfCapital: optDecimal(it.ReturnOfCapital, &err), RealizedGain: optDecimal(it.RealizedGain, &err),
			Income: optDecimal(it.Income, &err), Recallable: optDecimal(it.Recallable, &err),
			Withholding: optDecimal(it.Withholding, &err), CreatedAt: it.CreatedAt.UTC(), CommitID: commitID,
		}
	case fund.UnfundedCommitment:
		row = unfundedCommitmentRow{
			FundID: it.FundID, DocumentID: it.DocumentID, InvestorID: it.InvestorID, PositionID: it.PositionID,
			DocumentVersion: int32(it.Version), AsOf: days(it.AsOf), Currency: it.Currency,
			Amount: mustDecimal(it.Amount, &err), Status: it.Status, Commitment: optDecimal(it.Commitment, &err),
			CreatedAt: it.CreatedAt.UTC(), CommitID: commitID,
		}
	}
	return row, itemError(it, err)
}

func itemError(it *store.Item, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("export: item %s / %s: %w", it.PK, it.SK, err)
}

// publish makes the written files the snapshot of the date. Each dataset's
// table switches to this run with one PUT of its symlink file; the manifest,
// written last, records the whole snapshot. Only then are the files of
// earlier or crashed runs of the same date deleted.
func (x *exporter) publish(ctx context.Context, m *Manifest) error {
	for _, name := range Datasets {
		if err := x.lease.hold(ctx); err != nil {
			return err
		}
		if err := x.cfg.Sink.Put(ctx, DDLKey(name), []byte(DDL(name, x.cfg.Sink.URI(""))+"\n")); err != nil {
			return fmt.Errorf("export: write DDL of %s: %w", name, err)
		}
	}
	for _, d := range m.Datasets {
		var b strings.Builder
		for _, f := range d.Files {
			b.WriteString(f.URI + "\n")
		}
		if err := x.lease.hold(ctx); err != nil {
			return err
		}
		if err := x.cfg.Sink.Put(ctx, SymlinkKey(d.Name, x.cfg.Date), []byte(b.String())); err != nil {
			return fmt.Errorf("export: publish %s: %w", d.Name, err)
		}
		x.event(Event{Kind: EventTable, Dataset: d.Name, Rows: d.Rows, Bytes: d.Bytes})
	}
	m.FinishedAt = x.cfg.Now().UTC()
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := x.lease.hold(ctx); err != nil {
		return err
	}
	if err := x.cfg.Sink.Put(ctx, ManifestKey(x.cfg.Date), append(body, '\n')); err != nil {
		return fmt.Errorf("export: publish manifest: %w", err)
	}
	rows, size := m.Totals()
	x.event(Event{Kind: EventManifest, Rows: rows, Bytes: size})

	for _, name := range Datasets {
		keys, err := x.cfg.Sink.List(ctx, DataPrefix(name, x.cfg.Date))
		if err != nil {
			return fmt.Errorf("export: list earlier runs of %s: %w", name, err)
		}
		keep := runPrefix(name, x.cfg.Date, x.runID)
		var stale []string
		for _, k := range keys {
			if !strings.HasPrefix(k, keep) {
				stale = append(stale, k)
			}
		}
		if err := x.lease.hold(ctx); err != nil {
			return err
		}
		if err := x.cfg.Sink.Delete(ctx, stale); err != nil {
			return fmt.Errorf("export: delete earlier runs of %s: %w", name, err)
		}
	}
	x.event(Event{Kind: EventCleaned})
	return nil
}
