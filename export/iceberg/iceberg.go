package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// CommitMode is how a run's tables are committed to the catalog.
type CommitMode string

const (
	// CommitAtomic, the default, commits every table of a run in one
	// multi-table commit: every table reads the new run, or none does. A
	// catalog without multi-table commits (Glue) is refused before any data
	// is written.
	CommitAtomic CommitMode = "atomic"
	// CommitPerTable commits each table on its own, for catalogs without
	// multi-table commits: a run that fails between two tables leaves
	// tables on different runs until the date is exported again.
	CommitPerTable CommitMode = "per-table"
)

// ParseCommitMode reads a commit mode; the empty string is CommitAtomic.
func ParseCommitMode(s string) (CommitMode, error) {
	switch m := CommitMode(s); m {
	case "":
		return CommitAtomic, nil
	case CommitAtomic, CommitPerTable:
		return m, nil
	}
	return "", fmt.Errorf("commit mode %q: want %s or %s", s, CommitAtomic, CommitPerTable)
}

// ErrNoAtomicCommit is returned by Run in CommitAtomic mode for a catalog
// that cannot commit a run's tables at once.
var ErrNoAtomicCommit = errors.New("iceberg: the catalog cannot commit a run's tables in one atomic commit")

// ErrLaterRunCurrent is returned by Run when a table already reads the run
// of a later date: a table's current snapshot is always its latest date's,
// so a run of an earlier date is not committed. The earlier date stays
// readable by time travel if it was exported before.
var ErrLaterRunCurrent = errors.New("iceberg: a table already reads a later date's run")

// Config is one export run published as Iceberg tables.
type Config struct {
	// Export is the run; its Sink is where the data files go and where
	// each table's metadata lives (under <dataset>/metadata/).
	Export export.Config
	// Catalog holds the tables.
	Catalog *Catalog
	// Commit is CommitAtomic (the default) or CommitPerTable.
	Commit CommitMode
	// MaxAttempts bounds the commits tried when the catalog refuses one
	// because another run committed first (default 5): of the whole run,
	// or in per-table mode of each table.
	MaxAttempts int
	// OnCommit, if set, is called after each commit attempt.
	OnCommit func(CommitEvent)

	// beforeCommit, for tests, runs just before each commit attempt is
	// sent to the catalog, with the datasets it commits.
	beforeCommit func(attempt int, datasets []string)
	// columnChanges, for tests, replaces the package's columnChanges.
	columnChanges []columnChange
}

// CommitEvent reports one commit attempt: of every table at once, or in
// per-table mode of one table.
type CommitEvent struct {
	Attempt int
	Refused bool // the catalog refused it: another commit came first
	Tables  []TableEvent
}

// TableEvent is one table of a commit attempt.
type TableEvent struct {
	Dataset    string
	SnapshotID int64 // the new snapshot, when committed
	Files      int
	Rows       int64
	// SchemaChanges are the changes of the table's schema the commit
	// makes, to follow the export's schema version ("add due_date",
	// "rename paid_on to payment_date"; see planEvolution).
	SchemaChanges []string
}

// Result is a published run: export's manifest and each table's snapshot.
type Result struct {
	Manifest  *export.Manifest
	Snapshots map[string]int64 // dataset → snapshot ID
}

