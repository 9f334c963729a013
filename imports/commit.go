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

// CommitParallel is how many documents Commit writes at a time: a
// document's commit waits on round trips more than on the table, and
// documents of one file are independent (distinct IDs; positions they share
// are claimed as any concurrent writers' are, docs/commit-protocol.md).
const CommitParallel = 4

// Commit writes file's documents through write, CommitParallel at a time,
// and calls done (when not nil) with each one's index in file.Documents and
// outcome, in file order, as soon as it and every document before it are
// known; done is never called concurrently. A refused document does not
// stop the others: each is all or nothing on its own, so a run cut short
// and run again writes only what is missing (the rest is Unchanged). A file
// with problems (file.Errors) is not committed at all: Commit returns
// EINVALID having called write for none.
func Commit(ctx context.Context, file *File, write Write, done func(i int, o Outcome)) (Summary, error) {
	var sum Summary
	if len(file.Errors) > 0 {
		return sum, fund.Invalid("file", "the file has %d problems; nothing was written", len(file.Errors)+file.MoreProblems)
	}
	outcomes := make([]chan Outcome, len(file.Documents))
	for i := range outcomes {
		outcomes[i] = make(chan Outcome, 1)
	}
	slots := make(chan struct{}, CommitParallel)
	go func() {
		for i, d := range file.Documents {
			slots <- struct{}{}
			go func() {
				defer func() { <-slots }()
				outcomes[i] <- commitOne(ctx, d.Document, write)
			}()
		}
	}()
	for i := range file.Documents {
		o := <-outcomes[i]
		switch o.Result {
		case Refused:
			sum.Refused++
		case Unchanged:
			sum.Unchanged++
		case Created:
			sum.Created++
		default:
			sum.Restated++
		}
		if done != nil {
			done(i, o)
		}
	}
	return sum, nil
}

// commitOne writes d through write and says what that did.
func commitOne(ctx context.Context, d fund.Document, write Write) Outcome {
	version, unchanged, err := write(ctx, d)
	switch {
	case err != nil:
		return Outcome{Result: Refused, Err: fmt.Errorf("document %s: %w", d.ID, err)}
	case unchanged:
		return Outcome{Result: Unchanged, Version: version}
	case version == 1:
		return Outcome{Result: Created, Version: version}
	default:
		return Outcome{Result: Restated, Version: version}
	}
}
