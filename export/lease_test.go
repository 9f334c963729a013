package export_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// putLease takes the lease of snapshotDate until until, as another run
// would, whose clock reads now: a lease held by a run whose lease ended by
// then is taken over.
func putLease(t *testing.T, e *fundtest.Env, runID string, now, until time.Time) {
	t.Helper()
	holder, err := e.Store.TakeExportLease(context.Background(), snapshotDate, "owner-of-"+runID, runID, now, until)
	if err != nil || holder != nil {
		t.Fatalf("take the lease as %s: held by %+v (%v)", runID, holder, err)
	}
}

// readLease returns the lease of snapshotDate, or nil if there is none.
func readLease(t *testing.T, e *fundtest.Env) *store.ExportLease {
	t.Helper()
	l, err := e.Store.ExportLease(context.Background(), snapshotDate)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// dataFiles lists every data file of snapshotDate under sink, of any run.
func dataFiles(t *testing.T, sink export.Sink) []string {
	t.Helper()
	var keys []string
	for _, name := range export.Datasets {
		k, err := sink.List(context.Background(), export.DataPrefix(name, snapshotDate))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k...)
	}
	sort.Strings(keys)
	return keys
}

// checkPublished checks that the snapshot in sink is m's: the manifest
// names m's run and slot, every table's symlink file in that slot lists
// exactly m's files, the other slot holds none, and those files are the
// only data files of the date, each present.
func checkPublished(t *testing.T, sink export.Sink, m *export.Manifest) {
	t.Helper()
	ctx := context.Background()
	b, err := sink.Get(ctx, export.ManifestKey(snapshotDate))
	if err != nil {
		t.Fatalf("no manifest: %v", err)
	}
	var published export.Manifest
	if err := json.Unmarshal(b, &published); err != nil {
		t.Fatal(err)
	}
	if published.RunID != m.RunID || published.Slot != m.Slot || m.Slot == "" {
		t.Errorf("the manifest names run %s in slot %q, want %s in %q", published.RunID, published.Slot, m.RunID, m.Slot)
	}
	var want []string
	for _, d := range m.Datasets {
		var uris []string
		for _, f := range d.Files {
			want = append(want, f.Key)
			uris = append(uris, f.URI+"\n")
		}
		got, err := sink.Get(ctx, export.SymlinkKey(d.Name, snapshotDate, m.Slot))
		if err != nil {
			t.Errorf("table %s: %v", d.Name, err)
		} else if string(got) != strings.Join(uris, "") {
			t.Errorf("table %s reads\n%s\nwant\n%s", d.Name, got, strings.Join(uris, ""))
		}
		for _, slot := range export.Slots {
			if _, err := sink.Get(ctx, export.SymlinkKey(d.Name, snapshotDate, slot)); slot != m.Slot && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("table %s: the other slot %s still has a symlink file (%v)", d.Name, slot, err)
			}
		}
	}
	sort.Strings(want)
	if got := dataFiles(t, sink); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the date's data files are\n%v\nthe published run's are\n%v", got, want)
	}
}

