package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/s3test"
)

// snapshotDate is the date every export test publishes.
const snapshotDate = "2026-11-22"

// demoRows is what the demo dataset (fundsvc seed, fund.DemoVersions and
// fund.DemoRecords) exports: FUND_A's seven documents for three positions,
// and its fund and investors.
var demoRows = map[string]int64{
	"documents":            7,  // DOC001 to DOC007
	"document_versions":    9,  // DOC001 and DOC007 have two
	"capital_activities":   5,  // the five notices; statements have none
	"capital_calls":        9,  // calls 1, 2 and 3 (the recall), to each position
	"distributions":        6,  // distributions 1 and 2, to each position
	"unfunded_commitments": 12, // after calls 1, 2, 3 and distribution 1 (recallable), each position
	"capital_accounts":     6,  // Q3 and Q4 of each position
	"transaction_lines":    33, // per position: calls 1 and 2 three lines each, the recall one, distribution 1 one, distribution 2 three
	// Every version's items: the latest's, and version 1's of DOC001 (a
	// call, three lines and an unfunded commitment to each position) and
	// of DOC007 (a statement to each).
	"capital_account_versions":     9,
	"capital_call_versions":        12,
	"distribution_versions":        6,
	"transaction_line_versions":    42,
	"unfunded_commitment_versions": 15,
	"positions":                    3,
	"funds":                        1, // FUND_A, with its record
	"investors":                    3, // INVESTOR_1 and INVESTOR_2 with records, INVESTOR_3 without
}

// demoDocuments is how many documents the demo dataset has.
func demoDocuments() int {
	ids := map[string]bool{}
	for _, d := range fund.DemoVersions() {
		ids[d.ID] = true
	}
	return len(ids)
}

// withVars returns getenv with vars set over it.
func withVars(getenv func(string) string, vars map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return getenv(k)
	}
}

// logLines decodes out as JSON lines; any other line fails t.
func logLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line is not JSON (%v): %q\nwhole output:\n%s", err, l, out)
		}
		lines = append(lines, m)
	}
	return lines
}

// num returns the number field k of a log line.
func num(t *testing.T, line map[string]any, k string) int64 {
	t.Helper()
	f, ok := line[k].(float64)
	if !ok {
		t.Fatalf("log line %v: %s is %T, want a number", line, k, line[k])
	}
	return int64(f)
}

// checkExportLog checks the log of one export run against its manifest:
// "scan finished", then one "dataset written" per dataset (in the order the
// datasets finish: they are written at once), then "snapshot published"
// naming manifestURI. The manifest lists the datasets in export order.
func checkExportLog(t *testing.T, out string, m *export.Manifest, manifestURI string) {
	t.Helper()
	lines := logLines(t, out)
	var msgs []string
	for _, l := range lines {
		msgs = append(msgs, l["msg"].(string))
	}
	want := []string{"scan finished"}
	for range export.Datasets {
		want = append(want, "dataset written")
	}
	want = append(want, "snapshot published")
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Fatalf("log messages %q, want %q\n%s", msgs, want, out)
	}

	scan := lines[0]
	if got := num(t, scan, "items"); got != m.ItemsScanned || got == 0 {
		t.Errorf("scan finished: items %d, manifest says %d", got, m.ItemsScanned)
	}
	if got := num(t, scan, "segments"); got != 4 {
		t.Errorf("scan finished: segments %d, want the default 4", got)
	}
	if len(m.Datasets) != len(export.Datasets) {
		t.Fatalf("manifest has %d datasets, want %d", len(m.Datasets), len(export.Datasets))
	}
	logged := map[string]map[string]any{}
	for _, l := range lines[1 : len(lines)-1] {
		name, _ := l["dataset"].(string)
		if logged[name] != nil {
			t.Errorf("dataset %s logged twice", name)
		}
		logged[name] = l
	}
	var rows, size int64
	for i, name := range export.Datasets {
		l, d := logged[name], m.Datasets[i]
		if l == nil || d.Name != name {
			t.Errorf("dataset %s: logged %v, manifest dataset %d is %s", name, l, i, d.Name)
			continue
		}
		if num(t, l, "rows") != d.Rows || num(t, l, "bytes") != d.Bytes || num(t, l, "files") != int64(len(d.Files)) {
			t.Errorf("dataset written %s: %v; manifest: %d rows, %d bytes, %d files", name, l, d.Rows, d.Bytes, len(d.Files))
		}
		rows, size = rows+d.Rows, size+d.Bytes
	}
	pub := lines[len(lines)-1]
	if pub["manifest"] != manifestURI {
		t.Errorf("snapshot published: manifest %v, want %s", pub["manifest"], manifestURI)
	}
	if pub["snapshot_date"] != snapshotDate || pub["run_id"] != m.RunID {
		t.Errorf("snapshot published: %v; manifest run %s", pub, m.RunID)
	}
	if num(t, pub, "items") != m.ItemsScanned || num(t, pub, "rows") != rows || num(t, pub, "bytes") != size {
		t.Errorf("snapshot published: %v; manifest: %d items, %d rows, %d bytes", pub, m.ItemsScanned, rows, size)
	}
}

