package imports

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// withSeparators writes an amount as a spreadsheet shows it: thousands
// separators, negatives in accounting parentheses.
func withSeparators(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String() + "." + frac
	if neg {
		return "(" + out + ")"
	}
	return out
}

// serial is an Excel serial date (1900 system) of a YYYY-MM-DD date.
func serial(t *testing.T, s string) string {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(int(d.Sub(time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)) / (24 * time.Hour)))
}

// demoTable is kind's demo rows under its columns, header reversed, each
// cell through cell (column, value).
func demoTable(kind fund.Kind, cell func(c Column, v string) string) [][]string {
	cols := Columns(kind)
	for i, j := 0, len(cols)-1; i < j; i, j = i+1, j-1 {
		cols[i], cols[j] = cols[j], cols[i]
	}
	table := [][]string{headers(cols)}
	for _, row := range demoRows(kind) {
		rec := make([]string, len(cols))
		for i, c := range cols {
			if v := row[c.Header]; v != "" {
				rec[i] = cell(c, v)
			}
		}
		table = append(table, rec, nil) // a blank row after each
	}
	return table
}

func checkDemo(t *testing.T, kind fund.Kind, f *File) {
	t.Helper()
	if len(f.Errors) > 0 {
		t.Fatalf("errors: %v", f.Errors)
	}
	demo := demoDocuments(kind)
	if len(f.Documents) != len(demo) {
		t.Fatalf("%d documents, want %d", len(f.Documents), len(demo))
	}
	for i, d := range demo {
		if got, want := canonical(t, f.Documents[i].Document), asPut(t, d); got != want {
			t.Errorf("document %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func TestSpreadsheetRealities(t *testing.T) {
	kind := fund.KindCapitalAccountStatement // its lines are signed: distributions and fees are negative
	t.Run("a CSV with a BOM, a reordered header, trailing empty columns, blank rows, separators and accounting negatives", func(t *testing.T) {
		var buf bytes.Buffer
		buf.Write(utf8BOM)
		w := csv.NewWriter(&buf)
		negatives := 0
		for _, rec := range demoTable(kind, func(c Column, v string) string {
			if c.value == valueMoney {
				if strings.HasPrefix(v, "-") {
					negatives++
				}
				return withSeparators(v)
			}
			return v
		}) {
			if rec != nil {
				rec = append(rec, "", "")
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		if negatives == 0 || !strings.Contains(buf.String(), "(1") || !strings.Contains(buf.String(), ",000.00") {
			t.Fatalf("the file shows no accounting negative or separator: %s", buf.String())
		}
		f, err := Read(t.Context(), &buf, FormatCSV, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		checkDemo(t, kind, f)
	})
	t.Run("an XLSX with serial dates, amounts as numbers and as text, blank rows and a cached formula value", func(t *testing.T) {
		n := 0
		table := demoTable(kind, func(c Column, v string) string {
			switch c.value {
			case valueDate:
				return "#" + serial(t, v)
			case valueMoney:
				n++
				if n%2 == 0 {
					return "#" + v // a number cell
				}
				return withSeparators(v) // text
			}
			return v
		})
		b := sheetOf(t, table)
		f, err := Read(t.Context(), bytes.NewReader(b), FormatXLSX, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		checkDemo(t, kind, f)
	})
	t.Run("a formula's cached value is read", func(t *testing.T) {
		table := demoTable(fund.KindCapitalCallNotice, func(c Column, v string) string { return v })
		col := 0
		for i, h := range table[0] {
			if h == "capitalCall.amount" {
				col = i
			}
		}
		amount := table[1][col]
		table[1][col] = "=SUM(" + amount + ")|" + amount // a formula and its cached value
		b := sheetOf(t, table)
		x, err := openXLSX(bytes.NewReader(b), DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		formula, _ := x.f.GetCellFormula("Notices", cellName(col+1, 2))
		x.close()
		if formula == "" {
			t.Fatal("the cell holds no formula: the test proves nothing")
		}
		f, err := Read(t.Context(), bytes.NewReader(b), FormatXLSX, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		checkDemo(t, fund.KindCapitalCallNotice, f)
	})
}

func TestLimits(t *testing.T) {
	var tmpl bytes.Buffer
	if err := WriteTemplate(&tmpl, fund.KindCapitalCallNotice, FormatCSV); err != nil {
		t.Fatal(err)
	}
	rows := len(demoRows(fund.KindCapitalCallNotice))
	docs := len(demoDocuments(fund.KindCapitalCallNotice))
	for _, c := range []struct {
		name   string
		limits Limits
		over   string
	}{
		{"one byte fewer than the file is over the byte limit", Limits{MaxBytes: int64(tmpl.Len() - 1)}, "bytes"},
		{"one row fewer than the file's is over the row limit", Limits{MaxRows: rows - 1}, "rows"},
		{"one document fewer than the file's is over the document limit", Limits{MaxDocuments: docs - 1}, "documents"},
		{"the file's own size, rows and documents are within the limits", Limits{MaxBytes: int64(tmpl.Len()), MaxRows: rows, MaxDocuments: docs}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Read(t.Context(), bytes.NewReader(tmpl.Bytes()), FormatCSV, c.limits)
			var le *LimitError
			if c.over == "" {
				if err != nil || len(f.Errors) > 0 {
					t.Fatalf("err %v, errors %v", err, f.Errors)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !errors.As(err, &le) || le.Limit != c.over {
				t.Fatalf("err = %v, want a %s LimitError", err, c.over)
			}
		})
	}
}