// TestTwoExportsOfOneDate starts two exports of one date together. Each
// stops at its first Scan page until the other has either failed or reached
// its own first page, so they overlap for sure: exactly one may run, the
// other refuses at once, naming the lease, and writes nothing. The winner
// publishes a whole snapshot; a later run, once the winner is done, takes
// the lease and replaces the snapshot, deleting every file of the first.
func TestTwoExportsOfOneDate(t *testing.T) {
	e := fundtest.New(t)
	e.Seed(t)
	sink, _ := dirSink(t)
	type result struct {
		m   *export.Manifest
		err error
	}
	results := make(chan result, 2)
	running := make(chan struct{}, 2)
	release := make(chan struct{})
	for range 2 {
		go func() {
			first := true
			m, err := export.Run(context.Background(), export.Config{
				Store: e.Store, Sink: sink, Date: snapshotDate, Segments: 2, TempDir: t.TempDir(),
				OnEvent: func(ev export.Event) {
					if ev.Kind == export.EventPage && first {
						first = false
						running <- struct{}{}
						<-release
					}
				},
			})
			results <- result{m, err}
		}()
	}
	timeout := time.After(time.Minute)
	var loser result
	select {
	case loser = <-results:
	case <-running:
		select {
		case loser = <-results:
		case <-running:
			close(release)
			t.Fatal("both exports of one date are running at once")
		case <-timeout:
			t.Fatal("timed out")
		}
	case <-timeout:
		t.Fatal("timed out")
	}
	if loser.err == nil {
		t.Fatal("an export of the date succeeded while another held the lease")
	}
	if !errors.Is(loser.err, export.ErrExportRunning) || fund.ErrorCode(loser.err) != fund.ECONFLICT {
		t.Errorf("the refused export's error %q does not match ErrExportRunning with code conflict", loser.err)
	}
	for _, w := range []string{"another export of " + snapshotDate.String() + " is running", "holds the lease until"} {
		if !strings.Contains(loser.err.Error(), w) {
			t.Errorf("the refused export's error %q does not say %q", loser.err, w)
		}
	}
	if files := dataFiles(t, sink); len(files) != 0 {
		t.Errorf("files were written before the winner published: %v", files)
	}
	close(release)
	var winner result
	select {
	case winner = <-results:
	case <-timeout:
		t.Fatal("timed out")
	}
	if winner.err != nil {
		t.Fatalf("the export holding the lease failed: %v", winner.err)
	}
	checkPublished(t, sink, winner.m)
	if l := readLease(t, e); l != nil {
		t.Errorf("the winner left its lease behind: %+v", l)
	}

	later := runExport(t, e, sink, nil)
	if later.RunID == winner.m.RunID {
		t.Fatal("the later run has the winner's run ID")
	}
	checkPublished(t, sink, later)
}

