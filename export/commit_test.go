package export_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/s3test"
)

// errFault is the failure faultSink injects.
var errFault = errors.New("injected fault")

// faultSink is a destination that fails one step of publishing, the n-th
// PUT of a symlink file, the PUT of the manifest or the n-th deletion, and
// every request after it, as a run killed there would leave it.
type faultSink struct {
	export.Sink
	at string // "symlink:N", "manifest" or "delete:N"

	mu        sync.Mutex
	symlinks  int
	deletions int
	failed    bool
}

func (f *faultSink) fails(step string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = f.failed || step == f.at
	return f.failed
}

func (f *faultSink) Put(ctx context.Context, key string, data []byte) error {
	step := ""
	switch {
	case strings.HasPrefix(key, "_symlink/"):
		f.mu.Lock()
		f.symlinks++
		step = fmt.Sprintf("symlink:%d", f.symlinks)
		f.mu.Unlock()
	case strings.HasPrefix(key, "_manifests/"):
		step = "manifest"
	}
	if f.fails(step) {
		return errFault
	}
	return f.Sink.Put(ctx, key, data)
}

func (f *faultSink) Delete(ctx context.Context, keys []string) error {
	f.mu.Lock()
	f.deletions++
	step := fmt.Sprintf("delete:%d", f.deletions)
	f.mu.Unlock()
	if f.fails(step) {
		return errFault
	}
	return f.Sink.Delete(ctx, keys)
}

// changeEveryDataset restates, adds and renames, through the API, so that
// a snapshot taken after it differs from one taken before in every
// dataset.
func changeEveryDataset(t *testing.T, s *service) {
	t.Helper()
	restated := maps.Clone(extremeDocument)
	restated["title"] = "limits, restated"
	s.call(t, http.MethodPut, "/v1/documents/DOC_EXTREME", restated, http.StatusOK)
	loadPortfolio(t, s, 12)
	// The records datasets change with a record (the first of FUND_A and
	// INV_1), not with documents.
	s.call(t, http.MethodPut, "/v1/funds/FUND_A", map[string]any{"name": "Fund A, renamed", "baseCurrency": "USD"}, http.StatusCreated)
	s.call(t, http.MethodPut, "/v1/investors/INV_1", map[string]any{"displayName": "Investor 1, renamed", "investorType": "other"}, http.StatusCreated)
}

// TestEveryTableSwitchesAtTheManifest publishes a snapshot, changes every
// dataset, then runs exports of the same date that fail at each step of
// publishing: before the symlink files (none, one, half or all but one of
// the run's written), at the manifest, and at each deletion after it.
// After each, DuckDB reads every table through the snapshots table and
// the views of the Athena DDL, as Athena does: up to the manifest's PUT
// every table reads the earlier snapshot, from it on every table reads
// the new one; never one table of each. A rerun then publishes normally.
// Against a local directory, and MinIO.
func TestEveryTableSwitchesAtTheManifest(t *testing.T) {
	s := newService(t)
	loadPortfolio(t, s, 11)
	minio := s3test.Shared(t)
	client := minio.Client()

	type state struct {
		at       string
		root     reading // where DuckDB reads the destination
		manifest string  // the run the manifest names
	}
	var states []state

	// The symlink files are written in one loop: before the first, between
	// the first two tables, before the last, and one in the middle on
	// MinIO.
	n := len(export.Datasets)
	steps := []string{"symlink:1", "symlink:2", fmt.Sprintf("symlink:%d", n), "manifest", "delete:1", "delete:2"}

	type destination struct {
		name  string
		sink  export.Sink
		read  func() reading // a copy of the destination now
		steps []string
	}
	bucket := minio.NewBucket(t)
	s3sink, err := export.OpenSink("s3://"+bucket+"/lake", client)
	if err != nil {
		t.Fatal(err)
	}
	dir, dirRoot := dirSink(t)
	dests := []destination{
		{"dir", dir, func() reading { return reading{copyDestination(t, dirRoot), ""} }, steps},
		{"s3", s3sink, func() reading { return reading{mirror(t, client, bucket), bucket + "/lake"} }, []string{fmt.Sprintf("symlink:%d", n/2+1), "manifest", "delete:1"}},
	}

	first := map[string]string{}
	for _, d := range dests {
		first[d.name] = runExport(t, s.Env, d.sink, nil).RunID
	}
	changeEveryDataset(t, s)

	before := map[string]state{}
	for _, d := range dests {
		before[d.name] = state{at: d.name + " before", root: d.read(), manifest: first[d.name]}
		for _, at := range d.steps {
			f := &faultSink{Sink: d.sink, at: at}
			_, err := export.Run(context.Background(), export.Config{Store: s.Store, Sink: f, Date: snapshotDate, Segments: 2, TempDir: t.TempDir()})
			if !errors.Is(err, errFault) {
				t.Fatalf("%s: export failing at %s: %v, want the injected fault", d.name, at, err)
			}
			root := d.read()
			states = append(states, state{at: d.name + " " + at, root: root, manifest: readManifestRun(t, root)})
		}
	}
	after := map[string]state{}
	for _, d := range dests {
		m := runExport(t, s.Env, d.sink, nil)
		after[d.name] = state{at: d.name + " after", root: d.read(), manifest: m.RunID}
	}

	// One DuckDB reads every state.
	all := append([]state{}, states...)
	for _, d := range dests {
		all = append(all, before[d.name], after[d.name])
	}
	roots := make([]reading, len(all))
	for i, st := range all {
		roots[i] = st.root
	}
	prints := fingerprintsOf(t, roots)
	print := map[string]map[string]string{}
	for i, st := range all {
		print[st.at] = prints[i]
	}

	for _, d := range dests {
		old, fresh := print[d.name+" before"], print[d.name+" after"]
		for _, name := range export.Datasets {
			if old[name] == fresh[name] {
				t.Fatalf("%s: %s reads the same before and after the changes; the test cannot tell runs apart", d.name, name)
			}
		}
		for _, at := range d.steps {
			st := d.name + " " + at
			committed := strings.HasPrefix(at, "delete:")
			want, which := old, "the earlier snapshot"
			if committed {
				want, which = fresh, "the new snapshot"
			}
			for _, name := range export.Datasets {
				if print[st][name] != want[name] {
					t.Errorf("failed at %s: %s reads %s, want %s (%s)", st, name, print[st][name], which, want[name])
				}
			}
		}
	}
	for _, st := range states {
		committed := strings.Contains(st.at, "delete:")
		d, _, _ := strings.Cut(st.at, " ")
		if (st.manifest == first[d]) == committed {
			t.Errorf("failed at %s: the manifest names run %s (the first was %s)", st.at, st.manifest, first[d])
		}
	}
}

