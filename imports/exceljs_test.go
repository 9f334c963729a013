package imports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/shopspring/decimal"
)

// exceljsTools is the folder of the npm packages the Makefile installs
// (make tools), exceljs among them.
func exceljsTools(t *testing.T) (node, tools string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: %v", err)
	}
	tools, err = filepath.Abs(filepath.Join("..", "tools"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tools, "node_modules", "exceljs")); err != nil {
		t.Fatalf("exceljs is not installed (make tools installs it): %v", err)
	}
	return node, tools
}

// writeWithExcelJS has exceljs write rows (cells as testdata/exceljs-write.mjs
// reads them) as an XLSX and a CSV file, and returns their bytes.
func writeWithExcelJS(t *testing.T, sheet string, rows [][]any) (xlsx, csv []byte) {
	t.Helper()
	node, tools := exceljsTools(t)
	dir := t.TempDir()
	spec, err := json.Marshal(map[string]any{"xlsx": filepath.Join(dir, "q.xlsx"), "csv": filepath.Join(dir, "q.csv"), "sheet": sheet, "rows": rows})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "exceljs-write.mjs"))
	cmd.Env = append(os.Environ(), "FUNDSVC_TOOLS="+tools)
	cmd.Stdin = bytes.NewReader(spec)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("exceljs: %v\n%s", err, out)
	}
	if xlsx, err = os.ReadFile(filepath.Join(dir, "q.xlsx")); err != nil {
		t.Fatal(err)
	}
	if csv, err = os.ReadFile(filepath.Join(dir, "q.csv")); err != nil {
		t.Fatal(err)
	}
	return xlsx, csv
}

// quarter is a quarter's capital account statement for n positions: the
// demo's statement of its first position, every amount multiplied by the
// position's number (so each position's rows add up as the demo's do).
func quarter(t *testing.T, n int) fund.Document {
	t.Helper()
	demo := demoDocuments(fund.KindCapitalAccountStatement)
	if len(demo) == 0 || len(demo[0].Positions) == 0 {
		t.Fatal("the demo has no statement")
	}
	d := demo[0]
	d.ID, d.Title = "Q4_STATEMENTS", "Capital account statements, Q4 2025"
	template := d.Positions[0]
	d.Positions = nil
	for i := 1; i <= n; i++ {
		p := template
		p.ID, p.InvestorID = fmt.Sprintf("POS_Q%04d", i), fmt.Sprintf("INV_Q%04d", i)
		ca := *template.CapitalAccount
		scaleMoney(t, reflect.ValueOf(&ca).Elem(), int64(i))
		p.CapitalAccount = &ca
		d.Positions = append(d.Positions, p)
	}
	return d
}

// scaleMoney multiplies every amount of the struct v by k, exactly.
func scaleMoney(t *testing.T, v reflect.Value, k int64) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch m := f.Addr().Interface().(type) {
		case *fund.Money:
			*m = fund.MustMoney(m.Decimal().Mul(decimal.NewFromInt(k)).StringFixed(2))
		case **fund.Money:
			if *m != nil {
				s := fund.MustMoney((*m).Decimal().Mul(decimal.NewFromInt(k)).StringFixed(2))
				*m = &s
			}
		default:
			if f.Kind() == reflect.Struct && f.Type() != reflect.TypeFor[fund.Date]() {
				scaleMoney(t, f, k)
			}
		}
	}
}

