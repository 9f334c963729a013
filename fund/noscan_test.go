package fund_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServiceCodeNeverScans reads every non-test Go file of the module
// outside internal/ (where only test harnesses and benchmarks live) and
// fails if any calls a DynamoDB Scan: every read must be served by a key
// lookup or a Query. The one exception is the nightly export's Scan.
func TestServiceCodeNeverScans(t *testing.T) {
	const exportScan = "../export/export.go"
	scan := regexp.MustCompile(`\.Scan\(|ScanInput|NewScanPaginator|ParallelScan`)
	root := ".."
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "internal" || d.Name() == "tools" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if filepath.ToSlash(path) == exportScan {
			if !scan.Match(src) {
				t.Errorf("%s no longer scans: update this test", path)
			}
			return nil
		}
		if loc := scan.FindIndex(src); loc != nil {
			line := strings.Count(string(src[:loc[0]]), "\n") + 1
			t.Errorf("%s:%d calls a Scan", path, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 15 {
		t.Fatalf("only %d Go files checked; the walk is not seeing the module", checked)
	}
}
