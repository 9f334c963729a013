// Package export writes a snapshot of the table as typed Parquet datasets
// for Athena.
//
// A full run reads the store's stream of committed records: a parallel
// Scan, the only Scan in the program. Each record feeds an external sort
// per dataset. Each dataset is then joined with the documents' commit heads
// and committed versions, so every document appears at exactly one
// committed version. The datasets of every version hold each version up to
// that one, with the instant it was committed. Rows are written as Parquet
// files rolled near a target size, and the snapshot is published only when
// every file is complete.
//
// An incremental run (Config.SinceLast) reads, instead of the Scan, the
// documents the store's change index names since the previous snapshot. It
// rewrites only the files of that snapshot that hold their rows, and names
// the others as they are.
//
// The datasets are declared once, in one table: their sorts, writers,
// Parquet schemas and Athena DDL derive from it. The package knows nothing
// of DynamoDB; keys, stored items and the commit protocol stay in package
// store. docs/export.md describes the layout and the protocol.
package export
