package export

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Schema returns the Parquet schema of a dataset: the schema of its row
// type (see datasets), from which the DDL is derived too, so the two cannot
// disagree.
func Schema(dataset string) *parquet.Schema {
	return parquet.SchemaOf(datasets[datasetIndex(dataset)].row)
}

// ProjectionStart is the first snapshot date the tables project.
const ProjectionStart = "2020-01-01"

// SnapshotsTable is the Athena table of the published manifests, one row
// per snapshot date: the run that date's snapshot is and the slot its
// symlink files are in. Every dataset's view reads the slot it names.
const SnapshotsTable = "snapshots"

// snapshotsColumns are the manifest's members that SnapshotsTable reads,
// by their JSON names; each column is the name in snake_case, typed after
// the Manifest field.
var snapshotsColumns = []string{"runId", "slot", "kind", "schemaVersion"}

// SlotsTable is the name of the table of a dataset's symlink files, in
// both slots of every date; the dataset's name is its view's.
func SlotsTable(dataset string) string { return dataset + "_slots" }

// DDL is the Athena DDL of a dataset (or of SnapshotsTable) whose
// snapshots live under location (s3://bucket/prefix or a directory).
//
// A dataset is a table of symlink files (SymlinkTextInputFormat:
// SlotsTable, partitioned by snapshot date and slot) and, under the
// dataset's own name, a view of it that keeps, for each date, the slot
// the date's manifest names (SnapshotsTable). So a snapshot is published
// for every table at once by one PUT, of its manifest. A reader sees the
// earlier run or the new one in every table, never a mix. It never sees
// half of a run, since each symlink file is complete before the manifest
// names it. snapshot_date is projected, so no partition needs adding: every
// date from ProjectionStart to today is queryable, and a date never
// exported reads as empty.
func DDL(name, location string) string {
	root := strings.TrimRight(location, "/") + "/"
	if name == SnapshotsTable {
		return snapshotsDDL(root)
	}
	loc := root + SymlinkRoot(name)
	var cols, sel []string
	for _, f := range Schema(name).Fields() {
		cols = append(cols, fmt.Sprintf("  `%s` %s", f.Name(), hiveType(f)))
		sel = append(sel, fmt.Sprintf(`t."%s"`, f.Name()))
	}
	return fmt.Sprintf(`-- fundsvc export schema version %d: dataset %s
CREATE EXTERNAL TABLE IF NOT EXISTS %s (
%s
)
PARTITIONED BY (`+"`snapshot_date` string, `slot` string"+`)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION '%s'
TBLPROPERTIES (
%s
  'projection.slot.type' = 'enum',
  'projection.slot.values' = '%s',
  'storage.location.template' = '%ssnapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '%d'
);

CREATE OR REPLACE VIEW %s AS
SELECT %s, t."snapshot_date"
FROM %s t
JOIN %s s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";`,
		SchemaVersion, name, SlotsTable(name), strings.Join(cols, ",\n"), loc, projectDates(),
		strings.Join(Slots[:], ","), loc, SchemaVersion,
		name, strings.Join(sel, ", "), SlotsTable(name), SnapshotsTable)
}

// snapshotsDDL is the table of the manifests under root: Athena's JSON
// SerDe reads each manifest, one line, as the row of its date.
func snapshotsDDL(root string) string {
	loc := root + "_manifests/"
	mt := reflect.TypeFor[Manifest]()
	var cols, mapping []string
	for _, key := range snapshotsColumns {
		f, ok := fieldByJSONName(mt, key)
		if !ok {
			panic("export: no manifest member " + key)
		}
		typ := "string"
		if f.Type.Kind() == reflect.Int {
			typ = "int"
		}
		cols = append(cols, fmt.Sprintf("  `%s` %s", snakeCase(key), typ))
		if snakeCase(key) != key {
			mapping = append(mapping, fmt.Sprintf(",\n  'mapping.%s' = '%s'", snakeCase(key), key))
		}
	}
	return fmt.Sprintf(`-- fundsvc export schema version %d: the published snapshots, one per date
CREATE EXTERNAL TABLE IF NOT EXISTS %s (
%s
)
PARTITIONED BY (`+"`snapshot_date` string"+`)
ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'
WITH SERDEPROPERTIES (
  'case.insensitive' = 'false'%s
)
LOCATION '%s'
TBLPROPERTIES (
%s
  'storage.location.template' = '%ssnapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '%d'
);`, SchemaVersion, SnapshotsTable, strings.Join(cols, ",\n"), strings.Join(mapping, ""), loc, projectDates(), loc, SchemaVersion)
}

// projectDates are the table properties that project snapshot_date.
func projectDates() string {
	return fmt.Sprintf(`  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '%s,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',`, ProjectionStart)
}

// fieldByJSONName is the field of struct type t whose JSON name is name.
func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// AllDDL is the Athena DDL of SnapshotsTable and then of every dataset, in
// the order of Datasets.
func AllDDL(location string) string {
	var b strings.Builder
	for i, name := range append([]string{SnapshotsTable}, Datasets...) {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(DDL(name, location))
	}
	return b.String() + "\n"
}

// hiveType is the Athena type of a Parquet column.
func hiveType(f parquet.Field) string {
	t := f.Type()
	if lt := t.LogicalType(); lt != nil {
		switch v := lt.Value.(type) {
		case *format.StringType:
			return "string"
		case *format.DecimalType:
			return fmt.Sprintf("decimal(%d,%d)", v.Precision, v.Scale)
		case *format.DateType:
			return "date"
		case *format.TimestampType:
			return "timestamp"
		case *format.IntType:
			if v.BitWidth > 32 {
				return "bigint"
			}
			return "int"
		}
	}
	switch t.Kind() {
	case parquet.Boolean:
		return "boolean"
	case parquet.Int32:
		return "int"
	case parquet.Int64:
		return "bigint"
	case parquet.ByteArray:
		return "string"
	}
	panic(fmt.Sprintf("export: no Athena type for column %s (%s)", f.Name(), t))
}
