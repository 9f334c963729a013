package imports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/xuri/excelize/v2"
)

// leafMembers walks t's JSON members on its own (not through walk): the
// dotted path of every member that is not an object, lists as "[]".
func leafMembers(t reflect.Type, prefix string, out map[string]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			leafMembers(f.Type, prefix, out)
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == reflect.TypeFor[fund.Money]() || ft == reflect.TypeFor[fund.Date]() || ft.Kind() == reflect.String:
			out[prefix+name] = f.Tag.Get("doc")
		case ft.Kind() == reflect.Slice:
			leafMembers(ft.Elem(), prefix+name+"[1].", out)
		default:
			leafMembers(ft, prefix+name+".", out)
		}
	}
}

func TestColumnsAreTheDeclaredMembers(t *testing.T) {
	items := map[fund.Kind][]reflect.Type{
		fund.KindCapitalCallNotice:       {reflect.TypeFor[fund.CapitalCallItem](), reflect.TypeFor[fund.UnfundedCommitmentItem]()},
		fund.KindDistributionNotice:      {reflect.TypeFor[fund.DistributionItem](), reflect.TypeFor[fund.UnfundedCommitmentItem]()},
		fund.KindCapitalAccountStatement: {reflect.TypeFor[fund.CapitalAccount]()},
	}
	names := map[reflect.Type]string{}
	pt := reflect.TypeFor[fund.Position]()
	for i := range pt.NumField() {
		name, _, _ := strings.Cut(pt.Field(i).Tag.Get("json"), ",")
		if ft := pt.Field(i).Type; ft.Kind() == reflect.Pointer {
			names[ft.Elem()] = name
		}
	}
	for _, kind := range fund.Kinds {
		t.Run(string(kind)+" has a column for every declared member and no other", func(t *testing.T) {
			want := map[string]string{DocumentIDHeader: ""}
			leafMembers(reflect.TypeFor[fund.DocumentFields](), "", want)
			leafMembers(reflect.TypeFor[fund.CapitalActivity](), "capitalActivity.", want)
			want["positionId"], want["investorId"] = "", ""
			for _, it := range items[kind] {
				leafMembers(it, names[it]+".", want)
			}
			got := map[string]Column{}
			for _, c := range Columns(kind) {
				if _, dup := got[c.Header]; dup {
					t.Errorf("column %s twice", c.Header)
				}
				got[c.Header] = c
				if c.Description == "" {
					t.Errorf("column %s has no description (a doc tag is missing)", c.Header)
				}
			}
			for h, doc := range want {
				c, ok := got[h]
				if !ok {
					t.Errorf("declared member %s has no column", h)
					continue
				}
				if doc != "" && !strings.Contains(c.Description, doc) {
					t.Errorf("column %s: description %q does not hold the doc tag %q", h, c.Description, doc)
				}
			}
			for h := range got {
				if _, ok := want[h]; !ok {
					t.Errorf("column %s is no declared member", h)
				}
			}
		})
	}
	t.Run("a member added to a declared type becomes a column with its doc", func(t *testing.T) {
		type call struct {
			fund.CapitalCallItem
			Memo *fund.Money `json:"memo,omitempty" doc:"A field declared in a test only."`
		}
		cols := walk(nil, reflect.TypeFor[call](), "capitalCall.", scopePosition, "")
		var found bool
		for _, c := range cols {
			if c.Header == "capitalCall.memo" {
				found = c.Description == "A field declared in a test only." && c.value == valueMoney
			}
		}
		if !found {
			t.Fatalf("capitalCall.memo is not a money column with its doc among %v", headers(cols))
		}
	})
	t.Run("examples come from the demo", func(t *testing.T) {
		cols := Columns(fund.KindCapitalCallNotice)
		ex := map[string]string{}
		for _, c := range cols {
			ex[c.Header] = c.Example
		}
		d := fund.DemoVersions()[1] // DOC001 as paid, the call notices' first document at its latest version
		p := d.Positions[0]
		for h, want := range map[string]string{
			"documentId": d.ID, "title": d.Title, "asOf": d.AsOf.String(), "positionId": p.ID,
			"capitalCall.amount": p.CapitalCall.Amount.String(), "capitalCall.dueDate": p.CapitalCall.DueDate.String(),
			"capitalCall.transactions[1].transactionType": "investment", // first stated in DOC005
		} {
			if ex[h] != want {
				t.Errorf("example of %s = %q, want %q", h, ex[h], want)
			}
		}
	})
}

