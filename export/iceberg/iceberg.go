// Package iceberg publishes the nightly export as Apache Iceberg tables
// (format v2), one per dataset, through apache/iceberg-go.
//
// The rows are written by package export, unchanged: the same scan, sort,
// join and Parquet writer as the Hive-style snapshot, into the same
// destination. What changes is how a run is published. Instead of symlink
// files and a manifest of this project's own, each dataset's files are
// registered in its Iceberg table with one catalog commit, an overwrite
// that replaces the table's previous files with the run's: the commit is a
// compare-and-swap of the table's metadata pointer in the catalog, so a
// reader sees the previous snapshot or the new one, never a mix, and every
// earlier run stays readable by time travel (FOR VERSION AS OF,
// FOR TIMESTAMP AS OF) instead of as per-date copies. Each snapshot's
// summary carries the run's snapshot date (fundsvc.snapshot-date) and run
// ID (fundsvc.run-id).
//
// Registering the Parquet files (Transaction.AddFiles and
// ReplaceDataFiles) rather than re-encoding the rows through Arrow keeps
// one writer for both formats and reads each file's footer once for its
// column statistics. The files carry no Parquet field IDs; iceberg-go sets
// the table's name mapping (schema.name-mapping.default), which maps their
// columns to the schema's IDs by name. Money is DECIMAL(19,4) (a 9-byte
// FIXED_LEN_BYTE_ARRAY, as Iceberg stores it), dates DATE, instants
// timestamptz. The files store instants in milliseconds, not the
// microseconds Iceberg writers use; readers decode them by their Parquet
// annotation, but iceberg-go would record their bounds as microseconds, so
// the tables keep only value counts for those columns
// (write.metadata.metrics.column.<name> = counts).
//
// A run publishes from inside export's own publish step, while it holds
// the export lease of its date: the tables are committed when export
// writes the run's manifest, before it deletes the files of earlier runs
// of the date, and those deletions spare every file a snapshot of a table
// still lists. Two runs that commit to one table at once are kept apart by
// the catalog: the second commit is refused, and the run loads the table
// again, plans the overwrite anew and retries, up to Config.MaxAttempts,
// after which it reports the refusal. Nothing is lost either way.
//
// Catalogs: a SQL catalog on a local SQLite file (the default; works with
// no cloud), AWS Glue (which Athena reads) and an Iceberg REST catalog
// (such as S3 Tables), chosen by CatalogConfig. DDL prints what Athena
// needs. docs/export.md describes the layout and time travel.
package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/fundsvc/fundsvc/export"
)

// Snapshot summary properties of every commit.
const (
	SnapshotDateProperty = "fundsvc.snapshot-date"
	RunIDProperty        = "fundsvc.run-id"
)

// Config is one export run published as Iceberg tables.
type Config struct {
	// Export is the run; its Sink is where the data files go and where
	// each table's metadata lives (under <dataset>/metadata/).
	Export export.Config
	// Catalog holds the tables.
	Catalog *Catalog
	// MaxAttempts bounds the commits tried per table when the catalog
	// refuses one because another run committed first (default 5).
	MaxAttempts int
	// OnCommit, if set, is called after each commit attempt.
	OnCommit func(CommitEvent)

	// beforeCommit, for tests, runs just before each commit attempt is
	// sent to the catalog.
	beforeCommit func(dataset string, attempt int)
}

// CommitEvent reports one commit attempt of one table.
type CommitEvent struct {
	Dataset    string
	Attempt    int
	Refused    bool  // the catalog refused it: another commit came first
	SnapshotID int64 // the new snapshot, when committed
	Files      int
	Rows       int64
}

// Result is a published run: export's manifest and each table's snapshot.
type Result struct {
	Manifest  *export.Manifest
	Snapshots map[string]int64 // dataset → snapshot ID
}

// Run exports the table and commits each dataset's files to its Iceberg
// table. It returns an error wrapping table.ErrCommitFailed when a table's
// commits were refused MaxAttempts times; the tables committed before stay
// committed (a commit is per table).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("iceberg: no catalog")
	}
	if cfg.Export.Sink == nil {
		return nil, errors.New("iceberg: no destination")
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	p := &publisher{Sink: cfg.Export.Sink, cfg: cfg, snapshots: map[string]int64{}}
	if err := p.ensureTables(ctx); err != nil {
		return nil, err
	}
	cfg.Export.Sink = p
	m, err := export.Run(ctx, cfg.Export)
	if err != nil {
		return nil, err
	}
	return &Result{Manifest: m, Snapshots: p.snapshots}, nil
}

