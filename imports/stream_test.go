package imports

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// paddedWorkbook writes the workbook xlsx to a file with one more part of
// size bytes, stored uncompressed: a workbook of that size whose sheet is
// xlsx's.
func paddedWorkbook(t *testing.T, dir string, xlsx []byte, size int) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(xlsx), int64(len(xlsx)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "padded.xlsx")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "customXml/padding.bin", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, &fundtest.Repeated{Line: make([]byte, 64<<10), N: size / (64 << 10)}); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
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
			f, err := Read(probe, format, Limits{})
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