// checkManifest checks a manifest's own sums, its date and the demo's rows.
func checkManifest(t *testing.T, m *export.Manifest, table string) {
	t.Helper()
	if m.SnapshotDate != snapshotDate || m.Table != table || m.SchemaVersion != export.SchemaVersion {
		t.Errorf("manifest: date %s, table %s, schema %d; want %s, %s, %d",
			m.SnapshotDate, m.Table, m.SchemaVersion, snapshotDate, table, export.SchemaVersion)
	}
	for _, d := range m.Datasets {
		var rows, size int64
		for _, f := range d.Files {
			rows, size = rows+f.Rows, size+f.Bytes
		}
		if rows != d.Rows || size != d.Bytes {
			t.Errorf("manifest %s: %d rows and %d bytes, its files add up to %d and %d", d.Name, d.Rows, d.Bytes, rows, size)
		}
		if want, ok := demoRows[d.Name]; !ok || d.Rows != want {
			t.Errorf("manifest %s: %d rows, want %d", d.Name, d.Rows, want)
		}
		if d.Rows > 0 && len(d.Files) == 0 {
			t.Errorf("manifest %s: %d rows in no file", d.Name, d.Rows)
		}
	}
}

func TestExportToS3LogsEachDataset(t *testing.T) {
	srv := s3test.Shared(t)
	client := srv.Client()
	bucket := srv.NewBucket(t)
	fe := fundtest.New(t)
	fe.Seed(t)
	// MinIO's keys go through getenv only, deliberately: run takes its
	// whole environment from getenv, credentials included.
	getenv := withVars(env(t, fe.Table), map[string]string{
		"FUNDSVC_S3_ENDPOINT":   srv.Endpoint,
		"FUNDSVC_S3_PATH_STYLE": "true",
		"FUNDSVC_S3_REGION":     "us-east-1",
		"AWS_ACCESS_KEY_ID":     srv.AccessKey,
		"AWS_SECRET_ACCESS_KEY": srv.SecretKey,
	})
	ctx := t.Context()
	dest := "s3://" + bucket + "/nightly"
	var out bytes.Buffer
	if err := run(ctx, []string{"export", "--date", snapshotDate, "--progress", "log", "--dest", dest}, getenv, &out); err != nil {
		t.Fatalf("export: %v\n%s", err, out.String())
	}

	get := func(key string) []byte {
		t.Helper()
		o, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("get s3://%s/%s: %v", bucket, key, err)
		}
		defer o.Body.Close()
		b, err := io.ReadAll(o.Body)
		if err != nil {
			t.Fatalf("read s3://%s/%s: %v", bucket, key, err)
		}
		return b
	}
	manifestKey := "nightly/_manifests/snapshot_date=" + snapshotDate + "/manifest.json"
	var m export.Manifest
	if err := json.Unmarshal(get(manifestKey), &m); err != nil {
		t.Fatalf("decode the manifest: %v", err)
	}
	checkExportLog(t, out.String(), &m, "s3://"+bucket+"/"+manifestKey)
	checkManifest(t, &m, fe.Table)

	for _, d := range m.Datasets {
		var uris []string
		for _, f := range d.Files {
			if want := dest + "/" + f.Key; f.URI != want {
				t.Errorf("file %s: URI %s, want %s", f.Key, f.URI, want)
			}
			head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("nightly/" + f.Key)})
			if err != nil {
				t.Errorf("file %s is not in the bucket: %v", f.URI, err)
				continue
			}
			if got := aws.ToInt64(head.ContentLength); got != f.Bytes {
				t.Errorf("file %s: %d bytes in the bucket, %d in the manifest", f.URI, got, f.Bytes)
			}
			uris = append(uris, f.URI+"\n")
		}
		symlink := string(get("nightly/" + export.SymlinkKey(d.Name, fund.MustDate(snapshotDate), m.Slot)))
		if want := strings.Join(uris, ""); symlink != want {
			t.Errorf("symlink of %s:\n%s\nwant:\n%s", d.Name, symlink, want)
		}
	}
	for _, name := range append([]string{export.SnapshotsTable}, export.Datasets...) {
		got := string(get("nightly/" + export.DDLKey(name)))
		if want := export.DDL(name, dest) + "\n"; got != want {
			t.Errorf("%s differs from export.DDL:\n%s\nwant:\n%s", export.DDLKey(name), got, want)
		}
	}
}

