package imports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
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
	exponent   = regexp.MustCompile(`^-?[0-9]+(?:\.[0-9]+)?[eE]([-+]?[0-9]+)$`)
	fraction   = regexp.MustCompile(`^-?([0-9]+)\.([0-9]+)$`)
	serialDate = regexp.MustCompile(`^[0-9]+(\.0+)?$`)
)

// maxAmountExponent bounds the exponent of an amount written with one
// (1.23456E+3, a float's 1.0000000000000001E-4): an amount has at most
// fund.MoneyMaxIntegerDigits digits before the point, and a float's noise
// lies within 17 significant digits of its first, so no amount needs more;
// a larger exponent (1e9999) is refused before the amount is written out,
// which would take as many digits as the exponent says.
const maxAmountExponent = 30

// cellValue turns a cell's text into the text its JSON value holds, or says
// why it cannot. Amounts: thousands separators dropped, an accounting
// negative "(1,234.56)" made "-1234.56", an exponent (within
// ±maxAmountExponent, else refused) written out exactly; a
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
		if m := exponent.FindStringSubmatch(s); m != nil {
			if e, err := strconv.Atoi(m[1]); err != nil || e > maxAmountExponent || e < -maxAmountExponent {
				return "", fmt.Sprintf("%s is not a valid amount: its exponent is beyond ±%d; an amount is a decimal with at most %d digits before the point and %d after it: enter it written out",
					quoted(text), maxAmountExponent, fund.MoneyMaxIntegerDigits, fund.MoneyMaxScale)
			}
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

// quoted is s quoted, cut to its first 40 bytes as fund's amount errors
// cut it.
func quoted(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "…"
	}
	return strconv.Quote(s)
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
		ns := slices.Sorted(maps.Keys(byLine))
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
		rd.problem(d, CellError{Sheet: rd.file.Sheet, Row: r.num, Message: "cannot be checked", DocumentID: d.ID})
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
		rd.problem(d, e)
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
		for _, h := range rd.docHeaders {
			if r.reported[h] || first.reported[h] || r.values[h] == first.values[h] {
				continue
			}
			e := rd.errorAt(r.num, h, fmt.Sprintf("is %q but %q on row %d, the document's first row: every row of a document repeats its document fields", r.values[h], first.values[h], first.num))
			e.DocumentID, e.Field = d.ID, h
			rd.problem(d, e)
		}
	}
	fields, docOK := rd.checkFields(d, first, docCells)
	for i, r := range d.rows {
		if rd.ctx.Err() != nil {
			return // Read answers the context's error
		}
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
	if d.Problems > 0 {
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
	decode := func(obj map[string]any) (fund.Document, error) {
		obj["positions"] = []any{}
		body, _ := json.Marshal(obj)
		return rd.decodeDocument(d.ID, body)
	}
	cells = clone(cells)
	replaced := map[string]bool{}
	swept := false
	for {
		obj, lines := tree(cells)
		doc, err := decode(obj)
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
		if !swept {
			swept = true
			if rd.sweep(d, first, -1, cells, lines, replaced, func(obj map[string]any) error { _, err := decode(obj); return err }) {
				continue
			}
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
	decode := func(obj map[string]any) (fund.Position, error) {
		body, _ := json.Marshal(obj)
		var p fund.Position
		err := wire.DecodeStrict(bytes.NewReader(body), &p)
		return p, err
	}
	cells := clone(rd.scoped(r, scopePosition))
	replaced := map[string]bool{}
	swept := false
	for {
		obj, lines := tree(cells)
		p, err := decode(obj)
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
		if !swept {
			swept = true
			if rd.sweep(d, r, i, cells, lines, replaced, func(obj map[string]any) error { _, err := decode(obj); return err }) {
				continue
			}
		}
		h := rd.report(d, r, i, err, lines)
		if h == "" || replaced[h] {
			return
		}
		c, _, _ := columnOf(h)
		cells[h], replaced[h] = placeholders[c.value], true
	}
}

// sweep finds every value of cells the decoder refuses, and every member
// a list's line is required to have but lacks, decoding each cell on its
// own, and each list's line (its few cells) on its own, each once or once
// per problem of the line (decode decodes a body of those cells): it
// reports each (row r, position i or -1 as report takes them; lines are
// the whole row's list lines, which name the field) and puts a placeholder
// in its place. It reports whether it replaced any. The decoder stops at
// its first error, so a row is swept once rather than decoded again after
// each of its problems: the check is linear in the row's cells.
func (rd *reader) sweep(d *document, r *row, i int, cells map[string]string, lines map[string][]int, replaced map[string]bool, decode func(map[string]any) error) bool {
	groups := map[string][]string{} // a list's line ("capitalCall.transactions[2]") or a cell, by its headers
	for h := range cells {
		key := h
		if m := listHeader.FindStringSubmatch(h); m != nil {
			key = m[1] + "[" + m[2] + "]"
		}
		groups[key] = append(groups[key], h)
	}
	found := false
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		group := map[string]string{}
		for _, h := range groups[key] {
			group[h] = cells[h]
		}
		for range len(group) + maxRequiredOfALine {
			one, oneLines := tree(group)
			var fe *fund.Error
			if err := decode(one); err == nil || !errors.As(err, &fe) {
				break
			}
			h := headerOf(fe.Field, oneLines)
			if (h != key && !strings.HasPrefix(h, key+".")) || replaced[h] {
				break // refused for a member outside the group
			}
			c, _, ok := columnOf(h)
			if !ok {
				break
			}
			rd.report(d, r, i, &fund.Error{Code: fe.Code, Field: pathOf(h, lines), Message: fe.Message}, lines)
			group[h], cells[h], replaced[h], found = placeholders[c.value], placeholders[c.value], true, true
		}
	}
	return found
}

// maxRequiredOfALine bounds the required members a list's line may lack,
// beyond its cells: the decodes of one line in sweep.
const maxRequiredOfALine = 8

// pathOf is the JSON path of header h in a body whose lists hold lines:
// capitalCall.transactions[3].amount is capitalCall.transactions[1].amount
// when line 3 is its list's second.
func pathOf(h string, lines map[string][]int) string {
	m := listHeader.FindStringSubmatch(h)
	if m == nil {
		return h
	}
	n, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("%s[%d].%s", m[1], sort.SearchInts(lines[m[1]], n), m[3])
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
