package iceberg

import (
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/internal/s3test"
)

// TestTablesMatchAPI exports documents written through the REST API to
// MinIO as Iceberg tables in a SQL catalog, twice, with a restatement and
// a new document between the runs. icebird, an Iceberg reader that is not
// iceberg-go, reads every table at its current snapshot and at the one
// before; DuckDB reads the data files icebird's manifests list. Totals per
// fund and per investor and each dataset's rows must equal, exactly, what
// the REST API answered before each run.
func TestTablesMatchAPI(t *testing.T) {
	s := newService(t)
	s.putDocument(t, "DOC_1", "FUND_A", 3, "1000.0001")
	s.putDocument(t, "DOC_2", "FUND_B", 4, "250.5")
	before := s.apiTotals(t)

	minio := s3test.Shared(t)
	client := minio.Client()
	bucket := minio.NewBucket(t)
	allowAnonymousReads(t, client, bucket)
	sink, err := export.OpenSink("s3://"+bucket+"/lake", client)
	if err != nil {
		t.Fatal(err)
	}
	cat := newCatalog(t, minio, filepath.Join(t.TempDir(), "catalog.db"))

	first, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat})
	if err != nil {
		t.Fatalf("first run: %v", err)
	}
	s.putDocument(t, "DOC_1", "FUND_A", 2, "1500.25") // a restatement drops a position
	s.putDocument(t, "DOC_3", "FUND_B", 5, "0.0001")
	after := s.apiTotals(t)
	second, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-22"), Catalog: cat})
	if err != nil {
		t.Fatalf("second run: %v", err)
	}

	var reads []icebirdRequest
	tables := map[string]*table.Table{}
	for _, name := range export.Datasets {
		tbl, err := cat.cat.LoadTable(t.Context(), cat.ident(name))
		if err != nil {
			t.Fatal(err)
		}
		tables[name] = tbl
		if got, want := tbl.CurrentSnapshot().SnapshotID, second.Snapshots[name]; got != want {
			t.Errorf("%s: current snapshot %d, the second run committed %d", name, got, want)
		}
		log := slices.Collect(tbl.Metadata().PreviousFiles())
		if len(log) == 0 {
			t.Fatalf("%s: no earlier metadata file", name)
		}
		url := "s3://" + bucket + "/lake/" + name
		reads = append(reads,
			icebirdRequest{Table: name, TableURL: url, MetadataFileName: path.Base(tbl.MetadataLocation())},
			icebirdRequest{Table: name, TableURL: url, MetadataFileName: path.Base(log[len(log)-1].MetadataFile)})
	}
	got := icebird(t, minio.Endpoint, reads)
	if len(got) != len(reads) {
		t.Fatalf("icebird answered %d reads of %d", len(got), len(reads))
	}

	for i, run := range []struct{ name string }{{"current"}, {"previous"}} {
		res, date, want := second, "2026-11-22", after
		if i == 1 {
			res, date, want = first, "2026-11-21", before
		}
		icebirdRowsByTable := map[string][]map[string]string{}
		duckRowsByTable := map[string][]map[string]string{}
		for j, r := range got {
			if j%2 != i {
				continue
			}
			if snap := tables[r.Table].SnapshotByID(res.Snapshots[r.Table]); snap == nil || r.ManifestList != snap.ManifestList {
				t.Errorf("%s %s: icebird read the snapshot of %s, not the one the run committed (%d)", run.name, r.Table, r.ManifestList, res.Snapshots[r.Table])
			}
			if r.Summary[SnapshotDateProperty] != date || r.Summary[RunIDProperty] != res.Manifest.RunID {
				t.Errorf("%s %s: summary %v, want snapshot date %s and run %s", run.name, r.Table, r.Summary, date, res.Manifest.RunID)
			}
			d, _ := res.Manifest.Dataset(r.Table)
			var files []string
			for _, f := range d.Files {
				files = append(files, f.URI)
			}
			slices.Sort(files)
			listed := slices.Sorted(slices.Values(r.Files))
			if !slices.Equal(listed, files) {
				t.Errorf("%s %s: the manifests list %v, the run wrote %v", run.name, r.Table, listed, files)
			}
			if int64(len(r.Rows)) != d.Rows {
				t.Errorf("%s %s: icebird reads %d rows, the run wrote %d", run.name, r.Table, len(r.Rows), d.Rows)
			}
			icebirdRowsByTable[r.Table] = icebirdRows(r.Rows)
			duckRowsByTable[r.Table] = duckRows(t, client, r.Files)
		}
		compareTotals(t, run.name+" snapshot, icebird", totals(icebirdRowsByTable), want)
		compareTotals(t, run.name+" snapshot, DuckDB", totals(duckRowsByTable), want)
	}
	if before["called|FUND_A"].Equal(after["called|FUND_A"]) {
		t.Fatal("the restatement changed nothing: the two snapshots are not told apart")
	}
}

