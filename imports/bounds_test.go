package imports

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/xuri/excelize/v2"
)

// allocated is what f allocates (runtime.MemStats.TotalAlloc), the test's
// other goroutines idle.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// moneyHeaders are n amount columns of positions, list members' lines
// numbered from 1, in a fixed order.
func moneyHeaders(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for line := 1; len(out) < n && line <= MaxListLines; line++ {
		for _, c := range positionColumns() {
			if c.value != valueMoney || (line > 1 && !strings.Contains(c.Header, "[]")) {
				continue
			}
			out = append(out, strings.Replace(c.Header, "[]", fmt.Sprintf("[%d]", line), 1))
			if len(out) == n {
				break
			}
		}
	}
	if len(out) < n {
		t.Fatalf("only %d amount columns, want %d", len(out), n)
	}
	return out
}

// linesOf are the lines of a file whose every list holds every line up to
// MaxListLines, as badCells' rows do up to their last column.
func linesOf(string) map[string][]int {
	out := map[string][]int{}
	for _, c := range positionColumns() {
		if base, _, ok := strings.Cut(c.Header, "[]"); ok && out[base] == nil {
			for n := 1; n <= MaxListLines; n++ {
				out[base] = append(out[base], n)
			}
		}
	}
	return out
}

// badCells is a CSV of rows rows of one document, each with n amount
// cells holding value.
func badCells(t *testing.T, rows, n int, value string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("documentId,positionId,investorId," + strings.Join(moneyHeaders(t, n), ",") + "\n")
	cells := strings.Repeat(","+value, n)
	for r := range rows {
		fmt.Fprintf(&b, "DOC1,P%d,I%d%s\n", r, r, cells)
	}
	return b.Bytes()
}

// A row's bad values are each decoded once, not the row again after each:
// twice the bad cells a row allocates about twice as much to check, where
// decoding the row again per bad cell allocates four times as much.
func TestTheCheckIsLinearInTheFile(t *testing.T) {
	read := func(n int) (uint64, *File) {
		file := badCells(t, 20, n, "x")
		var f *File
		alloc := allocated(func() {
			var err error
			if f, err = Read(t.Context(), bytes.NewReader(file), FormatCSV, Limits{MaxProblems: 1 << 20}); err != nil {
				t.Fatal(err)
			}
		})
		return alloc, f
	}
	const n = 60
	small, f := read(n)
	large, g := read(2 * n)
	amounts := func(f *File) (n int) {
		for _, e := range f.Errors {
			if e.Column != "" && e.Field == "positions["+fmt.Sprint(e.Row-2)+"]."+pathOf(e.Column, linesOf(e.Column)) && strings.Contains(e.Message, `"x" is not a valid amount`) {
				n++
			}
		}
		return n
	}
	if a, b := amounts(f), amounts(g); a != 20*n || b != 20*2*n {
		t.Fatalf("%d and %d problems of amounts, want one per bad cell: %d and %d", a, b, 20*n, 40*n)
	}
	ratio := float64(large) / float64(small)
	t.Logf("%d bad cells a row: %d bytes; %d: %d bytes (×%.2f)", n, small, 2*n, large, ratio)
	if ratio > 3 {
		t.Errorf("twice the bad cells allocate ×%.2f, want about ×2 (linear; ×4 is a row decoded again per bad cell)", ratio)
	}
}

