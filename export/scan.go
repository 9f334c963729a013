package export

import (
	"context"
	"fmt"

	"github.com/fundsvc/fundsvc/store"
	"golang.org/x/sync/errgroup"
)

// scan reads the store's committed records over cfg.Segments parallel Scan
// segments. The segments turn records into rows; one collector owns the
// sorts, so the row budget is kept without locks.
func (x *exporter) scan(ctx context.Context) error {
	rows := make(chan sortedRow, 4096)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(rows)
		opts := store.ScanOptions{Segments: x.cfg.Segments, PageItems: x.cfg.PageItems, OnPage: func(p store.Page) {
			x.items.Add(int64(p.Items))
			x.cfg.Progress.ItemsScanned.Add(int64(p.Items))
			x.event(Event{Kind: EventPage, Items: int64(p.Items), Key: p.LastPK})
		}}
		return x.cfg.Store.Committed(gctx, opts, func(rec store.Record) error {
			out, err := rowsOf(rec)
			if err != nil {
				return err
			}
			for _, row := range out {
				select {
				case rows <- row:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	})
	g.Go(func() error {
		for row := range rows {
			if err := x.sorts.add(row, x.cfg.MemoryRows); err != nil {
				return err
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	return x.sorts.settle()
}

// sortedRow is a row on its way to a sort: heads go to the heads sort,
// versions' commits to the commits sort, every other row to its
// dataset's.
type sortedRow struct {
	dataset int // index in datasets, or headRows, or commitRows
	row     any
}

// The sortedRow.dataset of a head and of a version's commit.
const (
	headRows   = -1
	commitRows = -2
)

// rowsOf turns a committed record into the rows it contributes: one, but
// for a call or a distribution, whose typed lines are rows of
// transaction_lines too.
func rowsOf(rec store.Record) ([]sortedRow, error) {
	switch r := rec.(type) {
	case store.CommitHead:
		return []sortedRow{{headRows, r}}, nil
	case store.VersionCommit:
		return []sortedRow{{commitRows, r}}, nil
	case store.DocumentVersion:
		row, err := documentRowOf(&r)
		return []sortedRow{{versionsDataset, row}}, err
	case store.ActivityVersion:
		row, err := capitalActivityRowOf(&r)
		return []sortedRow{{activitiesDataset, row}}, err
	case store.RegisteredPosition:
		row, err := positionRowOf(&r)
		return []sortedRow{{positionsDataset, row}}, err
	case store.VersionItem:
		sets, ok := itemDatasets[r.Kind]
		if !ok {
			return nil, fmt.Errorf("export: no dataset of %s", r.Kind)
		}
		out := make([]sortedRow, 0, len(sets))
		for _, i := range sets {
			row, err := datasets[i].itemRow(&r)
			if err != nil {
				return nil, err
			}
			out = append(out, sortedRow{i, row})
		}
		return out, nil
	}
	return nil, fmt.Errorf("export: unexpected record %T", rec)
}