// TestExportLease covers the lease's other cases: a lease left by a run
// that crashed is taken over; a live one is refused with nothing written,
// or waited for with LeaseWait; a run whose lease was taken over publishes
// nothing and leaves the published snapshot alone.
func TestExportLease(t *testing.T) {
	e := fundtest.New(t)
	e.Seed(t)

	t.Run("a crashed run's ended lease is taken over", func(t *testing.T) {
		sink, _ := dirSink(t)
		putLease(t, e, "crashed-run", time.Now().Add(-time.Minute), time.Now().Add(-time.Second))
		m := runExport(t, e, sink, nil)
		checkPublished(t, sink, m)
		if l := readLease(t, e); l != nil {
			t.Errorf("the lease is left behind: %+v", l)
		}
	})

	t.Run("a live lease is refused and nothing is written", func(t *testing.T) {
		sink, dir := dirSink(t)
		putLease(t, e, "live-run", time.Now(), time.Now().Add(time.Hour))
		defer func() {
			if err := e.Store.ReleaseExportLease(context.Background(), snapshotDate, "owner-of-live-run"); err != nil {
				t.Fatal(err)
			}
		}()
		_, err := export.Run(context.Background(), export.Config{Store: e.Store, Sink: sink, Date: snapshotDate, TempDir: t.TempDir()})
		if !errors.Is(err, export.ErrExportRunning) || !strings.Contains(fmt.Sprint(err), "run live-run holds the lease") {
			t.Fatalf("export with a live lease: %v, want ErrExportRunning naming live-run", err)
		}
		if l := readLease(t, e); l == nil || l.RunID != "live-run" {
			t.Errorf("the refused run changed the lease: %+v", l)
		}
		var found []string
		err = fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				found = append(found, p)
			}
			return err
		})
		if err != nil || len(found) != 0 {
			t.Errorf("the refused run wrote %v (%v)", found, err)
		}
	})

	t.Run("LeaseWait waits for a live lease to end", func(t *testing.T) {
		sink, _ := dirSink(t)
		ends := time.Now().Add(1500 * time.Millisecond)
		putLease(t, e, "ending-run", time.Now(), ends)
		m := runExport(t, e, sink, func(c *export.Config) { c.LeaseWait = time.Minute })
		if m.StartedAt.Before(ends.Add(-50 * time.Millisecond)) {
			t.Errorf("the run started at %s, before the other run's lease ended at %s", m.StartedAt, ends)
		}
		checkPublished(t, sink, m)
	})

	t.Run("a run whose lease was taken over publishes nothing", func(t *testing.T) {
		sink, _ := dirSink(t)
		first := runExport(t, e, sink, nil)
		_, err := export.Run(context.Background(), export.Config{
			Store: e.Store, Sink: sink, Date: snapshotDate, TempDir: t.TempDir(),
			OnEvent: func(ev export.Event) {
				if ev.Kind == export.EventDataset && ev.Dataset == "positions" {
					// Another run took the lease over while this one was
					// stalled: by its clock, this run's lease had ended.
					putLease(t, e, "usurper", time.Now().Add(time.Hour), time.Now().Add(2*time.Hour))
				}
			},
		})
		if !errors.Is(err, export.ErrLeaseLost) {
			t.Fatalf("export whose lease was taken over: %v, want ErrLeaseLost", err)
		}
		if l := readLease(t, e); l == nil || l.RunID != "usurper" {
			t.Errorf("the run that lost its lease changed it: %+v", l)
		}
		// The earlier snapshot stands, whole; the lost run's files are
		// orphans the next run deletes.
		b, err := sink.Get(context.Background(), export.ManifestKey(snapshotDate))
		if err != nil || manifestRun(t, b) != first.RunID {
			t.Errorf("the manifest changed: %s (%v)", b, err)
		}
		for _, d := range first.Datasets {
			for _, f := range d.Files {
				if _, err := sink.Get(context.Background(), f.Key); err != nil {
					t.Errorf("published file %s: %v", f.Key, err)
				}
			}
		}
	})

	t.Run("a step that outlasts a third of the lease renews it before its next write", func(t *testing.T) {
		_ = e.Store.ReleaseExportLease(context.Background(), snapshotDate, "owner-of-usurper") // the subtest before's
		sink, _ := dirSink(t)
		first := runExport(t, e, sink, nil)
		var mu sync.Mutex
		clock := time.Now()
		now := func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return clock
		}
		var staged []string
		_, err := export.Run(context.Background(), export.Config{
			Store: e.Store, Sink: sink, Date: snapshotDate, TempDir: t.TempDir(), Now: now, LeaseDuration: time.Minute,
			OnEvent: func(ev export.Event) {
				if ev.Kind != export.EventStaged {
					return
				}
				staged = append(staged, ev.Dataset)
				if len(staged) == 1 {
					// The first symlink PUT took 30 seconds, past the end of
					// the lease by the clock of a run that took it over.
					mu.Lock()
					clock = clock.Add(30 * time.Second)
					mu.Unlock()
					putLease(t, e, "usurper", time.Now().Add(time.Hour), time.Now().Add(2*time.Hour))
				}
			},
		})
		if !errors.Is(err, export.ErrLeaseLost) {
			t.Fatalf("export whose lease was taken over during a step: %v, want ErrLeaseLost", err)
		}
		if len(staged) != 1 {
			t.Errorf("staged %v after the lease was taken over, want only the first table", staged)
		}
		b, err := sink.Get(context.Background(), export.ManifestKey(snapshotDate))
		if err != nil || manifestRun(t, b) != first.RunID {
			t.Errorf("the manifest changed: %s (%v)", b, err)
		}
		// The manifest still names the first run's slot, whose files every
		// table reads.
		for _, d := range first.Datasets {
			var uris []string
			for _, f := range d.Files {
				uris = append(uris, f.URI+"\n")
			}
			if got, err := sink.Get(context.Background(), export.SymlinkKey(d.Name, snapshotDate, first.Slot)); err != nil || string(got) != strings.Join(uris, "") {
				t.Errorf("table %s no longer reads the earlier snapshot: %s (%v)", d.Name, got, err)
			}
		}
		if err := e.Store.ReleaseExportLease(context.Background(), snapshotDate, "owner-of-usurper"); err != nil {
			t.Fatal(err)
		}
	})

}
