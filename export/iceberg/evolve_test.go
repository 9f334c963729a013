package iceberg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"

	"github.com/fundsvc/fundsvc/export"
)

// schemaWithout is the Iceberg schema of dataset as an earlier schema
// version had it: without the columns drop, with the columns of rename
// (the export's name → the earlier one) under their earlier names, and
// retype's columns of another type.
func schemaWithout(t *testing.T, dataset string, drop []string, rename map[string]string, retype map[string]iceberg.Type) *iceberg.Schema {
	t.Helper()
	s, err := Schema(dataset)
	if err != nil {
		t.Fatal(err)
	}
	var fields []iceberg.NestedField
	for _, f := range s.Fields() {
		if slices.Contains(drop, f.Name) {
			continue
		}
		if r, ok := rename[f.Name]; ok {
			f.Name = r
		}
		if r, ok := retype[f.Name]; ok {
			f.Type = r
		}
		f.ID = len(fields) + 1
		fields = append(fields, f)
	}
	return iceberg.NewSchema(0, fields...)
}

// TestEvolutionPlan: which differences between a table and the schema
// the export writes a run follows by itself, which it follows by a
// declared column change, and which it refuses, naming the table and the
// column.
func TestEvolutionPlan(t *testing.T) {
	v := export.SchemaVersion
	want, err := Schema("capital_calls")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s *iceberg.Schema, version int) tableSchema {
		props := tableProperties(s)
		props[SchemaVersionProperty] = strconv.Itoa(version)
		return tableSchema{name: "fundsvc.capital_calls", schema: s, props: props, mapping: s.NameMapping()}
	}
	rename := func(from, to string, version int) []columnChange {
		return []columnChange{{Version: version, Dataset: "capital_calls", Column: from, RenamedTo: to}}
	}
	for _, c := range []struct {
		name    string
		table   tableSchema
		changes []columnChange
		check   func(t *testing.T, e *evolution)
		refused []string // what the refusal names
	}{
		{name: "a table of the current schema needs nothing", table: at(want, v),
			check: func(t *testing.T, e *evolution) {
				if e.changesSchema() || len(e.props) != 0 {
					t.Errorf("plans %+v", e)
				}
			}},
		{name: "columns the export added are added, optional, each after the column before it",
			table: at(schemaWithout(t, "capital_calls", []string{"fund_id", "due_date", "created_at"}, nil, nil), v-1),
			check: func(t *testing.T, e *evolution) {
				got := fmt.Sprint(e.adds)
				if len(e.adds) != 3 || e.adds[0].after != "" || e.adds[1].after != "status" || e.adds[2].after != "fund_expenses" ||
					e.adds[0].field.Required || e.adds[2].field.Required || e.changesSchema() != true {
					t.Errorf("adds %s", got)
				}
				if e.props[SchemaVersionProperty] != strconv.Itoa(v) || e.props[table.MetricsModeColumnConfPrefix+".created_at"] != "counts" {
					t.Errorf("sets %v: want the schema version and no bounds for the new timestamp column", e.props)
				}
			}},
		{name: "a column the export made optional is made optional",
			table: at(func() *iceberg.Schema {
				fields := want.Fields()
				for i := range fields {
					if fields[i].Name == "due_date" {
						fields[i].Required = true
					}
				}
				return iceberg.NewSchema(0, fields...)
			}(), v),
			check: func(t *testing.T, e *evolution) {
				if !slices.Equal(e.relaxes, []string{"due_date"}) || len(e.adds)+len(e.renames)+len(e.deletes) != 0 {
					t.Errorf("plans %+v", e)
				}
			}},
		{name: "a decimal widened to the export's precision is promoted",
			table: at(schemaWithout(t, "capital_calls", nil, nil, map[string]iceberg.Type{"amount": iceberg.DecimalTypeOf(18, 4)}), v),
			check: func(t *testing.T, e *evolution) {
				if len(e.promotes) != 1 || e.promotes[0].Name != "amount" || !e.promotes[0].Type.Equals(iceberg.DecimalTypeOf(19, 4)) {
					t.Errorf("promotes %v", e.promotes)
				}
			}},
		{name: "an undeclared rename is refused",
			table:   at(schemaWithout(t, "capital_calls", nil, map[string]string{"status": "state"}, nil), v-1),
			refused: []string{"table fundsvc.capital_calls has column state", "columnChanges", "Schema versions"}},
		{name: "a declared rename is followed",
			table: at(schemaWithout(t, "capital_calls", nil, map[string]string{"status": "state"}, nil), v-1), changes: rename("state", "status", v),
			check: func(t *testing.T, e *evolution) {
				if fmt.Sprint(e.renames) != "map[state:status]" || len(e.adds) != 0 {
					t.Errorf("plans %+v", e)
				}
			}},
		{name: "renames declared by two versions are followed at once",
			table:   at(schemaWithout(t, "capital_calls", nil, map[string]string{"status": "state"}, nil), v-2),
			changes: append(rename("state", "phase", v-1), rename("phase", "status", v)...),
			check: func(t *testing.T, e *evolution) {
				if fmt.Sprint(e.renames) != "map[state:status]" {
					t.Errorf("renames %v", e.renames)
				}
			}},
		{name: "a rename of a version the table already follows is not made again",
			table: at(schemaWithout(t, "capital_calls", nil, map[string]string{"status": "state"}, nil), v), changes: rename("state", "status", v),
			refused: []string{"has column state"}},
		{name: "a declared removal is followed",
			table:   at(iceberg.NewSchema(0, append(want.Fields(), iceberg.NestedField{ID: 99, Name: "legacy", Type: iceberg.PrimitiveTypes.String})...), v-1),
			changes: []columnChange{{Version: v, Dataset: "capital_calls", Column: "legacy"}},
			check: func(t *testing.T, e *evolution) {
				if !slices.Equal(e.deletes, []string{"legacy"}) {
					t.Errorf("deletes %v", e.deletes)
				}
			}},
		{name: "a type changed in place is refused",
			table:   at(schemaWithout(t, "capital_calls", nil, nil, map[string]iceberg.Type{"amount": iceberg.PrimitiveTypes.String}), v-1),
			refused: []string{"column amount of table fundsvc.capital_calls is string", "decimal(19, 4)", "new name"}},
		{name: "a new column under a name the table's files used is refused",
			table: func() tableSchema {
				ts := at(schemaWithout(t, "capital_calls", []string{"due_date"}, nil, nil), v-1)
				id := 40
				ts.mapping = append(ts.mapping, iceberg.MappedField{Names: []string{"due_date"}, FieldID: &id})
				return ts
			}(),
			refused: []string{"adds column due_date to table fundsvc.capital_calls", "field 40"}},
		{name: "a table of a later schema version is refused", table: at(want, v+1),
			refused: []string{fmt.Sprintf("follows schema version %d", v+1), fmt.Sprintf("writes version %d", v)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := planEvolution(c.table, "capital_calls", want, c.changes)
			if c.refused != nil {
				if !errors.Is(err, ErrSchemaChange) {
					t.Fatalf("err = %v, want ErrSchemaChange", err)
				}
				for _, s := range c.refused {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("the refusal does not say %q: %v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, e)
		})
	}
}

// TestColumnChangesAreDeclaredInOrder: each declared column change names
// a dataset and a schema version up to the current one, oldest first, and
// a renamed column that no later version renames or removes is one the
// export writes.
func TestColumnChangesAreDeclaredInOrder(t *testing.T) {
	for i, c := range columnChanges {
		if !slices.Contains(export.Datasets, c.Dataset) || c.Version < 1 || c.Version > export.SchemaVersion || c.Column == "" || c.Column == c.RenamedTo {
			t.Errorf("columnChanges[%d] = %+v: want a dataset, a version from 1 to %d and a column", i, c, export.SchemaVersion)
			continue
		}
		if i > 0 && c.Version < columnChanges[i-1].Version {
			t.Errorf("columnChanges[%d] (version %d) comes after version %d: oldest first", i, c.Version, columnChanges[i-1].Version)
		}
		later := slices.ContainsFunc(columnChanges[i+1:], func(l columnChange) bool { return l.Dataset == c.Dataset && l.Column == c.RenamedTo })
		if _, ok := export.Schema(c.Dataset).Lookup(c.RenamedTo); c.RenamedTo != "" && !later && !ok {
			t.Errorf("columnChanges[%d] renames %s.%s to %s, which the export does not write", i, c.Dataset, c.Column, c.RenamedTo)
		}
	}
}

// TestColumnChangesCoverEveryVersion reads the schemas of every recorded
// schema version (export/testdata/schema_versions/, which the export's
// TestSchemaVersion keeps): every column a version stopped writing must be
// declared renamed or removed by that version in columnChanges, and every
// declaration must name a column the version before wrote, and a rename a
// new column of the version; else Iceberg tables would refuse the version.
func TestColumnChangesCoverEveryVersion(t *testing.T) {
	texts, err := filepath.Glob("../testdata/schema_versions/v*.txt")
	if err != nil || len(texts) == 0 {
		t.Fatalf("no recorded schema version in export/testdata/schema_versions (%v)", err)
	}
	columns := map[int]map[string][]string{} // version → dataset → columns
	for _, path := range texts {
		v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "v"), ".txt"))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		columns[v] = map[string][]string{}
		dataset := ""
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "# "); ok {
				dataset = name
			} else if f := strings.Fields(line); strings.HasPrefix(line, "\t") && len(f) >= 3 {
				columns[v][dataset] = append(columns[v][dataset], strings.TrimSuffix(f[2], ";"))
			}
		}
	}
	if got := columns[export.SchemaVersion]["capital_calls"]; !slices.Contains(got, "amount") {
		t.Fatalf("the recorded schema of version %d has capital_calls %v: not read", export.SchemaVersion, got)
	}
	declared := func(v int, dataset, column string) (columnChange, bool) {
		i := slices.IndexFunc(columnChanges, func(c columnChange) bool {
			return c.Version == v && c.Dataset == dataset && c.Column == column
		})
		if i < 0 {
			return columnChange{}, false
		}
		return columnChanges[i], true
	}
	for v, datasets := range columns {
		before, ok := columns[v-1]
		if !ok {
			continue
		}
		for dataset, cols := range datasets {
			for _, col := range before[dataset] {
				if _, ok := declared(v, dataset, col); !slices.Contains(cols, col) && !ok {
					t.Errorf("schema version %d no longer writes %s.%s: declare it renamed or removed by version %d in columnChanges "+
						"(export/iceberg/evolve.go; docs/export.md, \"Schema versions\")", v, dataset, col, v)
				}
			}
		}
	}
	for _, c := range columnChanges {
		before, after := columns[c.Version-1][c.Dataset], columns[c.Version][c.Dataset]
		if before == nil || after == nil {
			continue // a version, or a dataset, without a recorded schema
		}
		if !slices.Contains(before, c.Column) || slices.Contains(after, c.Column) {
			t.Errorf("%+v: version %d wrote no %s that version %d stopped writing", c, c.Version-1, c.Column, c.Version)
		}
		if c.RenamedTo != "" && (slices.Contains(before, c.RenamedTo) || !slices.Contains(after, c.RenamedTo)) {
			t.Errorf("%+v: %s is not a column version %d added", c, c.RenamedTo, c.Version)
		}
	}
}

