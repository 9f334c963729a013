package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/fundsvc/fundsvc/store"
)

// changesFlags are the flags of `fundsvc changes backfill`.
type changesFlags struct {
	resume    string
	pageItems int
}

func registerChanges(fs *flag.FlagSet, f *flags) {
	fs.StringVar(&f.changes.resume, "resume", "", "continue an interrupted backfill from the resume `POINT` it printed")
	fs.IntVar(&f.changes.pageItems, "page-items", 1000, "items one Scan request reads")
}

// backfillChanges gives the change index's keys to every commit head that
// lacks them (heads committed before the index existed) and writes the
// event of every version that has none (committed before the feed), and
// moves history records of the earlier layout, and puts the position
// ledger's entries of every version and the instant index of documents and
// records written before it, printing after every page where a run
// interrupted then would resume.
var backfillChanges = withStore(func(ctx context.Context, e invocation, s *store.Store) error {
	f, stdout := e.f.changes, e.stdout
	if f.pageItems < 1 {
		return fmt.Errorf("changes backfill: --page-items %d: want at least 1", f.pageItems)
	}
	p, err := s.BackfillChanges(ctx, store.BackfillOptions{Resume: f.resume, PageItems: f.pageItems, Progress: func(p store.BackfillProgress) {
		if p.Resume != "" {
			fmt.Fprintf(stdout, "heads read %d, indexed %d, kept %d, events written %d, history records moved %d, ledger entries put %d, instant indexes put %d (and %d records'); to resume: fundsvc changes backfill --resume %s\n", p.Heads, p.Indexed, p.Kept, p.Events, p.Moved, p.Ledger, p.Instants, p.Records, p.Resume)
		}
	}})
	if err != nil {
		if p.Resume != "" {
			return fmt.Errorf("changes backfill stopped after %d heads (%d indexed); run it again with --resume %s: %w", p.Heads, p.Indexed, p.Resume, err)
		}
		return fmt.Errorf("changes backfill stopped after %d heads (%d indexed); run it again: %w", p.Heads, p.Indexed, err)
	}
	fmt.Fprintf(stdout, "changes backfill done: heads read %d, indexed %d, kept %d (indexed by their commits or an earlier run); events written %d (for versions committed before the event feed); history records moved %d, of %d documents (to the version-ordered keys); position ledger entries put %d (one per position a document ever reported, for reads as known at an instant); instant indexes put for %d documents and %d funds' and investors' records (for reads as known at an instant in one Query)\n", p.Heads, p.Indexed, p.Kept, p.Events, p.Moved, p.Documents, p.Ledger, p.Instants, p.Records)
	return nil
})
