package imports

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/xuri/excelize/v2"
)

// The formats of a file.
const (
	FormatCSV  = "csv"
	FormatXLSX = "xlsx"
)

// ColumnsSheet is the XLSX template's sheet that describes its columns; the
// reader reads the first sheet only.
const ColumnsSheet = "Columns"

// WriteTemplate writes kind's import template in format (FormatCSV or
// FormatXLSX): a header row, then one row per position of the demo's
// documents of kind (each at its latest version). An XLSX template has a
// second sheet, ColumnsSheet, listing each column's header, description and
// example. CSV is UTF-8 (without a byte order mark), RFC 4180. It returns
// EINVALID for an unknown kind or format.
func WriteTemplate(w io.Writer, kind fund.Kind, format string) error {
	return writeRows(w, kind, format, demoRows(kind))
}

// WriteDocuments writes docs, all of one kind, as a file of format the
// reader reads back as the same documents: the template's header and one
// row per position. It returns EINVALID for documents of several kinds,
// none, or an unknown format.
func WriteDocuments(w io.Writer, docs []fund.Document, format string) error {
	if len(docs) == 0 {
		return fund.Invalid("documents", "none to write")
	}
	var rows []map[string]string
	for _, d := range docs {
		if d.Kind != docs[0].Kind {
			return fund.Invalid("documents", "are of kinds %s and %s: a file holds one kind", docs[0].Kind, d.Kind)
		}
		r, err := rowsOf(d)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	return writeRows(w, docs[0].Kind, format, rows)
}

// writeRows writes rows under kind's header in format.
func writeRows(w io.Writer, kind fund.Kind, format string, rows []map[string]string) error {
	cols := Columns(kind)
	if cols == nil {
		return fund.Invalid("kind", "must be one of %v, got %q", fund.Kinds, kind)
	}
	switch format {
	case FormatCSV:
		cw := csv.NewWriter(w)
		record := make([]string, len(cols))
		for i, c := range cols {
			record[i] = c.Header
		}
		if err := cw.Write(record); err != nil {
			return err
		}
		for _, row := range rows {
			for i, c := range cols {
				record[i] = row[c.Header]
			}
			if err := cw.Write(record); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	case FormatXLSX:
		return writeXLSX(w, kind, cols, rows)
	}
	return fund.Invalid("format", "must be %s or %s, got %q", FormatCSV, FormatXLSX, format)
}

func writeXLSX(w io.Writer, kind fund.Kind, cols []Column, rows []map[string]string) error {
	f := excelize.NewFile()
	defer f.Close()
	sheet := string(kind) // at most 31 characters, as a sheet name must be
	if err := f.SetSheetName(f.GetSheetName(0), sheet); err != nil {
		return err
	}
	for i, c := range cols {
		if err := f.SetCellStr(sheet, cellName(i+1, 1), c.Header); err != nil {
			return err
		}
		for r, row := range rows {
			v := row[c.Header]
			if v == "" {
				continue
			}
			cell := cellName(i+1, r+2)
			var err error
			if c.value == valueMoney {
				// A number cell holding the amount's exact decimal text: no
				// float64 between the demo and the file.
				err = f.SetCellDefault(sheet, cell, v)
			} else {
				err = f.SetCellStr(sheet, cell, v)
			}
			if err != nil {
				return err
			}
		}
	}
	if _, err := f.NewSheet(ColumnsSheet); err != nil {
		return err
	}
	for i, h := range []string{"Header", "Description", "Example"} {
		if err := f.SetCellStr(ColumnsSheet, cellName(i+1, 1), h); err != nil {
			return err
		}
	}
	for r, c := range cols {
		for i, v := range []string{c.Header, c.Description, c.Example} {
			if err := f.SetCellStr(ColumnsSheet, cellName(i+1, r+2), v); err != nil {
				return err
			}
		}
	}
	_, err := f.WriteTo(w)
	return err
}

// cellName is the A1 name of a cell, col and row from 1.
func cellName(col, row int) string {
	name, err := excelize.CoordinatesToCellName(col, row)
	if err != nil {
		panic(fmt.Sprintf("imports: cell %d,%d: %v", col, row, err))
	}
	return name
}

// columnLetter is a column's letters: A, B, …, Z, AA, …
func columnLetter(col int) string {
	name, err := excelize.ColumnNumberToName(col)
	if err != nil {
		panic(fmt.Sprintf("imports: column %d: %v", col, err))
	}
	return name
}
