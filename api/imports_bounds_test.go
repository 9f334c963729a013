package api_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/imports"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/wire"
)

// callHeader is the header of a capital call notice's rows, its amounts
// from column I.
var callHeader = []string{"documentId", "fundId", "kind", "title", "asOf", "currency", "positionId", "investorId",
	"capitalCall.amount", "capitalCall.investment", "capitalCall.managementFee", "capitalCall.fundExpenses", "unfundedCommitment.amount"}

// exponentCSV is a CSV of at least size bytes: rows of one document, every
// amount 1e9999.
func exponentCSV(size int) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Join(callHeader, ",") + "\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "DOC_E,%s,capital_call_notice,Q1,2025-03-31,USD,P%d,I%d%s\n", "FUND_A", i, i, strings.Repeat(",1e9999", 5))
	}
	return b.Bytes()
}

// badCellsCSV is a CSV of size bytes: a header of documentId, then rows of
// 16,384 cells "x" without a header, each a problem.
func badCellsCSV(size int) []byte {
	var b bytes.Buffer
	b.WriteString("documentId\n")
	for b.Len() < size {
		b.WriteString(strings.Repeat("x,", imports.MaxColumns-1) + "x\n")
	}
	b.Truncate(size - 1)
	b.WriteByte('\n')
	return b.Bytes()
}

// formulaWorkbook is an XLSX of at least size bytes: the header, then rows
// of formula cells without a cached value, the sheet's XML written here
// into excelize's workbook of no rows.
func formulaWorkbook(t *testing.T, size int) []byte {
	t.Helper()
	var tmpl bytes.Buffer
	if err := imports.WriteTemplate(&tmpl, fund.KindCapitalCallNotice, imports.FormatXLSX); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(tmpl.Bytes()), int64(tmpl.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, part := range zr.File { // the template's parts but its first sheet's rows
		if part.Name == "xl/worksheets/sheet1.xml" {
			continue
		}
		if err := zw.Copy(part); err != nil {
			t.Fatal(err)
		}
	}
	w, err := zw.Create("xl/worksheets/sheet1.xml")
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1">`)
	for i, h := range callHeader {
		fmt.Fprintf(bw, `<c r="%c1" t="inlineStr"><is><t>%s</t></is></c>`, 'A'+i, h)
	}
	bw.WriteString(`</row>`)
	// Deflate packs the repeated rows some hundredfold; every 500 rows the
	// size written so far is looked at.
	for r := 2; ; r++ {
		fmt.Fprintf(bw, `<row r="%d">`, r)
		for c := range len(callHeader) {
			fmt.Fprintf(bw, `<c r="%c%d"><f>1+1</f></c>`, 'A'+c, r)
		}
		bw.WriteString(`</row>`)
		if r%500 == 0 {
			if err := bw.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := zw.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.Len() >= size {
				break
			}
		}
	}
	bw.WriteString(`</sheetData></worksheet>`)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// measured is the exchange f makes, how long it took, the CPU time the
// process used meanwhile (the work, whatever else loads the machine), what
// it allocated (runtime.MemStats.TotalAlloc) and the most heap it held
// (HeapInuse, looked at every 10 ms and at the end): the server's work,
// the client's, and whatever else runs; the test runs alone.
func measured(f func() response) (r response, took, cpu time.Duration, alloc, peak uint64) {
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done, sampled := make(chan struct{}), make(chan uint64)
	go func() {
		var m runtime.MemStats
		most := uint64(0)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&m)
			most = max(most, m.HeapInuse)
			select {
			case <-done:
				sampled <- most
				return
			case <-tick.C:
			}
		}
	}()
	start, startCPU := time.Now(), processCPU()
	r = f()
	took, cpu = time.Since(start), processCPU()-startCPU
	close(done)
	peak = <-sampled
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return r, took, cpu, after.TotalAlloc - before.TotalAlloc, max(peak, after.HeapInuse) - min(before.HeapInuse, peak)
}

