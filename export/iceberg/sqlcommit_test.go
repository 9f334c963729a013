package iceberg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestSQLCatalogCommitTransaction holds the SQL catalog's multi-table
// commit to all or nothing, on two tables of a SQLite file, with a second
// connection to the file as the other writer.
func TestSQLCatalogCommitTransaction(t *testing.T) {
	// open makes tables a and b (a's metadata gzipped) in a fresh catalog
	// and returns it and another connection to its file.
	open := func(t *testing.T) (c, other *sqlCatalog) {
		t.Helper()
		dir, file := t.TempDir(), filepath.Join(t.TempDir(), "catalog.db")
		c = newCatalog(t, nil, file).cat.(*sqlCatalog)
		other = newCatalog(t, nil, file).cat.(*sqlCatalog)
		schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
		for name, props := range map[string]iceberg.Properties{
			"a": {table.MetadataCompressionKey: table.MetadataCompressionCodecGzip},
			"b": {},
		} {
			_, err := c.CreateTable(t.Context(), catalog.ToIdentifier(DefaultNamespace, name), schema,
				catalog.WithLocation(filepath.Join(dir, name)), catalog.WithProperties(props))
			if err != nil {
				t.Fatal(err)
			}
		}
		return c, other
	}
	load := func(t *testing.T, c *sqlCatalog, name string) *table.Table {
		t.Helper()
		tbl, err := c.LoadTable(t.Context(), catalog.ToIdentifier(DefaultNamespace, name))
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	// setRun plans setting the property run on a table.
	setRun := func(t *testing.T, c *sqlCatalog, name, run string) table.TableCommit {
		t.Helper()
		tx := load(t, c, name).NewTransaction()
		if err := tx.SetProperties(iceberg.Properties{"run": run}); err != nil {
			t.Fatal(err)
		}
		tc, err := tx.TableCommit()
		if err != nil {
			t.Fatal(err)
		}
		return tc
	}
	// metadataFiles are the metadata files in a table's directory.
	metadataFiles := func(t *testing.T, tbl *table.Table) []string {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(tbl.Location(), "metadata", "*.metadata.json"))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}

	t.Run("every table moves in one commit, in the codec the table asks for", func(t *testing.T) {
		c, _ := open(t)
		before := map[string]string{"a": load(t, c, "a").MetadataLocation(), "b": load(t, c, "b").MetadataLocation()}
		err := c.CommitTransaction(t.Context(), []table.TableCommit{setRun(t, c, "a", "r1"), setRun(t, c, "b", "r1")})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b"} {
			tbl := load(t, c, name)
			if tbl.Properties()["run"] != "r1" {
				t.Errorf("%s: properties %v, want run r1", name, tbl.Properties())
			}
			if metadataVersion(tbl.MetadataLocation()) != 1 {
				t.Errorf("%s: metadata %s, want version 1", name, tbl.MetadataLocation())
			}
			var previous []string
			for e := range tbl.Metadata().PreviousFiles() {
				previous = append(previous, e.MetadataFile)
			}
			if len(previous) != 1 || previous[0] != before[name] {
				t.Errorf("%s: metadata log %v, want %s", name, previous, before[name])
			}
		}
		if loc := load(t, c, "a").MetadataLocation(); !strings.HasSuffix(loc, ".gz.metadata.json") {
			t.Errorf("a: metadata %s, want it gzipped as write.metadata.compression-codec says", loc)
		}
	})

	t.Run("a failed requirement refuses every table and leaves no file", func(t *testing.T) {
		c, other := open(t)
		b := setRun(t, c, "b", "r1")
		b.Requirements = append(b.Requirements, table.AssertCurrentSchemaID(7))
		err := c.CommitTransaction(t.Context(), []table.TableCommit{setRun(t, c, "a", "r1"), b})
		if !errors.Is(err, table.ErrCommitFailed) {
			t.Fatalf("err = %v, want table.ErrCommitFailed", err)
		}
		for _, name := range []string{"a", "b"} {
			tbl := load(t, other, name)
			if _, ok := tbl.Properties()["run"]; ok || metadataVersion(tbl.MetadataLocation()) != 0 {
				t.Errorf("%s: properties %v at %s: the refused commit moved it", name, tbl.Properties(), tbl.MetadataLocation())
			}
			if files := metadataFiles(t, tbl); len(files) != 1 {
				t.Errorf("%s: metadata files %v, want only the table's first", name, files)
			}
		}
	})

	t.Run("a pointer that moved after staging rolls back every table's", func(t *testing.T) {
		c, other := open(t)
		staged, err := c.stageAll(t.Context(), []table.TableCommit{setRun(t, c, "a", "r1"), setRun(t, c, "b", "r1")})
		if err != nil {
			t.Fatal(err)
		}
		if err := other.CommitTransaction(t.Context(), []table.TableCommit{setRun(t, other, "b", "r2")}); err != nil {
			t.Fatal(err)
		}
		if err := c.switchAll(t.Context(), staged); !errors.Is(err, table.ErrCommitFailed) {
			t.Fatalf("err = %v, want table.ErrCommitFailed", err)
		}
		if a := load(t, other, "a"); metadataVersion(a.MetadataLocation()) != 0 {
			t.Errorf("a: metadata %s: its switch, made before b's failed, was not rolled back", a.MetadataLocation())
		}
		if b := load(t, other, "b"); b.Properties()["run"] != "r2" {
			t.Errorf("b: properties %v, want the other writer's", b.Properties())
		}
		for _, s := range staged {
			if _, err := os.Stat(s.location); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: the refused commit's metadata file is still there (stat: %v)", s.name, err)
			}
		}
	})
}

// TestMetadataVersion reads the version of iceberg-go's metadata file
// names, current and legacy.
func TestMetadataVersion(t *testing.T) {
	for name, want := range map[string]int{
		"s3://lake/t/metadata/00012-9a1d0b3e-58a3-4b1f-9e3c-0f3b1d2c4e5f.metadata.json":      12,
		"/lake/t/metadata/00001-9a1d0b3e-58a3-4b1f-9e3c-0f3b1d2c4e5f.gz.metadata.json":       1,
		"/lake/t/metadata/00000-9a1d0b3e-58a3-4b1f-9e3c-0f3b1d2c4e5f.zstd.metadata.json":     0,
		"/lake/t/metadata/v3.metadata.json":                                                  3,
		"/lake/t/metadata/v3.gz.metadata.json":                                               3,
		"/lake/t/metadata/00001-short.metadata.json":                                         -1,
		"/lake/t/metadata/00001-9a1d0b3e-58a3-4b1f-9e3c-0f3b1d2c4e5f.metadata.json/":         -1,
		"/lake/t/metadata/snap-1-9a1d0b3e-58a3-4b1f-9e3c-0f3b1d2c4e5f.avro":                  -1,
		"/lake/t/metadata/00001-9a1d0b3e-58a3-4b1f-9e3c-0f3b1d2c4e5f.metadata.json.previous": -1,
	} {
		if got := metadataVersion(name); got != want {
			t.Errorf("metadataVersion(%s) = %d, want %d", name, got, want)
		}
	}
}
