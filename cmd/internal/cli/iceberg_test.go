package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fundsvc/fundsvc/cmd/internal/icebergcli"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// TestExportIcebergToDirectory runs `fundsvc export --format iceberg` with
// the default catalog (a SQLite file) into a directory, twice: every
// dataset's table is committed each time with the demo's rows, all in one
// commit, and
// `fundsvc ddl --format iceberg` then names each table's current metadata
// file, which exists, for its Glue registration.
func TestExportIcebergToDirectory(t *testing.T) {
	fe := fundtest.New(t)
	dir := filepath.Join(t.TempDir(), "lake")
	catalog := filepath.Join(t.TempDir(), "catalog.db")
	getenv := withVars(env(t, fe.Table), map[string]string{"FUNDSVC_EXPORT_DEST": dir, "FUNDSVC_ICEBERG_URI": catalog})
	ctx := t.Context()
	if err := run(ctx, []string{"seed"}, getenv, &bytes.Buffer{}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	for _, date := range []string{"2026-11-21", snapshotDate} {
		var out bytes.Buffer
		if err := run(ctx, []string{"export", "--format", "iceberg", "--date", date, "--progress", "log"}, getenv, &out); err != nil {
			t.Fatalf("export %s: %v\n%s", date, err, out.String())
		}
		commits, committed := icebergCommits(t, out.String())
		if len(commits) != 1 || !slices.Equal(commits[0], export.Datasets) {
			t.Errorf("export %s: commits %v, want one of every table", date, commits)
		}
		for name, rows := range demoRows {
			if committed[name] != rows {
				t.Errorf("export %s: %s committed with %d rows, want %d", date, name, committed[name], rows)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(export.SymlinkRoot("documents")))); !os.IsNotExist(err) {
		t.Errorf("an Iceberg export wrote the Hive tables' symlink files (stat: %v)", err)
	}

	var ddl bytes.Buffer
	if err := run(ctx, []string{"ddl", "--format", "iceberg"}, getenv, &ddl); err != nil {
		t.Fatalf("ddl: %v", err)
	}
	for _, name := range export.Datasets {
		re := regexp.MustCompile(`"Name":"` + name + `".*"metadata_location":"([^"]+)"`)
		m := re.FindStringSubmatch(ddl.String())
		if m == nil {
			t.Errorf("ddl names no metadata file for %s:\n%s", name, ddl.String())
			continue
		}
		if !strings.HasPrefix(m[1], filepath.Join(dir, name, "metadata")) {
			t.Errorf("%s: metadata file %s is not under the table's location", name, m[1])
		}
		if _, err := os.Stat(strings.TrimPrefix(m[1], "file://")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !strings.Contains(ddl.String(), "FOR VERSION AS OF") {
		t.Errorf("ddl shows no time-travel query:\n%s", ddl.String())
	}

	var out bytes.Buffer
	if err := run(ctx, []string{"export", "--format", "delta"}, getenv, &out); err == nil || !strings.Contains(err.Error(), "want hive or iceberg") {
		t.Errorf("--format delta: err = %v, want a refusal naming the formats", err)
	}
}

// TestExportIcebergCommitModes runs `fundsvc export --format iceberg` with
// --iceberg-commit and FUNDSVC_ICEBERG_COMMIT: per-table commits each table
// on its own, an unknown mode is refused, and the default, atomic mode
// refuses a REST catalog whose server does not offer transactions/commit
// before anything is written.
func TestExportIcebergCommitModes(t *testing.T) {
	fe := fundtest.New(t)
	ctx := t.Context()
	base := env(t, fe.Table)
	if err := run(ctx, []string{"seed"}, base, &bytes.Buffer{}); err != nil {
		t.Fatalf("seed: %v", err)
	}

	t.Run("FUNDSVC_ICEBERG_COMMIT=per-table commits each table on its own", func(t *testing.T) {
		getenv := withVars(base, map[string]string{"FUNDSVC_EXPORT_DEST": t.TempDir(),
			"FUNDSVC_ICEBERG_URI": filepath.Join(t.TempDir(), "catalog.db"), "FUNDSVC_ICEBERG_COMMIT": "per-table"})
		var out bytes.Buffer
		if err := run(ctx, []string{"export", "--format", "iceberg", "--date", snapshotDate, "--progress", "log"}, getenv, &out); err != nil {
			t.Fatalf("export: %v\n%s", err, out.String())
		}
		commits, committed := icebergCommits(t, out.String())
		var order []string
		for _, c := range commits {
			if len(c) != 1 {
				t.Errorf("a per-table commit of %v", c)
			}
			order = append(order, c...)
		}
		if !slices.Equal(order, export.Datasets) {
			t.Errorf("commits %v, want one per table in the order of the datasets", commits)
		}
		for name, rows := range demoRows {
			if committed[name] != rows {
				t.Errorf("%s committed with %d rows, want %d", name, committed[name], rows)
			}
		}
	})

	t.Run("an unknown commit mode is refused", func(t *testing.T) {
		getenv := withVars(base, map[string]string{"FUNDSVC_EXPORT_DEST": t.TempDir(), "FUNDSVC_ICEBERG_URI": filepath.Join(t.TempDir(), "catalog.db")})
		err := run(ctx, []string{"export", "--format", "iceberg", "--iceberg-commit", "sometimes", "--progress", "log"}, getenv, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "want atomic or per-table") {
			t.Errorf("err = %v, want a refusal naming the modes", err)
		}
	})

	t.Run("a REST catalog without transactions/commit is refused before anything is written", func(t *testing.T) {
		var mu sync.Mutex
		var requests []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests = append(requests, r.Method+" "+r.URL.Path)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			switch r.Method + " " + r.URL.Path {
			case "GET /v1/config":
				w.Write([]byte(`{"defaults":{},"overrides":{},"endpoints":["POST /v1/{prefix}/namespaces",` +
					`"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}","POST /v1/{prefix}/namespaces/{namespace}/tables",` +
					`"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"]}`))
			case "POST /v1/namespaces":
				w.Write([]byte(`{"namespace":["fundsvc"],"properties":{}}`))
			default:
				http.NotFound(w, r)
			}
		}))
		defer srv.Close()
		dest := filepath.Join(t.TempDir(), "lake")
		getenv := withVars(base, map[string]string{"FUNDSVC_EXPORT_DEST": dest})
		err := run(ctx, []string{"export", "--format", "iceberg", "--iceberg-catalog", "rest", "--iceberg-uri", srv.URL, "--progress", "log"}, getenv, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "transactions/commit") || !strings.Contains(err.Error(), "--iceberg-commit per-table") {
			t.Fatalf("err = %v, want a refusal naming the endpoint and --iceberg-commit per-table", err)
		}
		if entries, err := os.ReadDir(dest); !os.IsNotExist(err) && len(entries) != 0 {
			t.Errorf("the destination holds %v: something was written", entries)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(requests, []string{"GET /v1/config", "POST /v1/namespaces"}) {
			t.Errorf("requests %v, want only the catalog's opening", requests)
		}
	})
}

// icebergCommits reads an export's log: the datasets of each "iceberg
// commit" line, and the rows each "iceberg table committed" line reports.
func icebergCommits(t *testing.T, out string) (commits [][]string, rows map[string]int64) {
	t.Helper()
	rows = map[string]int64{}
	for _, l := range logLines(t, out) {
		switch l["msg"] {
		case "iceberg commit":
			var names []string
			for _, n := range l["datasets"].([]any) {
				names = append(names, n.(string))
			}
			commits = append(commits, names)
		case "iceberg table committed":
			rows[l["dataset"].(string)] = int64(l["rows"].(float64))
		}
	}
	return commits, rows
}

// TestIcebergCatalogLivesBesideTheExport: without --iceberg-uri the SQL
// catalog is DEST/_iceberg/catalog.db, private like the export's files, so
// an export to a second destination (which, with one catalog for both,
// found the first one's tables gone or elsewhere) works as the first did;
// ddl finds each destination's catalog, and refuses one where no export
// went; an export to S3 must name its catalog.
func TestIcebergCatalogLivesBesideTheExport(t *testing.T) {
	fe := fundtest.New(t)
	ctx := t.Context()
	base := env(t, fe.Table)
	if err := run(ctx, []string{"seed"}, base, &bytes.Buffer{}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	wd, _ := os.Getwd()
	for _, name := range []string{"first", "second"} {
		dest := filepath.Join(t.TempDir(), name)
		var out bytes.Buffer
		if err := run(ctx, []string{"export", "--format", "iceberg", "--dest", dest, "--date", snapshotDate, "--progress", "log"}, base, &out); err != nil {
			t.Fatalf("export to the %s destination: %v\n%s", name, err, out.String())
		}
		if _, committed := icebergCommits(t, out.String()); committed["documents"] != demoRows["documents"] {
			t.Errorf("%s: documents committed with %d rows, want %d", name, committed["documents"], demoRows["documents"])
		}
		for path, want := range map[string]os.FileMode{
			filepath.Join(dest, icebergcli.CatalogDir):                         os.ModeDir | 0o700,
			filepath.Join(dest, icebergcli.CatalogDir, icebergcli.CatalogFile): 0o600,
		} {
			if st, err := os.Stat(path); err != nil || st.Mode() != want {
				t.Errorf("%s: %v %v, want mode %v", path, st.Mode(), err, want)
			}
		}
		var ddl bytes.Buffer
		if err := run(ctx, []string{"ddl", "--format", "iceberg", "--dest", dest}, base, &ddl); err != nil || !strings.Contains(ddl.String(), filepath.Join(dest, "documents", "metadata")) {
			t.Errorf("ddl of the %s destination: %v\n%s", name, err, ddl.String())
		}
	}
	if _, err := os.Stat(filepath.Join(wd, "fundsvc-iceberg.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a catalog was written to the working directory (stat: %v)", err)
	}

	nowhere := filepath.Join(t.TempDir(), "nowhere")
	err := run(ctx, []string{"ddl", "--format", "iceberg", "--dest", nowhere}, base, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "no Iceberg catalog at "+filepath.Join(nowhere, "_iceberg", "catalog.db")) {
		t.Errorf("ddl where no export went: %v", err)
	}
	if _, err := os.Stat(nowhere); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ddl created %s", nowhere)
	}

	err = run(ctx, []string{"export", "--format", "iceberg", "--dest", "s3://lake/fundsvc", "--progress", "log"}, base, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--iceberg-uri FILE") {
		t.Errorf("an export to S3 without a catalog file: %v", err)
	}
}
