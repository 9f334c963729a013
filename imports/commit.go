package imports

import (
	"context"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
)

// The results of committing one document (Outcome.Result); they are the
// outcomes the route's report names (wire.ImportCreated, …).
const (
	Created   = "created"   // written as version 1
	Restated  = "restated"  // written as the document's next version
	Unchanged = "unchanged" // the same content as its latest version: nothing written
	Refused   = "refused"   // the write failed (Err says why): nothing of the document written
)

// Outcome is what committing one document of a file did.
type Outcome struct {
	Result  string // Created, Restated, Unchanged or Refused
	Version int    // the version written, or the latest when Unchanged; 0 when Refused
	Err     error  // why it was refused
}

// Write commits one document all or nothing (the commit protocol) unless
// its content is that of its latest version, returning the version written
// or, when unchanged, that latest version. The route and the command line
// pass the store's View.WriteUnlessUnchanged, as each sees the table:
// imports does not reach the table itself (docs/architecture.md).
type Write func(ctx context.Context, d fund.Document) (version int, unchanged bool, err error)

// Summary counts the outcomes of a commit.
type Summary struct {
	Created, Restated, Unchanged, Refused int
}

// Commit writes file's documents one after the other, in file order, each
// through write, and calls done (when not nil) with each one's index in
// file.Documents and outcome as soon as it is known. A refused document
// does not stop the others: each is all or nothing on its own, so a run cut
// short and run again writes only what is missing (the rest is Unchanged).
// A file with problems (file.Errors) is not committed at all: Commit
// returns EINVALID having called write for none.
func Commit(ctx context.Context, file *File, write Write, done func(i int, o Outcome)) (Summary, error) {
	var sum Summary
	if len(file.Errors) > 0 {
		return sum, fund.Invalid("file", "the file has %d problems; nothing was written", len(file.Errors)+file.MoreProblems)
	}
	for i, d := range file.Documents {
		var o Outcome
		version, unchanged, err := write(ctx, d.Document)
		switch {
		case err != nil:
			o = Outcome{Result: Refused, Err: fmt.Errorf("document %s: %w", d.ID, err)}
			sum.Refused++
		case unchanged:
			o = Outcome{Result: Unchanged, Version: version}
			sum.Unchanged++
		case version == 1:
			o = Outcome{Result: Created, Version: version}
			sum.Created++
		default:
			o = Outcome{Result: Restated, Version: version}
			sum.Restated++
		}
		if done != nil {
			done(i, o)
		}
	}
	return sum, nil
}