// processCPU is the CPU time the test process has used, user and system.
func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		panic(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// The files of the review of imports, each answered within 2 seconds and
// 64 MB allocated, the request's work whole: a 64 KB CSV of amounts
// 1e9999 (each written out was 10,000 digits, decoded again for every bad
// cell of its row: 3 min 17 s of CPU and 408 MB); a 167 KB workbook of
// formula cells without cached values (all of them kept before the row
// limit: 145 MB); 1 MiB of bad cells (512,000 problems, a 53.6 MB
// answer); a row of 20,000 cells (a panic, 500).
func TestImportReviewFilesAreAnsweredWithinBounds(t *testing.T) {
	s := startAPI(t, fundtest.New(t), nil)
	const maxTime, maxHeap = 2 * time.Second, 64 << 20
	for _, c := range []struct {
		name   string
		media  string
		file   func() []byte
		status int
		check  func(t *testing.T, r response)
	}{
		{"a 64 KB CSV of amounts 1e9999", "text/csv", func() []byte { return exponentCSV(64 << 10) }, http.StatusOK, func(t *testing.T, r response) {
			rep := reportOf(t, r)
			if rep.Valid || len(rep.Problems) != 1000 || rep.MoreProblems == 0 || !strings.Contains(rep.Problems[0].Message, "exponent is beyond") ||
				rep.Problems[0].Row != 2 || rep.Problems[0].Column != "capitalCall.amount" {
				t.Errorf("valid %v, %d problems and %d more, the first %+v; want 1,000 naming the exponent, from I2", rep.Valid, len(rep.Problems), rep.MoreProblems, rep.Problems[0])
			}
		}},
		{"a 167 KB workbook of formula cells without cached values", xlsxMedia, func() []byte { return formulaWorkbook(t, 167<<10) }, http.StatusOK, func(t *testing.T, r response) {
			rep := reportOf(t, r)
			if len(rep.Problems) != 1000 || rep.MoreProblems < 50_000 || !strings.Contains(rep.Problems[0].Message, "formula without a cached value") {
				t.Errorf("%d problems and %d more, the first %+v; want 1,000 of every formula cell's", len(rep.Problems), rep.MoreProblems, rep.Problems[0])
			}
		}},
		{"1 MiB of bad cells", "text/csv", func() []byte { return badCellsCSV(1 << 20) }, http.StatusOK, func(t *testing.T, r response) {
			rep := reportOf(t, r)
			if total := len(rep.Problems) + rep.MoreProblems; len(rep.Problems) != 1000 || total < 500_000 || len(r.Body) > 1<<20 {
				t.Errorf("%d problems and %d more in %d bytes; want 1,000 of every cell's (about 512,000), under 1 MiB", len(rep.Problems), rep.MoreProblems, len(r.Body))
			}
		}},
		{"a row of 20,000 cells", "text/csv", func() []byte { return []byte("documentId\n" + strings.Repeat("x,", 20_000) + "\n") }, http.StatusBadRequest, func(t *testing.T, r response) {
			if !strings.Contains(string(r.Body), "row 2 holds more than 16384 cells") || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
				t.Errorf("%s %s, want problem+json naming row 2 and the limit", r.Header.Get("Content-Type"), r.Body)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := c.file()
			r, took, cpu, alloc, peak := measured(func() response { return postImport(t, s, "?dryRun=true", c.media, file) })
			t.Logf("%d bytes: %d in %v (%v of CPU), %.1f MB allocated, %.1f MB of heap at most", len(file), r.Status, took, cpu, float64(alloc)/(1<<20), float64(peak)/(1<<20))
			if r.Status != c.status {
				t.Fatalf("%d, want %d\n%.500s", r.Status, c.status, r.Body)
			}
			c.check(t, r)
			if cpu > maxTime || peak > maxHeap {
				t.Errorf("answered with %v of CPU holding %d bytes of heap at most; want within %v and %d", cpu, peak, maxTime, maxHeap)
			}
			// encoding/xml allocates about a kilobyte a cell as it streams a
			// sheet (excelize's pass and the formulas' each), all of it
			// garbage at once: what a workbook holds is its peak heap.
			if c.media == "text/csv" && alloc > maxHeap {
				t.Errorf("allocated %d bytes, want within %d", alloc, maxHeap)
			}
		})
	}
}

// rowsCSV is a valid capital call notice of n rows (positions) in one
// document of fund A.
func rowsCSV(n int) []byte {
	var b bytes.Buffer
	b.WriteString("documentId,fundId,kind,title,asOf,currency,positionId,investorId,capitalCall.amount\n")
	for i := range n {
		fmt.Fprintf(&b, "DOC_R,%s,capital_call_notice,Q1,2025-03-31,USD,POS_R%05d,INV_R%05d,100\n", "FUND_A", i, i)
	}
	return b.Bytes()
}

// A dry run is charged one token per 100 rows, taken before the file is
// read (for the most the limit admits, the rest given back once it is):
// on a frozen clock, a file of n rows costs ceil(n/100) tokens, and a
// bucket the request's own token empties refuses the check 429.
func TestADryRunIsChargedByItsRows(t *testing.T) {
	env := fundtest.New(t)
	clock := newTestClock()
	const burst = 400
	s := startAPI(t, env, func(o *api.Options) { o.RateLimit, o.RateBurst, o.Clock = 1, burst, clock.now })
	emptied := startAPI(t, env, func(o *api.Options) { o.RateLimit, o.RateBurst, o.Clock = 1, 1, clock.now })
	auth := "Bearer " + token(t, adminOfAll)
	for _, c := range []struct{ rows, tokens int }{{1, 1}, {100, 1}, {101, 2}, {2500, 25}} {
		t.Run(fmt.Sprintf("%d rows cost %d tokens", c.rows, c.tokens), func(t *testing.T) {
			clock.advance(time.Hour)
			r := postImport(t, s, "?dryRun=true", "text/csv", rowsCSV(c.rows), "Authorization", auth)
			if r.Status != http.StatusOK || !reportOf(t, r).Valid {
				t.Fatalf("%d\n%.500s", r.Status, r.Body)
			}
			if got := chargeOf(t, s, auth, burst); got != c.tokens {
				t.Errorf("charged %d tokens, want %d", got, c.tokens)
			}
		})
	}
	t.Run("a bucket the request's own token empties refuses the check before it reads", func(t *testing.T) {
		clock.advance(time.Hour)
		r := postImport(t, emptied, "?dryRun=true", "text/csv", rowsCSV(150), "Authorization", auth)
		if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
			t.Fatalf("%d, Retry-After %q; want 429 with it\n%s", r.Status, r.Header.Get("Retry-After"), r.Body)
		}
	})
}

