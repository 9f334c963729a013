package export_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/s3test"
	"github.com/fundsvc/fundsvc/store"
)

// The child process of TestExportSurvivesSIGKILL: it exports the table
// named by the environment to MinIO and kills itself with SIGKILL right
// after the n-th event of the given kind (of the given dataset, if one is
// named).
const (
	childTable  = "EXPORT_CHILD_TABLE"
	childDest   = "EXPORT_CHILD_DEST"
	childKillAt = "EXPORT_CHILD_KILL_AT" // kind:n or kind:dataset:n, e.g. staged:3, file:positions:2
	childS3     = "EXPORT_CHILD_S3"      // endpoint,access key,secret key
	// The child's temporary folder: one of the parent's, which the parent
	// removes. The child's own t.TempDir would outlive its SIGKILL.
	childTemp = "EXPORT_CHILD_TEMP"
)

func TestExportChild(t *testing.T) {
	table := os.Getenv(childTable)
	if table == "" {
		t.Skip("the child of TestExportSurvivesSIGKILL")
	}
	at := strings.Split(os.Getenv(childKillAt), ":")
	kind, dataset := at[0], ""
	if len(at) == 3 {
		dataset = at[1]
	}
	n, _ := strconv.Atoi(at[len(at)-1])
	s3cfg := strings.Split(os.Getenv(childS3), ",")
	client := s3.New(s3.Options{
		BaseEndpoint: aws.String(s3cfg[0]), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s3cfg[1], s3cfg[2], ""),
	})
	sink, err := export.OpenSink(os.Getenv(childDest), client)
	if err != nil {
		t.Fatal(err)
	}
	store := store.NewStore(store.NewDB(dynamotest.Shared().Config()), table)
	seen := 0
	_, err = export.Run(context.Background(), export.Config{
		Store: store, Sink: sink, Date: snapshotDate, Segments: 2, TempDir: os.Getenv(childTemp),
		TargetFileBytes: childFileBytes, MemoryRows: 50,
		LeaseDuration: crashLease, LeaseWait: time.Minute,
		OnEvent: func(e export.Event) {
			if string(e.Kind) == kind && (dataset == "" || e.Dataset == dataset) {
				if seen++; seen == n {
					p, _ := os.FindProcess(os.Getpid())
					_ = p.Kill() // SIGKILL: no deferred cleanup, no aborted uploads
					select {}
				}
			}
		},
	})
	t.Fatalf("export finished (err %v) without reaching %s", err, os.Getenv(childKillAt))
}

// childFileBytes is where the child rolls its files: small enough that the
// transaction lines' datasets (the largest) take several files each, so a
// kill can come between two files of one dataset and a killed run can
// publish tables of several files; large enough that a run writes some 20
// to 30 files, not hundreds (with 1 KiB most files held a row or two, and a
// run took over ten times as long).
const childFileBytes = 3 << 10

// crashLease is the lease of every run of TestExportSurvivesSIGKILL. Each
// child is killed holding the date's lease, and the next run (a child's or
// the parent's) waits until it ends, polling every quarter of its own
// lease: a short lease keeps that wait short. No run here has another
// beside it that could take its lease over, so a renewal that comes late
// costs nothing.
const crashLease = 200 * time.Millisecond

