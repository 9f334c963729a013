package iceberg

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/glue" // registers "glue"
	"github.com/apache/iceberg-go/catalog/rest"
	icesql "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// data and metadata files
	"github.com/apache/iceberg-go/table"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"
)

// The catalog kinds.
const (
	KindSQL  = "sql"  // a SQL catalog on a local SQLite file: works with no cloud
	KindGlue = "glue" // the AWS Glue Data Catalog, which Athena reads
	KindREST = "rest" // an Iceberg REST catalog, such as S3 Tables'
)

// DefaultNamespace holds the tables unless CatalogConfig says otherwise.
const DefaultNamespace = "fundsvc"

// DefaultSQLiteFile is the SQL catalog's file unless CatalogConfig says
// otherwise.
const DefaultSQLiteFile = "fundsvc-iceberg.db"

// CatalogConfig selects and configures the catalog the tables live in.
type CatalogConfig struct {
	// Kind is KindSQL (default), KindGlue or KindREST.
	Kind string
	// URI is the SQLite file for KindSQL (default DefaultSQLiteFile), the
	// REST catalog's base URL for KindREST (for S3 Tables,
	// https://s3tables.<region>.amazonaws.com/iceberg); unused for Glue.
	URI string
	// Warehouse is the REST catalog's warehouse (for S3 Tables, the table
	// bucket's ARN).
	Warehouse string
	// Namespace holds the tables (Glue: the database; default
	// DefaultNamespace).
	Namespace string
	// Region is the AWS region of Glue, of a SigV4-signed REST catalog and
	// of S3.
	Region string
	// S3Endpoint, S3PathStyle and the keys address an S3-compatible store
	// (MinIO); empty means AWS and the default credential chain.
	S3Endpoint  string
	S3PathStyle bool
	AccessKey   string
	SecretKey   string
	// Extra are further iceberg-go catalog properties, passed as they are
	// (for example "rest.sigv4-enabled" or "glue.id").
	Extra map[string]string
}

// Catalog is an open catalog and the namespace of the tables.
type Catalog struct {
	cat       catalog.Catalog
	namespace string
	props     iceberg.Properties // the FileIO properties of the tables
}

// Properties are the iceberg-go properties of c: the catalog's and the
// FileIO's. It is what OpenCatalog passes to catalog.Load.
func (c CatalogConfig) Properties() (iceberg.Properties, error) {
	kind := cmp.Or(c.Kind, KindSQL)
	p := iceberg.Properties{"type": kind}
	switch kind {
	case KindSQL:
		file := cmp.Or(c.URI, DefaultSQLiteFile)
		// A second process waits for SQLite's write lock instead of
		// failing at once; the commit itself is a compare-and-swap.
		p["uri"] = "file:" + file + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
		p[icesql.DriverKey] = "sqlite"
		p[icesql.DialectKey] = string(icesql.SQLite)
	case KindREST:
		if c.URI == "" {
			return nil, errors.New("iceberg: a REST catalog needs a URI")
		}
		p["uri"] = c.URI
		if c.Warehouse != "" {
			p["warehouse"] = c.Warehouse
		}
		if c.Region != "" {
			p["rest.signing-region"] = c.Region
		}
	case KindGlue:
		if c.Region != "" {
			p["glue.region"] = c.Region
		}
	default:
		return nil, fmt.Errorf("iceberg: catalog %q: want sql, glue or rest", c.Kind)
	}
	if c.Region != "" {
		p[iceio.S3Region] = c.Region
	}
	if c.S3Endpoint != "" {
		p[iceio.S3EndpointURL] = c.S3Endpoint
		p[iceio.S3ForceVirtualAddressing] = fmt.Sprint(!c.S3PathStyle)
	}
	if c.AccessKey != "" {
		p[iceio.S3AccessKeyID] = c.AccessKey
		p[iceio.S3SecretAccessKey] = c.SecretKey
	}
	for k, v := range c.Extra {
		p[k] = v
	}
	return p, nil
}

// catalogName is the catalog's name, which the SQL catalog stores in
// every row.
const catalogName = "fundsvc"

// OpenCatalog opens the catalog c names and makes sure its namespace
// exists. The caller must Close it.
func OpenCatalog(ctx context.Context, c CatalogConfig) (*Catalog, error) {
	props, err := c.Properties()
	if err != nil {
		return nil, err
	}
	var cat catalog.Catalog
	if props["type"] == KindSQL {
		cat, err = openSQLCatalog(ctx, catalogName, props)
	} else {
		cat, err = catalog.Load(ctx, catalogName, props)
	}
	if err != nil {
		return nil, fmt.Errorf("iceberg: open %s catalog: %w", props["type"], err)
	}
	ns := cmp.Or(c.Namespace, DefaultNamespace)
	if strings.Contains(ns, ".") {
		return nil, fmt.Errorf("iceberg: namespace %q: one level only", ns)
	}
	err = cat.CreateNamespace(ctx, catalog.ToIdentifier(ns), nil)
	if err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		closeCatalog(cat)
		return nil, fmt.Errorf("iceberg: create namespace %s: %w", ns, err)
	}
	return &Catalog{cat: cat, namespace: ns, props: props}, nil
}

// Namespace is where the tables are.
func (c *Catalog) Namespace() string { return c.namespace }

// Close releases the catalog (the SQL catalog's database).
func (c *Catalog) Close() error { return closeCatalog(c.cat) }

func closeCatalog(cat catalog.Catalog) error {
	if cl, ok := cat.(interface{ Close() error }); ok {
		return cl.Close()
	}
	return nil
}

func (c *Catalog) ident(dataset string) []string { return catalog.ToIdentifier(c.namespace, dataset) }

// checkMultiTableCommit returns nil if c commits several tables at once:
// the SQL catalog (with this package's transaction), and a REST catalog
// whose server offers POST /v1/{prefix}/transactions/commit. Otherwise it
// says why not.
func (c *Catalog) checkMultiTableCommit(ctx context.Context) error {
	tc, ok := c.cat.(catalog.TransactionalCatalog)
	if !ok {
		return fmt.Errorf("iceberg-go's %s catalog has no multi-table commit", c.cat.CatalogType())
	}
	if c.cat.CatalogType() != catalog.REST {
		return nil
	}
	// iceberg-go's REST catalog checks that the server advertised the
	// endpoint before it looks at the commits, so a commit without an
	// identifier is answered with no request sent: ErrEndpointNotSupported,
	// or ErrMissingIdentifier when the endpoint is there.
	err := tc.CommitTransaction(ctx, []table.TableCommit{{}})
	switch {
	case errors.Is(err, catalog.ErrMissingIdentifier):
		return nil
	case errors.Is(err, rest.ErrEndpointNotSupported):
		return errors.New("the REST catalog's server does not offer POST /v1/{prefix}/transactions/commit")
	default:
		return fmt.Errorf("the REST catalog answered a check of its multi-table commit with %v", err)
	}
}
