package iceberg

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
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

// TestConcurrentCommitIsRefusedThenRetried makes a second run, on another
// connection to the catalog's file, commit every table between the moment
// a first run planned its commit and the moment it sends it: the catalog
// refuses the first run's commit as a whole, and the run plans all nine
// overwrites again on the tables as the second run left them and commits.
// Both runs stay in every table's history, each with exactly its own
// files; with one attempt allowed, the refusal is reported instead and
// every table reads the other run. The second run is of the day before,
// so the first, retried on top of it, is the latest date's and may commit.
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
			cfg := Config{Export: exportConfig(t, s, sink, "2026-11-22"), Catalog: cat, MaxAttempts: attempts,
				OnCommit: func(e CommitEvent) { events = append(events, e) }}
			cfg.beforeCommit = runFirst(t, s, sink, other, "2026-11-21", &interloper)
			res, err := Run(t.Context(), cfg)
			if interloper == nil {
				t.Fatal("the interloping run did not commit")
			}
			if len(events) == 0 || !events[0].Refused || !slices.Equal(eventDatasets(events[0]), export.Datasets) {
				t.Fatalf("events %+v: the first commit of every table was not refused (run: %v)", events, err)
			}

			if attempts == 1 {
				if !errors.Is(err, table.ErrCommitFailed) {
					t.Fatalf("with one attempt: err = %v, want the catalog's refusal", err)
				}
				checkRefused(t, cat, interloper, "2026-11-22")
				return
			}
			if err != nil {
				t.Fatalf("the retried run: %v", err)
			}
			if len(events) != 2 || events[1].Refused || events[1].Attempt != 2 || !slices.Equal(eventDatasets(events[1]), export.Datasets) {
				t.Errorf("events %+v: want every table committed at the second attempt", events)
			}
			for _, name := range export.Datasets {
				tbl := loadTable(t, cat, name)
				theirs := tbl.SnapshotByID(interloper.Snapshots[name])
				if theirs == nil || theirs.Summary.Properties[SnapshotDateProperty] != "2026-11-21" {
					t.Fatalf("%s: the interloper's snapshot is lost: %+v", name, theirs)
				}
				checkReadsRun(t, tbl, res, theirs.SnapshotID)
			}
		})
	}
}

