package iceberg

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/fundsvc/fundsvc/export"
)

// Schema is the Iceberg schema of a dataset, derived from its Parquet
// schema (export.Schema) so that the two cannot disagree: field IDs are the
// columns' positions from 1, in the order the files hold them, and a column
// is required unless it is optional in the files. A table is created with
// it; a table created by an earlier schema version keeps its columns' IDs
// and follows it by name (see planEvolution). The files carry no field
// IDs; the table's name mapping (schema.name-mapping.default, set on the
// first commit and kept by every schema change) ties their columns to the
// table's IDs.
func Schema(dataset string) (*iceberg.Schema, error) {
	var fields []iceberg.NestedField
	for i, f := range export.Schema(dataset).Fields() {
		t, err := icebergType(f)
		if err != nil {
			return nil, fmt.Errorf("iceberg: dataset %s: %w", dataset, err)
		}
		fields = append(fields, iceberg.NestedField{ID: i + 1, Name: f.Name(), Type: t, Required: f.Required()})
	}
	return iceberg.NewSchema(0, fields...), nil
}

// icebergType is the Iceberg type of a Parquet column: money DECIMAL(19,4),
// dates DATE, instants timestamptz (the files mark them adjusted to UTC).
func icebergType(f parquet.Field) (iceberg.Type, error) {
	t := f.Type()
	if lt := t.LogicalType(); lt != nil {
		switch v := lt.Value.(type) {
		case *format.StringType:
			return iceberg.PrimitiveTypes.String, nil
		case *format.DecimalType:
			return iceberg.DecimalTypeOf(int(v.Precision), int(v.Scale)), nil
		case *format.DateType:
			return iceberg.PrimitiveTypes.Date, nil
		case *format.TimestampType:
			if !v.IsAdjustedToUTC {
				return nil, fmt.Errorf("column %s: a timestamp not adjusted to UTC", f.Name())
			}
			return iceberg.PrimitiveTypes.TimestampTz, nil
		case *format.IntType:
			if v.BitWidth > 32 {
				return iceberg.PrimitiveTypes.Int64, nil
			}
			return iceberg.PrimitiveTypes.Int32, nil
		}
	}
	switch t.Kind() {
	case parquet.Boolean:
		return iceberg.PrimitiveTypes.Bool, nil
	case parquet.Int32:
		return iceberg.PrimitiveTypes.Int32, nil
	case parquet.Int64:
		return iceberg.PrimitiveTypes.Int64, nil
	case parquet.ByteArray:
		return iceberg.PrimitiveTypes.String, nil
	}
	return nil, fmt.Errorf("column %s: no Iceberg type for %s", f.Name(), t)
}

// timestampColumns are the dataset's timestamptz columns. The files store
// them in milliseconds (the Hive tables' unit), which Iceberg readers
// decode from the Parquet annotation; their column bounds would be read as
// microseconds, so the tables keep only counts for them (see
// tableProperties).
func timestampColumns(s *iceberg.Schema) []string {
	var cols []string
	for _, f := range s.Fields() {
		if f.Type.Equals(iceberg.PrimitiveTypes.TimestampTz) {
			cols = append(cols, f.Name)
		}
	}
	return cols
}
