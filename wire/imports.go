package wire

// The outcomes of a document in an import (ImportedDocument.Outcome).
const (
	ImportReady     = "ready"     // dry run: the document has no problem and would be written
	ImportInvalid   = "invalid"   // the document has problems (listed in the report's problems); nothing of it is written
	ImportCreated   = "created"   // written as version 1
	ImportRestated  = "restated"  // written as the document's next version
	ImportUnchanged = "unchanged" // the same content as the document's latest version: nothing written
	ImportRefused   = "refused"   // the write was refused (error says why); nothing of the document is written
)

// ImportReport is the answer of POST /v1/imports: every problem of the file
// and what became of each of its documents.
type ImportReport struct {
	DryRun bool   `json:"dryRun" doc:"Whether this was a dry run (dryRun=true): nothing was written."`
	Format string `json:"format" doc:"The file's format, from its Content-Type: csv or xlsx."`
	Sheet  string `json:"sheet,omitempty" doc:"The sheet read (an XLSX file's first sheet); absent for CSV."`
	Valid  bool   `json:"valid" doc:"Whether the file has no problem: true when problems is empty."`
	ImportProblems
	Documents []ImportedDocument `json:"documents" doc:"The file's documents, in the order of their first rows, each with its outcome."`
}

// ImportProblems are the problems of a file as an answer lists them: the
// first ones, and how many more there are.
type ImportProblems struct {
	Problems     []ImportProblem `json:"problems" doc:"The file's problems at once, by row then column: every one, or the first 1,000 when there are more (moreProblems counts the rest); empty when the file is valid."`
	MoreProblems int             `json:"moreProblems" doc:"How many problems of the file problems leaves out, after its last: 0 when it lists every one."`
}

// ImportProblem is one problem of a file, where the spreadsheet shows it.
type ImportProblem struct {
	Sheet        string `json:"sheet,omitempty" doc:"The sheet's name; absent for CSV."`
	Row          int    `json:"row" doc:"The row, from 1, as the spreadsheet numbers rows (the header is a row)."`
	Column       string `json:"column,omitempty" doc:"The column's header, e.g. capitalCall.amount."`
	ColumnLetter string `json:"columnLetter,omitempty" doc:"The column's letters (A, B, …, AA); absent when the file has no such column (a required one left out)."`
	Message      string `json:"message" doc:"What is wrong: for a value, the message PUT /v1/documents/{documentId} gives for that field."`
	DocumentID   string `json:"documentId,omitempty" doc:"The document of the row, when known."`
	Field        string `json:"field,omitempty" doc:"The field as the JSON API names it, e.g. positions[3].capitalCall.amount."`
}

// ImportedDocument is one document of an imported file.
type ImportedDocument struct {
	DocumentID string   `json:"documentId" doc:"The document's ID, from the documentId column."`
	FundID     string   `json:"fundId,omitempty" doc:"The document's fund, when its fields could be read."`
	Kind       string   `json:"kind,omitempty" doc:"The document's kind, when its fields could be read."`
	Rows       []int    `json:"rows" doc:"The document's rows in the file, in file order."`
	Positions  int      `json:"positions" doc:"How many positions (rows) the document holds."`
	Outcome    string   `json:"outcome" doc:"ready (dry run: it would be written), invalid (it has problems, listed in problems: nothing written), created (written as version 1), restated (written as the next version), unchanged (the same content as its latest version: no new version), or refused (the write was refused, error says why: nothing of it written)."`
	Version    int      `json:"version,omitempty" doc:"The document's version after the import: the one written, or, when unchanged, its latest."`
	Error      *Problem `json:"error,omitempty" doc:"Why the write was refused, when outcome is refused: the problem PUT /v1/documents/{documentId} would have answered for the document."`
}
