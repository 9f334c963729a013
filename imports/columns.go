// Package imports reads a quarter's notices and statements from a
// spreadsheet (CSV or XLSX) and writes the import templates.
//
// A file has one row per position; its rows are grouped into documents by
// their documentId column. Each document's request body is built as the
// JSON of PUT /v1/documents/{documentId} and decoded by wire's strict
// decoder. So every problem carries the JSON API's own message, mapped back
// to its sheet, row and column.
//
// The columns are derived from the declared request types by reflection
// (json tags for the headers, doc tags for the descriptions), never written
// by hand: a field declared once in fund appears in the template and is read
// with no edit here. See docs/imports.md.
package imports

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// Column is one column of an import template.
type Column struct {
	Header      string // the member's JSON path in the document or the position: "capitalCall.amount"
	Description string // from the member's doc tag
	Example     string // from the demo dataset; "" when the demo has none

	scope scope
	value valueKind
}

type scope int

const (
	scopeDocument scope = iota // a document field: the same on every row of the document
	scopePosition              // a member of the row's position
)

type valueKind int

const (
	valueText valueKind = iota
	valueMoney
	valueDate
)

// DocumentIDHeader is the column that groups rows into documents: the
// {documentId} of the PUT the document stands for.
const DocumentIDHeader = "documentId"

// A list member (a call's or a distribution's typed transaction lines) has
// one group of columns per line: the list's path, the line's number from 1
// in brackets, then the element's member, "capitalCall.transactions[1].amount".
// The numbers order the lines; a line whose cells are all empty is left out,
// so the template's lines may be left unused and more added (…[2]…, …[3]…)
// up to MaxListLines.
const MaxListLines = 50

// listHeader matches a numbered list header: base, line number, member.
var listHeader = regexp.MustCompile(`^(.+)\[([0-9]+)\]\.([A-Za-z0-9_]+)$`)

// kindItems are the position items a template of each document kind
// carries, by their JSON names in fund.Position: what an administrator's
// allocation table for that kind holds. The reader accepts every item on
// every kind, as the JSON API does.
var kindItems = map[fund.Kind][]string{
	fund.KindCapitalCallNotice:       {"capitalCall", "unfundedCommitment"},
	fund.KindDistributionNotice:      {"distribution", "unfundedCommitment"},
	fund.KindCapitalAccountStatement: {"capitalAccount"},
}

var (
	typeMoney = reflect.TypeFor[fund.Money]()
	typeDate  = reflect.TypeFor[fund.Date]()
	typeList  = reflect.TypeFor[wire.PositionList]()
)

// Columns lists the columns of kind's template, in template order: the
// documentId, the document's fields (wire.DocumentRequest's members but its
// positions), then the position's identity and the members of the kind's
// items, each list member with the number of lines the demo uses (at least
// one). It returns nil for an unknown kind.
func Columns(kind fund.Kind) []Column {
	items, ok := kindItems[kind]
	if !ok {
		return nil
	}
	cols := documentColumns()
	for _, c := range positionColumns() {
		if c.Header == "positionId" || c.Header == "investorId" || inItems(c.Header, items) {
			cols = append(cols, c)
		}
	}
	cols = withLines(cols, kind)
	examples := demoExamples(kind)
	for i := range cols {
		cols[i].Example = examples[cols[i].Header]
	}
	return cols
}

func inItems(header string, items []string) bool {
	for _, it := range items {
		if strings.HasPrefix(header, it+".") {
			return true
		}
	}
	return false
}

// documentColumns are the document's columns, list members as patterns
// ("…[].member").
var documentColumns = sync.OnceValue(func() []Column {
	cols := []Column{{Header: DocumentIDHeader, scope: scopeDocument, value: valueText,
		Description: "The document the row belongs to: rows with the same documentId are one document, the {documentId} of PUT /v1/documents/{documentId}. Every row of a document repeats the document's fields."}}
	return walk(cols, reflect.TypeFor[wire.DocumentRequest](), "", scopeDocument, "")
})

// positionColumns are the columns of every member of fund.Position, list
// members as patterns.
var positionColumns = sync.OnceValue(func() []Column {
	return walk(nil, reflect.TypeFor[fund.Position](), "", scopePosition, "")
})

// walk appends a column for every leaf member of struct type t, flattening
// embedded structs as encoding/json and wire's decoder do.
func walk(out []Column, t reflect.Type, prefix string, sc scope, parentDoc string) []Column {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = walk(out, f.Type, prefix, sc, parentDoc)
			continue
		}
		if !f.IsExported() || f.Type == typeList {
			continue // the positions are the rows
		}
		name = cmp.Or(name, f.Name)
		header := prefix + name
		doc := f.Tag.Get("doc")
		if row := f.Tag.Get("ilpa"); row != "" {
			doc = fmt.Sprintf("%s (ILPA Reporting Template v2.0, %s).", doc, row)
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == typeMoney:
			out = append(out, Column{Header: header, Description: doc, scope: sc, value: valueMoney})
		case ft == typeDate:
			out = append(out, Column{Header: header, Description: doc, scope: sc, value: valueDate})
		case ft.Kind() == reflect.Struct:
			out = walk(out, ft, header+".", sc, doc)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = walk(out, ft.Elem(), header+"[].", sc, doc)
		case ft.Kind() == reflect.String:
			out = append(out, Column{Header: header, Description: doc, scope: sc, value: valueText})
		default:
			panic(fmt.Sprintf("imports: no column for %s (%s): add its cell form to the reader", header, f.Type))
		}
	}
	return out
}

