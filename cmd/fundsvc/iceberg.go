package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/export/iceberg"
)

// The export formats.
const (
	formatHive    = "hive"
	formatIceberg = "iceberg"
)

// icebergFlags select the Iceberg catalog; each falls back to its
// environment variable, then to the default.
type icebergFlags struct {
	catalog, uri, warehouse, namespace, commit string
}

func (f *exportFlags) registerFormat(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", formatHive, "hive (symlink tables and a manifest) or iceberg (FUNDSVC_EXPORT_FORMAT)")
	fs.StringVar(&f.iceberg.catalog, "iceberg-catalog", "", "sql (default: a local SQLite file), glue or rest (FUNDSVC_ICEBERG_CATALOG)")
	fs.StringVar(&f.iceberg.uri, "iceberg-uri", "", "the SQLite file (default "+iceberg.DefaultSQLiteFile+") or the REST catalog's URL (FUNDSVC_ICEBERG_URI)")
	fs.StringVar(&f.iceberg.warehouse, "iceberg-warehouse", "", "the REST catalog's warehouse, for S3 Tables the table bucket ARN (FUNDSVC_ICEBERG_WAREHOUSE)")
	fs.StringVar(&f.iceberg.namespace, "iceberg-namespace", "", "namespace (Glue database) of the tables (default "+iceberg.DefaultNamespace+"; FUNDSVC_ICEBERG_NAMESPACE)")
	fs.StringVar(&f.iceberg.commit, "iceberg-commit", "", "atomic (default: all tables in one commit; sql, and rest with transactions/commit) or per-table "+
		"(each table on its own, for glue: a run failing between tables leaves them on different runs until the date is exported again; FUNDSVC_ICEBERG_COMMIT)")
}

// commitMode is the commit mode the flag or the environment selects.
func (f exportFlags) commitMode(getenv func(string) string) (iceberg.CommitMode, error) {
	mode := f.iceberg.commit
	if mode == "" {
		mode = getenv("FUNDSVC_ICEBERG_COMMIT")
	}
	m, err := iceberg.ParseCommitMode(mode)
	if err != nil {
		return "", fmt.Errorf("--iceberg-commit: %w", err)
	}
	return m, nil
}

// catalogConfig is the catalog the flags and the environment select, with
// the export's S3 settings for the data and metadata files.
func (f exportFlags) catalogConfig(cfg config.Config, getenv func(string) string) iceberg.CatalogConfig {
	pick := func(flag, env string) string {
		if flag != "" {
			return flag
		}
		return getenv(env)
	}
	region := cfg.S3Region
	if region == "" {
		region = cfg.Region
	}
	c := iceberg.CatalogConfig{
		Kind:       pick(f.iceberg.catalog, "FUNDSVC_ICEBERG_CATALOG"),
		URI:        pick(f.iceberg.uri, "FUNDSVC_ICEBERG_URI"),
		Warehouse:  pick(f.iceberg.warehouse, "FUNDSVC_ICEBERG_WAREHOUSE"),
		Namespace:  pick(f.iceberg.namespace, "FUNDSVC_ICEBERG_NAMESPACE"),
		Region:     region,
		S3Endpoint: cfg.S3Endpoint, S3PathStyle: cfg.S3PathStyle,
	}
	if p := envCredentials(getenv); p != nil {
		if v, err := p.Retrieve(context.Background()); err == nil {
			c.AccessKey, c.SecretKey = v.AccessKeyID, v.SecretAccessKey
		}
	}
	return c
}

// checkFormat validates --format, which may also come from the environment.
func (f *exportFlags) checkFormat(getenv func(string) string) error {
	if f.format == formatHive && getenv("FUNDSVC_EXPORT_FORMAT") != "" {
		f.format = getenv("FUNDSVC_EXPORT_FORMAT")
	}
	if f.format != formatHive && f.format != formatIceberg {
		return fmt.Errorf("--format %q: want hive or iceberg", f.format)
	}
	return nil
}

// runIcebergExport runs the export and commits it to the Iceberg tables.
func runIcebergExport(ctx context.Context, ecfg export.Config, cfg config.Config, f exportFlags, getenv func(string) string, log *slog.Logger) (*export.Manifest, error) {
	mode, err := f.commitMode(getenv)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	cat, err := iceberg.OpenCatalog(ctx, f.catalogConfig(cfg, getenv))
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
				log.Info("iceberg table committed", "dataset", t.Dataset, "snapshot_id", t.SnapshotID, "files", t.Files, "rows", t.Rows)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return res.Manifest, nil
}

// printIcebergDDL prints what Athena needs to query the Iceberg tables.
func printIcebergDDL(cfg config.Config, f exportFlags, getenv func(string) string, stdout io.Writer) error {
	ctx := context.Background()
	cat, err := iceberg.OpenCatalog(ctx, f.catalogConfig(cfg, getenv))
	if err != nil {
		return fmt.Errorf("ddl: %w", err)
	}
	defer cat.Close()
	ddl, err := iceberg.DDL(ctx, cat)
	if err != nil {
		return fmt.Errorf("ddl: %w", err)
	}
	_, err = io.WriteString(stdout, ddl)
	return err
}
