// Package icebergcli is the Iceberg half of fundsvc's command line: the
// publisher that cmd/fundsvc-iceberg gives the command line (cli.Iceberg),
// which commits an export's files to Apache Iceberg tables and describes
// them for Athena (export/iceberg). It is a package of its own so that
// cmd/fundsvc, which does not import it, links none of iceberg-go, Arrow,
// SQLite or Glue.
package icebergcli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/export/iceberg"
)

// Publisher is the Iceberg publisher (cli.Iceberg).
type Publisher struct{}

// CatalogDir is the directory of a local export's default SQL catalog,
// under the destination; CatalogFile its SQLite file.
const (
	CatalogDir  = "_iceberg"
	CatalogFile = "catalog.db"
)

// catalogConfig is the catalog cfg selects, with the export's S3 settings
// for the data and metadata files. The SQL catalog's default file is
// DEST/_iceberg/catalog.db beside a local export dest, created private (the
// directory 0700, the file 0600, like the export's own files) when create
// is set; an export to S3 must name its file (it would otherwise land in
// whatever directory the command ran in, and the next run, elsewhere,
// would not find it).
func catalogConfig(ctx context.Context, cfg config.Config, dest string, creds aws.CredentialsProvider, create bool) (iceberg.CatalogConfig, error) {
	region := cmp.Or(cfg.S3Region, cfg.Region)
	c := iceberg.CatalogConfig{
		Kind: cfg.IcebergCatalog, URI: cfg.IcebergURI, Warehouse: cfg.IcebergWarehouse, Namespace: cfg.IcebergNamespace,
		Region: region, S3Endpoint: cfg.S3Endpoint, S3PathStyle: cfg.S3PathStyle,
	}
	if creds != nil {
		if v, err := creds.Retrieve(ctx); err == nil {
			c.AccessKey, c.SecretKey = v.AccessKeyID, v.SecretAccessKey
		}
	}
	if (c.Kind == "" || c.Kind == iceberg.KindSQL) && c.URI == "" {
		file, err := defaultCatalogFile(dest, create)
		if err != nil {
			return c, err
		}
		c.URI = file
	}
	return c, nil
}

// defaultCatalogFile is DEST/_iceberg/catalog.db for a local dest. With
// create it makes the directory (0700) and an empty file (0600) if they are
// missing; without, it refuses a catalog that does not exist.
func defaultCatalogFile(dest string, create bool) (string, error) {
	if strings.Contains(dest, "://") {
		return "", fmt.Errorf("an export to %s keeps its SQL catalog where you say: name a SQLite file the next run finds again "+
			"with --iceberg-uri FILE (FUNDSVC_ICEBERG_URI), or use --iceberg-catalog glue or rest", dest)
	}
	dir := filepath.Join(dest, CatalogDir)
	file := filepath.Join(dir, CatalogFile)
	if !create {
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no Iceberg catalog at %s: run fundsvc export --format iceberg with this destination first, or name the catalog with --iceberg-uri", file)
		}
		return file, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("iceberg catalog: %w", err)
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("iceberg catalog: %w", err)
	}
	return file, f.Close()
}

// Export runs the export and commits it to the Iceberg tables, logging
// each commit.
func (Publisher) Export(ctx context.Context, ecfg export.Config, cfg config.Config, creds aws.CredentialsProvider, log *slog.Logger) (*export.Manifest, error) {
	mode, err := iceberg.ParseCommitMode(cfg.IcebergCommit)
	if err != nil {
		return nil, fmt.Errorf("export: --iceberg-commit: %w", err)
	}
	cc, err := catalogConfig(ctx, cfg, cfg.ExportDest, creds, true)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	cat, err := iceberg.OpenCatalog(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer cat.Close()
	res, err := iceberg.Run(ctx, iceberg.Config{
		Export: ecfg, Catalog: cat, Commit: mode,
		OnCommit: func(e iceberg.CommitEvent) {
			datasets := make([]string, len(e.Tables))
			for i, t := range e.Tables {
				datasets[i] = t.Dataset
			}
			if e.Refused {
				log.Warn("iceberg commit refused: another commit came first; planning again", "datasets", datasets, "attempt", e.Attempt)
				return
			}
			log.Info("iceberg commit", "mode", mode, "attempt", e.Attempt, "datasets", datasets)
			for _, t := range e.Tables {
				if len(t.SchemaChanges) > 0 {
					log.Info("iceberg table schema evolved to the export's schema version", "dataset", t.Dataset,
						"schema_version", export.SchemaVersion, "changes", t.SchemaChanges)
				}
				log.Info("iceberg table committed", "dataset", t.Dataset, "snapshot_id", t.SnapshotID, "files", t.Files, "rows", t.Rows)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return res.Manifest, nil
}

// DDL writes what Athena needs to query the Iceberg tables of the catalog
// of the snapshots at location.
func (Publisher) DDL(ctx context.Context, cfg config.Config, location string, creds aws.CredentialsProvider, w io.Writer) error {
	cc, err := catalogConfig(ctx, cfg, location, creds, false)
	if err != nil {
		return err
	}
	cat, err := iceberg.OpenCatalog(ctx, cc)
	if err != nil {
		return err
	}
	defer cat.Close()
	ddl, err := iceberg.DDL(ctx, cat)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, ddl)
	return err
}