func TestExportToDirectoryByDefaultDest(t *testing.T) {
	fe := fundtest.New(t)
	dir := filepath.Join(t.TempDir(), "out")
	getenv := withVars(env(t, fe.Table), map[string]string{"FUNDSVC_EXPORT_DEST": dir})
	ctx := t.Context()
	if err := run(ctx, []string{"seed"}, getenv, &bytes.Buffer{}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"export", "--date", snapshotDate, "--progress", "log"}, getenv, &out); err != nil {
		t.Fatalf("export: %v\n%s", err, out.String())
	}

	manifestPath := filepath.Join(dir, "_manifests", "snapshot_date="+snapshotDate, "manifest.json")
	b, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatalf("no manifest where FUNDSVC_EXPORT_DEST says: %v", err)
	}
	var m export.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode the manifest: %v", err)
	}
	checkExportLog(t, out.String(), &m, manifestPath)
	checkManifest(t, &m, fe.Table)
	for _, d := range m.Datasets {
		for _, f := range d.Files {
			p := filepath.Join(dir, filepath.FromSlash(f.Key))
			if f.URI != p {
				t.Errorf("file %s: URI %s, want %s", f.Key, f.URI, p)
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Errorf("file %s: %v", f.Key, err)
				continue
			}
			if st.Size() != f.Bytes {
				t.Errorf("file %s: %d bytes on disk, %d in the manifest", f.Key, st.Size(), f.Bytes)
			}
		}
	}
	for _, name := range export.Datasets {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(export.DDLKey(name))))
		if err != nil {
			t.Errorf("DDL of %s: %v", name, err)
		} else if want := export.DDL(name, dir) + "\n"; string(got) != want {
			t.Errorf("DDL of %s:\n%s\nwant:\n%s", name, got, want)
		}
	}
}

// TestExportRefusesBadFlags checks each bad flag is refused, named in the
// error, before anything is written: no log line, no destination directory.
// The table holds the demo, so an export that went ahead would write files.
func TestExportRefusesBadFlags(t *testing.T) {
	fe := fundtest.New(t)
	fe.Seed(t)
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"a month 13", []string{"--date", "2026-13-01"}, []string{"--date", "2026-13-01", "not a calendar date", "no month 13"}},
		{"a day first", []string{"--date", "31-12-2026"}, []string{"--date", "31-12-2026", "not a valid date: want YYYY-MM-DD"}},
		{"lz4", []string{"--compression", "lz4"}, []string{`compression "lz4"`, "zstd or snappy"}},
		{"no segments", []string{"--segments", "0"}, []string{"segments 0", "1 to 1000"}},
		{"a fancy progress", []string{"--progress", "fancy"}, []string{`--progress "fancy"`, "auto, bar or log"}},
		{"ftp", []string{"--dest", "ftp://x"}, []string{`"ftp://x"`, "only s3:// URLs and local directories"}},
		{"a negative wait for the lease", []string{"--wait-lease", "-1s"}, []string{"--wait-lease -1s", "0 or more"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			getenv := withVars(env(t, fe.Table), map[string]string{"FUNDSVC_EXPORT_DEST": dir})
			// Later flags win: each case overrides one of these.
			args := append([]string{"export", "--date", snapshotDate, "--progress", "log"}, c.args...)
			var out bytes.Buffer
			err := run(t.Context(), args, getenv, &out)
			if err == nil {
				t.Fatalf("export %q succeeded:\n%s", c.args, out.String())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if out.Len() > 0 {
				t.Errorf("export %q wrote output:\n%s", c.args, out.String())
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("export %q created the destination %s (stat: %v)", c.args, dir, err)
			}
			if _, err := os.Stat("ftp:"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("export %q created ./ftp: (stat: %v)", c.args, err)
			}
		})
	}
}

