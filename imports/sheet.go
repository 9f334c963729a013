package imports

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/xuri/excelize/v2"
)

// sheetRows yields a sheet's rows one at a time: each row's number as the
// spreadsheet shows it (from 1) and its cells' text, from column A.
type sheetRows interface {
	next() (row int, cells []string, ok bool, err error)
	name() string
	// uncached returns the columns (from 1) of row, the row next
	// returned, holding a formula without a cached value; it returns
	// EINVALID for a row of more than MaxColumns cells.
	uncached(row int) (map[int]bool, error)
	// date1904 reports whether serial dates count from 1904.
	date1904() bool
	close() error
}

// csvRows reads CSV: RFC 4180 (encoding/csv), UTF-8 with or without a byte
// order mark, one record per row, records of any length.
type csvRows struct {
	r   *csv.Reader
	row int
}

var utf8BOM = []byte("\xef\xbb\xbf")

// openCSV reads CSV from r as it arrives, one record at a time.
func openCSV(r io.Reader) *csvRows {
	br := bufio.NewReader(r)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	return &csvRows{r: cr}
}

func (c *csvRows) next() (int, []string, bool, error) {
	rec, err := c.r.Read()
	if err == io.EOF {
		return 0, nil, false, nil
	}
	if err != nil {
		var pe *csv.ParseError
		var le *LimitError
		if errors.As(err, &le) {
			return 0, nil, false, le
		}
		if errors.As(err, &pe) {
			return 0, nil, false, fund.Invalid("file", "is not valid CSV at line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
		}
		return 0, nil, false, fund.Invalid("file", "cannot be read as CSV")
	}
	c.row++
	return c.row, rec, true, nil
}

func (c *csvRows) name() string                       { return "" }
func (c *csvRows) uncached(int) (map[int]bool, error) { return nil, nil }
func (c *csvRows) date1904() bool                     { return false }
func (c *csvRows) close() error                       { return nil }

// xlsxRows reads the first sheet of an XLSX workbook through excelize's row
// stream, each cell's raw stored text (RawCellValue): a number's digits as
// the file stores them, a formula's cached value.
type xlsxRows struct {
	path     string // the file of the workbook
	spooled  bool   // path is openXLSX's temporary copy, which close removes
	f        *excelize.File
	rows     *excelize.Rows
	sheet    string
	row      int
	is1904   bool
	formulas *formulaCells
}

// xlsxInMemory is the largest part of a workbook excelize holds in
// memory; a larger one (a big sheet) it extracts to a temporary file, and
// the row stream reads the sheet from there.
const xlsxInMemory = 1 << 20

// xlsxUnzipped bounds what a workbook may unzip to, as a multiple of the
// file's byte limit: a sheet's XML compresses some tenfold, a zip bomb far
// more.
const xlsxUnzipped = 64

// onDisk is a reader that is a file: an *os.File, or the API's body
// spooled to one.
type onDisk interface {
	Name() string
	Stat() (fs.FileInfo, error)
	io.Seeker
}

// openXLSX reads a workbook from r. A ZIP archive is read from its end (its
// directory), so excelize reads the parts from a file: r's own when r is a
// regular file read from its start (an import's body spooled by its
// Idempotency-Key, a file the import command opened), whose size is then
// checked against the byte limit; otherwise a temporary copy, read under
// the byte limit, never held in memory whole.
func openXLSX(r io.Reader, lim Limits) (*xlsxRows, error) {
	if f, ok := r.(onDisk); ok {
		st, err := f.Stat()
		if at, serr := f.Seek(0, io.SeekCurrent); err == nil && serr == nil && at == 0 && st.Mode().IsRegular() {
			if st.Size() > lim.MaxBytes {
				return nil, &LimitError{Limit: "bytes", Max: lim.MaxBytes}
			}
			return (&xlsxRows{path: f.Name()}).open(lim)
		}
	}
	spool, err := os.CreateTemp("", "fundsvc-import-*.xlsx")
	if err != nil {
		return nil, fmt.Errorf("imports: spool the workbook: %w", err)
	}
	x := &xlsxRows{path: spool.Name(), spooled: true}
	_, err = io.Copy(spool, &limitReader{r: r, max: lim.MaxBytes})
	if cerr := spool.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("imports: spool the workbook: %w", cerr)
	}
	if err != nil {
		x.close()
		var le *LimitError
		if errors.As(err, &le) {
			return nil, le
		}
		return nil, fund.Invalid("file", "cannot be read")
	}
	return x.open(lim)
}

// open opens the workbook at x.path and its first sheet's row stream; on
// an error it closes x.
func (x *xlsxRows) open(lim Limits) (*xlsxRows, error) {
	var err error
	x.f, err = excelize.OpenFile(x.path, excelize.Options{RawCellValue: true,
		UnzipXMLSizeLimit: min(xlsxInMemory, xlsxUnzipped*lim.MaxBytes), UnzipSizeLimit: xlsxUnzipped * lim.MaxBytes})
	if err != nil {
		x.close()
		return nil, fund.Invalid("file", "cannot be read as XLSX: %v", err)
	}
	sheets := x.f.GetSheetList()
	if len(sheets) == 0 {
		x.close()
		return nil, fund.Invalid("file", "holds no sheet")
	}
	x.sheet = sheets[0]
	if props, err := x.f.GetWorkbookProps(); err == nil && props.Date1904 != nil {
		x.is1904 = *props.Date1904
	}
	if x.formulas, err = openFormulaCells(x.path, x.sheet); err != nil {
		x.close()
		return nil, fund.Invalid("file", "cannot be read as XLSX: %v", err)
	}
	if x.rows, err = x.f.Rows(x.sheet); err != nil {
		x.close()
		return nil, fund.Invalid("file", "cannot be read as XLSX: %v", err)
	}
	return x, nil
}

