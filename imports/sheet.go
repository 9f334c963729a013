package imports

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/xuri/excelize/v2"
)

// sheetRows yields a sheet's rows one at a time: each row's number as the
// spreadsheet shows it (from 1) and its cells' text, from column A.
type sheetRows interface {
	next() (row int, cells []string, ok bool, err error)
	name() string
	// uncached reports whether the cell (col and row from 1) holds a
	// formula without a cached value.
	uncached(col, row int) bool
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

func openCSV(b []byte) *csvRows {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, utf8BOM)))
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	return &csvRows{r: r}
}

func (c *csvRows) next() (int, []string, bool, error) {
	rec, err := c.r.Read()
	if err == io.EOF {
		return 0, nil, false, nil
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return 0, nil, false, fund.Invalid("file", "is not valid CSV at line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
		}
		return 0, nil, false, fund.Invalid("file", "cannot be read as CSV")
	}
	c.row++
	return c.row, rec, true, nil
}

func (c *csvRows) name() string           { return "" }
func (c *csvRows) uncached(int, int) bool { return false }
func (c *csvRows) date1904() bool         { return false }
func (c *csvRows) close() error           { return nil }

// xlsxRows reads the first sheet of an XLSX workbook through excelize's row
// stream, each cell's raw stored text (RawCellValue): a number's digits as
// the file stores them, a formula's cached value.
type xlsxRows struct {
	f       *excelize.File
	rows    *excelize.Rows
	sheet   string
	row     int
	is1904  bool
	noValue map[string]bool // formula cells without a cached value, by A1 name
}

func openXLSX(b []byte) (*xlsxRows, error) {
	f, err := excelize.OpenReader(bytes.NewReader(b), excelize.Options{RawCellValue: true})
	if err != nil {
		return nil, fund.Invalid("file", "cannot be read as XLSX: %v", err)
	}
	x := &xlsxRows{f: f}
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		f.Close()
		return nil, fund.Invalid("file", "holds no sheet")
	}
	x.sheet = sheets[0]
	if props, err := f.GetWorkbookProps(); err == nil && props.Date1904 != nil {
		x.is1904 = *props.Date1904
	}
	if x.noValue, err = formulasWithoutValue(b, x.sheet); err != nil {
		f.Close()
		return nil, fund.Invalid("file", "cannot be read as XLSX: %v", err)
	}
	if x.rows, err = f.Rows(x.sheet); err != nil {
		f.Close()
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

func (x *xlsxRows) name() string   { return x.sheet }
func (x *xlsxRows) date1904() bool { return x.is1904 }
func (x *xlsxRows) uncached(col, row int) bool {
	return len(x.noValue) > 0 && x.noValue[cellName(col, row)]
}

func (x *xlsxRows) close() error {
	err := x.rows.Close()
	if cerr := x.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// formulasWithoutValue lists the cells of sheet that hold a formula but no
// cached value. Our own pass over the sheet's XML, because excelize's row
// stream gives such a cell as "", as it gives an empty cell, and its
// GetCellFormula would load the whole sheet into memory; this pass holds
// one cell at a time.
func formulasWithoutValue(b []byte, sheet string) (map[string]bool, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	part, err := sheetPart(zr, sheet)
	if err != nil {
		return nil, err
	}
	rc, err := zr.Open(part)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	out := map[string]bool{}
	dec := xml.NewDecoder(rc)
	var ref string
	var formula, value bool
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "c":
				ref, formula, value = attr(t, "r"), false, false
			case "f":
				formula = true
			case "v", "is": // a cached value, even an empty string a formula returned
				value = true
			}
		case xml.EndElement:
			if t.Name.Local == "c" && formula && !value && ref != "" {
				out[ref] = true
			}
		}
	}
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
