package contracttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/apitest"
	"github.com/fundsvc/fundsvc/internal/duckdbtest"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

// snapshotDate is the export's partition; any date does.
var snapshotDate = fund.MustDate("2026-01-02")

// stack is the demo plus the round trip's document, served by the API and
// exported once with a local destination, for every test of the package.
type stack struct {
	srv   *apitest.Server
	admin string // a token of an admin of every fund
	dest  string // the export's destination folder
	spec  map[string]any
	// exported holds each dataset's rows, read once (see rows).
	exported map[string][]map[string]string
	// The answers to the PUTs of the round trip's records.
	fundRecord, investorRecord map[string]any
}

// contract builds the stack: the demo seeded, the round trip's document
// and records written through the API (the document PUT's answer is
// returned), then exported.
func contract(t *testing.T) (*stack, map[string]any) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "api", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{}
	if err := json.Unmarshal(b, &s.spec); err != nil {
		t.Fatal(err)
	}
	env := fundtest.New(t)
	env.Seed(t)
	s.srv = apitest.Serve(t, env)
	s.admin = s.srv.Token(t, api.Principal{Subject: "contract", Role: api.RoleAdmin, Funds: []string{api.AllFunds}})
	put := s.call(t, http.MethodPut, "/v1/documents/"+roundTripDocument, roundTripRequest, http.StatusCreated)
	s.fundRecord, s.investorRecord = putRecords(t, s)

	s.dest = t.TempDir()
	sink, err := export.OpenSink(s.dest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.Run(t.Context(), export.Config{Store: env.Store, Sink: sink, Date: snapshotDate, Segments: 2, TempDir: t.TempDir()}); err != nil {
		t.Fatalf("export: %v", err)
	}
	return s, put
}

// call sends body (nil for none) as the admin and returns the answer's
// JSON, failing t unless the status is want.
func (s *stack) call(t *testing.T, method, path, body string, want int) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.admin)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	var v map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return v
}

// rows are the rows of the export's dataset, as DuckDB reads the files
// its table lists, each value as DuckDB writes it in JSON (amounts as
// numbers, dates as text). The first call reads every dataset in one
// query: each query starts a DuckDB.
func (s *stack) rows(t *testing.T, dataset string) []map[string]string {
	t.Helper()
	if s.exported == nil {
		s.exported = s.readExport(t)
	}
	rows, ok := s.exported[dataset]
	if !ok {
		t.Fatalf("the export has no dataset %s", dataset)
	}
	return rows
}

// null is a NULL's text in rows.
const null = "NULL"

func (s *stack) readExport(t *testing.T) map[string][]map[string]string {
	t.Helper()
	out := map[string][]map[string]string{}
	var selects []string
	var published export.Manifest // names the slot the tables read
	if b, err := os.ReadFile(filepath.Join(s.dest, filepath.FromSlash(export.ManifestKey(snapshotDate)))); err != nil || json.Unmarshal(b, &published) != nil {
		t.Fatalf("the export's manifest: %v", err)
	}
	for _, ds := range export.Datasets {
		out[ds] = []map[string]string{}
		b, err := os.ReadFile(filepath.Join(s.dest, filepath.FromSlash(export.SymlinkKey(ds, snapshotDate, published.Slot))))
		if err != nil {
			t.Fatalf("%s: %v", ds, err)
		}
		var files []string
		for _, f := range strings.Fields(string(b)) {
			files = append(files, "'"+f+"'")
		}
		if len(files) > 0 {
			selects = append(selects, fmt.Sprintf("SELECT '%s' AS dataset, CAST(to_json(t) AS VARCHAR) AS row FROM read_parquet([%s]) t", ds, strings.Join(files, ", ")))
		}
	}
	res, err := duckdbtest.Query(t.Context(), strings.Join(selects, " UNION ALL "))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Maps() {
		var row map[string]any
		d := json.NewDecoder(strings.NewReader(r["row"]))
		d.UseNumber()
		if err := d.Decode(&row); err != nil {
			t.Fatalf("%s: %v", r["dataset"], err)
		}
		text := make(map[string]string, len(row))
		for k, v := range row {
			text[k] = null
			if v != nil {
				text[k] = fmt.Sprint(v)
			}
		}
		out[r["dataset"]] = append(out[r["dataset"]], text)
	}
	return out
}

// TestContract holds the package's tests on one stack: building it (a
// DynamoDB table, the demo, an export, DuckDB) is most of their time.
func TestContract(t *testing.T) {
	s, put := contract(t)
	t.Run("vocabulary", func(t *testing.T) { testVocabulary(t, s) })
	t.Run("round trip", func(t *testing.T) { testRoundTrip(t, s, put) })
	t.Run("round trip of records", func(t *testing.T) { testRecordRoundTrip(t, s, s.fundRecord, s.investorRecord) })
}
