package export_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// storeClock is the store's clock in a test that moves it: commits are
// stamped with it, and snapshots' high-water marks are taken from it.
type storeClock struct {
	mu   sync.Mutex
	t    time.Time
	tick time.Duration // added after each reading; zero: the clock stands still
}

func (c *storeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.tick)
	return t
}

// pass moves the clock past the change index's settle margin.
func (c *storeClock) pass() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(10 * time.Minute)
}

// smallFiles makes every dataset many files, so that an incremental run
// has files to reuse and files to rewrite.
func smallFiles(cfg *export.Config) {
	cfg.TargetFileBytes, cfg.RowGroupRows = 2048, 6
}

// events runs an export and returns the number of events of each kind.
func exportCounting(t *testing.T, e *fundtest.Env, sink export.Sink, date string, sinceLast bool) (*export.Manifest, map[export.EventKind]int) {
	t.Helper()
	var mu sync.Mutex
	n := map[export.EventKind]int{}
	m := runExport(t, e, sink, func(c *export.Config) {
		smallFiles(c)
		c.Date, c.SinceLast = fund.MustDate(date), sinceLast
		c.OnEvent = func(ev export.Event) {
			mu.Lock()
			n[ev.Kind]++
			mu.Unlock()
		}
	})
	return m, n
}

// datasetRows reads every row of every dataset of the snapshot published
// in dir for snapshotDate with DuckDB, each row as the JSON text of its
// columns, in order.
func datasetRows(t *testing.T, dir string) map[string][][]string {
	t.Helper()
	// One DuckDB run for every dataset (a run starts a process): each row
	// as the JSON object of its columns, so datasets of different columns
	// share one result.
	selects := make([]string, len(export.Datasets))
	for i, name := range export.Datasets {
		selects[i] = fmt.Sprintf("SELECT '%s' AS dataset, to_json(t)::VARCHAR AS row FROM %s t", name, name)
	}
	out := map[string][][]string{}
	for _, r := range duck(t, views(t, dir, ""), "SELECT dataset, row FROM ("+strings.Join(selects, " UNION ALL ")+") ORDER BY dataset, row") {
		out[r[0]] = append(out[r[0]], r[1:])
	}
	return out
}

// TestIncrementalSnapshotEqualsAFullExport writes documents over three
// funds, exports them in full for the day before, then, three times,
// restates a random quarter of them (with a capital activity or without;
// some twice) and adds new ones, exports
// incrementally (first from the day before's snapshot, then from the same
// date's) and, at the same moment, in full into another destination: every
// dataset holds exactly the same rows, every row compared. The incremental
// runs make no Scan, read the changed documents only, and reuse files of
// the snapshot they start from; the files of every snapshot they build on
// are still there.
func TestIncrementalSnapshotEqualsAFullExport(t *testing.T) {
	e := fundtest.New(t)
	clock := &storeClock{t: fundtest.Clock}
	e.Store.Now = clock.now
	r := rand.New(rand.NewPCG(16, 1))
	ids := ingestDocuments(t, e, r, 24)
	clock.pass()

	sink, dir := dirSink(t)
	base, _ := exportCounting(t, e, sink, "2026-11-21", false)
	if base.Kind != "full" || base.CompleteUpTo.IsZero() {
		t.Fatalf("first export: kind %q, complete up to %s; want a full export with a high-water mark", base.Kind, base.CompleteUpTo)
	}
	for round := range 3 {
		clock.pass()
		changed := map[string]bool{}
		for _, id := range ids {
			if r.IntN(4) == 0 {
				changed[id] = true
			}
		}
		for i := range 2 { // new documents, between and after the others
			id := fmt.Sprintf("DOC_%02d_%d", r.IntN(30), round*2+i)
			ids = append(ids, id)
			changed[id] = true
		}
		for _, id := range slices.Sorted(maps.Keys(changed)) {
			// Some twice: the run then reads a version before the latest.
			for range 1 + r.IntN(3)/2 {
				d := ingestDocument(r, id, fundOf(id))
				if r.IntN(2) == 0 {
					d.CapitalActivity = &fund.CapitalActivity{Amount: money(r, 1e8), Status: fund.StatusCompleted, ActivityDetails: fund.ActivityDetails{ActivityDate: fund.MustDate("2026-06-15"), Description: "call " + id}}
				}
				if _, err := e.Store.Restate(context.Background(), d, nil); err != nil {
					t.Fatalf("restate %s: %v", id, err)
				}
			}
		}
		clock.pass()

		e.Counter.Reset()
		inc, events := exportCounting(t, e, sink, snapshotDate.String(), true)
		if n := e.Counter.Count("Scan"); n != 0 {
			t.Errorf("round %d: the incremental export made %d Scans", round, n)
		}
		if inc.Kind != "incremental" || inc.DocumentsChanged != len(changed) {
			t.Errorf("round %d: kind %q, %d documents changed; want incremental, %d", round, inc.Kind, inc.DocumentsChanged, len(changed))
		}
		if events[export.EventReused] == 0 || events[export.EventFile] == 0 {
			t.Errorf("round %d: %d files reused, %d written; want both", round, events[export.EventReused], events[export.EventFile])
		}
		if events[export.EventReread] != len(changed) {
			t.Errorf("round %d: %d documents read, want the %d changed", round, events[export.EventReread], len(changed))
		}

		// The full export's files are of the default size: only its rows
		// are compared.
		fullSink, fullDir := dirSink(t)
		runExport(t, e, fullSink, nil)
		got, want := datasetRows(t, dir), datasetRows(t, fullDir)
		for _, name := range export.Datasets {
			if len(want[name]) == 0 {
				t.Errorf("round %d: %s is empty: nothing to compare", round, name)
			}
			if !slices.EqualFunc(got[name], want[name], slices.Equal) {
				t.Errorf("round %d: %s: the incremental snapshot has %d rows, the full export %d, and they differ",
					round, name, len(got[name]), len(want[name]))
			}
		}
		checkWhole(t, e, dir, ids)
	}
}

