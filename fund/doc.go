// Package fund is the domain of fundsvc. It owns documents (capital call
// notices, distribution notices, capital account statements) and their
// versions, and positions: one fund plus one investor. It owns the items a
// document reports for each position (capital call, distribution, unfunded
// commitment), whose line items are declared once, in lines.go. Compare
// says what a version changed against the one it replaced, per position
// and item type; a voided version is a Document with Voided set. The
// package also owns the event feed (an Event per committed version, and the
// cursor, filter and page of a read of it), webhook endpoints and their
// deliveries, exact money, dates, IDs, validation, and the error vocabulary
// every other package answers in.
//
// It knows nothing of where documents are kept or how they travel: it
// imports no other package of the module, and neither DynamoDB nor HTTP
// (architecture_test.go holds that). Package store keeps these types in
// DynamoDB, package wire gives them their JSON form, package positions
// computes over them.
package fund
