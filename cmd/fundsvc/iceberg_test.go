package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// TestExportIcebergToDirectory runs `fundsvc export --format iceberg` with
// the default catalog (a SQLite file) into a directory, twice: every
// dataset's table is committed each time with the demo's rows, and
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
		committed := map[string]int64{}
		for _, l := range logLines(t, out.String()) {
			if l["msg"] == "iceberg table committed" {
				committed[l["dataset"].(string)] = int64(l["rows"].(float64))
			}
		}
		for name, rows := range demoRows {
			if committed[name] != rows {
				t.Errorf("export %s: %s committed with %d rows, want %d", date, name, committed[name], rows)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, export.SymlinkKey("documents", fund.MustDate(snapshotDate)))); !os.IsNotExist(err) {
		t.Errorf("an Iceberg export wrote the Hive tables' symlink file (stat: %v)", err)
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