// TestExportSurvivesSIGKILL kills exports at several points and checks,
// after each kill, what the published tables read: every dataset reads the
// whole earlier snapshot, or every one the whole new one, never a part of a
// run, never two runs; the manifest names that run. A rerun then replaces the
// snapshot and deletes every file the killed runs and the earlier run left.
func TestExportSurvivesSIGKILL(t *testing.T) {
	s := newService(t)
	loadPortfolio(t, s, 11)
	minio := s3test.Shared(t)
	client := minio.Client()
	bucket := minio.NewBucket(t)
	dest := "s3://" + bucket + "/lake"
	sink, err := export.OpenSink(dest, client)
	if err != nil {
		t.Fatal(err)
	}

	kill := func(at string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestExportChild$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			dynamotest.EndpointEnv+"="+dynamotest.Shared().Endpoint(),
			childTable+"="+s.Table, childDest+"="+dest, childKillAt+"="+at, childTemp+"="+t.TempDir(),
			childS3+"="+strings.Join([]string{minio.Endpoint, minio.AccessKey, minio.SecretKey}, ","))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != -1 {
			t.Fatalf("kill at %s: the child was not killed (%v):\n%s", at, err, out)
		}
	}
	// state reads what each table and the manifest show now.
	type state struct {
		tables   map[string]string // dataset → fingerprint of the rows its table reads
		manifest string            // run ID of the published manifest, "" if none
		files    int               // the most files the manifest lists for one dataset
	}
	read := func() state {
		t.Helper()
		st := state{tables: fingerprints(t, mirror(t, client, bucket), bucket+"/lake")}
		if b, err := sink.Get(context.Background(), export.ManifestKey(snapshotDate)); err == nil {
			m := parseManifest(t, b)
			st.manifest = m.RunID
			for _, d := range m.Datasets {
				st.files = max(st.files, len(d.Files))
			}
		}
		return st
	}
	empty := read()

	// A first export killed part-way publishes nothing.
	for _, at := range []string{"scanned:1", "file:1", "dataset:5"} {
		kill(at)
		if got := read(); fmt.Sprint(got) != fmt.Sprint(empty) {
			t.Fatalf("killed at %s before anything was published, the tables read %v", at, got)
		}
	}

	// The parent waits for the lease the last killed child left.
	waitLease := func(c *export.Config) { c.LeaseDuration, c.LeaseWait = crashLease, time.Minute }
	first := runExport(t, s.Env, sink, waitLease)
	old := read()
	if old.manifest != first.RunID {
		t.Fatalf("manifest names run %q, want %q", old.manifest, first.RunID)
	}
	// Change every dataset, so old and new snapshots differ everywhere.
	restated := maps.Clone(extremeDocument)
	restated["title"] = "limits, restated"
	s.call(t, http.MethodPut, "/v1/documents/DOC_EXTREME", restated, http.StatusOK)
	loadPortfolio(t, s, 12)
	// The records datasets change with a record (the first of FUND_A and
	// INV_1), not with documents.
	s.call(t, http.MethodPut, "/v1/funds/FUND_A", map[string]any{"name": "Fund A, renamed", "baseCurrency": "USD"}, http.StatusCreated)
	s.call(t, http.MethodPut, "/v1/investors/INV_1", map[string]any{"displayName": "Investor 1, renamed", "investorType": "other"}, http.StatusCreated)

	type killed struct {
		at    string
		state state
	}
	var kills []killed
	// file:…:2 comes between two files of one dataset, which takes several
	// (see childFileBytes).
	for _, at := range []string{"file:transaction_line_versions:2", "dataset:7", "staged:1", "staged:4", "manifest:1"} {
		kill(at)
		kills = append(kills, killed{at, read()})
	}

	rerun := runExport(t, s.Env, sink, waitLease)
	fresh := read()
	if fresh.manifest != rerun.RunID {
		t.Fatalf("after the rerun the manifest names run %q, want %q", fresh.manifest, rerun.RunID)
	}
	for _, name := range export.Datasets {
		if fresh.tables[name] == old.tables[name] {
			t.Fatalf("%s reads the same before and after the restatements; the test cannot tell runs apart", name)
		}
	}
	for _, k := range kills {
		// The manifest is every table's commit point: before it is
		// written, each reads the earlier snapshot, even with some of the
		// new run's symlink files staged; after, each reads the new one.
		for _, name := range export.Datasets {
			want, which := old.tables[name], "the earlier snapshot"
			if k.at == "manifest:1" {
				want, which = fresh.tables[name], "the new snapshot"
			}
			if k.state.tables[name] != want {
				t.Errorf("killed at %s: %s reads %s, want %s (%s)", k.at, name, k.state.tables[name], which, want)
			}
		}
		// The manifest is the killed run's only once it was written.
		if k.at == "manifest:1" {
			if k.state.manifest == first.RunID || k.state.manifest == "" {
				t.Errorf("killed at %s: the manifest names run %q, want the killed run's", k.at, k.state.manifest)
			}
			// The killed run's tables read as the rerun's, which writes one
			// file a dataset: some of them read several files.
			if k.state.files < 2 {
				t.Errorf("killed at %s: the killed run wrote at most %d files a dataset; the test cannot tell a table of several files from one", k.at, k.state.files)
			}
		} else if k.state.manifest != first.RunID {
			t.Errorf("killed at %s: the manifest names run %q, want the first run %q", k.at, k.state.manifest, first.RunID)
		}
	}

	// Only the rerun's files remain, and the manifest lists exactly them.
	var listed []string
	for _, d := range rerun.Datasets {
		for _, f := range d.Files {
			listed = append(listed, f.Key)
		}
	}
	var stored []string
	for _, name := range export.Datasets {
		keys, err := sink.List(context.Background(), export.DataPrefix(name, snapshotDate))
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, keys...)
	}
	sort.Strings(listed)
	sort.Strings(stored)
	if fmt.Sprint(listed) != fmt.Sprint(stored) {
		t.Errorf("after the rerun the data prefixes hold\n%v\nthe manifest lists\n%v", stored, listed)
	}
}

// parseManifest decodes a manifest.
func parseManifest(t *testing.T, b []byte) export.Manifest {
	t.Helper()
	var m export.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest: %v\n%s", err, b)
	}
	return m
}

// manifestRun is the run ID of a manifest.
func manifestRun(t *testing.T, b []byte) string {
	t.Helper()
	return parseManifest(t, b).RunID
}