// The check ends at the request timeout (FUNDSVC_REQUEST_TIMEOUT), not
// the write timeout, answering 503 with the rows it had read.
func TestAnImportsCheckStopsAtTheRequestTimeout(t *testing.T) {
	env := fundtest.New(t)
	s := startAPI(t, env, func(o *api.Options) {
		o.RequestTimeout, o.WriteTimeout, o.MaxBodyBytes = time.Millisecond, time.Minute, 16<<20
	})
	file := rowsCSV(20_000) // far more than a millisecond's check
	r, took, _, _, _ := measured(func() response { return postImport(t, s, "?dryRun=true", "text/csv", file) })
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), "did not end within the request timeout (FUNDSVC_REQUEST_TIMEOUT, 1ms)") ||
		!strings.Contains(string(r.Body), "data rows; nothing was written") {
		t.Fatalf("%d in %v, want 503 naming the request timeout\n%s", r.Status, took, r.Body)
	}
	t.Logf("answered in %v: %s", took, r.Body)
}

// largestImport is a valid file of the most rows the default limits admit
// (20,000), in the most documents (500) of fund A: the first of the most
// positions a document holds (5,000), each a call and an unfunded
// commitment (the most items), the others sharing the rest, each a call.
func largestImport() []byte {
	const docs = 500
	rows, first := imports.DefaultLimits.MaxRows, imports.DefaultLimits.MaxPositions
	var b bytes.Buffer
	b.WriteString("documentId,fundId,kind,title,asOf,currency,positionId,investorId,capitalCall.amount,unfundedCommitment.amount\n")
	for i := range rows {
		d, unfunded := 0, "4000.75"
		if i >= first {
			d, unfunded = 1+(i-first)%(docs-1), ""
		}
		fmt.Fprintf(&b, "DOC_L%03d,FUND_A,capital_call_notice,Q1 call %d,2025-03-31,USD,POS_L%05d,INV_L%05d,1000.25,%s\n", d, d, i, i, unfunded)
	}
	return b.Bytes()
}

