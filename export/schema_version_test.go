package export_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// schemaText is the canonical text of the export's Parquet schemas: every
// dataset's schema in the order of export.Datasets. schemas.golden.txt is
// this text under a line naming the version (TestSchemasGolden), and
// schema_versions.txt records its SHA-256 (TestSchemaVersion), so the two
// tests cannot disagree about what a schema change is.
func schemaText() string {
	var b strings.Builder
	for _, name := range export.Datasets {
		fmt.Fprintf(&b, "\n# %s\n%s\n", name, export.Schema(name))
	}
	return b.String()
}

// schemaFingerprint is the SHA-256 of schemaText, as schema_versions.txt
// writes it.
func schemaFingerprint() string {
	sum := sha256.Sum256([]byte(schemaText()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

const schemaVersionsFile = "testdata/schema_versions.txt"

// schemaTextFile keeps the schema text of a recorded version, whose SHA-256
// is its line of schema_versions.txt.
func schemaTextFile(version int) string {
	return filepath.Join("testdata", "schema_versions", fmt.Sprintf("v%d.txt", version))
}

// schemaVersionRecord is one line of schema_versions.txt.
type schemaVersionRecord struct {
	version     int
	fingerprint string
	line        string
}

// readSchemaVersions parses schema_versions.txt: comment lines (#) and
// blank lines, then "<version> sha256:<hex>" lines.
func readSchemaVersions(t *testing.T, text string) []schemaVersionRecord {
	t.Helper()
	var out []schemaVersionRecord
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, fp, ok := strings.Cut(line, " ")
		version, err := strconv.Atoi(v)
		if !ok || err != nil || !strings.HasPrefix(fp, "sha256:") || len(fp) != len("sha256:")+64 {
			t.Fatalf("%s:%d: %q is not \"<version> sha256:<64 hex digits>\"", schemaVersionsFile, n, line)
		}
		out = append(out, schemaVersionRecord{version: version, fingerprint: fp, line: line})
	}
	return out
}

// TestSchemaVersion fails when the Parquet schemas change without a bump of
// export.SchemaVersion: a changed schema under an unchanged version would
// make an incremental run reuse files of another shape, and leave the
// Athena DDL and the Iceberg tables (which follow the version, see
// docs/export.md, "Schema versions") behind the files.
//
// testdata/schema_versions.txt records, one line per schema version in
// increasing order, the SHA-256 of the canonical schema text (schemaText)
// that version had. The rules:
//
//   - The line of the current SchemaVersion must hold the current
//     fingerprint. If it does not, the schemas changed without a bump: the
//     test fails, with -update too, and says to bump the version.
//   - A SchemaVersion without a line must be the last line's version plus
//     one; -update appends its line. -update never rewrites or removes a
//     line.
//   - A line, once committed, never changes. The fingerprints of earlier
//     versions cannot be recomputed (their code is gone), so the test
//     compares the file with its committed copy (git show HEAD:…) and
//     requires the committed lines to come first, unchanged. (Outside a
//     git checkout that comparison is skipped.) An edited old line is thus
//     caught by the test run that precedes its commit, and shows in review
//     as a changed line of a file that only ever grows.
//   - Each recorded version's schema text is kept in
//     testdata/schema_versions/v<N>.txt (-update writes the current
//     version's), and must hash to its line: the texts are as fixed as the
//     lines, and the fingerprints stay reproducible. export/iceberg's
//     TestColumnChangesCoverEveryVersion reads them to require a
//     declaration of every column a version stopped writing.
//
// Versions before the first line predate the record.
func TestSchemaVersion(t *testing.T) {
	raw, err := os.ReadFile(schemaVersionsFile)
	if err != nil {
		t.Fatalf("%v (run go test ./export -run TestSchemaVersion -update to create it)", err)
	}
	records := readSchemaVersions(t, string(raw))
	for i := 1; i < len(records); i++ {
		if records[i].version != records[i-1].version+1 {
			t.Fatalf("%s: version %d follows version %d: versions go up by one", schemaVersionsFile, records[i].version, records[i-1].version)
		}
	}
	checkCommittedPrefix(t, records)

	line, err := checkSchemaVersion(records, export.SchemaVersion, schemaFingerprint(), *update)
	if err != nil {
		t.Fatal(err)
	}
	if line != "" {
		if len(raw) > 0 && !bytes.HasSuffix(raw, []byte("\n")) {
			raw = append(raw, '\n')
		}
		if err := os.WriteFile(schemaVersionsFile, append(raw, line+"\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("appended %q to %s", line, schemaVersionsFile)
		records = append(records, schemaVersionRecord{version: export.SchemaVersion, fingerprint: schemaFingerprint(), line: line})
	}
	// The current version's line holds the current fingerprint by now, so
	// its text is the current one.
	current := schemaTextFile(export.SchemaVersion)
	if _, err := os.Stat(current); errors.Is(err, fs.ErrNotExist) && *update {
		if err := os.MkdirAll(filepath.Dir(current), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(current, []byte(schemaText()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range records {
		text, err := os.ReadFile(schemaTextFile(r.version))
		if err != nil {
			t.Fatalf("schema version %d: %v (the current version's is written by go test ./export -run TestSchemaVersion -update; "+
				"an earlier one's is restored with git)", r.version, err)
		}
		if sum := sha256.Sum256(text); "sha256:"+hex.EncodeToString(sum[:]) != r.fingerprint {
			t.Fatalf("%s does not hash to its line %q: a recorded version's schemas never change", schemaTextFile(r.version), r.line)
		}
	}
}

// checkSchemaVersion applies TestSchemaVersion's rules to the recorded
// versions, the current SchemaVersion v and the current fingerprint: it
// returns the line to append (with update, for a new version), or why the
// schemas and the version disagree.
func checkSchemaVersion(records []schemaVersionRecord, v int, fingerprint string, update bool) (string, error) {
	if n := len(records); n > 0 {
		last := records[n-1]
		switch {
		case v < last.version:
			return "", fmt.Errorf("export.SchemaVersion is %d, but %s already records version %d: a version never goes back", v, schemaVersionsFile, last.version)
		case v == last.version && last.fingerprint != fingerprint:
			return "", fmt.Errorf("the Parquet schemas changed: bump export.SchemaVersion to %d and run "+
				"go test ./export -run TestSchemaVersion -update (and declare any column renamed or removed "+
				"for the Iceberg tables: docs/export.md, \"Schema versions\")\n"+
				"(schema version %d was recorded as %s; the schemas are now %s)", v+1, v, last.fingerprint, fingerprint)
		case v == last.version:
			return "", nil
		case v != last.version+1:
			return "", fmt.Errorf("export.SchemaVersion is %d, the last recorded version %d: bump it by one, to %d", v, last.version, last.version+1)
		}
	}
	if !update {
		return "", fmt.Errorf("schema version %d has no fingerprint in %s: run go test ./export -run TestSchemaVersion -update to append it", v, schemaVersionsFile)
	}
	return fmt.Sprintf("%d %s", v, fingerprint), nil
}

// TestSchemaVersionRules holds checkSchemaVersion to the rules
// TestSchemaVersion states, on made-up versions.
func TestSchemaVersionRules(t *testing.T) {
	a, b := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	recorded := []schemaVersionRecord{{version: 2, fingerprint: a}, {version: 3, fingerprint: b}}
	for _, c := range []struct {
		name        string
		version     int
		fingerprint string
		update      bool
		empty       bool // nothing recorded yet
		appended    string
		err         string
	}{
		{name: "unchanged schemas at the recorded version pass", version: 3, fingerprint: b},
		{name: "changed schemas without a bump fail", version: 3, fingerprint: a, err: "the Parquet schemas changed: bump export.SchemaVersion to 4"},
		{name: "changed schemas without a bump fail with -update too", version: 3, fingerprint: a, update: true, err: "bump export.SchemaVersion to 4"},
		{name: "an earlier version's line is not rewritten", version: 2, fingerprint: b, update: true, err: "never goes back"},
		{name: "a bump without -update asks for it", version: 4, fingerprint: a, err: "run go test ./export -run TestSchemaVersion -update"},
		{name: "a bump by one with -update appends its line", version: 4, fingerprint: a, update: true, appended: "4 " + a},
		{name: "a bump by two fails", version: 5, fingerprint: a, update: true, err: "bump it by one, to 4"},
		{name: "a version going back fails", version: 2, fingerprint: a, err: "never goes back"},
		{name: "a first version is appended to an empty record", version: 4, fingerprint: a, update: true, empty: true, appended: "4 " + a},
	} {
		t.Run(c.name, func(t *testing.T) {
			records := recorded
			if c.empty {
				records = nil
			}
			line, err := checkSchemaVersion(records, c.version, c.fingerprint, c.update)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("err = %v, want one saying %q", err, c.err)
			}
			if line != c.appended {
				t.Fatalf("appends %q, want %q", line, c.appended)
			}
		})
	}
}

// checkCommittedPrefix requires the records of schema_versions.txt as
// committed (HEAD) to be the first records of the file, unchanged.
func checkCommittedPrefix(t *testing.T, records []schemaVersionRecord) {
	t.Helper()
	abs, err := filepath.Abs(schemaVersionsFile)
	if err != nil {
		t.Fatal(err)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Logf("no git: the file is not compared with its committed copy")
		return
	}
	dir := filepath.Dir(abs)
	top, err := exec.Command(git, "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Logf("not a git checkout: the file is not compared with its committed copy")
		return
	}
	rel, err := filepath.Rel(strings.TrimSpace(string(top)), abs)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := exec.Command(git, "-C", dir, "show", "HEAD:"+filepath.ToSlash(rel)).Output()
	if err != nil {
		t.Logf("%s is not committed yet", schemaVersionsFile)
		return
	}
	before := readSchemaVersions(t, string(committed))
	for i, r := range before {
		if i >= len(records) || records[i].line != r.line {
			t.Fatalf("%s: the committed line %q was changed or removed: a recorded schema version is never rewritten "+
				"(restore it with git show HEAD:%s)", schemaVersionsFile, r.line, filepath.ToSlash(rel))
		}
	}
}

// TestSchemaVersionIsCarried: every place that tells one shape of the
// snapshot from another carries export.SchemaVersion: the DDL of every
// dataset (a comment and a table property), the manifest, and each data
// file's key-value metadata.
func TestSchemaVersionIsCarried(t *testing.T) {
	v := strconv.Itoa(export.SchemaVersion)
	for _, name := range export.Datasets {
		ddl := export.DDL(name, "s3://lake/fundsvc")
		if !strings.Contains(ddl, "-- fundsvc export schema version "+v+": dataset "+name+"\n") ||
			!strings.Contains(ddl, "'fundsvc.schema_version' = '"+v+"'") {
			t.Errorf("the DDL of %s does not carry schema version %s:\n%s", name, v, ddl)
		}
	}

	e := fundtest.New(t)
	ingestDocuments(t, e, rand.New(rand.NewPCG(23, 1)), 2)
	sink, _ := dirSink(t)
	m := runExport(t, e, sink, nil)
	if m.SchemaVersion != export.SchemaVersion {
		t.Errorf("the manifest records schema version %d, want %d", m.SchemaVersion, export.SchemaVersion)
	}
	files := 0
	for _, d := range m.Datasets {
		for _, f := range d.Files {
			files++
			b, err := os.ReadFile(f.URI)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("%s: %v", f.Key, err)
			}
			if got, _ := pf.Lookup("fundsvc.schema_version"); got != v {
				t.Errorf("%s: key-value metadata fundsvc.schema_version = %q, want %s", f.Key, got, v)
			}
		}
	}
	if files == 0 {
		t.Fatal("the export wrote no file")
	}
}

// TestIncrementalFromAnotherSchemaVersionExportsInFull: files of another
// schema version cannot be reused, so an incremental run whose previous
// snapshot has another schema version exports in full; the same snapshot
// at the current version is built on.
func TestIncrementalFromAnotherSchemaVersionExportsInFull(t *testing.T) {
	for _, older := range []bool{false, true} {
		t.Run(map[bool]string{false: "the same version is built on", true: "another version is not"}[older], func(t *testing.T) {
			e := fundtest.New(t)
			clock := &storeClock{t: fundtest.Clock}
			e.Store.Now = clock.now
			ingestDocuments(t, e, rand.New(rand.NewPCG(23, 2)), 4)
			clock.pass()
			sink, _ := dirSink(t)
			base, _ := exportCounting(t, e, sink, "2026-11-21", false)
			if older {
				setManifestSchemaVersion(t, sink, base.SnapshotDate, export.SchemaVersion-1)
			}
			clock.pass()

			e.Counter.Reset()
			m, events := exportCounting(t, e, sink, snapshotDate.String(), true)
			scans := e.Counter.Count("Scan")
			if !older {
				if m.Kind != "incremental" || scans != 0 || events[export.EventReused] == 0 {
					t.Fatalf("kind %q, %d Scans, %d files reused: want an incremental run on the snapshot of the same version", m.Kind, scans, events[export.EventReused])
				}
				return
			}
			if m.Kind != "full" || m.Base != "" || scans == 0 || events[export.EventReused] != 0 || events[export.EventChanges] != 0 {
				t.Fatalf("kind %q, base %q, %d Scans, %d files reused: want a full export", m.Kind, m.Base, scans, events[export.EventReused])
			}
			if m.SchemaVersion != export.SchemaVersion {
				t.Errorf("the full export records schema version %d, want %d", m.SchemaVersion, export.SchemaVersion)
			}
		})
	}
}

// setManifestSchemaVersion rewrites the published manifest of date as if
// schema version v had written it.
func setManifestSchemaVersion(t *testing.T, sink export.Sink, date string, v int) {
	t.Helper()
	key := export.ManifestKey(fund.MustDate(date))
	body, err := sink.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["schemaVersion"]; !ok {
		t.Fatalf("the manifest has no schemaVersion: %s", body)
	}
	m["schemaVersion"] = v
	if body, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := sink.Put(context.Background(), key, body); err != nil {
		t.Fatal(err)
	}
}