// TestSchemaBumpEvolvesTablesInTheRunsCommit makes a catalog as an
// earlier schema version of the export left it (capital_calls without
// due_date and created_at, distributions with payment_date named paid_on,
// no transaction_lines table; files to match, written by the export and
// reshaped), then runs the export at the current version:
//
//   - without a declaration of the rename, the run is refused before it
//     writes anything, naming the table and the column, and no table
//     changes;
//   - with it, one commit evolves capital_calls (the two columns added,
//     optional, in the export's order; the other columns keep their field
//     IDs), renames paid_on to payment_date by field ID, creates and fills
//     transaction_lines and moves every table to the run;
//   - the earlier snapshot still reads with its own schema (time travel);
//     read through the current schema, its rows have NULL in the new
//     columns and their payment dates under the new name.
func TestSchemaBumpEvolvesTablesInTheRunsCommit(t *testing.T) {
	s, sink, dir := oneDocumentInDirectory(t)
	ctx := t.Context()
	cat := newCatalog(t, nil, filepath.Join(t.TempDir(), "catalog.db"))

	// The earlier version's snapshot: the export's files, reshaped, in
	// tables of that version's schemas.
	earlier, err := export.Run(ctx, exportConfig(t, s, sink, "2026-11-21"))
	if err != nil {
		t.Fatal(err)
	}
	drop := map[string][]string{"capital_calls": {"due_date", "created_at"}}
	rename := map[string]map[string]string{"distributions": {"payment_date": "paid_on"}}
	old := map[string]*iceberg.Schema{}
	before := map[string]*table.Table{}
	for _, name := range export.Datasets {
		if name == "transaction_lines" {
			continue // a dataset this version added
		}
		old[name] = schemaWithout(t, name, drop[name], rename[name], nil)
		props := tableProperties(old[name])
		props[SchemaVersionProperty] = strconv.Itoa(export.SchemaVersion - 1)
		if _, err := cat.cat.CreateTable(ctx, cat.ident(name), old[name],
			catalog.WithLocation(filepath.Join(dir, name)), catalog.WithProperties(props)); err != nil {
			t.Fatal(err)
		}
		d, _ := earlier.Dataset(name)
		var files []string
		for _, f := range d.Files {
			reshapeFile(t, f.URI, drop[name], rename[name])
			files = append(files, f.URI)
		}
		tx := loadTable(t, cat, name).NewTransaction()
		if err := tx.AddFiles(ctx, files, iceberg.Properties{SnapshotDateProperty: "2026-11-21", RunIDProperty: earlier.RunID}, false); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if before[name], err = tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d, _ := earlier.Dataset("distributions"); d.Rows == 0 {
		t.Fatal("no distribution to rename a column of")
	}

	t.Run("an undeclared rename is refused before anything is written", func(t *testing.T) {
		_, err := Run(ctx, Config{Export: exportConfig(t, s, sink, "2026-11-22"), Catalog: cat})
		if !errors.Is(err, ErrSchemaChange) || !strings.Contains(err.Error(), "table fundsvc.distributions has column paid_on") {
			t.Fatalf("err = %v, want ErrSchemaChange naming fundsvc.distributions and paid_on", err)
		}
		for name, tbl := range before {
			if now := loadTable(t, cat, name); now.MetadataLocation() != tbl.MetadataLocation() {
				t.Errorf("%s: changed by a refused run", name)
			}
		}
		if _, err := cat.cat.LoadTable(ctx, cat.ident("transaction_lines")); !errors.Is(err, catalog.ErrNoSuchTable) {
			t.Errorf("transaction_lines: %v, want no table", err)
		}
		for _, name := range export.Datasets {
			if keys, _ := sink.List(ctx, name+"/snapshot_date=2026-11-22/"); len(keys) > 0 {
				t.Errorf("the refused run wrote %v", keys)
			}
		}
	})

	var events []CommitEvent
	res, err := Run(ctx, Config{Export: exportConfig(t, s, sink, "2026-11-22"), Catalog: cat,
		OnCommit:      func(e CommitEvent) { events = append(events, e) },
		columnChanges: []columnChange{{Version: export.SchemaVersion, Dataset: "distributions", Column: "paid_on", RenamedTo: "payment_date"}}})
	if err != nil {
		t.Fatalf("the run at the current schema version: %v", err)
	}
	if len(events) != 1 || events[0].Refused || !slices.Equal(eventDatasets(events[0]), export.Datasets) {
		t.Fatalf("commits %+v: want one commit of every table", events)
	}
	for _, te := range events[0].Tables {
		want := map[string][]string{"capital_calls": {"add due_date", "add created_at"}, "distributions": {"rename paid_on to payment_date"}}[te.Dataset]
		if !slices.Equal(te.SchemaChanges, want) {
			t.Errorf("%s: the commit reports the schema changes %q, want %q", te.Dataset, te.SchemaChanges, want)
		}
	}
	for _, name := range export.Datasets {
		tbl := loadTable(t, cat, name)
		if name == "transaction_lines" {
			if cur := tbl.CurrentSnapshot(); cur == nil || cur.SnapshotID != res.Snapshots[name] || len(tbl.Metadata().Snapshots()) != 1 {
				t.Errorf("%s: snapshots %v, want only the run's %d", name, tbl.Metadata().Snapshots(), res.Snapshots[name])
			}
		} else {
			checkReadsRun(t, tbl, res, before[name].CurrentSnapshot().SnapshotID)
		}
		want, _ := Schema(name)
		if got, wantNames := fieldNames(tbl.Schema()), fieldNames(want); !slices.Equal(got, wantNames) {
			t.Errorf("%s: columns %v, want the export's %v", name, got, wantNames)
		}
		if v := tbl.Properties()[SchemaVersionProperty]; v != strconv.Itoa(export.SchemaVersion) {
			t.Errorf("%s: %s = %q, want %d", name, SchemaVersionProperty, v, export.SchemaVersion)
		}
		o, ok := old[name]
		if !ok {
			continue
		}
		for _, f := range o.Fields() {
			n := f.Name
			if n == "paid_on" {
				n = "payment_date"
			}
			if now, ok := tbl.Schema().FindFieldByName(n); !ok || now.ID != f.ID {
				t.Errorf("%s: column %s is field %d, was %d", name, n, now.ID, f.ID)
			}
		}
	}
	calls := loadTable(t, cat, "capital_calls")
	for _, col := range []string{"due_date", "created_at"} {
		f, _ := calls.Schema().FindFieldByName(col)
		if f.Required || f.ID <= len(old["capital_calls"].Fields()) {
			t.Errorf("capital_calls: added column %+v, want optional with a new field ID", f)
		}
	}
	if calls.Properties()[table.MetricsModeColumnConfPrefix+".created_at"] != "counts" {
		t.Errorf("capital_calls: no metrics mode for the added created_at: %v", calls.Properties())
	}

	// The rows: the run's with every column, the earlier snapshot's with
	// its own schema, or NULL in the added columns.
	callsBefore := before["capital_calls"].CurrentSnapshot().SnapshotID
	current := scanRows(t, calls, nil)
	travel := scanRows(t, calls, []table.ScanOption{table.WithSnapshotID(callsBefore)})
	throughCurrent := scanOnBranch(t, calls, callsBefore)
	d, _ := earlier.Dataset("capital_calls")
	if len(current) == 0 || len(travel) != int(d.Rows) || len(throughCurrent) != int(d.Rows) {
		t.Fatalf("capital_calls: %d rows now, %d and %d in the earlier snapshot, which has %d", len(current), len(travel), len(throughCurrent), d.Rows)
	}
	for i := range current {
		if current[i]["due_date"] != "2026-03-31" || current[i]["created_at"] == "" {
			t.Errorf("capital_calls row %d now: %v, want its due date and creation", i, current[i])
		}
		if _, ok := travel[i]["due_date"]; ok || len(travel[i]) != len(old["capital_calls"].Fields()) {
			t.Errorf("capital_calls row %d of the earlier snapshot, by time travel: %v, want its own schema's columns", i, travel[i])
		}
		if throughCurrent[i]["due_date"] != "" || throughCurrent[i]["created_at"] != "" || throughCurrent[i]["amount"] != travel[i]["amount"] {
			t.Errorf("capital_calls row %d of the earlier snapshot, read through the current schema: %v, want NULL in the added columns", i, throughCurrent[i])
		}
	}
	dists := loadTable(t, cat, "distributions")
	for which, rows := range map[string][]map[string]string{
		"now": scanRows(t, dists, nil),
		"of the earlier snapshot, read through the current schema": scanOnBranch(t, dists, before["distributions"].CurrentSnapshot().SnapshotID),
	} {
		if len(rows) == 0 {
			t.Errorf("distributions %s: no row", which)
		}
		for i, r := range rows {
			if r["payment_date"] != "2026-02-15" {
				t.Errorf("distributions row %d %s: %v, want its payment date under the new name", i, which, r)
			}
		}
	}
}

func fieldNames(s *iceberg.Schema) []string {
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	return names
}

// scanRows reads tbl with iceberg-go's scan, every value as text ("" for
// NULL), rows ordered by their text.
func scanRows(t *testing.T, tbl *table.Table, opts []table.ScanOption) []map[string]string {
	t.Helper()
	return readScan(t, tbl.Scan(opts...))
}

// scanOnBranch reads the snapshot id of tbl through tbl's current schema,
// as an engine does that reads an earlier snapshot with the table's
// schema: a branch on it, which iceberg-go scans with the current schema
// (time travel by ID uses the snapshot's).
func scanOnBranch(t *testing.T, tbl *table.Table, id int64) []map[string]string {
	t.Helper()
	meta, err := table.UpdateTableMetadata(tbl.Metadata(),
		[]table.Update{table.NewSetSnapshotRefUpdate("earlier", id, table.BranchRef, -1, -1, -1)}, tbl.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	branched := table.New(tbl.Identifier(), meta, tbl.MetadataLocation(),
		func(ctx context.Context) (iceio.IO, error) { return tbl.FS(ctx) }, nil)
	scan, err := branched.Scan().UseRef("earlier")
	if err != nil {
		t.Fatal(err)
	}
	return readScan(t, scan)
}

func readScan(t *testing.T, scan *table.Scan) []map[string]string {
	t.Helper()
	at, err := scan.ToArrowTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rows := make([]map[string]string, at.NumRows())
	for i := range rows {
		rows[i] = map[string]string{}
	}
	for c := 0; c < int(at.NumCols()); c++ {
		name := at.Schema().Field(c).Name
		n := 0
		for _, chunk := range at.Column(c).Data().Chunks() {
			for j := 0; j < chunk.Len(); j++ {
				if !chunk.IsNull(j) {
					rows[n][name] = chunk.ValueStr(j)
				} else {
					rows[n][name] = ""
				}
				n++
			}
		}
	}
	slices.SortFunc(rows, func(a, b map[string]string) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return rows
}

// reshapeFile rewrites the Parquet file at path as an earlier schema
// version wrote it: without the columns drop, and with the columns of
// rename (the export's name → the earlier one) under their earlier names.
func reshapeFile(t *testing.T, path string, drop []string, rename map[string]string) {
	t.Helper()
	if len(drop) == 0 && len(rename) == 0 {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	root := f.Schema()
	var kept, renamed []parquet.Field
	for _, field := range root.Fields() {
		if slices.Contains(drop, field.Name()) {
			continue
		}
		kept = append(kept, field)
		if r, ok := rename[field.Name()]; ok {
			renamed = append(renamed, renamedField{Field: field, name: r})
		} else {
			renamed = append(renamed, field)
		}
	}
	// Rows are read converted (by name) to the kept columns, and written
	// as they are, column by column, under the new names (CopyRows would
	// copy column chunks by name, and lose the renamed ones).
	from := parquet.NewSchema(root.Name(), fieldGroup{Node: root, fields: kept})
	to := parquet.NewSchema(root.Name(), fieldGroup{Node: root, fields: renamed})
	var out bytes.Buffer
	r := parquet.NewReader(f, from)
	w := parquet.NewWriter(&out, to)
	rows := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(rows)
		if _, werr := w.WriteRows(rows[:n]); werr != nil {
			t.Fatalf("reshape %s: %v", path, werr)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reshape %s: %v", path, err)
		}
	}
	if err := errors.Join(r.Close(), w.Close()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fieldGroup is a group node with the given fields, in their order
// (parquet.Group would sort them by name).
type fieldGroup struct {
	parquet.Node
	fields []parquet.Field
}

func (g fieldGroup) Fields() []parquet.Field { return g.fields }

// renamedField is a column under another name.
type renamedField struct {
	parquet.Field
	name string
}

func (f renamedField) Name() string { return f.name }
