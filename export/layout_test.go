package export_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update and review the diff):\n%s", name, got)
	}
}

// TestSchemasGolden pins every dataset's Parquet schema: a change to a
// column must be deliberate (and bump export.SchemaVersion, which
// TestSchemaVersion enforces on the same text, schemaText).
func TestSchemasGolden(t *testing.T) {
	golden(t, "schemas.golden.txt", fmt.Sprintf("# schema version %d\n", export.SchemaVersion)+schemaText())
}

// TestDDLGolden pins the Athena DDL.
func TestDDLGolden(t *testing.T) {
	golden(t, "ddl.golden.sql", export.AllDDL("s3://lake/fundsvc/"))
}

// fingerprints reads every published table of a destination under root
// (see views) and returns, per dataset, its row count and a digest of all
// its rows.
func fingerprints(t *testing.T, root, prefix string) map[string]string {
	t.Helper()
	return fingerprintsOf(t, []reading{{root, prefix}})[0]
}

// reading is a destination DuckDB reads: a local directory root, or a
// mirror of a bucket holding s3:// URIs, and the prefix of the snapshots
// in it.
type reading struct{ root, prefix string }

// fingerprintsOf is fingerprints of several destinations, read by one
// DuckDB, each through views in a schema of its own.
func fingerprintsOf(t *testing.T, dests []reading) []map[string]string {
	t.Helper()
	var setup, sql []string
	for i, d := range dests {
		schema := fmt.Sprintf("d%d", i)
		setup = append(setup, "CREATE SCHEMA "+schema)
		setup = append(setup, viewsIn(t, d.root, d.prefix, schema)...)
		for _, name := range export.Datasets {
			sql = append(sql, fmt.Sprintf(
				"SELECT %d, '%s', count(*)::VARCHAR || ':' || coalesce(md5(string_agg(t::VARCHAR, '|' ORDER BY t::VARCHAR)), '') FROM %s.%s t", i, name, schema, name))
		}
	}
	out := make([]map[string]string, len(dests))
	for i := range out {
		out[i] = map[string]string{}
	}
	for _, row := range duck(t, setup, strings.Join(sql, " UNION ALL ")) {
		i, err := strconv.Atoi(row[0])
		if err != nil {
			t.Fatal(err)
		}
		out[i][row[1]] = row[2]
	}
	return out
}

// TestOnlyCommittedRowsAreExported adds to the demo dataset what
// interrupted or racing writes leave behind: a staged version that never
// committed, a new document staged with a registered position but no head,
// and a latest view half rewritten to a version whose flip never happened.
// The snapshot must not change.
func TestOnlyCommittedRowsAreExported(t *testing.T) {
	e := fundtest.New(t)
	e.Seed(t)
	clean, cleanDir := dirSink(t)
	runExport(t, e, clean, nil)

	m := fund.MustMoney("1.00")
	call := func(pk, sk, doc, pos, inv string, version int) store.Item {
		return store.Item{PK: pk, SK: sk, Type: store.TypeCapitalCall, DocumentID: doc,
			InvestorID: inv, PositionID: pos,
			Version: version, Amount: &m, Status: "Pending", CreatedAt: fundtest.Clock, DocumentFields: fund.DocumentFields{

				// DOC001 version 3, staged, never committed.
				FundID: "FUND_A", AsOf: fund.MustDate("2025-09-01"), Currency: "USD"},
		}
	}
	debris := []store.Item{

		call(store.VersionPK("DOC001", "3-orphan"), store.VersionPositionItemSK("POSITION_1", fund.CapitalCall), "DOC001", "POSITION_1", "INVESTOR_1", 3),
		{PK: store.VersionPK("DOC001", "3-orphan"), SK: store.VersionDocumentSK, Type: store.TypeDocument, DocumentID: "DOC001",
			DocumentFields: fund.DocumentFields{FundID: "FUND_A", Kind: "capital_account_statement", Title: "never committed", AsOf: fund.MustDate("2025-09-01")}, Version: 3},
		// DOC001's latest view already showing that version.
		call(store.DocPK("DOC001"), store.PositionItemSK(fund.CapitalCall, "POSITION_1"), "DOC001", "POSITION_1", "INVESTOR_1", 3),
		// A new document: staged, its position registered, no head.
		call(store.VersionPK("DOC_GHOST", "1-ghost"), store.VersionPositionItemSK("POSITION_GHOST", fund.CapitalCall), "DOC_GHOST", "POSITION_GHOST", "INVESTOR_9", 1),
		{PK: store.FundPK("FUND_A"), SK: store.FundPositionSK("POSITION_GHOST"), Type: store.TypePosition,
			DocumentFields: fund.DocumentFields{FundID: "FUND_A", Currency: "USD"}, InvestorID: "INVESTOR_9", PositionID: "POSITION_GHOST", CreatedAt: fundtest.Clock},
	}
	e.Put(t, debris...)
	dirty, dirtyDir := dirSink(t)
	runExport(t, e, dirty, nil)

	want, got := fingerprints(t, cleanDir, ""), fingerprints(t, dirtyDir, "")
	for _, name := range export.Datasets {
		if got[name] != want[name] {
			t.Errorf("%s: %s with the debris, %s without", name, got[name], want[name])
		}
	}
	if want["capital_calls"] == "" || strings.HasPrefix(want["capital_calls"], "0:") {
		t.Fatalf("the clean snapshot has no capital calls: %v", want)
	}
}

