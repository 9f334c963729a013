package imports

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// paddedWorkbook writes the workbook xlsx, padded to size bytes
// (fundtest.PaddedWorkbook), to a file in dir.
func paddedWorkbook(t *testing.T, dir string, xlsx []byte, size int) string {
	t.Helper()
	path := filepath.Join(dir, "padded.xlsx")
	if err := os.WriteFile(path, fundtest.PaddedWorkbook(t, xlsx, size), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadHoldsNotTheFileWhole reads an 8 MiB file of each format, the
// demo's notices and then blank rows (CSV) or a part no sheet uses (XLSX),
// and takes the live heap as the file's last bytes are read: reading it
// whole would hold them all there. A workbook goes through a temporary
// file, removed when Read returns.
func TestReadHoldsNotTheFileWhole(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp) // the spooled workbook and excelize's parts
	const size = 8 << 20
	kind := fund.KindCapitalCallNotice
	for _, format := range []string{FormatCSV, FormatXLSX} {
		t.Run(format, func(t *testing.T) {
			var tmpl bytes.Buffer
			if err := WriteTemplate(&tmpl, kind, format); err != nil {
				t.Fatal(err)
			}
			var src io.Reader
			if format == FormatCSV {
				blank := []byte(strings.Repeat(" ", 2000) + strings.Repeat(",", 39) + "\r\n") // few records, many bytes
				src = io.MultiReader(&tmpl, &fundtest.Repeated{Line: blank, N: size / len(blank)})
			} else {
				f, err := os.Open(paddedWorkbook(t, dir, tmpl.Bytes(), size))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				src = f
			}
			probe := &fundtest.HeapProbe{R: src}
			before := fundtest.LiveHeap()
			f, err := Read(t.Context(), probe, format, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			checkDemo(t, kind, f)
			if probe.Bytes < size || probe.AtEnd == 0 {
				t.Fatalf("read %d bytes to the end (%v), want over %d: the test proves nothing", probe.Bytes, probe.AtEnd != 0, size)
			}
			if held := probe.AtEnd - before; held > size/4 {
				t.Errorf("the reading held %d KiB of a %d KiB file at its end; want under %d KiB", held>>10, size>>10, size/4>>10)
			}
			left, err := os.ReadDir(tmp)
			if err != nil || len(left) > 0 {
				t.Errorf("temporary files left behind: %v %v", left, err)
			}
		})
	}
}

// TestAWorkbookInAFileIsReadWhereItLies reads a workbook given as a
// regular file (as the API's body spooled by an Idempotency-Key is, or the
// import command's file) with no temporary folder to copy it to: it is
// read in place, checked against the byte limit by its size, and left
// where it was. Read from its middle, it is read as a stream (and copied).
func TestAWorkbookInAFileIsReadWhereItLies(t *testing.T) {
	dir := t.TempDir()
	var tmpl bytes.Buffer
	kind := fund.KindCapitalCallNotice
	if err := WriteTemplate(&tmpl, kind, FormatXLSX); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "quarter.xlsx")
	if err := os.WriteFile(path, tmpl.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}

	t.Setenv("TMPDIR", filepath.Join(dir, "absent")) // no copy can be made
	f, err := Read(t.Context(), open(), FormatXLSX, Limits{})
	if err != nil {
		t.Fatalf("a workbook in a file: %v", err)
	}
	checkDemo(t, kind, f)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the file was not left where it was: %v", err)
	}
	_, err = Read(t.Context(), open(), FormatXLSX, Limits{MaxBytes: int64(tmpl.Len()) - 1})
	if le, ok := errors.AsType[*LimitError](err); !ok || le.Limit != "bytes" || le.Max != int64(tmpl.Len())-1 {
		t.Errorf("a file a byte over the limit: %v, want a LimitError of bytes", err)
	}
	// Read from its middle, the file is what is left of it: copied (no
	// folder to copy to here), never read whole by its name.
	middle := open()
	if _, err := middle.Seek(1, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(t.Context(), middle, FormatXLSX, Limits{}); err == nil || !strings.Contains(err.Error(), "spool the workbook") {
		t.Errorf("a file read from its middle: %v, want it copied (and the copy to fail)", err)
	}
}