// readManifestRun is the run the manifest of snapshotDate names.
func readManifestRun(t *testing.T, r reading) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(r.prefix), filepath.FromSlash(export.ManifestKey(snapshotDate))))
	if err != nil {
		t.Fatal(err)
	}
	return manifestRun(t, b)
}

// copyDestination copies a local destination into a new directory, its
// symlink files naming the copies of the data files, so that it can be
// read as it is now after later runs have changed the original.
func copyDestination(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasPrefix(filepath.ToSlash(rel), "_symlink/") {
			b = []byte(strings.ReplaceAll(string(b), src+string(filepath.Separator), dst+string(filepath.Separator)))
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o700); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestSnapshotsFromBeforeSlotsAreMovedIntoSlots lays a published snapshot
// out as exports did before slots (one symlink file per table and date, a
// pretty-printed manifest naming no slot), which the views of the DDL do
// not read, and runs an export of another date: it moves that snapshot
// into slot a, so that every table reads it again, whole, through the
// views, and deletes the old symlink files.
func TestSnapshotsFromBeforeSlotsAreMovedIntoSlots(t *testing.T) {
	e := fundtest.New(t)
	e.Seed(t)
	ctx := context.Background()
	sink, dir := dirSink(t)
	m := runExport(t, e, sink, nil)
	published := copyDestination(t, dir)

	for _, name := range export.Datasets {
		b, err := sink.Get(ctx, export.SymlinkKey(name, snapshotDate, m.Slot))
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.Put(ctx, oldSymlinkKey(name), b); err != nil {
			t.Fatal(err)
		}
		if err := sink.Delete(ctx, []string{export.SymlinkKey(name, snapshotDate, m.Slot)}); err != nil {
			t.Fatal(err)
		}
	}
	old := *m
	old.Slot = ""
	body, err := json.MarshalIndent(old, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Put(ctx, export.ManifestKey(snapshotDate), body); err != nil {
		t.Fatal(err)
	}
	before := copyDestination(t, dir)

	runExport(t, e, sink, func(c *export.Config) { c.Date = fund.MustDate("2026-11-23") })
	prints := fingerprintsOf(t, []reading{{published, ""}, {before, ""}, {dir, ""}})
	for _, name := range export.Datasets {
		if !strings.HasPrefix(prints[1][name], "0:") {
			t.Errorf("%s reads %s through the views before the move, want nothing: the test cannot show the move", name, prints[1][name])
		}
		if prints[2][name] != prints[0][name] {
			t.Errorf("%s reads %s after the move, %s as first published", name, prints[2][name], prints[0][name])
		}
		if _, err := sink.Get(ctx, oldSymlinkKey(name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the symlink file from before slots is still there (%v)", name, err)
		}
	}
	b, err := sink.Get(ctx, export.ManifestKey(snapshotDate))
	if err != nil {
		t.Fatal(err)
	}
	var moved export.Manifest
	if err := json.Unmarshal(b, &moved); err != nil || moved.Slot != export.Slots[0] || moved.RunID != m.RunID {
		t.Errorf("the manifest after the move names run %s in slot %q (%v), want %s in %s", moved.RunID, moved.Slot, err, m.RunID, export.Slots[0])
	}
}

// oldSymlinkKey is where exports before slots wrote a table's symlink file.
func oldSymlinkKey(dataset string) string {
	return export.SymlinkRoot(dataset) + "snapshot_date=" + snapshotDate.String() + "/symlink.txt"
}