// withThousands writes a decimal amount as a spreadsheet shows it:
// thousands separated, a negative in parentheses.
func withThousands(amount string) string {
	neg := strings.HasPrefix(amount, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(amount, "-"), ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	s := b.String()
	if frac != "" {
		s += "." + frac
	}
	if neg {
		return "(" + s + ")"
	}
	return s
}

// TestAQuarterWrittenByExcelJSReadsBackExactly: a quarter's statements for
// 250 positions, written by exceljs as XLSX and as CSV, with its amounts
// as number cells, as text, and as text with thousands separators and
// accounting negatives, its dates as date cells and as ISO text, and one
// amount a formula with its cached result, reads back as the same
// document PUT would decode, to the cent.
func TestAQuarterWrittenByExcelJSReadsBackExactly(t *testing.T) {
	d := quarter(t, 250)
	rows, err := rowsOf(d)
	if err != nil {
		t.Fatal(err)
	}
	cols := Columns(d.Kind)
	header := make([]any, len(cols))
	for i, c := range cols {
		header[i] = map[string]string{"s": c.Header}
	}
	sheet := [][]any{header}
	formula := false
	for r, row := range rows {
		cells := make([]any, len(cols))
		for i, c := range cols {
			v := row[c.Header]
			switch {
			case v == "":
				cells[i] = nil
			case c.value == valueMoney && !formula && fund.MustMoney(v).Sign() != 0:
				// Not a zero: exceljs's CSV writer leaves a formula whose
				// result is 0 empty.
				cells[i], formula = map[string]string{"f": v, "n": v}, true
			case c.value == valueMoney && (r+i)%3 == 0:
				cells[i] = map[string]string{"n": v}
			case c.value == valueMoney && (r+i)%3 == 1:
				cells[i] = map[string]string{"s": withThousands(v)}
			case c.value == valueDate && r%2 == 0:
				cells[i] = map[string]string{"d": v}
			default:
				cells[i] = map[string]string{"s": v}
			}
		}
		sheet = append(sheet, cells)
	}
	xlsx, csv := writeWithExcelJS(t, "Statements", sheet)
	want := asPut(t, d)
	for _, f := range []struct {
		format string
		body   []byte
	}{{FormatXLSX, xlsx}, {FormatCSV, csv}} {
		got, err := Read(t.Context(), bytes.NewReader(f.body), f.format, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", f.format, err)
		}
		if len(got.Errors) > 0 {
			t.Fatalf("%s: %d problems, the first %v", f.format, len(got.Errors), got.Errors[:min(3, len(got.Errors))])
		}
		if len(got.Documents) != 1 || len(got.Documents[0].Document.Positions) != 250 {
			t.Fatalf("%s: %d documents", f.format, len(got.Documents))
		}
		if c := canonical(t, got.Documents[0].Document); c != want {
			t.Errorf("%s written by exceljs reads back differently:\n got %.600s\nwant %.600s", f.format, c, want)
		}
	}
}

// TestADryRunOfAnExcelJSFileFindsEveryPlantedError: the quarter written
// by exceljs with four values spoiled in different rows and columns (text
// that is no amount, an impossible date, a number Excel holds only as a
// binary approximation, an unknown header) answers all four at once, each
// at its row and column letter, in the XLSX; the CSV, which holds text
// only, the same but for the rounded number, which it carries as text.
func TestADryRunOfAnExcelJSFileFindsEveryPlantedError(t *testing.T) {
	d := quarter(t, 20)
	rows, err := rowsOf(d)
	if err != nil {
		t.Fatal(err)
	}
	cols := Columns(d.Kind)
	letter := map[string]string{}
	header := make([]any, len(cols)+1)
	for i, c := range cols {
		header[i] = map[string]string{"s": c.Header}
		letter[c.Header] = columnLetter(i + 1)
	}
	header[len(cols)] = map[string]string{"s": "capitalAccount.endingNAV"} // a misspelt column
	sheet := [][]any{header}
	for _, row := range rows {
		cells := make([]any, len(cols)+1)
		for i, c := range cols {
			if v := row[c.Header]; v != "" {
				cells[i] = map[string]string{"s": v}
			}
		}
		sheet = append(sheet, cells)
	}
	at := func(h string) int {
		for i, c := range cols {
			if c.Header == h {
				return i
			}
		}
		t.Fatalf("no column %s", h)
		return 0
	}
	sheet[3][at("capitalAccount.contributions")] = map[string]string{"s": "12.3.4"}
	sheet[7][at("capitalAccount.periodStart")] = map[string]string{"s": "2025-02-30"}
	sheet[12][at("capitalAccount.endingNav")] = map[string]string{"n": "0.30000000000000004"}
	xlsx, csv := writeWithExcelJS(t, "Statements", sheet)
	for _, f := range []struct {
		format string
		body   []byte
	}{{FormatXLSX, xlsx}, {FormatCSV, csv}} {
		got, err := Read(t.Context(), bytes.NewReader(f.body), f.format, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", f.format, err)
		}
		found := map[string]string{}
		for _, e := range got.Errors {
			found[fmt.Sprintf("%d %s", e.Row, e.ColumnLetter)] = e.Message
		}
		want := []string{
			"1 " + columnLetter(len(cols)+1),              // the unknown header
			"4 " + letter["capitalAccount.contributions"], // not an amount
			"8 " + letter["capitalAccount.periodStart"],   // no such date
			"13 " + letter["capitalAccount.endingNav"],    // rounded by Excel (or, as CSV text, too many decimals)
		}
		for _, w := range want {
			if _, ok := found[w]; !ok {
				t.Errorf("%s: no problem at %s; found %v", f.format, w, found)
			}
		}
		if len(found) != len(want) {
			t.Errorf("%s: %d problems, want %d: %v", f.format, len(found), len(want), found)
		}
	}
}