// publisher is the export's sink: it writes data files through to the
// destination, leaves out the Hive tables' symlink files and DDL, commits
// the tables when export writes the run's manifest, and spares the files
// the tables list when export deletes earlier runs.
type publisher struct {
	export.Sink // the destination: every method but Put and Delete as it is
	cfg         Config
	snapshots   map[string]int64
}

func (p *publisher) Put(ctx context.Context, key string, data []byte) error {
	date := p.cfg.Export.Date
	for _, name := range export.Datasets {
		if key == export.SymlinkKey(name, date) || key == export.DDLKey(name) {
			return nil // the Hive tables' publication, not this format's
		}
	}
	if key == export.ManifestKey(date) {
		var m export.Manifest
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("iceberg: read the run's manifest: %w", err)
		}
		if err := p.commitAll(ctx, &m); err != nil {
			return err
		}
	}
	return p.Sink.Put(ctx, key, data)
}

// Delete removes keys of earlier runs of the date except the files a
// snapshot of a table lists: those stay readable by time travel until the
// snapshot is expired.
func (p *publisher) Delete(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	listed := map[string]bool{}
	for _, name := range export.Datasets {
		tbl, err := p.cfg.Catalog.cat.LoadTable(ctx, p.cfg.Catalog.ident(name))
		if err != nil {
			return fmt.Errorf("iceberg: load %s: %w", name, err)
		}
		files, err := allDataFiles(ctx, tbl)
		if err != nil {
			return fmt.Errorf("iceberg: list the files of %s: %w", name, err)
		}
		for _, f := range files {
			listed[f] = true
		}
	}
	var unlisted []string
	for _, k := range keys {
		if !listed[p.Sink.URI(k)] {
			unlisted = append(unlisted, k)
		}
	}
	return p.Sink.Delete(ctx, unlisted)
}