// TestAnEarlierDateNeverBecomesCurrent: a table's current snapshot is its
// latest date's. A run of an earlier date than a table reads is refused
// before it writes anything; and a run whose commit is refused because a
// later date's run, on another connection, committed first is refused on
// its next plan rather than committed on top of it.
func TestAnEarlierDateNeverBecomesCurrent(t *testing.T) {
	t.Run("refused before it writes", func(t *testing.T) {
		s, sink, dir := oneDocumentInDirectory(t)
		cat := newCatalog(t, nil, filepath.Join(t.TempDir(), "catalog.db"))
		later, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-22"), Catalog: cat})
		if err != nil {
			t.Fatalf("the later date's run: %v", err)
		}
		_, err = Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat})
		if !errors.Is(err, ErrLaterRunCurrent) || !strings.Contains(err.Error(), "2026-11-22") {
			t.Fatalf("the earlier date's run: err = %v, want ErrLaterRunCurrent naming 2026-11-22", err)
		}
		checkRefused(t, cat, later, "2026-11-21")
		err = filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
			if err == nil && strings.Contains(p, "2026-11-21") {
				t.Errorf("the refused run wrote %s", p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("refused when a later date's run commits first", func(t *testing.T) {
		s, sink, _ := oneDocumentInDirectory(t)
		file := filepath.Join(t.TempDir(), "catalog.db")
		cat := newCatalog(t, nil, file)
		other := newCatalog(t, nil, file) // another process's connection
		var later *Result
		var events []CommitEvent
		cfg := Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat,
			OnCommit: func(e CommitEvent) { events = append(events, e) }}
		cfg.beforeCommit = runFirst(t, s, sink, other, "2026-11-22", &later)
		_, err := Run(t.Context(), cfg)
		if later == nil {
			t.Fatal("the later date's run did not commit")
		}
		if len(events) != 1 || !events[0].Refused {
			t.Errorf("events %+v: want one commit, refused", events)
		}
		if !errors.Is(err, ErrLaterRunCurrent) || errors.Is(err, table.ErrCommitFailed) {
			t.Fatalf("err = %v, want ErrLaterRunCurrent, not a retry", err)
		}
		checkRefused(t, cat, later, "2026-11-21")
	})
}

// TestRunCommitsAtomically moves one table, the last dataset's, by another
// connection's commit between a run's planning and its commit. The commit
// of all nine tables is refused as a whole: with one attempt, no table has
// a snapshot of the run, each reads what it read before, and no metadata
// file the refused commit wrote is left; with retries, every table reads
// the run, the moved one on top of the other commit.
func TestRunCommitsAtomically(t *testing.T) {
	last := export.Datasets[len(export.Datasets)-1]
	for _, attempts := range []int{1, 5} {
		t.Run(map[int]string{5: "retried", 1: "reported"}[attempts], func(t *testing.T) {
			s, sink, _ := oneDocumentInDirectory(t)
			file := filepath.Join(t.TempDir(), "catalog.db")
			cat := newCatalog(t, nil, file)
			other := newCatalog(t, nil, file)
			before, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-20"), Catalog: cat})
			if err != nil {
				t.Fatalf("the first run: %v", err)
			}

			var moved int64
			var events []CommitEvent
			cfg := Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat, MaxAttempts: attempts,
				OnCommit: func(e CommitEvent) { events = append(events, e) }}
			cfg.beforeCommit = func(attempt int, _ []string) {
				if attempt == 1 {
					moved = emptyTable(t, other, last)
				}
			}
			res, err := Run(t.Context(), cfg)
			if moved == 0 {
				t.Fatal("the other commit did not happen")
			}
			if len(events) == 0 || !events[0].Refused || len(events[0].Tables) != len(export.Datasets) {
				t.Errorf("events %+v: the commit of every table was not refused (run: %v)", events, err)
			}

			if attempts == 1 {
				if !errors.Is(err, table.ErrCommitFailed) {
					t.Fatalf("err = %v, want the catalog's refusal", err)
				}
				for _, name := range export.Datasets {
					tbl := loadTable(t, cat, name)
					want := before.Snapshots[name]
					if name == last {
						want = moved
					}
					if got := tbl.CurrentSnapshot().SnapshotID; got != want {
						t.Errorf("%s: current snapshot %d, want %d", name, got, want)
					}
					if dates := snapshotDates(tbl); slices.Contains(dates, "2026-11-21") {
						t.Errorf("%s: snapshots of dates %v: part of the refused commit is in the table", name, dates)
					}
					checkMetadataReferenced(t, sink, tbl, name)
				}
				return
			}
			if err != nil {
				t.Fatalf("the retried run: %v", err)
			}
			if len(events) != 2 || events[1].Refused || len(events[1].Tables) != len(export.Datasets) {
				t.Errorf("events %+v: want every table committed at the second attempt", events)
			}
			for _, name := range export.Datasets {
				parent := before.Snapshots[name]
				if name == last {
					parent = moved
				}
				tbl := loadTable(t, cat, name)
				checkReadsRun(t, tbl, res, parent)
				checkMetadataReferenced(t, sink, tbl, name)
			}
		})
	}
}

