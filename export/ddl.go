package export

import (
	"fmt"
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

// DDL is the Athena CREATE EXTERNAL TABLE statement of a dataset whose
// snapshots live under location (s3://bucket/prefix or a directory).
//
// The table reads through symlink files (SymlinkTextInputFormat): the one
// object per date that lists the Parquet files of the run that published
// it, so swapping a snapshot is a single PUT and a reader never sees two
// runs or half of one. snapshot_date is projected, so no partition needs
// adding: every date from ProjectionStart to today is queryable, and a date
// never exported reads as empty.
func DDL(dataset, location string) string {
	location = strings.TrimRight(location, "/") + "/" + SymlinkRoot(dataset)
	var cols []string
	for _, f := range Schema(dataset).Fields() {
		cols = append(cols, fmt.Sprintf("  `%s` %s", f.Name(), hiveType(f)))
	}
	return fmt.Sprintf(`-- fundsvc export schema version %d: dataset %s
CREATE EXTERNAL TABLE IF NOT EXISTS %s (
%s
)
PARTITIONED BY (`+"`snapshot_date`"+` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION '%s'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '%s,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = '%ssnapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '%d'
);`, SchemaVersion, dataset, dataset, strings.Join(cols, ",\n"), location, ProjectionStart, location, SchemaVersion)
}

// AllDDL is the DDL of every dataset, in the order of Datasets.
func AllDDL(location string) string {
	var b strings.Builder
	for i, name := range Datasets {
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
