package iceberg

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/fundsvc/fundsvc/export"
)

// Schema versions: a table created by an earlier schema version of the
// export (export.SchemaVersion) follows the current one in the run's own
// commit. A column the export adds is added to the table (optional: the
// table's earlier snapshots have no value for it), a column the export
// makes optional is made optional, a type Iceberg can promote (int to
// long, a wider decimal) is promoted; a column that a version renamed or
// removed follows the declaration in columnChanges, by field ID. Anything
// else (a column gone without a declaration, a type changed in place, a
// new column under a name the table's files already use) is refused with
// ErrSchemaChange before the export writes anything. docs/export.md,
// "Schema versions", describes the migration.

// ErrSchemaChange is returned by Run when a table's schema cannot follow the
// export's current one by itself; the message names the table and the column.
var ErrSchemaChange = errors.New("iceberg: a table's schema cannot follow the export's")

// SchemaVersionProperty is the table property that records the schema
// version of the export the table's schema follows.
const SchemaVersionProperty = "fundsvc.schema_version"

// columnChange declares what a schema version of the export did to a
// column it no longer writes under its name: renamed it (RenamedTo) or
// removed it (RenamedTo empty). A table of an earlier version renames its
// column by field ID, so every snapshot's files (which carry no field IDs
// and are matched to columns by name, through the table's name mapping,
// which keeps the old name) read under the new name; a removed column is
// deleted from the current schema and stays in the earlier snapshots'.
type columnChange struct {
	Version   int    // the export.SchemaVersion that made the change
	Dataset   string // the dataset of the column
	Column    string // the column's name before Version
	RenamedTo string // its name from Version on; "" if it was removed
}

// columnChanges are the renames and removals of columns, by schema version,
// oldest first. A schema version that renames or removes a column adds its
// line here, in the change that bumps export.SchemaVersion.
var columnChanges = []columnChange{
	// Version 3, one vocabulary: a version's place is its status (latest
	// or superseded), a string, as the API says, where is_latest was a
	// boolean; the new column is added, the old one removed.
	{Version: 3, Dataset: "document_versions", Column: "is_latest"},
	// A commit's ID is the store's, which the API does not answer.
	{Version: 3, Dataset: "documents", Column: "commit_id"},
	{Version: 3, Dataset: "document_versions", Column: "commit_id"},
}

// tableSchema is what planEvolution needs of a table.
type tableSchema struct {
	name    string // as messages name it: namespace.dataset
	schema  *iceberg.Schema
	props   iceberg.Properties
	mapping iceberg.NameMapping // nil before the table's first commit
}

func tableSchemaOf(c *Catalog, dataset string, t *table.Table) tableSchema {
	return tableSchema{name: c.namespace + "." + dataset, schema: t.Schema(), props: t.Properties(), mapping: t.NameMapping()}
}

// evolution is what a table needs to follow the export's schema, in the
// table's own names: the columns it renames, deletes, promotes, makes
// optional and adds, and the properties it sets.
type evolution struct {
	renames  map[string]string // the table's name → the export's
	deletes  []string
	promotes []iceberg.NestedField // the table's name, the new type
	relaxes  []string
	adds     []addedColumn
	props    iceberg.Properties
}

// addedColumn is a column the export added, placed after the column the
// export writes before it (the table's name for it; "" for the first).
type addedColumn struct {
	field iceberg.NestedField
	after string
}

func (e *evolution) changesSchema() bool {
	return len(e.renames)+len(e.deletes)+len(e.promotes)+len(e.relaxes)+len(e.adds) > 0
}