// TestDDLPrintsTheExportDDL checks the command; the DDL itself is pinned by
// export's golden file.
func TestDDLPrintsTheExportDDL(t *testing.T) {
	// FUNDSVC_EXPORT_DEST would be used without --location; it must not be.
	getenv := withVars(env(t, "fundsvc"), map[string]string{"FUNDSVC_EXPORT_DEST": "/elsewhere"})
	var out bytes.Buffer
	if err := run(context.Background(), []string{"ddl", "--location", "s3://lake/fundsvc"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if got != export.AllDDL("s3://lake/fundsvc") {
		t.Errorf("fundsvc ddl differs from export.AllDDL")
	}
	// A table of symlink files and a view per dataset, and the snapshots
	// table the views follow.
	if n := strings.Count(got, "CREATE EXTERNAL TABLE IF NOT EXISTS "); n != len(export.Datasets)+1 {
		t.Errorf("%d CREATE EXTERNAL TABLE statements, want %d", n, len(export.Datasets)+1)
	}
	if !strings.Contains(got, "LOCATION 's3://lake/fundsvc/_manifests/'") {
		t.Errorf("no LOCATION for the snapshots table")
	}
	for _, name := range export.Datasets {
		if !strings.Contains(got, "LOCATION 's3://lake/fundsvc/_symlink/"+name+"/'") {
			t.Errorf("no LOCATION for %s", name)
		}
		if !strings.Contains(got, "CREATE OR REPLACE VIEW "+name+" AS") {
			t.Errorf("no view %s", name)
		}
	}
	if strings.Contains(got, "/elsewhere") {
		t.Error("--location did not override FUNDSVC_EXPORT_DEST")
	}
}

func TestDDLDefaultsToTheExportDestMadeAbsolute(t *testing.T) {
	rel := "ddl-dest-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	t.Cleanup(func() { os.RemoveAll(rel) })
	if _, err := os.Stat(rel); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s exists before the test (stat: %v)", rel, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	getenv := withVars(env(t, "fundsvc"), map[string]string{"FUNDSVC_EXPORT_DEST": rel})
	var out bytes.Buffer
	if err := run(context.Background(), []string{"ddl"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(wd, rel)
	if want := export.AllDDL(abs); out.String() != want {
		t.Errorf("fundsvc ddl with FUNDSVC_EXPORT_DEST=%s:\n%s\nwant the DDL of %s:\n%s", rel, out.String(), abs, want)
	}
	if !strings.Contains(out.String(), "LOCATION '"+abs+"/_symlink/documents/'") {
		t.Errorf("no absolute LOCATION %s in:\n%s", abs, out.String())
	}
	if _, err := os.Stat(rel); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("fundsvc ddl created %s (stat: %v)", rel, err)
	}
}

func TestDrawBarShowsTheCounts(t *testing.T) {
	var p export.Progress
	p.ItemsScanned.Store(1234)
	p.RowsWritten.Store(567)
	p.BytesWritten.Store(2_500_000)
	out := &fundtest.SyncBuffer{}
	stop := drawBar(out, &p)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	poll(t, "the first progress line", func() bool { return strings.Contains(out.String(), "items scanned") })
	// The bar redraws with what the counters say now.
	p.ItemsScanned.Store(2000)
	p.RowsWritten.Store(890)
	poll(t, "a redraw with the new counts", func() bool { return strings.Contains(out.String(), "2000 items scanned") })
	stop()
	stopped = true

	got := out.String()
	lines := strings.Split(got, "\r\033[K")
	if lines[0] != "" {
		t.Errorf("output does not start by clearing the line: %q", got)
	}
	first := lines[1]
	for _, w := range []string{"export: 1234 items scanned (", "/s) · 567 rows written · 2.5 MB"} {
		if !strings.Contains(first, w) {
			t.Errorf("first line %q lacks %q", first, w)
		}
	}
	last := strings.TrimSuffix(lines[len(lines)-1], "\n")
	for _, w := range []string{"export: 2000 items scanned (", "/s) · 890 rows written · 2.5 MB"} {
		if !strings.Contains(last, w) {
			t.Errorf("last line %q lacks %q", last, w)
		}
	}
	if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
		t.Errorf("the bar's lines are not ended by exactly one final newline: %q", got)
	}
	if after := out.String(); after != got {
		t.Errorf("the bar drew after stop returned: %q", strings.TrimPrefix(after, got))
	}
}

// exportProcess is one finished `fundsvc export` process.
type exportProcess struct {
	code           int
	stdout, stderr string
	runID          string // of its "snapshot published" line
}

// startExport starts `fundsvc export` with args on table; wait returns
// what it did.
func startExport(t *testing.T, table, dest string, args ...string) (wait func() exportProcess) {
	t.Helper()
	cmd := childProcess(t, table, []string{"FUNDSVC_TABLE", "FUNDSVC_DYNAMODB_ENDPOINT", "FUNDSVC_JWT_HS256_SECRET"},
		append([]string{"export", "--date", snapshotDate, "--progress", "log", "--dest", dest, "--segments", "1"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() exportProcess {
		err := cmd.Wait()
		p := exportProcess{stdout: stdout.String(), stderr: stderr.String()}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			p.code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("export process: %v", err)
		}
		for _, l := range strings.Split(p.stdout, "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "snapshot published" {
				p.runID, _ = m["run_id"].(string)
			}
		}
		return p
	}
}

// checkSnapshotWhole checks the snapshot under dir: the manifest names run
// want, every file it lists exists with its size, and those are the only
// data files of the date.
func checkSnapshotWhole(t *testing.T, dir, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "_manifests", "snapshot_date="+snapshotDate, "manifest.json"))
	if err != nil {
		t.Fatalf("no manifest: %v", err)
	}
	var m export.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.RunID != want {
		t.Errorf("the manifest names run %s, want %s", m.RunID, want)
	}
	listed := map[string]bool{}
	for _, d := range m.Datasets {
		if want, ok := demoRows[d.Name]; !ok || d.Rows != want {
			t.Errorf("manifest %s: %d rows, want %d", d.Name, d.Rows, want)
		}
		for _, f := range d.Files {
			listed[filepath.Join(dir, filepath.FromSlash(f.Key))] = true
			if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Key))); err != nil || st.Size() != f.Bytes {
				t.Errorf("file %s of the published run: %v", f.Key, err)
			}
		}
	}
	for _, name := range export.Datasets {
		_ = filepath.WalkDir(filepath.Join(dir, name), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !listed[p] {
				t.Errorf("%s is left beside the published run", p)
			}
			return nil
		})
	}
}