// TestCommitModes: per-table mode commits each table on its own (and
// retries a refused table on its own), and the default, atomic mode
// refuses a catalog without multi-table commits before writing anything.
func TestCommitModes(t *testing.T) {
	t.Run("per-table mode commits each table on its own", func(t *testing.T) {
		s, sink, _ := oneDocumentInDirectory(t)
		file := filepath.Join(t.TempDir(), "catalog.db")
		cat := newCatalog(t, nil, file)
		other := newCatalog(t, nil, file)
		before, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-20"), Catalog: cat, Commit: CommitPerTable})
		if err != nil {
			t.Fatalf("the first run: %v", err)
		}
		var moved int64
		var events []CommitEvent
		cfg := Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat, Commit: CommitPerTable,
			OnCommit: func(e CommitEvent) { events = append(events, e) }}
		cfg.beforeCommit = func(attempt int, datasets []string) {
			if attempt == 1 && slices.Equal(datasets, []string{"documents"}) {
				moved = emptyTable(t, other, "documents")
			}
		}
		res, err := Run(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var committed []string
		for _, e := range events {
			if len(e.Tables) != 1 {
				t.Fatalf("event %+v: want one table per commit", e)
			}
			if e.Tables[0].Dataset == "documents" && e.Attempt == 1 && !e.Refused {
				t.Errorf("event %+v: the commit of documents after the other one was not refused", e)
			}
			if !e.Refused {
				committed = append(committed, e.Tables[0].Dataset)
			}
		}
		if !slices.Equal(committed, export.Datasets) || len(events) != len(export.Datasets)+1 {
			t.Errorf("events %+v: want each table committed once, in order, documents at its second attempt", events)
		}
		for _, name := range export.Datasets {
			parent := before.Snapshots[name]
			if name == "documents" {
				parent = moved
			}
			checkReadsRun(t, loadTable(t, cat, name), res, parent)
		}
	})

	t.Run("the atomic mode refuses a catalog without multi-table commits before writing anything", func(t *testing.T) {
		t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
		p, err := CatalogConfig{Kind: KindGlue, Region: "eu-west-1",
			Extra: map[string]string{"glue.access-key-id": "AKIDEXAMPLE", "glue.secret-access-key": "secret"}}.Properties()
		if err != nil {
			t.Fatal(err)
		}
		glue, err := catalog.Load(t.Context(), "fundsvc", p)
		if err != nil {
			t.Fatal(err)
		}
		s, sink, dir := oneDocumentInDirectory(t)
		_, err = Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-21"),
			Catalog: &Catalog{cat: glue, namespace: DefaultNamespace, props: p}})
		if !errors.Is(err, ErrNoAtomicCommit) {
			t.Fatalf("err = %v, want ErrNoAtomicCommit", err)
		}
		for _, want := range []string{"--iceberg-commit per-table", "different runs"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q: it does not say %q", err, want)
			}
		}
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Errorf("the destination holds %v (%v): something was written", entries, err)
		}
	})
}