func (x *xlsxRows) next() (int, []string, bool, error) {
	if !x.rows.Next() {
		if err := x.rows.Error(); err != nil {
			return 0, nil, false, fund.Invalid("file", "cannot be read as XLSX: %v", err)
		}
		return 0, nil, false, nil
	}
	x.row++
	cells, err := x.rows.Columns(excelize.Options{RawCellValue: true})
	if err != nil {
		return 0, nil, false, fund.Invalid("file", "cannot be read as XLSX at row %d: %v", x.row, err)
	}
	return x.row, cells, true, nil
}

func (x *xlsxRows) name() string                           { return x.sheet }
func (x *xlsxRows) date1904() bool                         { return x.is1904 }
func (x *xlsxRows) uncached(row int) (map[int]bool, error) { return x.formulas.row(row) }

// close closes what openXLSX opened and removes its temporary copy of the
// workbook, if it made one.
func (x *xlsxRows) close() error {
	var errs []error
	if x.rows != nil {
		errs = append(errs, x.rows.Close())
	}
	if x.formulas != nil {
		errs = append(errs, x.formulas.close())
	}
	if x.f != nil {
		errs = append(errs, x.f.Close())
	}
	if x.spooled {
		errs = append(errs, os.Remove(x.path))
	}
	return errors.Join(errs...)
}

// formulaCells finds the cells of a sheet that hold a formula but no
// cached value, a row at a time, in step with the row stream: our own pass
// over the sheet's XML, because excelize's row stream gives such a cell as
// "", as it gives an empty cell, and its GetCellFormula would load the
// whole sheet into memory. It holds one row's cells at a time and reads no
// further than the row stream has come, so the reader's row limit bounds
// it, and MaxColumns the cells of a row.
type formulaCells struct {
	zc  *zip.ReadCloser
	rc  io.ReadCloser
	dec *xml.Decoder
	at  int          // the row last read; 0 before the first
	set map[int]bool // its columns holding a formula without a value
	eof bool
}

// openFormulaCells opens the pass over sheet's part of workbook.
func openFormulaCells(workbook, sheet string) (*formulaCells, error) {
	zc, err := zip.OpenReader(workbook)
	if err != nil {
		return nil, err
	}
	part, err := sheetPart(&zc.Reader, sheet)
	if err != nil {
		zc.Close()
		return nil, err
	}
	rc, err := zc.Open(part)
	if err != nil {
		zc.Close()
		return nil, err
	}
	return &formulaCells{zc: zc, rc: rc, dec: xml.NewDecoder(rc)}, nil
}

// row returns the columns of row num holding a formula without a cached
// value; rows are asked for in increasing order.
func (f *formulaCells) row(num int) (map[int]bool, error) {
	for f.at < num && !f.eof {
		if err := f.next(); err != nil {
			return nil, err
		}
	}
	if f.at == num {
		return f.set, nil
	}
	return nil, nil
}

// next reads the sheet's next row element: its number (its r, else the
// one after the last) and its formula cells without a value.
func (f *formulaCells) next() error {
	f.set = nil
	inRow, col, cells := false, 0, 0
	var formula, value bool
	for {
		tok, err := f.dec.Token()
		if err == io.EOF {
			f.eof = true
			return nil
		}
		if err != nil {
			return fund.Invalid("file", "cannot be read as XLSX: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				inRow, col, cells = true, 0, 0
				f.at++
				if n, err := strconv.Atoi(attr(t, "r")); err == nil && n > 0 {
					f.at = n
				}
			case "c":
				if !inRow {
					continue
				}
				col, formula, value = col+1, false, false
				if ref := attr(t, "r"); ref != "" {
					if c, _, err := excelize.CellNameToCoordinates(ref); err == nil {
						col = c
					}
				}
				if cells++; cells > MaxColumns || col > MaxColumns {
					return tooWide(f.at)
				}
			case "f":
				formula = true
			case "v", "is": // a cached value, even an empty string a formula returned
				value = true
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "c":
				if inRow && formula && !value {
					if f.set == nil {
						f.set = map[int]bool{}
					}
					f.set[col] = true
				}
			case "row":
				return nil
			}
		}
	}
}

func (f *formulaCells) close() error {
	return errors.Join(f.rc.Close(), f.zc.Close())
}

// sheetPart finds the part (xl/worksheets/sheet1.xml) of the sheet named
// name, through the workbook and its relationships.
func sheetPart(zr *zip.Reader, name string) (string, error) {
	var wb struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			ID   string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	var rels struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := readXMLPart(zr, "xl/workbook.xml", &wb); err != nil {
		return "", err
	}
	if err := readXMLPart(zr, "xl/_rels/workbook.xml.rels", &rels); err != nil {
		return "", err
	}
	for _, s := range wb.Sheets {
		if s.Name != name {
			continue
		}
		for _, r := range rels.Rels {
			if r.ID == s.ID {
				if strings.HasPrefix(r.Target, "/") {
					return strings.TrimPrefix(r.Target, "/"), nil
				}
				return path.Join("xl", r.Target), nil
			}
		}
	}
	return "", fmt.Errorf("sheet %q has no part", name)
}

func readXMLPart(zr *zip.Reader, name string, v any) error {
	rc, err := zr.Open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	return xml.NewDecoder(rc).Decode(v)
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