func headers(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Header
	}
	return out
}

// asPut is d as PUT /v1/documents/{id} decodes its JSON.
func asPut(t *testing.T, d fund.Document) string {
	t.Helper()
	body, err := json.Marshal(wire.RequestOf(d))
	if err != nil {
		t.Fatal(err)
	}
	var req wire.DocumentRequest
	if err := wire.DecodeStrict(bytes.NewReader(body), &req); err != nil {
		t.Fatalf("the demo's %s does not decode: %v", d.ID, err)
	}
	doc, err := req.ToDocument(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	return canonical(t, doc)
}

func canonical(t *testing.T, d fund.Document) string {
	t.Helper()
	b, err := json.Marshal(struct {
		ID string
		wire.DocumentRequest
	}{d.ID, wire.RequestOf(d)})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTemplateReadBackIsTheDemo(t *testing.T) {
	for _, kind := range fund.Kinds {
		for _, format := range []string{FormatCSV, FormatXLSX} {
			t.Run(fmt.Sprintf("the %s template of %s reads back as the demo's documents", format, kind), func(t *testing.T) {
				var buf bytes.Buffer
				if err := WriteTemplate(&buf, kind, format); err != nil {
					t.Fatal(err)
				}
				f, err := Read(t.Context(), bytes.NewReader(buf.Bytes()), format, Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if len(f.Errors) > 0 {
					t.Fatalf("errors: %v", f.Errors)
				}
				demo := demoDocuments(kind)
				if len(f.Documents) != len(demo) || len(demo) == 0 {
					t.Fatalf("%d documents, want the demo's %d", len(f.Documents), len(demo))
				}
				for i, d := range demo {
					if got, want := canonical(t, f.Documents[i].Document), asPut(t, d); got != want {
						t.Errorf("document %d:\n got %s\nwant %s", i, got, want)
					}
				}
				if format == FormatXLSX {
					x, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
					if err != nil {
						t.Fatal(err)
					}
					defer x.Close()
					rows, err := x.GetRows(ColumnsSheet)
					if err != nil {
						t.Fatal(err)
					}
					cols := Columns(kind)
					if len(rows) != len(cols)+1 {
						t.Fatalf("the %s sheet has %d rows, want %d", ColumnsSheet, len(rows), len(cols)+1)
					}
					for i, c := range cols {
						if rows[i+1][0] != c.Header || rows[i+1][1] != c.Description {
							t.Errorf("%s row %d = %v, want %s", ColumnsSheet, i+2, rows[i+1], c.Header)
						}
					}
				}
			})
		}
	}
}

// sheetOf builds an XLSX whose first sheet is "Notices", from rows of
// cells; a cell "=F" is a formula without a cached value, "=F|V" formula F
// with cached text V, "#N" a number cell holding N's text, anything else
// text.
func sheetOf(t *testing.T, rows [][]string) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", "Notices"); err != nil {
		t.Fatal(err)
	}
	for r, row := range rows {
		for c, v := range row {
			cell := cellName(c+1, r+1)
			var err error
			switch {
			case v == "":
			case strings.HasPrefix(v, "="):
				formula, cached, withValue := strings.Cut(v[1:], "|")
				if withValue {
					err = f.SetCellDefault("Notices", cell, cached) // SetCellFormula keeps it as the cached value
				}
				if err == nil {
					err = f.SetCellFormula("Notices", cell, formula)
				}
			case strings.HasPrefix(v, "#"):
				err = f.SetCellDefault("Notices", cell, v[1:])
			default:
				err = f.SetCellStr("Notices", cell, v)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func message(err error) string { return fund.ErrorMessage(err) }

func TestEveryPlantedErrorIsAnswered(t *testing.T) {
	_, badAmount := fund.ParseMoney("12x")
	_, badDate := fund.ParseDate("2025-02-30")
	header := []string{"positionId", "documentId", "capitalCall.amount", "capitalCall.dueDate", "investorId", "fundId", "kind", "title", "asOf", "capitalCall.amout", "unfundedCommitment.amount"}
	rows := [][]string{
		header,
		{"POSITION_1", "DOC100", "12x", "2025-08-01", "INVESTOR_1", "FUND_A", "capital_call_notice", "Call 100", "2025-07-15", "", "#1000.00"},
		{"POSITION_2", "DOC100", "#500.00", "2025-02-30", "INVESTOR_2", "FUND_A", "capital_call_notice", "Call 100 (other)", "2025-07-15", "", "#1000.00"},
		{"POSITION_3", "DOC100", "=B4*2", "2025-08-01", "INVESTOR_3", "FUND_A", "capital_call_notice", "Call 100", "2025-07-15", "", "#1234.5600000000001"},
		{},
		{"POSITION_1", "DOC101", "#100.00", "#45870", "INVESTOR_1", "FUND_A", "capital_call_notice", "Call 101", "2025-07-15", "", "#-5.00"},
	}
	f, err := Read(t.Context(), bytes.NewReader(sheetOf(t, rows)), FormatXLSX, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []CellError{
		{Sheet: "Notices", Row: 1, Column: "capitalCall.amout", ColumnLetter: "J", Message: `"capitalCall.amout" is not a column of an import (see the template's Columns sheet or docs/imports.md)`},
		{Sheet: "Notices", Row: 2, Column: "capitalCall.amount", ColumnLetter: "C", Message: message(badAmount), DocumentID: "DOC100", Field: "positions[0].capitalCall.amount"},
		{Sheet: "Notices", Row: 3, Column: "capitalCall.dueDate", ColumnLetter: "D", Message: message(badDate), DocumentID: "DOC100", Field: "positions[1].capitalCall.dueDate"},
		{Sheet: "Notices", Row: 3, Column: "title", ColumnLetter: "H", Message: `is "Call 100 (other)" but "Call 100" on row 2, the document's first row: every row of a document repeats its document fields`, DocumentID: "DOC100", Field: "title"},
		{Sheet: "Notices", Row: 4, Column: "capitalCall.amount", ColumnLetter: "C", Message: "holds a formula without a cached value: open the file in a spreadsheet application, let it calculate and save it, or enter the value itself", DocumentID: "DOC100"},
		{Sheet: "Notices", Row: 4, Column: "unfundedCommitment.amount", ColumnLetter: "K", Message: "Excel stored this amount as 1234.5600000000001, a binary approximation, not the decimal entered: enter the amount as text (for example '1234.56) or round it in the cell to at most 4 decimals", DocumentID: "DOC100"},
		{Sheet: "Notices", Row: 6, Column: "unfundedCommitment.amount", ColumnLetter: "K", Message: "must not be negative, got -5.00", DocumentID: "DOC101", Field: "positions[0].unfundedCommitment.amount"},
	}
	if !reflect.DeepEqual(f.Errors, want) {
		var b strings.Builder
		for _, e := range f.Errors {
			fmt.Fprintf(&b, "%#v\n", e)
		}
		t.Fatalf("errors:\n%s", b.String())
	}
	t.Run("a message is the JSON API's for the same body", func(t *testing.T) {
		var req wire.DocumentRequest
		err := wire.DecodeStrict(bytes.NewReader(f.Documents[0].Body), &req)
		var fe *fund.Error
		if !errors.As(err, &fe) || fe.Field != want[1].Field || fe.Message != want[1].Message {
			t.Fatalf("PUT of the document's body answers %v, the import %s: %s", err, want[1].Field, want[1].Message)
		}
	})
	t.Run("the serial date is read as its day", func(t *testing.T) {
		var body struct {
			Positions []struct {
				CapitalCall struct {
					DueDate string `json:"dueDate"`
				} `json:"capitalCall"`
			} `json:"positions"`
		}
		if err := json.Unmarshal(f.Documents[1].Body, &body); err != nil || body.Positions[0].CapitalCall.DueDate != "2025-08-01" {
			t.Fatalf("dueDate of serial 45870 = %+v (%v), want 2025-08-01", body, err)
		}
	})
}