// TestTwoExportProcessesOfOneDate runs `fundsvc export` processes of one
// date on one table: a process refuses, naming the lease, while another run
// holds it, and writes nothing; two processes started together without
// --wait-lease leave one whole snapshot (one of them may refuse, with the
// lease named); two started together with --wait-lease both publish, one
// after the other, and the last one's snapshot is whole.
func TestTwoExportProcessesOfOneDate(t *testing.T) {
	fe := fundtest.New(t)
	fe.Seed(t)
	ctx := context.Background()

	t.Run("a live lease is refused", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		date := fund.MustDate(snapshotDate)
		if holder, err := fe.Store.TakeExportLease(ctx, date, "another", "another-run", time.Now(), time.Now().Add(time.Hour)); err != nil || holder != nil {
			t.Fatalf("take the lease as another run: held by %+v (%v)", holder, err)
		}
		p := startExport(t, fe.Table, dir)()
		if err := fe.Store.ReleaseExportLease(ctx, date, "another"); err != nil {
			t.Fatal(err)
		}
		if p.code != 1 || !strings.Contains(p.stderr, "another export of "+snapshotDate+" is running: run another-run holds the lease until") {
			t.Fatalf("exit %d, stderr %q: want 1 and the lease named", p.code, p.stderr)
		}
		var files []string
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if len(files) != 0 {
			t.Errorf("the refused process wrote %v", files)
		}
	})

	t.Run("started together, without waiting", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		a, b := startExport(t, fe.Table, dir), startExport(t, fe.Table, dir)
		pa, pb := a(), b()
		published := ""
		for _, p := range []exportProcess{pa, pb} {
			switch {
			case p.code == 0 && p.runID != "":
				published = p.runID // the later of two that did not overlap replaced the earlier
			case p.code == 1 && strings.Contains(p.stderr, "another export of "+snapshotDate+" is running"):
			default:
				t.Fatalf("exit %d, stdout %q, stderr %q: want a published snapshot or a refusal naming the lease", p.code, p.stdout, p.stderr)
			}
		}
		if published == "" {
			t.Fatal("neither process published")
		}
		t.Logf("exit codes %d and %d (1: refused, the lease held by the other)", pa.code, pb.code)
		if pa.code == 0 && pb.code == 0 {
			// Both ran, so one after the other: the manifest names the
			// later, whichever it is.
			m, _ := os.ReadFile(filepath.Join(dir, "_manifests", "snapshot_date="+snapshotDate, "manifest.json"))
			if !strings.Contains(string(m), pa.runID) && !strings.Contains(string(m), pb.runID) {
				t.Fatalf("the manifest names neither run: %s", m)
			}
			if strings.Contains(string(m), pa.runID) {
				published = pa.runID
			} else {
				published = pb.runID
			}
		}
		checkSnapshotWhole(t, dir, published)
	})

	t.Run("started together, with --wait-lease", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		a, b := startExport(t, fe.Table, dir, "--wait-lease", "2m"), startExport(t, fe.Table, dir, "--wait-lease", "2m")
		pa, pb := a(), b()
		for _, p := range []exportProcess{pa, pb} {
			if p.code != 0 || p.runID == "" {
				t.Fatalf("exit %d, stdout %q, stderr %q: want a published snapshot", p.code, p.stdout, p.stderr)
			}
		}
		if pa.runID == pb.runID {
			t.Fatal("both processes report one run")
		}
		m, _ := os.ReadFile(filepath.Join(dir, "_manifests", "snapshot_date="+snapshotDate, "manifest.json"))
		last := pa.runID
		if strings.Contains(string(m), pb.runID) {
			last = pb.runID
		}
		checkSnapshotWhole(t, dir, last)
	})
}