// TestConcurrentCommitIsRefusedThenRetried makes a second run commit to
// the documents table between the moment a first run planned its commit
// and the moment it sends it: the catalog refuses the first run's commit,
// which plans again on the table as the second run left it and commits.
// Both commits stay in the table's history, each with exactly its own
// files; with one attempt allowed, the refusal is reported instead and the
// other run's commit is what the table reads.
func TestConcurrentCommitIsRefusedThenRetried(t *testing.T) {
	for _, attempts := range []int{5, 1} {
		t.Run(map[int]string{5: "retried", 1: "reported"}[attempts], func(t *testing.T) {
			s := newService(t)
			s.putDocument(t, "DOC_1", "FUND_A", 3, "10")
			minio := s3test.Shared(t)
			client := minio.Client()
			bucket := minio.NewBucket(t)
			sink, err := export.OpenSink("s3://"+bucket+"/lake", client)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "catalog.db")
			cat := newCatalog(t, minio, file)
			other := newCatalog(t, minio, file) // another process's connection

			var interloper *Result
			var events []CommitEvent
			cfg := Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat, MaxAttempts: attempts,
				OnCommit: func(e CommitEvent) { events = append(events, e) }}
			cfg.beforeCommit = func(dataset string, attempt int) {
				if dataset != "documents" || attempt != 1 {
					return
				}
				r, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-22"), Catalog: other})
				if err != nil {
					t.Errorf("the interloping run: %v", err)
					return
				}
				interloper = r
			}
			res, err := Run(t.Context(), cfg)
			if interloper == nil {
				t.Fatal("the interloping run did not commit")
			}
			if len(events) == 0 || events[0].Dataset != "documents" || !events[0].Refused {
				t.Fatalf("events %+v: the first commit of documents was not refused (run: %v)", events, err)
			}

			tbl, lerr := cat.cat.LoadTable(t.Context(), cat.ident("documents"))
			if lerr != nil {
				t.Fatal(lerr)
			}
			theirs := tbl.SnapshotByID(interloper.Snapshots["documents"])
			if theirs == nil || theirs.Summary.Properties[SnapshotDateProperty] != "2026-11-22" {
				t.Fatalf("the interloper's snapshot is lost: %+v", theirs)
			}
			if attempts == 1 {
				if !errors.Is(err, table.ErrCommitFailed) {
					t.Fatalf("with one attempt: err = %v, want the catalog's refusal", err)
				}
				if tbl.CurrentSnapshot().SnapshotID != theirs.SnapshotID {
					t.Errorf("current snapshot %d, want the interloper's %d", tbl.CurrentSnapshot().SnapshotID, theirs.SnapshotID)
				}
				return
			}
			if err != nil {
				t.Fatalf("the retried run: %v", err)
			}
			if events[1].Dataset != "documents" || events[1].Refused || events[1].Attempt != 2 {
				t.Errorf("events %+v: want documents committed at the second attempt", events)
			}
			cur := tbl.CurrentSnapshot()
			if cur.SnapshotID != res.Snapshots["documents"] || cur.ParentSnapshotID == nil || *cur.ParentSnapshotID != theirs.SnapshotID {
				t.Errorf("current snapshot %d (parent %v), want the run's %d on top of the interloper's %d",
					cur.SnapshotID, cur.ParentSnapshotID, res.Snapshots["documents"], theirs.SnapshotID)
			}
			files, ferr := currentDataFiles(t.Context(), tbl)
			if ferr != nil {
				t.Fatal(ferr)
			}
			d, _ := res.Manifest.Dataset("documents")
			var want []string
			for _, f := range d.Files {
				want = append(want, f.URI)
			}
			if !slices.Equal(slices.Sorted(slices.Values(files)), slices.Sorted(slices.Values(want))) {
				t.Errorf("the table reads %v, want only the run's files %v (no duplicates of the interloper's)", files, want)
			}
			if cur.Summary.Properties["total-records"] != fmtID(d.Rows) {
				t.Errorf("total-records %s, the run wrote %d rows", cur.Summary.Properties["total-records"], d.Rows)
			}
		})
	}
}

func fmtID(n int64) string { return strconv.FormatInt(n, 10) }
