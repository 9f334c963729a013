package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fundsvc/fundsvc/export"
)

// DDL is what Athena needs to query the tables of c, read from the
// catalog: Athena reads Iceberg tables through the Glue Data Catalog. A
// Glue catalog's tables are already there (the export created them, in
// the Glue database named by the namespace), so DDL lists them and a
// query. A SQL or REST catalog's tables are registered in Glue by their
// current metadata file, with one `aws glue create-table` each (Athena has
// no statement that adopts existing Iceberg metadata); that registration
// reads the snapshot current when it was made, and later commits of the
// other catalog are not seen until it is made again (update-table).
func DDL(ctx context.Context, c *Catalog) (string, error) {
	var b strings.Builder
	kind := c.props["type"]
	fmt.Fprintf(&b, "-- fundsvc Iceberg tables (export schema version %d), %s catalog, namespace %s\n", export.SchemaVersion, kind, c.namespace)
	if kind == KindGlue {
		fmt.Fprintf(&b, "-- Catalogued in the Glue database %s: Athena reads them as they are.\n", c.namespace)
	} else {
		fmt.Fprintf(&b, "-- Register each table in the Glue database %s at its current metadata file:\n", c.namespace)
		fmt.Fprintf(&b, "-- aws glue create-database --database-input '{\"Name\":\"%s\"}'\n", c.namespace)
	}
	for _, name := range export.Datasets {
		tbl, err := c.cat.LoadTable(ctx, c.ident(name))
		if err != nil {
			return "", fmt.Errorf("iceberg: load %s: %w (run fundsvc export --format iceberg first)", name, err)
		}
		if kind != KindGlue {
			input, err := json.Marshal(map[string]any{
				"Name": name, "TableType": "EXTERNAL_TABLE",
				"Parameters": map[string]string{"table_type": "ICEBERG", "metadata_location": tbl.MetadataLocation()},
			})
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "aws glue create-table --database-name %s --table-input '%s'\n", c.namespace, input)
		}
	}
	fmt.Fprintf(&b, "-- Then, in Athena:\n")
	fmt.Fprintf(&b, "--   SELECT * FROM \"%s\".\"capital_calls\";\n", c.namespace)
	fmt.Fprintf(&b, "--   SELECT snapshot_id, committed_at, summary['%s'] FROM \"%s\".\"capital_calls$snapshots\";\n", SnapshotDateProperty, c.namespace)
	fmt.Fprintf(&b, "--   SELECT * FROM \"%s\".\"capital_calls\" FOR VERSION AS OF <snapshot_id>;\n", c.namespace)
	fmt.Fprintf(&b, "--   SELECT * FROM \"%s\".\"capital_calls\" FOR TIMESTAMP AS OF TIMESTAMP '2026-11-23 00:00:00 UTC';\n", c.namespace)
	return b.String(), nil
}