// TestExportSinceLastBuildsOnTheLatestSnapshot: --since-last after a full
// export of the day before publishes an incremental snapshot from it, with
// the demo's rows. (The demo was written within the store's settle margin
// of the first export, so all its documents are read again.)
func TestExportSinceLastBuildsOnTheLatestSnapshot(t *testing.T) {
	fe := fundtest.New(t)
	dir := filepath.Join(t.TempDir(), "out")
	getenv := withVars(env(t, fe.Table), map[string]string{"FUNDSVC_EXPORT_DEST": dir})
	ctx := t.Context()
	if err := run(ctx, []string{"seed"}, getenv, &bytes.Buffer{}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	read := func(date string) export.Manifest {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "_manifests", "snapshot_date="+date, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m export.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	var out bytes.Buffer
	for _, args := range [][]string{
		{"export", "--since-last", "--date", "2026-11-21", "--progress", "log"}, // nothing to start from: full
		{"export", "--since-last", "--date", snapshotDate, "--progress", "log"},
	} {
		out.Reset()
		if err := run(ctx, args, getenv, &out); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
	}
	// Straight after the full run, every demo document was committed in
	// its settle margin: the incremental run reads them again and says why.
	var why string
	for _, l := range strings.Split(out.String(), "\n") {
		var line map[string]any
		if json.Unmarshal([]byte(l), &line) == nil && line["msg"] == "changes read" {
			why, _ = line["why"].(string)
		}
	}
	if !strings.Contains(why, fmt.Sprintf("%d of them were committed before that snapshot started, inside the margin", demoDocuments())) {
		t.Errorf("the incremental run's log says why %q; want it to name the %d documents of the settle margin\n%s", why, demoDocuments(), out.String())
	}
	first, m := read("2026-11-21"), read(snapshotDate)
	if first.Kind != "full" || m.Kind != "incremental" || m.Base != "2026-11-21/"+first.RunID || m.DocumentsChanged != demoDocuments() {
		t.Errorf("kinds %q then %q from %q with %d documents changed; want full, then incremental from 2026-11-21/%s with %d",
			first.Kind, m.Kind, m.Base, m.DocumentsChanged, first.RunID, demoDocuments())
	}
	for name, want := range demoRows {
		if d, _ := m.Dataset(name); d.Rows != want {
			t.Errorf("%s: %d rows, want %d", name, d.Rows, want)
		}
	}
}
