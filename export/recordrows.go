package export

import (
	"cmp"
	"context"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
)

// writeFunds writes every fund, by ID: the funds' registry is read a page
// at a time (store.View.FundsPage, with their records), its pages sorted
// by the exporter's external sort, as a registry lists funds shard by
// shard.
func writeFunds(ctx context.Context, x *exporter, _ rowSort) ([]closer, error) {
	return writeRecords(ctx, x, "funds", "fund", fundPlan, func(r *fundRow) string { return r.FundID },
		func(start store.PageKey) ([]fund.Fund, store.PageKey, error) {
			return x.cfg.Store.As(fund.Operator).FundsPage(ctx, recordPage, start)
		}, func(f *fund.Fund) (string, any) { return f.ID, f.Record })
}

// writeInvestors writes every investor, by ID (see writeFunds).
func writeInvestors(ctx context.Context, x *exporter, _ rowSort) ([]closer, error) {
	return writeRecords(ctx, x, "investors", "investor", investorPlan, func(r *investorRow) string { return r.InvestorID },
		func(start store.PageKey) ([]fund.Investor, store.PageKey, error) {
			return x.cfg.Store.As(fund.Operator).InvestorsPage(ctx, "", recordPage, start)
		}, func(i *fund.Investor) (string, any) { return i.ID, i.Record })
}

// writeRecords writes dataset name whole: a row R, by key, of each fund or
// investor T (what) and its record (of gives its ID and record), which
// plan fills; page reads them a page at a time from a key it issued (nil
// for the first page).
func writeRecords[T, R any](ctx context.Context, x *exporter, name, what string, plan lazyPlan, key func(*R) string,
	page func(store.PageKey) ([]T, store.PageKey, error), of func(*T) (id string, record any)) ([]closer, error) {
	rows := newSorter(x.tmp, name, func(a, b *R) int { return cmp.Compare(key(a), key(b)) })
	defer rows.remove()
	var start store.PageKey
	for {
		ts, next, err := page(start)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		for i := range ts {
			var r R
			id, record := of(&ts[i])
			plan.fill(&r, []any{&ts[i], record}, &err)
			if err != nil {
				return nil, fmt.Errorf("export: %s %s: %w", what, id, err)
			}
			if err := addSpilling(x, rows, r); err != nil {
				return nil, err
			}
		}
		if start = next; start == nil {
			break
		}
	}
	w := newDatasetWriter[R](x, name)
	w.base = nil // written whole at every run
	return []closer{w}, writeSorted(ctx, w, rows)
}

// recordPage is how many funds or investors one registry read asks for.
const recordPage = 100
