package duckdbtest

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func str(s string) *string { return &s }

func TestQueryExactText(t *testing.T) {
	res, err := Query(t.Context(), `SELECT
		CAST('999999999999999.9999' AS DECIMAL(19,4)) AS a,
		CAST('-0.0001' AS DECIMAL(19,4)) AS b,
		DATE '2026-11-22' AS d,
		TIMESTAMP '2026-11-22 10:11:12.5' AS ts,
		CAST(NULL AS DECIMAL(19,4)) AS n;`)
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{
		Columns: []string{"a", "b", "d", "ts", "n"},
		Types:   []string{"DECIMAL(19,4)", "DECIMAL(19,4)", "DATE", "TIMESTAMP", "DECIMAL(19,4)"},
		Rows:    [][]*string{{str("999999999999999.9999"), str("-0.0001"), str("2026-11-22"), str("2026-11-22 10:11:12.5"), nil}},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("got  %s\nwant %s", dump(res), dump(want))
	}
	if got, want := res.Maps(), []map[string]string{{"a": "999999999999999.9999", "b": "-0.0001", "d": "2026-11-22", "ts": "2026-11-22 10:11:12.5", "n": ""}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Maps() = %v, want %v", got, want)
	}
}

// TestParquetRoundTrip writes a Parquet file with DuckDB and reads it back:
// DECIMAL(18,4) is stored as INT64 and DECIMAL(19,4) as
// FIXED_LEN_BYTE_ARRAY, the two encodings a writer may choose for money.
func TestParquetRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.parquet")
	lit := "'" + strings.ReplaceAll(path, "'", "''") + "'"
	// 1000 rows of i/10000 (summing to 50.0500) and one of the largest
	// DECIMAL(19,4), whose sum a float64 could not hold exactly. (Dividing
	// a DECIMAL by 10000 instead would give a DOUBLE.)
	if _, err := Query(t.Context(), `COPY (
			SELECT i AS id,
				CAST(i * 0.0001 AS DECIMAL(18,4)) AS small,
				CAST(i * 0.0001 AS DECIMAL(19,4)) AS big
			FROM range(1, 1001) t(i)
			UNION ALL
			SELECT 1001, 0, CAST('999999999999999.9999' AS DECIMAL(19,4))
		) TO `+lit+` (FORMAT parquet)`); err != nil {
		t.Fatal(err)
	}

	schema, err := Query(t.Context(), `SELECT name, type, type_length, converted_type, scale, precision
		FROM parquet_schema(`+lit+`) WHERE name IN ('small', 'big') ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	// DuckDB stores a DECIMAL wider than 18 digits in 16 bytes; other
	// writers use as few as 9 for 19 digits.
	wantSchema := []map[string]string{
		{"name": "big", "type": "FIXED_LEN_BYTE_ARRAY", "type_length": "16", "converted_type": "DECIMAL", "scale": "4", "precision": "19"},
		{"name": "small", "type": "INT64", "type_length": "", "converted_type": "DECIMAL", "scale": "4", "precision": "18"},
	}
	if got := schema.Maps(); !reflect.DeepEqual(got, wantSchema) {
		t.Errorf("parquet_schema = %v, want %v", got, wantSchema)
	}

	res, err := Query(t.Context(), `SELECT count(*) AS n, sum(small) AS small, sum(big) AS big,
			typeof(any_value(small)) AS small_type, typeof(any_value(big)) AS big_type
		FROM read_parquet(`+lit+`)`)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{{
		"n":          "1001",
		"small":      "50.0500",
		"big":        "1000000000000050.0499",
		"small_type": "DECIMAL(18,4)",
		"big_type":   "DECIMAL(19,4)",
	}}
	if got := res.Maps(); !reflect.DeepEqual(got, want) {
		t.Errorf("sums = %v, want %v", got, want)
	}
}

func TestQuerySetup(t *testing.T) {
	res, err := Query(t.Context(), "SELECT sum(x) AS total FROM t",
		"CREATE TABLE t (x DECIMAL(19,4))",
		"INSERT INTO t VALUES (0.1), (0.2)")
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.Value()
	if err != nil {
		t.Fatal(err)
	}
	if got != "0.3000" {
		t.Errorf("sum = %q, want %q", got, "0.3000")
	}
	if vals, err := res.Column("total"); err != nil || len(vals) != 1 || vals[0] == nil || *vals[0] != "0.3000" {
		t.Errorf("Column(total) = %v, %v", vals, err)
	}
	if _, err := res.Column("nope"); err == nil {
		t.Error("Column(nope) did not fail")
	}
}

func TestQueryError(t *testing.T) {
	_, err := Query(t.Context(), "SELECT no_such_column")
	if err == nil {
		t.Fatal("Query of a bad column did not fail")
	}
	// The error carries DuckDB's message from stderr.
	if !strings.Contains(err.Error(), "no_such_column") || !strings.Contains(err.Error(), "Binder Error") {
		t.Errorf("error does not carry DuckDB's message: %v", err)
	}
}

func dump(r *Result) string {
	var b strings.Builder
	b.WriteString("{Columns: ")
	b.WriteString(strings.Join(r.Columns, ","))
	b.WriteString(" Types: ")
	b.WriteString(strings.Join(r.Types, ","))
	b.WriteString(" Rows: [")
	for _, row := range r.Rows {
		b.WriteString("[")
		for j, v := range row {
			if j > 0 {
				b.WriteString(",")
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString("'" + *v + "'")
			}
		}
		b.WriteString("]")
	}
	b.WriteString("]}")
	return b.String()
}

// TestQueriesShareARunnerNotADatabase runs queries one after another: the
// second runs in the runner the first left, and sees nothing the first
// created. A query whose context ends kills its runner; the next starts
// another.
func TestQueriesShareARunnerNotADatabase(t *testing.T) {
	if _, err := Query(t.Context(), "SELECT count(*) AS n FROM t", "CREATE TABLE t AS SELECT 1 AS x"); err != nil {
		t.Fatal(err)
	}
	first := idle.free[len(idle.free)-1]
	if _, err := Query(t.Context(), "SELECT count(*) AS n FROM t"); err == nil || !strings.Contains(err.Error(), "Table with name t does not exist") {
		t.Errorf("the second query saw the first's table: %v", err)
	}
	if again := idle.free[len(idle.free)-1]; again != first {
		t.Errorf("the second query started a runner of its own (pid %d, the first's %d)", again.cmd.Process.Pid, first.cmd.Process.Pid)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := Query(ctx, "SELECT count(*) FROM range(1000000000000)"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a query whose context ended: %v", err)
	}
	if slices.Contains(idle.free, first) {
		t.Error("the runner of a query whose context ended is still used")
	}
	if v, err := (func() (string, error) {
		r, err := Query(t.Context(), "SELECT 41 + 1 AS v")
		if err != nil {
			return "", err
		}
		return r.Value()
	})(); err != nil || v != "42" {
		t.Errorf("a query after a killed runner: %q, %v", v, err)
	}
}
