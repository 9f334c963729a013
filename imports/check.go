package imports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"
)

var (
	accounting = regexp.MustCompile(`^\((.+)\)$`)
	thousands  = regexp.MustCompile(`^-?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?$`)
	exponent   = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?[eE][-+]?[0-9]+$`)
	fraction   = regexp.MustCompile(`^-?([0-9]+)\.([0-9]+)$`)
	serialDate = regexp.MustCompile(`^[0-9]+(\.0+)?$`)
)

// cellValue turns a cell's text into the text its JSON value holds, or says
// why it cannot. Amounts: thousands separators dropped, an accounting
// negative "(1,234.56)" made "-1234.56", an exponent written out exactly; a
// binary approximation Excel stored (more decimals than an amount has, with
// the 15 or more significant digits of a float's) is refused, never
// rounded. Dates: a whole number is an Excel serial date. Anything else is
// left as it is, for the decoder to judge with the JSON API's message.
func cellValue(kind valueKind, text string, date1904 bool) (string, string) {
	switch kind {
	case valueMoney:
		s, negative := text, false
		if m := accounting.FindStringSubmatch(s); m != nil && !strings.HasPrefix(strings.TrimSpace(m[1]), "-") {
			s, negative = strings.TrimSpace(m[1]), true
		}
		if thousands.MatchString(s) {
			s = strings.ReplaceAll(s, ",", "")
		}
		if exponent.MatchString(s) {
			d, err := decimal.NewFromString(s)
			if err != nil {
				return text, ""
			}
			s = d.String()
		}
		if rounded(s) {
			return "", fmt.Sprintf("Excel stored this amount as %s, a binary approximation, not the decimal entered: enter the amount as text (for example '%s) or round it in the cell to at most %d decimals",
				s, roundedHint(s), fund.MoneyMaxScale)
		}
		if negative {
			s = "-" + s
		}
		return s, ""
	case valueDate:
		if !serialDate.MatchString(text) {
			return text, ""
		}
		whole, _, _ := strings.Cut(text, ".")
		n, err := strconv.Atoi(whole)
		if err != nil || n < 1 || n > 2958465 { // Excel's last day: 9999-12-31
			return text, ""
		}
		t, err := excelize.ExcelDateToTime(float64(n), date1904)
		if err != nil {
			return text, ""
		}
		return t.Format("2006-01-02"), ""
	}
	return text, ""
}

// rounded reports whether s, a plain decimal, is a float's approximation:
// more decimals than an amount may have, and 15 or more significant digits.
func rounded(s string) bool {
	m := fraction.FindStringSubmatch(s)
	if m == nil || len(m[2]) <= fund.MoneyMaxScale {
		return false
	}
	digits := strings.TrimRight(strings.TrimLeft(m[1]+m[2], "0"), "0")
	return len(digits) >= 15
}

// roundedHint is s rounded to the amount's scale, as the value the user
// most likely entered.
func roundedHint(s string) string {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return s
	}
	return d.Round(fund.MoneyMaxScale).String()
}

// placeholders stand for a refused value while the decoder goes on to find
// the rest of a row's problems; a row or document that needed one is not
// checked further (its rules would judge the placeholder).
var placeholders = map[valueKind]string{valueMoney: "0", valueDate: "2000-01-01", valueText: "x"}

// tree builds the JSON object of cells (by header): a dotted header nests,
// a list member's line n becomes an element of the list, lines in order.
// lines maps each list's path to its elements' line numbers.
func tree(cells map[string]string) (obj map[string]any, lines map[string][]int) {
	obj = map[string]any{}
	lists := map[string]map[int]map[string]any{}
	for h, v := range cells {
		if m := listHeader.FindStringSubmatch(h); m != nil {
			n, _ := strconv.Atoi(m[2])
			if lists[m[1]] == nil {
				lists[m[1]] = map[int]map[string]any{}
			}
			if lists[m[1]][n] == nil {
				lists[m[1]][n] = map[string]any{}
			}
			lists[m[1]][n][m[3]] = v
			continue
		}
		set(obj, strings.Split(h, "."), v)
	}
	lines = map[string][]int{}
	for base, byLine := range lists {
		ns := make([]int, 0, len(byLine))
		for n := range byLine {
			ns = append(ns, n)
		}
		sort.Ints(ns)
		arr := make([]any, 0, len(ns))
		for _, n := range ns {
			arr = append(arr, byLine[n])
		}
		set(obj, strings.Split(base, "."), arr)
		lines[base] = ns
	}
	return obj, lines
}

func set(obj map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = v
}

var elementPath = regexp.MustCompile(`^(.*?)\[([0-9]+)\](.*)$`)

// headerOf is the header of a JSON path inside a document or a position
// (capitalCall.transactions[0].amount → capitalCall.transactions[1].amount
// when the list's first element came from line 1).
func headerOf(path string, lines map[string][]int) string {
	m := elementPath.FindStringSubmatch(path)
	if m == nil {
		return path
	}
	k, _ := strconv.Atoi(m[2])
	if ns := lines[m[1]]; k < len(ns) {
		return fmt.Sprintf("%s[%d]%s", m[1], ns[k], m[3])
	}
	return path
}

// cellOf is the column a header names in this file: the header itself, or,
// for a path that is not a column (capitalCall), the first of the file's
// columns inside it. leaf reports whether header is a column.
func (rd *reader) cellOf(header string) (column string, leaf bool) {
	if header == "positions" {
		return "positionId", false
	}
	if _, _, ok := columnOf(header); ok {
		return header, true
	}
	best, at := "", -1
	for h, i := range rd.letterOf {
		if strings.HasPrefix(h, header+".") || strings.HasPrefix(h, header+"[") {
			if at < 0 || i < at {
				best, at = h, i
			}
		}
	}
	if best != "" {
		return best, false
	}
	return header, false
}

// report records err, found on row r (position i of the document, or -1
// for the document's fields), and returns the header of the cell it is
// about when that is a column whose value may be replaced, else "".
func (rd *reader) report(d *document, r *row, i int, err error, lines map[string][]int) string {
	var fe *fund.Error
	if !errors.As(err, &fe) {
		d.Errors = append(d.Errors, CellError{Sheet: rd.file.Sheet, Row: r.num, Message: "cannot be checked", DocumentID: d.ID})
		return ""
	}
	rel, field := fe.Field, fe.Field
	if i >= 0 {
		field = fmt.Sprintf("positions[%d]", i)
		if rel != "" {
			field += "." + rel
		}
	}
	header := headerOf(rel, lines)
	column, leaf := rd.cellOf(header)
	if !leaf || !r.reported[column] {
		e := rd.errorAt(r.num, column, fe.Message)
		e.DocumentID, e.Field = d.ID, field
		d.Errors = append(d.Errors, e)
	}
	if leaf {
		return column
	}
	return ""
}

// scoped are the values of r's cells of one scope.
func (rd *reader) scoped(r *row, sc scope) map[string]string {
	out := map[string]string{}
	for h, v := range r.values {
		if c, _, _ := columnOf(h); c.scope == sc && h != DocumentIDHeader {
			out[h] = v
		}
	}
	return out
}

// document checks one document: its document fields the same on every
// row, then its fields, then each row's position, each through the JSON
// API's decoder and rules, and, when all of that passed, the whole body.
func (rd *reader) document(d *document) {
	first := d.rows[0]
	docCells := rd.scoped(first, scopeDocument)
	for _, r := range d.rows[1:] {
		for h, i := range rd.letterOf {
			c := rd.columns[i]
			if c.scope != scopeDocument || h == DocumentIDHeader || r.reported[h] || first.reported[h] || r.values[h] == first.values[h] {
				continue
			}
			e := rd.errorAt(r.num, h, fmt.Sprintf("is %q but %q on row %d, the document's first row: every row of a document repeats its document fields", r.values[h], first.values[h], first.num))
			e.DocumentID, e.Field = d.ID, h
			d.Errors = append(d.Errors, e)
		}
	}
	fields, docOK := rd.checkFields(d, first, docCells)
	for i, r := range d.rows {
		rd.checkPosition(d, i, r, fields, docOK)
	}
	obj, _ := tree(docCells)
	positions := make([]any, 0, len(d.rows))
	rowLines := make([]map[string][]int, 0, len(d.rows))
	for _, r := range d.rows {
		p, lines := tree(rd.scoped(r, scopePosition))
		positions, rowLines = append(positions, p), append(rowLines, lines)
	}
	obj["positions"] = positions
	d.Body, _ = json.Marshal(obj)
	if len(d.Errors) > 0 {
		return
	}
	doc, err := rd.decodeDocument(d.ID, d.Body)
	if err == nil {
		check, _ := rd.decodeDocument(d.ID, d.Body) // Normalize changes what it is given
		check.Normalize()
		if err = check.Validate(rd.lim.MaxPositions); err == nil {
			d.Document.Document = doc
			return
		}
	}
	var fe *fund.Error
	if errors.As(err, &fe) {
		if m := elementPath.FindStringSubmatch(fe.Field); m != nil && m[1] == "positions" {
			k, _ := strconv.Atoi(m[2])
			if k < len(d.rows) {
				rd.report(d, d.rows[k], k, fund.Invalid(strings.TrimPrefix(m[3], "."), "%s", fe.Message), rowLines[k])
				return
			}
		}
	}
	rd.report(d, first, -1, err, nil)
}

// decodeDocument decodes body as PUT /v1/documents/{id} does.
func (rd *reader) decodeDocument(id string, body []byte) (fund.Document, error) {
	req := wire.DocumentRequest{Positions: wire.PositionList{Max: rd.lim.MaxPositions}}
	if err := wire.DecodeStrict(bytes.NewReader(body), &req); err != nil {
		return fund.Document{}, err
	}
	return req.ToDocument(id)
}

// checkFields checks the document's fields, from its first row, and
// returns them when they pass.
func (rd *reader) checkFields(d *document, first *row, cells map[string]string) (fund.DocumentFields, bool) {
	cells = clone(cells)
	replaced := map[string]bool{}
	for {
		obj, lines := tree(cells)
		obj["positions"] = []any{}
		body, _ := json.Marshal(obj)
		doc, err := rd.decodeDocument(d.ID, body)
		if err == nil {
			if len(replaced) > 0 {
				return fund.DocumentFields{}, false
			}
			fields := doc.DocumentFields
			doc.Normalize()
			if err = doc.Validate(rd.lim.MaxPositions); err == nil {
				return fields, true
			}
			rd.report(d, first, -1, err, lines)
			return fund.DocumentFields{}, false
		}
		h := rd.report(d, first, -1, err, lines)
		if h == "" || replaced[h] {
			return fund.DocumentFields{}, false
		}
		c, _, _ := columnOf(h)
		cells[h], replaced[h] = placeholders[c.value], true
	}
}

// checkPosition checks row r, the document's position i: every value
// through the decoder, then, when they all pass and so did the document's
// fields, the position's rules (the first broken one).
func (rd *reader) checkPosition(d *document, i int, r *row, fields fund.DocumentFields, docOK bool) {
	cells := clone(rd.scoped(r, scopePosition))
	replaced := map[string]bool{}
	for {
		obj, lines := tree(cells)
		body, _ := json.Marshal(obj)
		var p fund.Position
		err := wire.DecodeStrict(bytes.NewReader(body), &p)
		if err == nil {
			if len(replaced) > 0 || !docOK || len(r.reported) > 0 {
				return
			}
			doc := fund.Document{ID: d.ID, DocumentFields: fields, Positions: []fund.Position{p}}
			doc.Normalize()
			if err := doc.Validate(rd.lim.MaxPositions); err != nil {
				var fe *fund.Error
				if errors.As(err, &fe) {
					rel := strings.TrimPrefix(strings.TrimPrefix(fe.Field, "positions[0]"), ".")
					err = &fund.Error{Code: fe.Code, Field: rel, Message: fe.Message}
				}
				rd.report(d, r, i, err, lines)
			}
			return
		}
		h := rd.report(d, r, i, err, lines)
		if h == "" || replaced[h] {
			return
		}
		c, _, _ := columnOf(h)
		cells[h], replaced[h] = placeholders[c.value], true
	}
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