// TestIncrementalWithNothingChangedReusesEveryFile exports in full, lets
// time pass without a commit, and exports incrementally: the new snapshot
// names exactly the files of the previous one, writes none and reads no
// document; but for funds and investors, which every run reads whole from
// the registries and writes again (the same rows).
func TestIncrementalWithNothingChangedReusesEveryFile(t *testing.T) {
	e := fundtest.New(t)
	clock := &storeClock{t: fundtest.Clock}
	e.Store.Now = clock.now
	ingestDocuments(t, e, rand.New(rand.NewPCG(16, 2)), 12)
	clock.pass()
	sink, _ := dirSink(t)
	base, _ := exportCounting(t, e, sink, "2026-11-21", false)
	clock.pass()

	e.Counter.Reset()
	inc, events := exportCounting(t, e, sink, snapshotDate.String(), true)
	if inc.Kind != "incremental" || inc.DocumentsChanged != 0 {
		t.Fatalf("kind %q, %d documents changed; want incremental, none", inc.Kind, inc.DocumentsChanged)
	}
	files, rewritten := 0, 0
	for _, d := range base.Datasets {
		got, _ := inc.Dataset(d.Name)
		if d.Name == "funds" || d.Name == "investors" {
			rewritten += len(got.Files)
			if got.Rows != d.Rows || d.Rows == 0 {
				t.Errorf("%s: %d rows, the previous snapshot %d", d.Name, got.Rows, d.Rows)
			}
			continue
		}
		files += len(d.Files)
		if !slices.Equal(keys(got.Files), keys(d.Files)) || got.Rows != d.Rows {
			t.Errorf("%s: files %v (%d rows), want the previous snapshot's %v (%d rows)", d.Name, keys(got.Files), got.Rows, keys(d.Files), d.Rows)
		}
	}
	if events[export.EventReused] != files || events[export.EventFile] != rewritten || events[export.EventReread] != 0 {
		t.Errorf("%d files reused, %d written, %d documents read; want %d, %d (funds and investors), 0",
			events[export.EventReused], events[export.EventFile], events[export.EventReread], files, rewritten)
	}
	if n := e.Counter.Count("Scan"); n != 0 {
		t.Errorf("the incremental export made %d Scans", n)
	}
}

// TestIncrementalWithoutASnapshotExportsInFull: a first run has nothing to
// start from.
func TestIncrementalWithoutASnapshotExportsInFull(t *testing.T) {
	e := fundtest.New(t)
	ingestDocuments(t, e, rand.New(rand.NewPCG(16, 3)), 3)
	sink, _ := dirSink(t)
	e.Counter.Reset()
	m, _ := exportCounting(t, e, sink, snapshotDate.String(), true)
	if m.Kind != "full" || e.Counter.Count("Scan") == 0 {
		t.Errorf("kind %q after %d Scans; want a full export", m.Kind, e.Counter.Count("Scan"))
	}
}

func keys(fs []export.FileManifest) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Key
	}
	return out
}

