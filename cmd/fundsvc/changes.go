package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/store"
)

// changesFlags are the flags of `fundsvc changes backfill`.
type changesFlags struct {
	resume    string
	pageItems int
}

func (f *changesFlags) register(cmd, sub string) func(*flag.FlagSet, *config.Config) {
	return func(fs *flag.FlagSet, _ *config.Config) {
		if cmd == "changes" && sub == "backfill" {
			fs.StringVar(&f.resume, "resume", "", "continue an interrupted backfill from the resume point it printed")
			fs.IntVar(&f.pageItems, "page-items", 1000, "items one Scan request reads")
		}
	}
}

// backfillChanges gives the change index's keys to every commit head that
// lacks them (heads committed before the index existed), printing after
// every page where a run interrupted then would resume.
func backfillChanges(ctx context.Context, s *store.Store, f changesFlags, stdout io.Writer) error {
	if f.pageItems < 1 {
		return fmt.Errorf("changes backfill: --page-items %d: want at least 1", f.pageItems)
	}
	p, err := s.BackfillChanges(ctx, store.BackfillOptions{Resume: f.resume, PageItems: f.pageItems, Progress: func(p store.BackfillProgress) {
		if p.Resume != "" {
			fmt.Fprintf(stdout, "heads read %d, indexed %d, kept %d; to resume: fundsvc changes backfill --resume %s\n", p.Heads, p.Indexed, p.Kept, p.Resume)
		}
	}})
	if err != nil {
		if p.Resume != "" {
			return fmt.Errorf("changes backfill stopped after %d heads (%d indexed); run it again with --resume %s: %w", p.Heads, p.Indexed, p.Resume, err)
		}
		return fmt.Errorf("changes backfill stopped after %d heads (%d indexed); run it again: %w", p.Heads, p.Indexed, err)
	}
	fmt.Fprintf(stdout, "changes backfill done: heads read %d, indexed %d, kept %d (indexed by their commits or an earlier run)\n", p.Heads, p.Indexed, p.Kept)
	return nil
}