// ensureTables creates the tables that do not exist yet and checks that
// those that do have the datasets' schemas.
func (p *publisher) ensureTables(ctx context.Context) error {
	c := p.cfg.Catalog
	for _, name := range export.Datasets {
		schema, err := Schema(name)
		if err != nil {
			return err
		}
		tbl, err := c.cat.LoadTable(ctx, c.ident(name))
		if errors.Is(err, catalog.ErrNoSuchTable) {
			location := strings.TrimRight(p.Sink.URI(""), "/") + "/" + name
			_, err = c.cat.CreateTable(ctx, c.ident(name), schema,
				catalog.WithLocation(location), catalog.WithProperties(tableProperties(schema)))
			if errors.Is(err, catalog.ErrTableAlreadyExists) {
				continue // another run created it first
			}
			if err != nil {
				return fmt.Errorf("iceberg: create table %s: %w", name, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("iceberg: load table %s: %w", name, err)
		}
		if !sameColumns(tbl.Schema(), schema) {
			return fmt.Errorf("iceberg: table %s has the schema %s, the export writes %s", name, tbl.Schema(), schema)
		}
	}
	return nil
}

// tableProperties are the properties a table is created with.
func tableProperties(s *iceberg.Schema) iceberg.Properties {
	props := iceberg.Properties{
		table.PropertyFormatVersion: "2",
		// Refused commits are retried by commit, which plans the
		// overwrite again; iceberg-go's own replay would keep the files
		// of the commit that came first.
		table.CommitNumRetriesKey: "0",
		"fundsvc.schema_version":  fmt.Sprint(export.SchemaVersion),
	}
	for _, col := range timestampColumns(s) {
		props[table.MetricsModeColumnConfPrefix+"."+col] = "counts"
	}
	return props
}

// sameColumns reports whether two schemas have the same fields, by ID,
// name, type and requiredness.
func sameColumns(a, b *iceberg.Schema) bool {
	return slices.EqualFunc(a.Fields(), b.Fields(), func(x, y iceberg.NestedField) bool {
		return x.ID == y.ID && x.Name == y.Name && x.Required == y.Required && x.Type.Equals(y.Type)
	})
}

// commitAll commits every dataset of m, in the order of export.Datasets.
func (p *publisher) commitAll(ctx context.Context, m *export.Manifest) error {
	for _, name := range export.Datasets {
		d, _ := m.Dataset(name)
		id, err := p.commit(ctx, m, d)
		if err != nil {
			return err
		}
		p.snapshots[name] = id
	}
	return nil
}

// commit makes d's files the current snapshot of its table: one overwrite
// that removes the files of the table's current snapshot and adds d's,
// conditional on the table's main branch being where it was when the
// commit was planned. A refused commit is planned again on the table as it
// now is.
func (p *publisher) commit(ctx context.Context, m *export.Manifest, d export.DatasetManifest) (int64, error) {
	c := p.cfg.Catalog
	files := make([]string, len(d.Files))
	for i, f := range d.Files {
		files[i] = f.URI
	}
	props := iceberg.Properties{SnapshotDateProperty: m.SnapshotDate, RunIDProperty: m.RunID}
	for attempt := 1; ; attempt++ {
		tbl, err := c.cat.LoadTable(ctx, c.ident(d.Name))
		if err != nil {
			return 0, fmt.Errorf("iceberg: load %s: %w", d.Name, err)
		}
		current, err := currentDataFiles(ctx, tbl)
		if err != nil {
			return 0, fmt.Errorf("iceberg: list the files of %s: %w", d.Name, err)
		}
		// A file the table already lists (an incremental run reuses the
		// files of unchanged data) stays; the others are replaced.
		remove, added := difference(current, files), difference(files, current)
		tx := tbl.NewTransaction()
		if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
			return 0, fmt.Errorf("iceberg: %s: %w", d.Name, err)
		}
		if len(remove) == 0 {
			err = tx.AddFiles(ctx, added, props, false)
		} else {
			err = tx.ReplaceDataFiles(ctx, remove, added, props)
		}
		if err != nil {
			return 0, fmt.Errorf("iceberg: plan the commit of %s: %w", d.Name, err)
		}
		staged, err := tx.StagedTable()
		if err != nil {
			return 0, fmt.Errorf("iceberg: plan the commit of %s: %w", d.Name, err)
		}
		ours := staged.CurrentSnapshot().SnapshotID
		if p.cfg.beforeCommit != nil {
			p.cfg.beforeCommit(d.Name, attempt)
		}
		_, err = tx.Commit(ctx)
		refused := false
		if err != nil {
			var rerr error
			if refused, rerr = p.refused(ctx, tbl, d.Name, ours); rerr != nil {
				return 0, fmt.Errorf("iceberg: commit %s: %w (and then: %w)", d.Name, err, rerr)
			}
		}
		ev := CommitEvent{Dataset: d.Name, Attempt: attempt, Refused: refused, Files: len(files), Rows: d.Rows}
		if err == nil {
			ev.SnapshotID = ours
		}
		if p.cfg.OnCommit != nil {
			p.cfg.OnCommit(ev)
		}
		switch {
		case err == nil:
			return ours, nil
		case refused && attempt < p.cfg.MaxAttempts:
			continue
		case refused:
			return 0, fmt.Errorf("%w: iceberg: commit %s: refused %d times, another run keeps committing first: %v", table.ErrCommitFailed, d.Name, attempt, err)
		default:
			return 0, fmt.Errorf("iceberg: commit %s: %w", d.Name, err)
		}
	}
}

// refused reports whether a failed commit of snapshot ours, planned on
// base, was refused because another commit moved the table's main branch
// first. Catalogs say so differently (the SQL catalog with
// table.ErrCommitFailed when its compare-and-swap loses, or with a failed
// requirement when it saw the move before trying), so the table itself is
// asked: refused if its branch moved to another snapshot. A commit that
// failed after all but is there after all (an answer lost on the way) is
// not one this run may retry; it is reported as the error it was.
func (p *publisher) refused(ctx context.Context, base *table.Table, dataset string, ours int64) (bool, error) {
	if errors.Is(ctx.Err(), context.Canceled) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return false, nil
	}
	now, err := p.cfg.Catalog.cat.LoadTable(ctx, p.cfg.Catalog.ident(dataset))
	if err != nil {
		return false, err
	}
	head := func(t *table.Table) int64 {
		if s := t.CurrentSnapshot(); s != nil {
			return s.SnapshotID
		}
		return -1
	}
	return head(now) != head(base) && head(now) != ours, nil
}

// currentDataFiles are the data files of tbl's current snapshot, read from
// its manifests.
func currentDataFiles(ctx context.Context, tbl *table.Table) ([]string, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, mf := range manifests {
		if mf.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for e, err := range mf.Entries(fs, true) {
			if err != nil {
				return nil, err
			}
			files = append(files, e.DataFile().FilePath())
		}
	}
	return files, nil
}

// allDataFiles are the data files any snapshot of tbl lists.
func allDataFiles(ctx context.Context, tbl *table.Table) ([]string, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	var files []string
	for mf, err := range tbl.AllManifests(ctx) {
		if err != nil {
			return nil, err
		}
		for e, err := range mf.Entries(fs, false) {
			if err != nil {
				return nil, err
			}
			files = append(files, e.DataFile().FilePath())
		}
	}
	return files, nil
}

// difference is the elements of a not in b.
func difference(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}