// TestFilesAreSortedRolledAndCompressed exports the same data twice: once
// with the defaults, once with tiny files, a sort that spills every few
// rows, more segments and Snappy. Both must hold the same rows; every file
// of the second must be sorted by fund and document, roll near its target,
// and use the chosen codec; the manifest must count what is on disk.
func TestFilesAreSortedRolledAndCompressed(t *testing.T) {
	s := newService(t)
	loadPortfolio(t, s, 3)
	plain, plainDir := dirSink(t)
	runExport(t, s.Env, plain, nil)
	small, smallDir := dirSink(t)
	const target = 2 << 10
	m := runExport(t, s.Env, small, func(c *export.Config) {
		c.TargetFileBytes, c.MemoryRows, c.Segments, c.Compression = target, 7, 5, "snappy"
	})

	if a, b := fingerprints(t, plainDir, ""), fingerprints(t, smallDir, ""); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("the same table exported differently:\n%v\n%v", a, b)
	}

	var files []string
	var largest *export.DatasetManifest
	for _, d := range m.Datasets {
		var rows, size int64
		for i, f := range d.Files {
			st, err := os.Stat(f.URI)
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != f.Bytes {
				t.Errorf("%s: %d bytes on disk, %d in the manifest", f.Key, st.Size(), f.Bytes)
			}
			if i < len(d.Files)-1 && f.Bytes < target*9/10 {
				t.Errorf("%s: rolled at %d bytes, before the %d-byte target", f.Key, f.Bytes, target)
			}
			if !strings.HasPrefix(f.Key, d.Name+"/snapshot_date=2026-11-22/run="+m.RunID+"/part-") {
				t.Errorf("%s: not in the dataset's layout", f.Key)
			}
			rows, size = rows+f.Rows, size+f.Bytes
			files = append(files, "'"+f.URI+"'")
		}
		if rows != d.Rows || size != d.Bytes {
			t.Errorf("%s: manifest totals %d rows %d bytes, its files %d rows %d bytes", d.Name, d.Rows, d.Bytes, rows, size)
		}
		if largest == nil || d.Rows > largest.Rows {
			largest = &d
		}
	}
	if len(largest.Files) < 2 {
		t.Errorf("%s, the largest dataset (%d rows, %d bytes): %d file; a %d-byte target should have rolled more",
			largest.Name, largest.Rows, largest.Bytes, len(largest.Files), target)
	}

	list := "[" + strings.Join(files, ", ") + "]"
	got := duck(t, nil, `
		SELECT 'codecs', string_agg(DISTINCT compression, ',') FROM parquet_metadata(`+list+`)
		UNION ALL
		SELECT 'out of order', count(*)::VARCHAR FROM (
			SELECT fund_id, document_id,
			       lag(fund_id) OVER w AS prev_fund, lag(document_id) OVER w AS prev_doc
			FROM read_parquet(`+list+`, filename = true, file_row_number = true, union_by_name = true)
			WINDOW w AS (PARTITION BY filename ORDER BY file_row_number))
		WHERE prev_fund > fund_id OR (prev_fund = fund_id AND prev_doc > document_id)`)
	want := [][]string{{"codecs", "SNAPPY"}, {"out of order", "0"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
