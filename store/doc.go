// Package store keeps fundsvc's documents in one DynamoDB table: the only
// package that speaks DynamoDB (architecture_test.go holds that).
//
// It owns the table's layout and hides it: the key builders and the stored
// Item (keys.go, item.go, itemcodec.go: every position item kind, a capital
// account statement's ILPA lines each an attribute, typed transaction lines
// a list of maps), the commit protocol that makes a
// version of any size visible at once (store.go, claims.go;
// docs/commit-protocol.md) and its requests (plan.go: WritePlan gives them
// to tests that write many versions fast, and the least the table allows
// for a version to the benchmark), each step a Phase whose time, requests
// and items are counted (phases.go, WritePhases); Write, which also answers what a
// restatement changed (fund.Compare), and Void (void.go), which writes a
// version with no position marked voided through the same protocol;
// idempotency records (idempotency.go), table
// creation, the reads behind every route (read.go, positions.go, with a
// document's statements for its reconciliation; viewer.go
// answers a document of a fund the caller does not cover as absent), the
// export's typed stream of committed records (stream.go) and its lease.
// Every request asks DynamoDB for the capacity it consumed, summed per
// operation (capacity.go): Store.Consumed reads it, in read and write
// units, and ItemSize gives an item's size as DynamoDB counts it.
// Callers pass and get domain types (package fund); page keys are opaque
// bytes (PageKey); throttling and refused conditions come back as
// *fund.Error, never as AWS errors.
package store