// The largest file the default limits admit is checked within the request
// timeout's default (60 s, at most half of it) and committed within the
// write timeout's (5 minutes): all 500 documents created, the first of
// 5,000 positions and 10,000 items, the first and last rows' positions
// read back.
func TestTheLargestImportIsCheckedAndCommittedWithinTheTimeouts(t *testing.T) {
	const timeout, writeTimeout = time.Minute, 5 * time.Minute // the settings' defaults
	s := startAPI(t, fundtest.New(t), func(o *api.Options) {
		o.MaxBodyBytes, o.RequestTimeout, o.WriteTimeout = 8<<20, timeout, writeTimeout
	})
	file := largestImport()
	r, took, _, alloc, peak := measured(func() response { return postImport(t, s, "?dryRun=true", "text/csv", file) })
	t.Logf("dry run of %d bytes: %d in %v, %.0f MB allocated, %.0f MB of heap at most", len(file), r.Status, took, float64(alloc)/(1<<20), float64(peak)/(1<<20))
	if rep := reportOf(t, r); r.Status != http.StatusOK || !rep.Valid || len(rep.Documents) != 500 {
		t.Fatalf("dry run: %d, valid %v, %d documents\n%.500s", r.Status, rep.Valid, len(rep.Documents), r.Body)
	}
	if took > timeout/2 {
		t.Errorf("the largest file's check took %v, more than half the request timeout (%v)", took, timeout)
	}

	start := time.Now()
	r = postImport(t, s, "", "text/csv", file)
	took = time.Since(start)
	t.Logf("commit: %d in %v", r.Status, took)
	rep := reportOf(t, r)
	created := 0
	for _, d := range rep.Documents {
		if d.Outcome == wire.ImportCreated {
			created++
		} else if created < 500 {
			t.Errorf("document %s: %s %+v", d.DocumentID, d.Outcome, d.Error)
		}
	}
	if r.Status != http.StatusOK || created != 500 {
		t.Fatalf("commit: %d, %d of %d documents created", r.Status, created, len(rep.Documents))
	}
	if d := rep.Documents[0]; d.Positions != imports.DefaultLimits.MaxPositions {
		t.Errorf("document %s holds %d positions, want the most a document holds, %d", d.DocumentID, d.Positions, imports.DefaultLimits.MaxPositions)
	}
	var first wire.PositionItemsPage
	if r := s.do(t, http.MethodGet, "/v1/positions/POS_L00000", nil); r.Status != http.StatusOK || json.Unmarshal(r.Body, &first) != nil {
		t.Fatalf("the first row's position: %d %s", r.Status, r.Body)
	}
	if len(first.Items) != 2 {
		t.Errorf("the first row's position reads %d items, want its call and its unfunded commitment: %+v", len(first.Items), first.Items)
	}
	if took > writeTimeout {
		t.Errorf("the largest file's commit took %v, more than the write timeout (%v)", took, writeTimeout)
	}
	last := imports.DefaultLimits.MaxRows - 1
	var page wire.PositionItemsPage
	if r := s.do(t, http.MethodGet, fmt.Sprintf("/v1/positions/POS_L%05d", last), nil); r.Status != http.StatusOK || json.Unmarshal(r.Body, &page) != nil {
		t.Fatalf("the last row's position: %d %s", r.Status, r.Body)
	}
	if len(page.Items) != 1 || page.Items[0].DocumentID != fmt.Sprintf("DOC_L%03d", 1+(last-imports.DefaultLimits.MaxPositions)%499) || page.Items[0].Amount.String() != "1000.25" {
		t.Errorf("the last row's position reads %+v", page.Items)
	}
}
