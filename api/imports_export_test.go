package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/duckdbtest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// settledFigures reads each path on s until it answers 200 twice with the
// same body (the positions' figures come from secondary indexes), within a
// deadline, and returns the bodies by path.
func settledFigures(t *testing.T, s *testServer, paths []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range paths {
		prev := ""
		for {
			r := s.do(t, http.MethodGet, p, nil)
			if r.Status == http.StatusOK && string(r.Body) == prev {
				out[p] = prev
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: %d\n%s", p, r.Status, r.Body)
			}
			prev = string(r.Body)
			time.Sleep(20 * time.Millisecond) // polling a secondary index, with a deadline
		}
	}
	return out
}

// exportedRows exports env's table into a folder with export.Run and reads
// every row of every dataset back with DuckDB, in one query: each row as
// DuckDB's JSON text of the whole row (every column, exact decimals),
// sorted, by dataset.
func exportedRows(t *testing.T, env *fundtest.Env) map[string][]string {
	t.Helper()
	dir := t.TempDir()
	sink, err := export.OpenSink(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := export.Run(context.Background(), export.Config{Store: env.Store, Sink: sink, Date: fund.MustDate("2026-11-22"), Segments: 2, TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	var selects []string
	for _, d := range m.Datasets {
		if len(d.Files) == 0 {
			continue
		}
		files := make([]string, len(d.Files))
		for i, f := range d.Files {
			files[i] = "'" + f.URI + "'"
		}
		selects = append(selects, fmt.Sprintf("SELECT '%s' AS dataset, to_json(r)::VARCHAR AS row FROM read_parquet([%s], hive_partitioning = false) AS r",
			d.Name, strings.Join(files, ", ")))
	}
	if len(selects) == 0 {
		t.Fatal("the export wrote no dataset")
	}
	res, err := duckdbtest.Query(context.Background(), strings.Join(selects, "\nUNION ALL\n")+"\nORDER BY dataset, row", "SET TimeZone = 'UTC'")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, r := range res.Maps() {
		out[r["dataset"]] = append(out[r["dataset"]], r["row"])
	}
	for _, d := range m.Datasets {
		if int64(len(out[d.Name])) != d.Rows {
			t.Errorf("DuckDB read %d rows of %s, the manifest says %d", len(out[d.Name]), d.Name, d.Rows)
		}
	}
	return out
}

// TestImportedFiguresEqualTheSameDocumentsPutAsJSONThroughTheExport imports
// the three templates (the demo's documents at their latest versions, as
// XLSX) into one table and PUTs the same documents as JSON into another,
// then compares what each answers and exports: every position's
// performance, the fund's performance, and every row of every dataset of a
// full export read by DuckDB, exactly. Nothing is left out of the
// comparison: both tables are written through fundtest's fixed clock by
// the same token's subject, so the instants (created_at, committed_at,
// registered_at, updated_at) and created_by are equal too, and no dataset
// holds a commit or request ID.
func TestImportedFiguresEqualTheSameDocumentsPutAsJSONThroughTheExport(t *testing.T) {
	imported, putJSON, _ := importedAndPutAsJSON(t)

	t.Run("every position's performance and the fund's are the same", func(t *testing.T) {
		var paths []string
		funds := map[string]bool{}
		for _, d := range latestDemo("") {
			funds[d.FundID] = true
		}
		for f := range funds {
			paths = append(paths, "/v1/funds/"+f+"/performance?asOf=2025-12-31")
		}
		for _, p := range everyPosition {
			paths = append(paths, "/v1/positions/"+p+"/performance?asOf=2025-12-31", "/v1/positions/"+p+"/performance")
		}
		a, b := settledFigures(t, imported, paths), settledFigures(t, putJSON, paths)
		for _, p := range paths {
			if a[p] != b[p] {
				t.Errorf("GET %s: imported\n%s\nput as JSON\n%s", p, a[p], b[p])
			}
		}
		// Not vacuous: the figures hold the demo's contributions.
		if p := "/v1/positions/POSITION_1/performance?asOf=2025-12-31"; !strings.Contains(a[p], `"contributions"`) {
			t.Errorf("GET %s holds no contributions:\n%s", p, a[p])
		}
	})

	t.Run("every row of every exported dataset is the same", func(t *testing.T) {
		a, b := exportedRows(t, imported.Env), exportedRows(t, putJSON.Env)
		var datasets []string
		for name := range a {
			datasets = append(datasets, name)
		}
		for name := range b {
			if _, ok := a[name]; !ok {
				datasets = append(datasets, name)
			}
		}
		slices.Sort(datasets)
		for _, name := range datasets {
			if !slices.Equal(a[name], b[name]) {
				t.Errorf("%s: imported %d rows, put as JSON %d\nimported:\n%s\nput as JSON:\n%s", name, len(a[name]), len(b[name]),
					strings.Join(a[name], "\n"), strings.Join(b[name], "\n"))
			}
		}
		// Not vacuous: each kind's dataset holds every position of the demo's documents of that kind.
		for kind, name := range map[fund.Kind]string{fund.KindCapitalCallNotice: "capital_calls", fund.KindDistributionNotice: "distributions", fund.KindCapitalAccountStatement: "capital_accounts"} {
			want := 0
			for _, d := range latestDemo(kind) {
				want += len(d.Positions)
			}
			if len(a[name]) != want {
				t.Errorf("%s: %d rows exported, want the %d positions of the demo's %s documents", name, len(a[name]), want, kind)
			}
		}
	})
}

// TestAnImportIsChargedOneTokenADocumentBeforeAnythingIsWritten measures
// an import's charge with chargeOf (a frozen clock, one token a second, the
// bucket refilled by moving the clock an hour): a file of N documents costs
// N tokens, the request's own and N-1 taken at once, into debt if the
// bucket holds fewer (as every charge of the limiter may). Taken before
// the table is touched: when the request's own token empties the bucket,
// the import is 429 with Retry-After, with no DynamoDB operation made,
// nothing written, and nothing charged but the request's token.
func TestAnImportIsChargedOneTokenADocumentBeforeAnythingIsWritten(t *testing.T) {
	env := fundtest.New(t)
	clock := newTestClock()
	const burst = 10
	s := startAPI(t, env, func(o *api.Options) { o.RateLimit, o.RateBurst, o.Clock = 1, burst, clock.now })
	emptied := startAPI(t, env, func(o *api.Options) { o.RateLimit, o.RateBurst, o.Clock = 1, 1, clock.now })
	debtor := startAPI(t, env, func(o *api.Options) { o.RateLimit, o.RateBurst, o.Clock = 1, 2, clock.now })
	auth := "Bearer " + token(t, adminOfAll)
	files := map[fund.Kind][]byte{}
	for _, kind := range fund.Kinds {
		files[kind] = importTemplate(t, s, kind, "csv")
	}
	clock.advance(time.Hour)

	t.Run("a file of N documents is charged N tokens", func(t *testing.T) {
		for _, kind := range fund.Kinds {
			n := len(latestDemo(kind))
			r := postImport(t, s, "", "text/csv", files[kind], "Authorization", auth)
			if r.Status != http.StatusOK || len(reportOf(t, r).Documents) != n {
				t.Fatalf("import of the %s template: %d\n%s", kind, r.Status, r.Body)
			}
			if got := chargeOf(t, s, auth, burst); got != n {
				t.Errorf("an import of %d %s documents was charged %d tokens, want %d", n, kind, got, n)
			}
			clock.advance(time.Hour)
		}
	})

	t.Run("a file of more documents than the bucket holds goes ahead into debt and is charged them all", func(t *testing.T) {
		n := len(latestDemo(fund.KindCapitalCallNotice)) // 3, on a bucket of 2
		r := postImport(t, debtor, "", "text/csv", files[fund.KindCapitalCallNotice], "Authorization", auth)
		if r.Status != http.StatusOK {
			t.Fatalf("import: %d\n%s", r.Status, r.Body)
		}
		if got := chargeOf(t, debtor, auth, 2); got != n {
			t.Errorf("charged %d tokens, want %d", got, n)
		}
		clock.advance(time.Hour)
	})

	t.Run("a bucket the request's own token empties refuses the import 429 before the table is touched", func(t *testing.T) {
		fresh := editCSV(t, files[fund.KindDistributionNotice], func(h, row []string, _ int) {
			setCell(h, row, "documentId", "CHARGED_"+row[slices.Index(h, "documentId")])
		})
		env.Counter.Reset()
		r := postImport(t, emptied, "", "text/csv", fresh, "Authorization", auth)
		wait, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if r.Status != http.StatusTooManyRequests || err != nil || wait < 1 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
			t.Fatalf("status %d, Retry-After %q, Content-Type %q; want 429 problem+json with Retry-After\n%s",
				r.Status, r.Header.Get("Retry-After"), r.Header.Get("Content-Type"), r.Body)
		}
		if ops := env.Counter.Ops(); len(ops) != 0 {
			t.Errorf("the refused import made DynamoDB operations %v, want none", ops)
		}
		if got := chargeOf(t, emptied, auth, 1); got != 1 {
			t.Errorf("the refused import was charged %d tokens, want only the request's own 1", got)
		}
		clock.advance(time.Hour)
		for _, d := range latestDemo(fund.KindDistributionNotice) {
			if g := s.do(t, http.MethodGet, "/v1/documents/CHARGED_"+d.ID+"/versions/latest", nil, "Authorization", auth); g.Status != http.StatusNotFound {
				t.Errorf("CHARGED_%s after the refused import: %d, want 404", d.ID, g.Status)
			}
		}
		// Control: once the bucket refilled, the same file is imported.
		if r := postImport(t, s, "", "text/csv", fresh, "Authorization", auth); r.Status != http.StatusOK {
			t.Errorf("the same file on a full bucket: %d\n%s", r.Status, r.Body)
		}
	})
}