// TestIncrementalKeepsItsBaseAlive: an incremental snapshot names files of
// the day before's, so while it is built a run of that date is kept out
// (the run holds that date's lease too: a live lease there refuses it,
// with nothing written), and once it is published a rerun of that date
// replaces its own snapshot but deletes none of the files the later one
// names.
func TestIncrementalKeepsItsBaseAlive(t *testing.T) {
	e := fundtest.New(t)
	clock := &storeClock{t: fundtest.Clock}
	e.Store.Now = clock.now
	r := rand.New(rand.NewPCG(16, 4))
	ids := ingestDocuments(t, e, r, 9)
	clock.pass()
	sink, dir := dirSink(t)
	base, _ := exportCounting(t, e, sink, "2026-11-21", false)
	clock.pass()
	if _, err := e.Store.Restate(context.Background(), ingestDocument(r, ids[4], fundOf(ids[4])), nil); err != nil {
		t.Fatal(err)
	}
	clock.pass()

	baseDate := fund.MustDate("2026-11-21")
	now := time.Now()
	if holder, err := e.Store.TakeExportLease(context.Background(), baseDate, "owner-of-rerun", "rerun", now, now.Add(time.Hour)); err != nil || holder != nil {
		t.Fatalf("take the lease of %s: %+v, %v", baseDate, holder, err)
	}
	_, err := export.Run(context.Background(), export.Config{Store: e.Store, Sink: sink, Date: snapshotDate, SinceLast: true, TempDir: t.TempDir()})
	if !errors.Is(err, export.ErrExportRunning) || !strings.Contains(err.Error(), "run rerun holds the lease") {
		t.Fatalf("incremental run while its base's date is being exported: %v, want ErrExportRunning naming the other run", err)
	}
	if files := dataFiles(t, sink); len(files) != 0 {
		t.Errorf("the refused run wrote %v", files)
	}
	if l := readLease(t, e); l != nil {
		t.Errorf("the refused run left its own date's lease: %+v", l)
	}
	if err := e.Store.ReleaseExportLease(context.Background(), baseDate, "owner-of-rerun"); err != nil {
		t.Fatal(err)
	}

	inc, events := exportCounting(t, e, sink, snapshotDate.String(), true)
	if inc.Kind != "incremental" || events[export.EventReused] == 0 {
		t.Fatalf("kind %q, %d files reused; want an incremental snapshot reusing files", inc.Kind, events[export.EventReused])
	}
	before := datasetRows(t, dir)
	rerun, _ := exportCounting(t, e, sink, "2026-11-21", false)
	if rerun.RunID == base.RunID {
		t.Fatal("the rerun did not publish")
	}
	for _, d := range inc.Datasets {
		for _, f := range d.Files {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Key))); err != nil {
				t.Errorf("a file of the incremental snapshot is gone after the rerun of its base's date: %v", err)
			}
		}
	}
	if after := datasetRows(t, dir); !reflect.DeepEqual(after, before) {
		t.Error("the incremental snapshot reads other rows after the rerun of its base's date")
	}
}

// TestIncrementalSaysWhyItReadsTheSettleMargin exports in full a minute
// after some commits, commits one more document and exports incrementally
// at once: the documents committed inside the full export's settle margin
// are read again, and the manifest (and the run's event, which the log
// prints) says from which instant and why.
func TestIncrementalSaysWhyItReadsTheSettleMargin(t *testing.T) {
	e := fundtest.New(t)
	clock := &storeClock{t: fundtest.Clock}
	e.Store.Now = clock.now
	r := rand.New(rand.NewPCG(16, 5))
	ingestDocuments(t, e, r, 4)
	clock.t = clock.t.Add(time.Minute) // within the 5-minute margin
	sink, _ := dirSink(t)
	base, _ := exportCounting(t, e, sink, "2026-11-21", false)
	clock.t = clock.t.Add(time.Minute)
	if _, err := e.Store.Restate(context.Background(), ingestDocument(r, "DOC_LATE", fundOf("DOC_LATE")), nil); err != nil {
		t.Fatal(err)
	}

	var why string
	inc := runExport(t, e, sink, func(c *export.Config) {
		c.Date, c.SinceLast = snapshotDate, true
		c.OnEvent = func(ev export.Event) {
			if ev.Kind == export.EventChanges {
				why = ev.Key
			}
		}
	})
	if inc.Kind != "incremental" || inc.DocumentsChanged != 5 || inc.DocumentsInSettleMargin != 4 {
		t.Fatalf("kind %q, %d documents changed, %d in the settle margin; want incremental, 5, 4", inc.Kind, inc.DocumentsChanged, inc.DocumentsInSettleMargin)
	}
	if !inc.ChangedSince.Equal(base.CompleteUpTo) || base.SettleMargin != "5m0s" || !base.CompleteUpTo.Equal(fundtest.Clock.Add(time.Minute-5*time.Minute)) {
		t.Errorf("changed since %s; want the base's high-water mark %s, its settle margin %s before its start by the store's clock", inc.ChangedSince, base.CompleteUpTo, base.SettleMargin)
	}
	for _, want := range []string{"read the 5 documents committed since " + base.CompleteUpTo.Format(time.RFC3339Nano),
		"(its start less its 5m0s settle margin)", "4 of them were committed before that snapshot started", "appear in the change index"} {
		if !strings.Contains(inc.Why, want) {
			t.Errorf("the manifest's why %q does not say %q", inc.Why, want)
		}
	}
	if why != inc.Why {
		t.Errorf("the changes event says %q, the manifest %q", why, inc.Why)
	}
}