func TestAnAmountsExponentIsBoundedBeforeItIsWrittenOut(t *testing.T) {
	header := "documentId,fundId,kind,title,asOf,currency,positionId,investorId,capitalCall.amount,capitalCall.investment\n"
	row := func(amount, investment string) string {
		return "DOC1,FUND1,capital_call_notice,Q1,2025-03-31,USD,P1,I1," + amount + "," + investment + "\n"
	}
	t.Run("an exponent an amount may have is written out exactly", func(t *testing.T) {
		f, err := Read(t.Context(), strings.NewReader(header+row("1.5E+3", "15E2")), FormatCSV, Limits{})
		if err != nil || len(f.Errors) > 0 {
			t.Fatalf("err %v, problems %v", err, f.Errors)
		}
		if got := f.Documents[0].Document.Positions[0].CapitalCall.Amount; !got.Equal(fund.MustMoney("1500")) {
			t.Errorf("amount %s, want 1500", got)
		}
	})
	t.Run("an exponent beyond the bound is the cell's problem, named by row and column", func(t *testing.T) {
		for _, amount := range []string{"1e9999", "1E-9999", "-2.5e31", "1e99999999999999999999"} {
			f, err := Read(t.Context(), strings.NewReader(header+row(amount, "1")), FormatCSV, Limits{})
			if err != nil || len(f.Errors) != 1 {
				t.Fatalf("%s: err %v, problems %v; want one", amount, err, f.Errors)
			}
			e := f.Errors[0]
			if e.Row != 2 || e.Column != "capitalCall.amount" || e.ColumnLetter != "I" || !strings.Contains(e.Message, fmt.Sprintf("exponent is beyond ±%d", maxAmountExponent)) {
				t.Errorf("%s: %+v, want I2 (capitalCall.amount) naming the exponent's bound", amount, e)
			}
		}
	})
	t.Run("a file of them allocates about its own size", func(t *testing.T) {
		file := badCells(t, 200, 40, "1e9999")
		alloc := allocated(func() {
			if _, err := Read(t.Context(), bytes.NewReader(file), FormatCSV, Limits{}); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%d bytes of 1e9999 cells: %d bytes allocated", len(file), alloc)
		if alloc > 200*uint64(len(file)) {
			t.Errorf("%d bytes of 1e9999 cells allocated %d bytes, want under %d (written out, each is 10,000 digits)", len(file), alloc, 200*len(file))
		}
	})
}

// formulaBomb is a workbook whose first row is the header and whose rows
// rows each hold cols formula cells without a cached value: excelize's
// workbook of the header, its sheet's XML written here.
func formulaBomb(t *testing.T, header []string, rows, cols int) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	var tmpl bytes.Buffer
	if err := f.Write(&tmpl); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(tmpl.Bytes()), int64(tmpl.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, part := range zr.File {
		w, err := zw.Create(part.Name)
		if err != nil {
			t.Fatal(err)
		}
		if part.Name != "xl/worksheets/sheet1.xml" {
			rc, err := part.Open()
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(w, rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		bw := bufio.NewWriter(w)
		bw.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1">`)
		for i, h := range header {
			fmt.Fprintf(bw, `<c r="%s" t="inlineStr"><is><t>%s</t></is></c>`, cellName(i+1, 1), h)
		}
		bw.WriteString(`</row>`)
		for r := 2; r <= rows+1; r++ {
			fmt.Fprintf(bw, `<row r="%d">`, r)
			for range cols {
				bw.WriteString(`<c><f>1+1</f></c>`) // no r: the cells follow each other from A
			}
			bw.WriteString(`</row>`)
		}
		bw.WriteString(`</sheetData></worksheet>`)
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestFormulaCellsAreCountedWithinTheLimits(t *testing.T) {
	header := []string{"documentId", "positionId", "investorId", "capitalCall.amount"}
	t.Run("a formula without a value is its cell's problem", func(t *testing.T) {
		f, err := Read(t.Context(), bytes.NewReader(formulaBomb(t, header, 1, 4)), FormatXLSX, Limits{})
		if err != nil || len(f.Errors) == 0 {
			t.Fatalf("err %v, problems %v", err, f.Errors)
		}
		if e := f.Errors[0]; e.Row != 2 || e.ColumnLetter != "A" || !strings.Contains(e.Message, "formula without a cached value") {
			t.Errorf("first problem %+v, want A2's formula", e)
		}
	})
	t.Run("the pass over formulas reads no further than the row limit", func(t *testing.T) {
		bomb := formulaBomb(t, header, 100_000, 4)
		var err error
		alloc := allocated(func() {
			_, err = Read(t.Context(), bytes.NewReader(bomb), FormatXLSX, Limits{MaxRows: 10})
		})
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != "rows" {
			t.Fatalf("err %v, want the rows limit", err)
		}
		t.Logf("a %d-byte workbook of 400,000 formula cells, 10 rows allowed: %d bytes allocated", len(bomb), alloc)
		if alloc > 16<<20 {
			t.Errorf("allocated %d bytes, want under 16 MiB: the formulas past the row limit are not to be kept", alloc)
		}
	})
	t.Run("a row of more formula cells than a row may hold is refused", func(t *testing.T) {
		_, err := Read(t.Context(), bytes.NewReader(formulaBomb(t, header, 1, MaxColumns+1)), FormatXLSX, Limits{})
		var fe *fund.Error
		if !errors.As(err, &fe) || fe.Code != fund.EINVALID || !strings.Contains(fe.Message, "16384") {
			t.Fatalf("err %v, want EINVALID naming the limit of 16384 cells", err)
		}
	})
}

func TestProblemsAreCapped(t *testing.T) {
	file := badCells(t, 50, 20, "x") // 1,000 problems of amounts, and the document's
	all, err := Read(t.Context(), bytes.NewReader(file), FormatCSV, Limits{MaxProblems: 1 << 20})
	total := len(all.Errors)
	if err != nil || total < 1000 || all.MoreProblems != 0 {
		t.Fatalf("uncapped: err %v, %d problems, %d more; want 1000 or more and 0", err, total, all.MoreProblems)
	}
	for _, max := range []int{1, 137, 999, 1000, total} {
		f, err := Read(t.Context(), bytes.NewReader(file), FormatCSV, Limits{MaxProblems: max})
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Errors) != max || f.MoreProblems != total-max || !slices.Equal(f.Errors, all.Errors[:max]) {
			t.Errorf("capped at %d: %d problems and %d more, want the first %d and %d more", max, len(f.Errors), f.MoreProblems, max, total-max)
		}
		if f.Documents[0].Problems != total {
			t.Errorf("capped at %d: the document counts %d problems, want %d", max, f.Documents[0].Problems, total)
		}
	}
	if DefaultLimits.MaxProblems != 1000 {
		t.Errorf("the default cap is %d; docs/imports.md and wire.ImportProblems say 1,000", DefaultLimits.MaxProblems)
	}
}

func TestARowWiderThanASpreadsheetIsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		row  int
		csv  string
	}{
		{"a header", 1, strings.Repeat("x,", 20_000) + "\n"},
		{"a data row", 2, "documentId\n" + strings.Repeat("x,", 20_000) + "\n"},
	} {
		t.Run(c.name+" of 20,000 cells", func(t *testing.T) {
			_, err := Read(t.Context(), strings.NewReader(c.csv), FormatCSV, Limits{})
			var fe *fund.Error
			if !errors.As(err, &fe) || fe.Code != fund.EINVALID || fe.Field != "body" ||
				!strings.Contains(fe.Message, fmt.Sprintf("row %d holds more than 16384 cells", c.row)) || !strings.Contains(fe.Message, "XFD") {
				t.Fatalf("err %v, want EINVALID naming row %d and the limit of 16384 cells (XFD)", err, c.row)
			}
		})
	}
	t.Run("a row of exactly 16384 cells is read", func(t *testing.T) {
		f, err := Read(t.Context(), strings.NewReader("documentId\nDOC1"+strings.Repeat(",x", MaxColumns-1)+"\n"), FormatCSV, Limits{})
		if err != nil || f.MoreProblems+len(f.Errors) < MaxColumns-1 {
			t.Fatalf("err %v, %d problems; want one per cell without a header", err, len(f.Errors)+f.MoreProblems)
		}
		if last := f.Errors[len(f.Errors)-1]; last.ColumnLetter == "" {
			t.Errorf("last problem %+v", last)
		}
	})
}

func TestTheCheckStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f, err := Read(ctx, bytes.NewReader(badCells(t, 10, 1, "1")), FormatCSV, Limits{})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped at row") || f == nil {
		t.Fatalf("err %v, file %v; want the context's error naming the row", err, f)
	}
}