// Run exports the table and commits each dataset's files to its Iceberg
// table, all in one commit unless cfg.Commit is CommitPerTable. It
// returns an error wrapping ErrNoAtomicCommit, before anything is
// written, if the commit is to be atomic and the catalog cannot do it, and
// an error wrapping table.ErrCommitFailed when the commits were refused
// MaxAttempts times: then no table reads the run, or in per-table mode
// the tables committed before stay committed.
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
	mode, err := ParseCommitMode(string(cfg.Commit))
	if err != nil {
		return nil, fmt.Errorf("iceberg: %w", err)
	}
	cfg.Commit = mode
	if cfg.Commit == CommitAtomic {
		if err := cfg.Catalog.checkMultiTableCommit(ctx); err != nil {
			return nil, fmt.Errorf("%w: %v; to commit each table on its own instead, use --iceberg-commit %s "+
				"(FUNDSVC_ICEBERG_COMMIT, Config.Commit = CommitPerTable), with which a run that fails between two tables "+
				"leaves tables on different runs until the date is exported again", ErrNoAtomicCommit, err, CommitPerTable)
		}
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
	if export.HiveTableKey(key) {
		return nil // the Hive tables' publication, not this format's
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

// ensureTables checks that the tables that exist can follow the datasets'
// schemas (see planEvolution; the changes are made in the run's commit) and
// read no later date's run, then creates the tables of datasets that have
// none (a dataset a schema version added, or every one on a first run):
// empty until the run's commit. A refused run creates no table.
func (p *publisher) ensureTables(ctx context.Context) error {
	c := p.cfg.Catalog
	var missing []string
	for _, name := range export.Datasets {
		schema, err := Schema(name)
		if err != nil {
			return err
		}
		tbl, err := c.cat.LoadTable(ctx, c.ident(name))
		if errors.Is(err, catalog.ErrNoSuchTable) {
			missing = append(missing, name)
			continue
		}
		if err != nil {
			return fmt.Errorf("iceberg: load table %s: %w", name, err)
		}
		// Both checked again when the commit is planned; here they spare
		// the export's work.
		if _, err := planEvolution(tableSchemaOf(c, name, tbl), name, schema, p.columnChanges()); err != nil {
			return err
		}
		if err := checkNoLaterRun(tbl, name, p.cfg.Export.Date.String()); err != nil {
			return err
		}
	}
	for _, name := range missing {
		schema, err := Schema(name)
		if err != nil {
			return err
		}
		location := strings.TrimRight(p.Sink.URI(""), "/") + "/" + name
		_, err = c.cat.CreateTable(ctx, c.ident(name), schema,
			catalog.WithLocation(location), catalog.WithProperties(tableProperties(schema)))
		if err != nil && !errors.Is(err, catalog.ErrTableAlreadyExists) { // another run may have created it first
			return fmt.Errorf("iceberg: create table %s: %w", name, err)
		}
	}
	return nil
}

// tableProperties are the properties a table is created with.
func tableProperties(s *iceberg.Schema) iceberg.Properties {
	props := iceberg.Properties{
		table.PropertyFormatVersion: "2",
		// Refused commits are retried by publish, which plans the
		// overwrite again; iceberg-go's own replay would keep the files
		// of the commit that came first.
		table.CommitNumRetriesKey: "0",
		SchemaVersionProperty:     fmt.Sprint(export.SchemaVersion),
	}
	for _, col := range timestampColumns(s) {
		props[table.MetricsModeColumnConfPrefix+"."+col] = "counts"
	}
	return props
}

// columnChanges are the declared renames and removals of columns.
func (p *publisher) columnChanges() []columnChange {
	if p.cfg.columnChanges != nil {
		return p.cfg.columnChanges
	}
	return columnChanges
}

// commitAll commits every dataset of m: in one multi-table commit, or in
// per-table mode one table after another in the order of export.Datasets.
func (p *publisher) commitAll(ctx context.Context, m *export.Manifest) error {
	if p.cfg.Commit == CommitPerTable {
		for _, name := range export.Datasets {
			err := p.publish(ctx, name, func(ctx context.Context) ([]*overwrite, func(context.Context) error, error) {
				o, err := p.plan(ctx, m, name)
				if err != nil {
					return nil, nil, err
				}
				commit := func(ctx context.Context) error {
					_, err := o.tx.Commit(ctx)
					return err
				}
				return []*overwrite{o}, commit, nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	what := fmt.Sprintf("the run's %d tables", len(export.Datasets))
	return p.publish(ctx, what, func(ctx context.Context) ([]*overwrite, func(context.Context) error, error) {
		mtx, err := catalog.NewMultiTableTransaction(p.cfg.Catalog.cat)
		if err != nil {
			return nil, nil, fmt.Errorf("iceberg: %w", err)
		}
		plans := make([]*overwrite, 0, len(export.Datasets))
		for _, name := range export.Datasets {
			o, err := p.plan(ctx, m, name)
			if err != nil {
				return nil, nil, err
			}
			if err := mtx.AddTransaction(o.tx); err != nil {
				return nil, nil, fmt.Errorf("iceberg: plan the commit of %s: %w", name, err)
			}
			plans = append(plans, o)
		}
		return plans, mtx.Commit, nil
	})
}

// overwrite is one table's planned commit.
type overwrite struct {
	dataset string
	base    *table.Table // the table as the commit was planned on
	tx      *table.Transaction
	ours    int64 // the snapshot the commit makes current
	files   int
	rows    int64
	evolve  *evolution
}

// plan plans the commit that makes the files of m's dataset name the
// current snapshot of its table: one overwrite that removes the files of
// the table's current snapshot and adds the dataset's, conditional on the
// table's main branch being where it is now. A table of an earlier schema
// version follows the export's schema in the same transaction, before the
// files are added (see planEvolution), so the run's one commit changes the
// schema too, or nothing.
func (p *publisher) plan(ctx context.Context, m *export.Manifest, name string) (*overwrite, error) {
	c := p.cfg.Catalog
	d, _ := m.Dataset(name)
	files := make([]string, len(d.Files))
	for i, f := range d.Files {
		files[i] = f.URI
	}
	props := iceberg.Properties{SnapshotDateProperty: m.SnapshotDate, RunIDProperty: m.RunID}
	tbl, err := c.cat.LoadTable(ctx, c.ident(name))
	if err != nil {
		return nil, fmt.Errorf("iceberg: load %s: %w", name, err)
	}
	// Planned again after every refusal, so a later date's run that
	// commits first, from any process, is seen here too.
	if err := checkNoLaterRun(tbl, name, m.SnapshotDate); err != nil {
		return nil, err
	}
	current, err := currentDataFiles(ctx, tbl)
	if err != nil {
		return nil, fmt.Errorf("iceberg: list the files of %s: %w", name, err)
	}
	// A file the table already lists (an incremental run reuses the files
	// of unchanged data) stays; the others are replaced.
	remove, added := difference(current, files), difference(files, current)
	tx := tbl.NewTransaction()
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return nil, fmt.Errorf("iceberg: %s: %w", name, err)
	}
	schema, err := Schema(name)
	if err != nil {
		return nil, err
	}
	evolve, err := planEvolution(tableSchemaOf(c, name, tbl), name, schema, p.columnChanges())
	if err != nil {
		return nil, err
	}
	if err := evolve.apply(tx, tbl.NameMapping()); err != nil {
		return nil, fmt.Errorf("iceberg: evolve the schema of %s: %w", name, err)
	}
	if len(remove) == 0 {
		err = tx.AddFiles(ctx, added, props, false)
	} else {
		err = tx.ReplaceDataFiles(ctx, remove, added, props)
	}
	if err != nil {
		return nil, fmt.Errorf("iceberg: plan the commit of %s: %w", name, err)
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return nil, fmt.Errorf("iceberg: plan the commit of %s: %w", name, err)
	}
	return &overwrite{dataset: name, base: tbl, tx: tx, ours: staged.CurrentSnapshot().SnapshotID,
		files: len(files), rows: d.Rows, evolve: evolve}, nil
}

// checkNoLaterRun returns ErrLaterRunCurrent if tbl, the table of
// dataset name, reads a run of a later date than date.
func checkNoLaterRun(tbl *table.Table, name, date string) error {
	if later := snapshotDate(tbl.CurrentSnapshot()); later > date {
		return fmt.Errorf("%w: %s reads the run of %s, and this run is of %s; export %s or a later date instead",
			ErrLaterRunCurrent, name, later, date, later)
	}
	return nil
}

// snapshotDate is the run date a snapshot of this package records, or ""
// for none (no snapshot, or one another writer made).
func snapshotDate(s *table.Snapshot) string {
	if s == nil || s.Summary == nil {
		return ""
	}
	return s.Summary.Properties[SnapshotDateProperty]
}

// publish plans a commit with plan and sends it; a refused commit is
// planned again on the tables as they now are, up to MaxAttempts. what
// names the commit in errors.
func (p *publisher) publish(ctx context.Context, what string,
	plan func(context.Context) ([]*overwrite, func(context.Context) error, error)) error {
	for attempt := 1; ; attempt++ {
		plans, commit, err := plan(ctx)
		if err != nil {
			return err
		}
		if p.cfg.beforeCommit != nil {
			names := make([]string, len(plans))
			for i, o := range plans {
				names[i] = o.dataset
			}
			p.cfg.beforeCommit(attempt, names)
		}
		err = commit(ctx)
		refused := false
		if err != nil {
			landed, r, rerr := p.outcome(ctx, plans)
			if rerr != nil {
				return fmt.Errorf("iceberg: commit %s: %w (and then: %w)", what, err, rerr)
			}
			if landed {
				err = nil
			}
			refused = r
		}
		ev := CommitEvent{Attempt: attempt, Refused: refused}
		for _, o := range plans {
			te := TableEvent{Dataset: o.dataset, Files: o.files, Rows: o.rows, SchemaChanges: o.evolve.describe()}
			if err == nil {
				te.SnapshotID = o.ours
			}
			ev.Tables = append(ev.Tables, te)
		}
		if p.cfg.OnCommit != nil {
			p.cfg.OnCommit(ev)
		}
		switch {
		case err == nil:
			for _, o := range plans {
				p.snapshots[o.dataset] = o.ours
			}
			return nil
		case refused && attempt < p.cfg.MaxAttempts:
			continue
		case refused:
			return fmt.Errorf("%w: iceberg: commit %s: refused %d times, another run keeps committing first: %v", table.ErrCommitFailed, what, attempt, err)
		default:
			return fmt.Errorf("iceberg: commit %s: %w", what, err)
		}
	}
}

// outcome tells what became of a commit of plans that failed, by where
// the tables' main branches now are. Catalogs report a refusal
// differently (the SQL catalog with table.ErrCommitFailed when its
// compare-and-swap loses, or with a failed requirement when it saw the
// move before trying; a REST catalog with a 409), so the tables are asked:
// landed if every table reads its planned snapshot (the commit happened
// and its answer was lost), refused if none does and another commit moved
// at least one. Anything else is not a refusal this run may retry.
func (p *publisher) outcome(ctx context.Context, plans []*overwrite) (landed, refused bool, err error) {
	if ctx.Err() != nil {
		return false, false, nil
	}
	head := func(t *table.Table) int64 {
		if s := t.CurrentSnapshot(); s != nil {
			return s.SnapshotID
		}
		return -1
	}
	planned, ours, moved := 0, 0, 0
	for _, o := range plans {
		if o.ours == head(o.base) {
			continue // a plan that adds no snapshot tells nothing
		}
		planned++
		now, err := p.cfg.Catalog.cat.LoadTable(ctx, p.cfg.Catalog.ident(o.dataset))
		if err != nil {
			return false, false, err
		}
		switch head(now) {
		case o.ours:
			ours++
		case head(o.base):
		default:
			moved++
		}
	}
	return ours == planned, ours == 0 && moved > 0, nil
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
