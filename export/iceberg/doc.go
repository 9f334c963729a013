// Package iceberg publishes the nightly export as Apache Iceberg tables
// (format v2), one per dataset, through apache/iceberg-go.
//
// The rows are written by package export, unchanged: the same scan, sort,
// join and Parquet writer as the Hive-style snapshot, into the same
// destination. What changes is how a run is published. Instead of symlink
// files and a manifest of this project's own, each dataset's files are
// registered in its Iceberg table by an overwrite that replaces the
// table's previous files with the run's. The overwrites of all the tables
// are one atomic multi-table catalog commit: every table reads the new
// run, or none does, and a reader of a table sees its previous snapshot or
// the new one, never a mix. Every earlier run stays readable by time
// travel (FOR VERSION AS OF, FOR TIMESTAMP AS OF) instead of as per-date
// copies. Each snapshot's summary carries the run's snapshot date
// (fundsvc.snapshot-date) and run ID (fundsvc.run-id).
//
// The Parquet files are registered (Transaction.AddFiles and
// ReplaceDataFiles) rather than re-encoded through Arrow. That keeps one
// writer for both formats and reads each file's footer once for its column
// statistics. The files carry no Parquet field IDs; iceberg-go sets the
// table's name mapping (schema.name-mapping.default), which maps their
// columns to the schema's IDs by name. Money is DECIMAL(19,4) (a 9-byte
// FIXED_LEN_BYTE_ARRAY, as Iceberg stores it), dates DATE, instants
// timestamptz. The files store instants in milliseconds, not the
// microseconds Iceberg writers use. Readers decode them by their Parquet
// annotation, but iceberg-go would record their bounds as microseconds, so
// the tables keep only value counts for those columns
// (write.metadata.metrics.column.<name> = counts).
//
// A table created by an earlier schema version of the export
// (export.SchemaVersion, recorded in the table property
// fundsvc.schema_version) follows the current schema in the run's own
// commit. Added columns are added, declared renames and removals are made
// by field ID, and any other change is refused before the export writes
// anything. A dataset a version added gets its table.
//
// A run publishes from inside export's own publish step, while it holds
// the export lease of its date. The tables are committed when export
// writes the run's manifest, before it deletes the files of earlier runs
// of the date, and those deletions spare every file a snapshot of a table
// still lists. The catalog keeps two runs that commit at once apart: the
// second commit is refused as a whole if another moved any of its tables
// first. The run then loads every table again, plans every overwrite anew
// and retries, up to Config.MaxAttempts, after which it reports the
// refusal. Nothing is lost either way. A table's current snapshot is its
// latest date's: a run of an earlier date than the one a table reads is
// refused (ErrLaterRunCurrent), also when that later run commits while
// this one is being planned.
//
// Catalogs, chosen by CatalogConfig: a SQL catalog on a local SQLite file
// (the default; works with no cloud), AWS Glue (which Athena reads) and an
// Iceberg REST catalog (such as S3 Tables). The SQL catalog commits
// atomically through this package's transaction, since iceberg-go's has no
// multi-table commit; a REST catalog does when its server offers the
// transactions/commit endpoint. Glue has no multi-table commit: a run
// commits to it only in CommitPerTable mode, chosen explicitly, where a
// run that fails between two tables leaves them on different runs until
// the date is exported again. DDL prints what Athena needs. docs/export.md
// describes the layout and time travel.
package iceberg
