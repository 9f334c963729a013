// Package fund is the domain of fundsvc: documents (capital call notices,
// distribution notices, capital account statements) and their versions,
// positions (one fund plus one investor) and the items a document reports
// for each (capital call, distribution, unfunded commitment, with their line
// items declared once in lines.go), what a version changed against the one
// it replaced (changes.go: Compare, per position and item type; a voided
// version is a Document with Voided set), exact money, dates, IDs,
// validation and the error vocabulary every other package answers in.
//
// It knows nothing of where documents are kept or how they travel: it
// imports no other package of the module, and neither DynamoDB nor HTTP
// (architecture_test.go holds that). Package store keeps these types in
// DynamoDB, package wire gives them their JSON form, package positions
// computes over them.
package fund