// loadTable loads a dataset's table from c.
func loadTable(t *testing.T, c *Catalog, dataset string) *table.Table {
	t.Helper()
	tbl, err := c.cat.LoadTable(t.Context(), c.ident(dataset))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// snapshotDates are the snapshot dates of tbl's snapshots, oldest first.
func snapshotDates(tbl *table.Table) []string {
	var dates []string
	for _, s := range tbl.Metadata().Snapshots() {
		dates = append(dates, s.Summary.Properties[SnapshotDateProperty])
	}
	return dates
}

// checkReadsRun checks that tbl's current snapshot is the one res
// committed, with res's run ID, on top of parent, and lists exactly the
// run's files.
func checkReadsRun(t *testing.T, tbl *table.Table, res *Result, parent int64) {
	t.Helper()
	name := catalog.TableNameFromIdent(tbl.Identifier())
	cur := tbl.CurrentSnapshot()
	if cur.SnapshotID != res.Snapshots[name] || cur.ParentSnapshotID == nil || *cur.ParentSnapshotID != parent {
		t.Errorf("%s: current snapshot %d (parent %v), want the run's %d on top of %d", name, cur.SnapshotID, cur.ParentSnapshotID, res.Snapshots[name], parent)
	}
	if cur.Summary.Properties[RunIDProperty] != res.Manifest.RunID {
		t.Errorf("%s: current snapshot of run %q, want %q", name, cur.Summary.Properties[RunIDProperty], res.Manifest.RunID)
	}
	files, err := currentDataFiles(t.Context(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := res.Manifest.Dataset(name)
	var want []string
	for _, f := range d.Files {
		want = append(want, f.URI)
	}
	if !slices.Equal(slices.Sorted(slices.Values(files)), slices.Sorted(slices.Values(want))) {
		t.Errorf("%s: the table reads %v, want only the run's files %v", name, files, want)
	}
	if cur.Summary.Properties["total-records"] != fmtID(d.Rows) {
		t.Errorf("%s: total-records %s, the run wrote %d rows", name, cur.Summary.Properties["total-records"], d.Rows)
	}
}

// checkMetadataReferenced checks that every metadata file under the
// table's metadata directory is in its metadata log: no file of a commit
// that did not happen is left.
func checkMetadataReferenced(t *testing.T, sink export.Sink, tbl *table.Table, dataset string) {
	t.Helper()
	logged := map[string]bool{tbl.MetadataLocation(): true}
	for e := range tbl.Metadata().PreviousFiles() {
		logged[e.MetadataFile] = true
	}
	keys, err := sink.List(t.Context(), dataset+"/metadata/")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		if !strings.HasSuffix(k, ".metadata.json") {
			continue
		}
		n++
		if !logged[sink.URI(k)] {
			t.Errorf("%s: metadata file %s is in no metadata log", dataset, sink.URI(k))
		}
	}
	if n < 2 {
		t.Errorf("%s: %d metadata files listed: the listing missed them", dataset, n)
	}
}

// emptyTable commits, through c, a snapshot that deletes every row of a
// dataset's table, as another writer might: it moves the table's main
// branch. It returns the new snapshot's ID.
func emptyTable(t *testing.T, c *Catalog, dataset string) int64 {
	t.Helper()
	tx := loadTable(t, c, dataset).NewTransaction()
	if err := tx.Delete(t.Context(), iceberg.AlwaysTrue{}, iceberg.Properties{RunIDProperty: "another writer"}); err != nil {
		t.Fatalf("empty %s: %v", dataset, err)
	}
	tbl, err := tx.Commit(t.Context())
	if err != nil {
		t.Fatalf("empty %s: %v", dataset, err)
	}
	return tbl.CurrentSnapshot().SnapshotID
}

// checkRefused checks that every table of cat reads the snapshot won
// committed and has no snapshot of refused, the date of a refused run.
func checkRefused(t *testing.T, cat *Catalog, won *Result, refused string) {
	t.Helper()
	for _, name := range export.Datasets {
		tbl := loadTable(t, cat, name)
		if got, want := tbl.CurrentSnapshot().SnapshotID, won.Snapshots[name]; got != want {
			t.Errorf("%s: current snapshot %d, want %d, of the run that won", name, got, want)
		}
		if dates := snapshotDates(tbl); slices.Contains(dates, refused) {
			t.Errorf("%s: snapshots of dates %v: the refused run of %s is in the table", name, dates, refused)
		}
	}
}

// runFirst is a Config.beforeCommit that, before a run's first commit,
// runs a whole export of date through other (another process's connection
// to the catalog) and stores its result in *into; a failure fails t.
func runFirst(t *testing.T, s *service, sink export.Sink, other *Catalog, date string, into **Result) func(int, []string) {
	return func(attempt int, _ []string) {
		if attempt != 1 {
			return
		}
		r, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, date), Catalog: other})
		if err != nil {
			t.Errorf("the run of %s on the other connection: %v", date, err)
			return
		}
		*into = r
	}
}

// eventDatasets are the datasets of a commit event.
func eventDatasets(e CommitEvent) []string {
	names := make([]string, len(e.Tables))
	for i, t := range e.Tables {
		names[i] = t.Dataset
	}
	return names
}

func fmtID(n int64) string { return strconv.FormatInt(n, 10) }
