//go:build unix

package iceberg

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fundsvc/fundsvc/export"
)

// TestLocalIcebergExportIsPrivate runs an Iceberg export into a local
// directory that does not exist yet, with a umask that masks nothing, and
// walks it: every directory is 0700 and every file 0600, the data files
// the export's sink writes and the metadata and manifests (whose column
// bounds hold amounts and IDs) iceberg-go writes alike, as a Hive export's
// are. (The package's tests run one at a time, so changing the process's
// umask here disturbs no other test.)
func TestLocalIcebergExportIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })

	s := newService(t)
	s.putDocument(t, "DOC_1", "FUND_A", 3, "10")
	dest := filepath.Join(t.TempDir(), "lake", "iceberg")
	sink, err := export.OpenSink(dest, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat := newCatalog(t, nil, filepath.Join(t.TempDir(), "catalog.db"))
	if _, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat}); err != nil {
		t.Fatal(err)
	}

	var metadata, manifests, data int
	err = filepath.WalkDir(filepath.Dir(dest), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		switch name := d.Name(); {
		case d.IsDir():
			want = fs.ModeDir | 0o700
		case strings.HasSuffix(name, ".metadata.json"):
			metadata++
		case strings.HasSuffix(name, ".avro"):
			manifests++
		case strings.HasSuffix(name, ".parquet"):
			data++
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if metadata == 0 || manifests == 0 || data == 0 {
		t.Fatalf("walked %d metadata files, %d manifests and manifest lists, %d data files: the export wrote less than expected", metadata, manifests, data)
	}
}
