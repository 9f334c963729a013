package iceberg

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icesql "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/klauspost/compress/zstd"
)

// sqlCatalog is iceberg-go's SQL catalog with a multi-table commit of this
// project's own: iceberg-go's SQL catalog commits one table at a time, and
// the Java JDBC catalog keeps each table's metadata pointer in the same
// iceberg_tables row, so switching every pointer in one database
// transaction is what other readers of the file see as one step.
type sqlCatalog struct {
	*icesql.Catalog
	db   *sql.DB
	name string // the catalog_name of the rows
	// typed: iceberg_tables has the iceberg_type column (iceberg-go's V1
	// schema); a legacy V0 file has not, and its UPDATE leaves it out.
	typed bool
}

var _ catalog.TransactionalCatalog = (*sqlCatalog)(nil)

// openSQLCatalog opens the SQLite catalog of props, keeping the database
// handle the multi-table commit needs.
func openSQLCatalog(ctx context.Context, name string, props iceberg.Properties) (*sqlCatalog, error) {
	db, err := sql.Open(props[icesql.DriverKey], strings.TrimPrefix(props["uri"], "sql://"))
	if err != nil {
		return nil, err
	}
	cat, err := icesql.NewCatalog(name, db, icesql.SupportedDialect(props[icesql.DialectKey]), props)
	if err != nil {
		db.Close()
		return nil, err
	}
	var columns int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('iceberg_tables') WHERE name = 'iceberg_type'`).Scan(&columns)
	if err != nil {
		cat.Close()
		db.Close()
		return nil, fmt.Errorf("read the catalog's schema: %w", err)
	}
	return &sqlCatalog{Catalog: cat, db: db, name: name, typed: columns == 1}, nil
}

// Close releases the catalog and its database.
func (c *sqlCatalog) Close() error {
	return errors.Join(c.Catalog.Close(), c.db.Close())
}

// stagedCommit is one table's new metadata, written, awaiting the switch
// of the table's pointer from previous to location.
type stagedCommit struct {
	namespace, name    string
	previous, location string
	fs                 iceio.IO
}

// CommitTransaction commits every table of commits, or none: each table's
// requirements are checked against its current metadata and its new
// metadata file is written, then one database transaction moves every
// table's pointer, each on the condition that it still names the metadata
// the commit was built on. It returns an error wrapping
// table.ErrCommitFailed when a requirement fails or a pointer moved; the
// metadata files written for a commit that did not happen are removed.
func (c *sqlCatalog) CommitTransaction(ctx context.Context, commits []table.TableCommit) error {
	if len(commits) == 0 {
		return catalog.ErrEmptyCommitList
	}
	staged, err := c.stageAll(ctx, commits)
	if err != nil {
		return err
	}
	return c.switchAll(ctx, staged)
}

// stageAll stages every commit (see stage), or none: on an error it
// removes the files written.
func (c *sqlCatalog) stageAll(ctx context.Context, commits []table.TableCommit) ([]stagedCommit, error) {
	var staged []stagedCommit
	for _, tc := range commits {
		s, err := c.stage(ctx, tc)
		if err != nil {
			discard(staged)
			return nil, err
		}
		if s != nil {
			staged = append(staged, *s)
		}
	}
	return staged, nil
}

// switchAll moves the pointers of every staged table in one database
// transaction, or none; when none moved, it removes the staged files.
func (c *sqlCatalog) switchAll(ctx context.Context, staged []stagedCommit) error {
	if len(staged) == 0 {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		discard(staged)
		return err
	}
	for _, s := range staged {
		if err := c.swap(ctx, tx, s); err != nil {
			tx.Rollback()
			discard(staged)
			return err
		}
	}
	// A COMMIT that fails has not committed, except on errors that leave
	// it unknown: the files stay, in case a table names them.
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit the catalog transaction: %w", err)
	}
	return nil
}

// discard removes staged metadata files, as best it can: a file left
// behind is an orphan no table names.
func discard(staged []stagedCommit) {
	for _, s := range staged {
		s.fs.Remove(s.location)
	}
}

// stage checks tc's requirements on its table's current metadata and
// writes the table's new metadata file, as iceberg-go's CommitTable does
// for one table. A commit without updates stages nothing.
func (c *sqlCatalog) stage(ctx context.Context, tc table.TableCommit) (*stagedCommit, error) {
	if err := catalog.ValidateTableIdentifier(tc.Identifier); err != nil {
		return nil, err
	}
	namespace, err := namespaceKey(catalog.NamespaceFromIdent(tc.Identifier))
	if err != nil {
		return nil, err
	}
	name := strings.Join(tc.Identifier, ".")
	current, err := c.LoadTable(ctx, tc.Identifier)
	if err != nil {
		return nil, err
	}
	for _, r := range tc.Requirements {
		if err := r.Validate(current.Metadata()); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", table.ErrCommitFailed, name, err)
		}
	}
	if len(tc.Updates) == 0 {
		return nil, nil
	}
	version := metadataVersion(current.MetadataLocation())
	if version < 0 {
		return nil, fmt.Errorf("%s: metadata file %s has no version", name, current.MetadataLocation())
	}
	updated, err := table.UpdateTableMetadata(current.Metadata(), tc.Updates, current.MetadataLocation())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	provider, err := table.LoadLocationProvider(updated.Location(), updated.Properties())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	location, err := provider.NewTableMetadataFileLocation(version + 1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fs, err := current.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("%s: its file system cannot write", name)
	}
	data, err := encodeMetadata(updated, updated.Properties().Get(table.MetadataCompressionKey, table.MetadataCompressionDefault))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := wfs.WriteFile(location, data); err != nil {
		return nil, fmt.Errorf("%s: write %s: %w", name, location, err)
	}
	return &stagedCommit{namespace: namespace, name: catalog.TableNameFromIdent(tc.Identifier),
		previous: current.MetadataLocation(), location: location, fs: fs}, nil
}

// swap moves s's pointer inside tx with iceberg-go's CommitTable's UPDATE:
// the same columns, and the same conditions (the row still names the
// previous metadata, and is a table's).
func (c *sqlCatalog) swap(ctx context.Context, tx *sql.Tx, s stagedCommit) error {
	query := `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?`
	args := []any{s.location, s.previous}
	if c.typed {
		query += `, iceberg_type = ?`
		args = append(args, icesql.TableType)
	}
	query += ` WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`
	args = append(args, c.name, s.namespace, s.name, s.previous)
	if c.typed {
		query += ` AND (iceberg_type = ? OR iceberg_type IS NULL)`
		args = append(args, icesql.TableType)
	}
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("update %s.%s: %w", s.namespace, s.name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update %s.%s: %w", s.namespace, s.name, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: table %s.%s: its metadata moved underneath this commit", table.ErrCommitFailed, s.namespace, s.name)
	}
	return nil
}

// namespaceKey is the table_namespace of a one-level namespace, as
// iceberg-go's SQL catalog stores it: the name itself. Names that catalog
// encodes (with a dot, or its encoding's marker) are refused.
func namespaceKey(ns table.Identifier) (string, error) {
	if len(ns) != 1 || strings.Contains(ns[0], ".") || strings.Contains(ns[0], "__iceberg_namespace_v1__:") {
		return "", fmt.Errorf("namespace %v: a multi-table commit takes a one-level namespace without dots", ns)
	}
	return ns[0], nil
}

// metadataFileName is iceberg-go's pattern of metadata file names,
// <version>-<uuid>[.<codec>].metadata.json, or the legacy v<version>.
var metadataFileName = regexp.MustCompile(`^(?:(\d+)-[\w-]{36}(?:\.\w+)?|v(\d+)(?:\.gz)?)\.metadata\.json$`)

// metadataVersion is the version in a metadata file's name, or -1.
func metadataVersion(location string) int {
	m := metadataFileName.FindStringSubmatch(location[strings.LastIndex(location, "/")+1:])
	if m == nil {
		return -1
	}
	v, err := strconv.Atoi(m[1] + m[2])
	if err != nil {
		return -1
	}
	return v
}

// encodeMetadata is metadata as a file with the codec
// write.metadata.compression-codec names.
func encodeMetadata(metadata table.Metadata, codec string) ([]byte, error) {
	var b bytes.Buffer
	var z io.WriteCloser // the codec's writer; none for "none"
	switch codec {
	case table.MetadataCompressionCodecNone:
	case table.MetadataCompressionCodecGzip:
		z = gzip.NewWriter(&b)
	case table.MetadataCompressionCodecZstd:
		enc, err := zstd.NewWriter(&b)
		if err != nil {
			return nil, err
		}
		z = enc
	default:
		return nil, fmt.Errorf("unsupported write metadata compression codec: %s", codec)
	}
	var w io.Writer = &b
	if z != nil {
		w = z
	}
	if err := json.NewEncoder(w).Encode(metadata); err != nil {
		return nil, err
	}
	if z != nil {
		if err := z.Close(); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}