// withLines numbers each list pattern's columns: as many lines as the
// demo's documents of kind use, at least one.
func withLines(cols []Column, kind fund.Kind) []Column {
	lines := demoListLines(kind)
	var out []Column
	for i := 0; i < len(cols); i++ {
		c := cols[i]
		base, _, ok := strings.Cut(c.Header, "[]")
		if !ok {
			out = append(out, c)
			continue
		}
		j := i
		for j < len(cols) && strings.HasPrefix(cols[j].Header, base+"[].") {
			j++
		}
		for n := 1; n <= max(1, lines[base]); n++ {
			for _, lc := range cols[i:j] {
				lc.Header = strings.Replace(lc.Header, "[]", "["+strconv.Itoa(n)+"]", 1)
				lc.Description = fmt.Sprintf("Line %d of %s: %s", n, base, lc.Description)
				out = append(out, lc)
			}
		}
		i = j - 1
	}
	return out
}

// known is every column the reader accepts, by header, list members by
// their pattern ("capitalCall.transactions[].amount"): the document's and
// those of every item, whatever the kind.
var known = sync.OnceValue(func() map[string]Column {
	out := map[string]Column{}
	for _, c := range append(append([]Column{}, documentColumns()...), positionColumns()...) {
		out[c.Header] = c
	}
	return out
})

// columnOf finds the column of a file's header: the column, the list line
// number (0 when not a list member), and whether the header is known.
func columnOf(header string) (Column, int, bool) {
	if c, ok := known()[header]; ok && !strings.Contains(header, "[]") {
		return c, 0, true
	}
	m := listHeader.FindStringSubmatch(header)
	if m == nil {
		return Column{}, 0, false
	}
	n, err := strconv.Atoi(m[2])
	if err != nil || n < 1 || n > MaxListLines || m[2][0] == '0' {
		return Column{}, 0, false
	}
	c, ok := known()[m[1]+"[]."+m[3]]
	if !ok {
		return Column{}, 0, false
	}
	c.Header = header
	return c, n, true
}

// suggest names a known header that header differs from only in case.
func suggest(header string) string {
	pattern := header
	if m := listHeader.FindStringSubmatch(header); m != nil {
		pattern = m[1] + "[]." + m[3]
	}
	for h := range known() {
		if strings.EqualFold(h, pattern) {
			if m := listHeader.FindStringSubmatch(header); m != nil {
				return strings.Replace(h, "[]", "["+m[2]+"]", 1)
			}
			return h
		}
	}
	return ""
}

// The demo's rows.

// demoDocuments are the demo's documents of kind, each at its latest
// version, in the demo's order.
func demoDocuments(kind fund.Kind) []fund.Document {
	return slices.DeleteFunc(fund.DemoLatest(), func(d fund.Document) bool { return d.Kind != kind })
}

// rowsOf flattens d into rows of cells by header: its request body as the
// JSON API takes it, each position a row beside the document's fields.
// Values are the JSON's text (amounts and dates are JSON strings).
func rowsOf(d fund.Document) ([]map[string]string, error) {
	body, err := json.Marshal(wire.RequestOf(d))
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(body, &tree); err != nil {
		return nil, err
	}
	positions, _ := tree["positions"].([]any)
	delete(tree, "positions")
	docCells := map[string]string{DocumentIDHeader: d.ID}
	flatten(docCells, "", tree)
	rows := make([]map[string]string, 0, len(positions))
	for _, p := range positions {
		row := map[string]string{}
		for k, v := range docCells {
			row[k] = v
		}
		flatten(row, "", p.(map[string]any))
		rows = append(rows, row)
	}
	return rows, nil
}

// flatten writes every leaf of a JSON object into cells under its header.
func flatten(cells map[string]string, prefix string, v map[string]any) {
	for k, x := range v {
		switch x := x.(type) {
		case map[string]any:
			flatten(cells, prefix+k+".", x)
		case []any:
			for i, e := range x {
				if o, ok := e.(map[string]any); ok {
					flatten(cells, fmt.Sprintf("%s%s[%d].", prefix, k, i+1), o)
				}
			}
		case string:
			cells[prefix+k] = x
		case nil:
		default:
			cells[prefix+k] = fmt.Sprint(x)
		}
	}
}

// demoRows are the rows of the demo's documents of kind.
func demoRows(kind fund.Kind) []map[string]string {
	var out []map[string]string
	for _, d := range demoDocuments(kind) {
		rows, err := rowsOf(d)
		if err != nil {
			panic(fmt.Sprintf("imports: the demo's %s does not encode: %v", d.ID, err))
		}
		out = append(out, rows...)
	}
	return out
}

// demoListLines counts, per list, the most lines a demo row of kind uses.
func demoListLines(kind fund.Kind) map[string]int {
	out := map[string]int{}
	for _, row := range demoRows(kind) {
		for h := range row {
			if m := listHeader.FindStringSubmatch(h); m != nil {
				n, _ := strconv.Atoi(m[2])
				out[m[1]] = max(out[m[1]], n)
			}
		}
	}
	return out
}

// demoExamples is each header's first value among the demo's rows of kind.
func demoExamples(kind fund.Kind) map[string]string {
	out := map[string]string{}
	for _, row := range demoRows(kind) {
		for h, v := range row {
			if _, ok := out[h]; !ok && v != "" {
				out[h] = v
			}
		}
	}
	return out
}