// planEvolution plans how the table t, of dataset, follows want, the
// schema the export writes, given the declared column changes. It returns
// an error wrapping ErrSchemaChange if it cannot.
func planEvolution(t tableSchema, dataset string, want *iceberg.Schema, changes []columnChange) (*evolution, error) {
	version := 0
	if v, ok := t.props[SchemaVersionProperty]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%w: table %s: property %s = %q is not a version", ErrSchemaChange, t.name, SchemaVersionProperty, v)
		}
		version = n
	}
	if version > export.SchemaVersion {
		return nil, fmt.Errorf("%w: table %s follows schema version %d of the export, and this fundsvc writes version %d: "+
			"run a fundsvc that writes version %d or later", ErrSchemaChange, t.name, version, export.SchemaVersion, version)
	}
	e := &evolution{renames: map[string]string{}, props: iceberg.Properties{}}
	if version != export.SchemaVersion {
		e.props[SchemaVersionProperty] = strconv.Itoa(export.SchemaVersion)
	}
	// The table's columns by the name the export knows them by, once the
	// declared changes since the table's version are applied; each keeps
	// the table's field (and name).
	cols := map[string]iceberg.NestedField{}
	for _, f := range t.schema.Fields() {
		cols[f.Name] = f
	}
	for _, c := range changes {
		f, ok := cols[c.Column]
		if c.Dataset != dataset || c.Version <= version || !ok {
			continue
		}
		delete(cols, c.Column)
		if c.RenamedTo == "" {
			delete(e.renames, f.Name)
			e.deletes = append(e.deletes, f.Name)
			continue
		}
		if _, taken := cols[c.RenamedTo]; taken {
			return nil, fmt.Errorf("%w: schema version %d of the export renames column %s of table %s to %s, a column the table has already; "+
				"see docs/export.md, \"Schema versions\"", ErrSchemaChange, c.Version, c.Column, t.name, c.RenamedTo)
		}
		e.renames[f.Name] = c.RenamedTo
		cols[c.RenamedTo] = f
	}
	after := ""
	for _, w := range want.Fields() {
		f, ok := cols[w.Name]
		if !ok {
			if id, used := mappedName(t.mapping, w.Name); used {
				return nil, fmt.Errorf("%w: schema version %d of the export adds column %s to table %s, whose files already name "+
					"field %d so (a column renamed or removed since): files are matched to columns by name, so a name is never "+
					"given to another column; choose another name; see docs/export.md, \"Schema versions\"",
					ErrSchemaChange, export.SchemaVersion, w.Name, t.name, id)
			}
			// Optional: the table's earlier snapshots have no value for it.
			e.adds = append(e.adds, addedColumn{field: iceberg.NestedField{Name: w.Name, Type: w.Type, Doc: w.Doc}, after: after})
			after = w.Name
			continue
		}
		delete(cols, w.Name)
		if !f.Type.Equals(w.Type) {
			if _, err := iceberg.PromoteType(f.Type, w.Type); err != nil {
				return nil, fmt.Errorf("%w: column %s of table %s is %s, and schema version %d of the export writes it as %s: "+
					"a column does not change type in place (the files of earlier snapshots would be read as the new type); "+
					"write it under a new name and declare the old one removed; see docs/export.md, \"Schema versions\"",
					ErrSchemaChange, w.Name, t.name, f.Type, export.SchemaVersion, w.Type)
			}
			e.promotes = append(e.promotes, iceberg.NestedField{Name: f.Name, Type: w.Type})
		}
		if f.Required && !w.Required {
			e.relaxes = append(e.relaxes, f.Name)
		}
		after = f.Name
	}
	if len(cols) > 0 {
		gone := slices.SortedFunc(maps.Values(cols), func(a, b iceberg.NestedField) int { return cmp.Compare(a.ID, b.ID) })
		return nil, fmt.Errorf("%w: table %s has column %s (field %d), which schema version %d of the export does not write: "+
			"a column renamed or removed by a schema version is declared in export/iceberg's columnChanges, and the table "+
			"then follows it by field ID; see docs/export.md, \"Schema versions\"",
			ErrSchemaChange, t.name, gone[0].Name, gone[0].ID, export.SchemaVersion)
	}
	// The files' instants are milliseconds: no bounds for a new or renamed
	// timestamp column either (see tableProperties).
	for _, col := range timestampColumns(want) {
		key := table.MetricsModeColumnConfPrefix + "." + col
		if t.props[key] != "counts" {
			e.props[key] = "counts"
		}
	}
	return e, nil
}

// mappedName returns the field ID that the name mapping gives name, among
// the table's top-level columns.
func mappedName(m iceberg.NameMapping, name string) (int, bool) {
	for _, f := range m {
		if f.FieldID != nil && slices.Contains(f.Names, name) {
			return *f.FieldID, true
		}
	}
	return 0, false
}

// describe lists e's schema changes, in the order apply makes them.
func (e *evolution) describe() []string {
	var out []string
	for _, from := range slices.Sorted(maps.Keys(e.renames)) {
		out = append(out, "rename "+from+" to "+e.renames[from])
	}
	for _, name := range e.deletes {
		out = append(out, "delete "+name)
	}
	for _, f := range e.promotes {
		out = append(out, "promote "+f.Name+" to "+f.Type.String())
	}
	for _, name := range e.relaxes {
		out = append(out, "make "+name+" optional")
	}
	for _, a := range e.adds {
		out = append(out, "add "+a.field.Name)
	}
	return out
}

// apply stages e in tx, the transaction of the run's commit of the table,
// before the run's files are added: the schema changes (and the name
// mapping, which keeps a renamed column's old name beside its new one,
// so that every file reads), then the properties.
func (e *evolution) apply(tx *table.Transaction, mapping iceberg.NameMapping) error {
	if e.changesSchema() {
		var opts []table.UpdateSchemaOption
		if mapping != nil {
			opts = append(opts, table.WithNameMapping(mapping))
		}
		u := tx.UpdateSchema(true, false, opts...)
		for _, from := range slices.Sorted(maps.Keys(e.renames)) {
			u.RenameColumn([]string{from}, e.renames[from])
		}
		for _, name := range e.deletes {
			u.DeleteColumn([]string{name})
		}
		for _, f := range e.promotes {
			u.UpdateColumn([]string{f.Name}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: f.Type}})
		}
		for _, name := range e.relaxes {
			u.UpdateColumn([]string{name}, table.ColumnUpdate{Required: iceberg.Optional[bool]{Valid: true, Val: false}})
		}
		for _, a := range e.adds {
			u.AddColumn([]string{a.field.Name}, a.field.Type, a.field.Doc, false, nil)
			if a.after == "" {
				u.MoveFirst([]string{a.field.Name})
			} else {
				u.MoveAfter([]string{a.field.Name}, []string{a.after})
			}
		}
		if err := u.Commit(); err != nil {
			return err
		}
	}
	if len(e.props) > 0 {
		return tx.SetProperties(e.props)
	}
	return nil
}
