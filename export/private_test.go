//go:build unix

package export_test

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// TestLocalExportIsPrivate exports the demo into a directory that does not
// exist yet, with a umask that masks nothing, and walks what the export
// created: every directory is 0700 and every file 0600, so no other user of
// the machine reads investors' money. (The package's tests run one at a
// time, so changing the process's umask here disturbs no other test.)
func TestLocalExportIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })

	e := fundtest.New(t)
	e.Seed(t)
	dest := filepath.Join(t.TempDir(), "lake", "fundsvc")
	sink, err := export.OpenSink(dest, nil)
	if err != nil {
		t.Fatal(err)
	}
	runExport(t, e, sink, nil)

	dirs, files := 0, 0
	err = filepath.WalkDir(filepath.Dir(dest), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = fs.ModeDir | 0o700
			dirs++
		} else {
			files++
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The demo exports every dataset: a data, a symlink and a DDL file
	// each, and the manifest.
	if files < 3*len(export.Datasets)+1 || dirs < 10 {
		t.Fatalf("walked %d directories and %d files; the export wrote less than expected", dirs, files)
	}
}
