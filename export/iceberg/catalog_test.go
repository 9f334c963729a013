package iceberg

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/fundsvc/fundsvc/export"
)

// TestSchemaTypes holds the tables' column types to the issue's: money
// DECIMAL(19,4), dates DATE, instants timestamptz, and each timestamptz
// column kept to counts in the manifests (its files store milliseconds).
func TestSchemaTypes(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range export.Datasets {
		s, err := Schema(name)
		if err != nil {
			t.Fatal(err)
		}
		props := tableProperties(s)
		for _, f := range s.Fields() {
			var want iceberg.Type
			switch {
			case f.Name == "amount" || f.Name == "ending_nav" || f.Name == "beginning_nav":
				want = iceberg.DecimalTypeOf(19, 4)
			case f.Name == "as_of" || strings.HasSuffix(f.Name, "_date") && f.Name != "snapshot_date":
				want = iceberg.PrimitiveTypes.Date
			case f.Name == "created_at":
				want = iceberg.PrimitiveTypes.TimestampTz
				if props[table.MetricsModeColumnConfPrefix+".created_at"] != "counts" {
					t.Errorf("%s.created_at: metrics mode %q, want counts", name, props[table.MetricsModeColumnConfPrefix+".created_at"])
				}
			default:
				continue
			}
			seen[want.String()] = true
			if !f.Type.Equals(want) {
				t.Errorf("%s.%s: %s, want %s", name, f.Name, f.Type, want)
			}
		}
		if props[table.PropertyFormatVersion] != "2" {
			t.Errorf("%s: format version %q, want 2", name, props[table.PropertyFormatVersion])
		}
	}
	if len(seen) != 3 {
		t.Fatalf("only %v were checked", seen)
	}
}

// TestCatalogProperties holds what each catalog kind passes to iceberg-go.
func TestCatalogProperties(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  CatalogConfig
		want map[string]string
		err  string
	}{
		{name: "the default is a SQL catalog on a SQLite file", cfg: CatalogConfig{},
			want: map[string]string{"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite", "uri": "file:" + DefaultSQLiteFile + "?"}},
		{name: "glue takes its region", cfg: CatalogConfig{Kind: "glue", Region: "eu-west-1"},
			want: map[string]string{"type": "glue", "glue.region": "eu-west-1", "s3.region": "eu-west-1"}},
		{name: "rest takes its URI and warehouse", cfg: CatalogConfig{Kind: "rest", URI: "https://s3tables.eu-west-1.amazonaws.com/iceberg", Warehouse: "arn:aws:s3tables:eu-west-1:1:bucket/b", Extra: map[string]string{"rest.sigv4-enabled": "true"}},
			want: map[string]string{"type": "rest", "uri": "https://s3tables.eu-west-1.amazonaws.com/iceberg", "warehouse": "arn:aws:s3tables:eu-west-1:1:bucket/b", "rest.sigv4-enabled": "true"}},
		{name: "MinIO is addressed by path", cfg: CatalogConfig{S3Endpoint: "http://127.0.0.1:9000", S3PathStyle: true},
			want: map[string]string{"s3.endpoint": "http://127.0.0.1:9000", "s3.force-virtual-addressing": "false"}},
		{name: "rest needs a URI", cfg: CatalogConfig{Kind: "rest"}, err: "needs a URI"},
		{name: "an unknown kind is refused", cfg: CatalogConfig{Kind: "hive"}, err: "want sql, glue or rest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.cfg.Properties()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if k == "uri" && strings.HasPrefix(p[k], v) {
					continue
				}
				if p[k] != v {
					t.Errorf("%s = %q, want %q", k, p[k], v)
				}
			}
		})
	}
}

// TestGlueAndRESTCatalogsLoad builds the Glue and REST catalogs as
// OpenCatalog does, short of AWS: Glue with static keys and no call made,
// REST against a stand-in that answers the configuration request every
// REST catalog starts with.
func TestGlueAndRESTCatalogsLoad(t *testing.T) {
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	p, err := CatalogConfig{Kind: KindGlue, Region: "eu-west-1",
		Extra: map[string]string{"glue.access-key-id": "AKIDEXAMPLE", "glue.secret-access-key": "secret"}}.Properties()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load(t.Context(), "fundsvc", p)
	if err != nil {
		t.Fatalf("glue: %v", err)
	}
	if cat.CatalogType() != catalog.Glue {
		t.Errorf("glue: loaded a %s catalog", cat.CatalogType())
	}

	asked := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/config" {
			http.NotFound(w, r)
			return
		}
		asked = r.URL.Query().Get("warehouse") == "lake"
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"defaults":{},"overrides":{}}`))
	}))
	defer srv.Close()
	p, err = CatalogConfig{Kind: KindREST, URI: srv.URL, Warehouse: "lake"}.Properties()
	if err != nil {
		t.Fatal(err)
	}
	cat, err = catalog.Load(t.Context(), "fundsvc", p)
	if err != nil {
		t.Fatalf("rest: %v", err)
	}
	if cat.CatalogType() != catalog.REST || !asked {
		t.Errorf("rest: loaded a %s catalog; asked for the warehouse's configuration: %v", cat.CatalogType(), asked)
	}
}
