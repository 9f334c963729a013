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
	rows := newSorter(x.tmp, "funds", func(a, b *fundRow) int { return cmp.Compare(a.FundID, b.FundID) })
	defer rows.remove()
	var start store.PageKey
	for {
		fs, next, err := x.cfg.Store.As(fund.Operator).FundsPage(ctx, recordPage, start)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		for i := range fs {
			var r fundRow
			fundPlan.fill(&r, []any{&fs[i], fs[i].Record}, &err)
			if err != nil {
				return nil, fmt.Errorf("export: fund %s: %w", fs[i].ID, err)
			}
			if err := addSpilling(x, rows, r); err != nil {
				return nil, err
			}
		}
		if next == nil {
			break
		}
		start = next
	}
	w := newDatasetWriter[fundRow](x, "funds")
	w.base = nil // written whole at every run
	return []closer{w}, writeSorted(ctx, w, rows)
}

// writeInvestors writes every investor, by ID (see writeFunds).
func writeInvestors(ctx context.Context, x *exporter, _ rowSort) ([]closer, error) {
	rows := newSorter(x.tmp, "investors", func(a, b *investorRow) int { return cmp.Compare(a.InvestorID, b.InvestorID) })
	defer rows.remove()
	var start store.PageKey
	for {
		is, next, err := x.cfg.Store.As(fund.Operator).InvestorsPage(ctx, "", recordPage, start)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		for i := range is {
			var r investorRow
			investorPlan.fill(&r, []any{&is[i], is[i].Record}, &err)
			if err != nil {
				return nil, fmt.Errorf("export: investor %s: %w", is[i].ID, err)
			}
			if err := addSpilling(x, rows, r); err != nil {
				return nil, err
			}
		}
		if next == nil {
			break
		}
		start = next
	}
	w := newDatasetWriter[investorRow](x, "investors")
	w.base = nil
	return []closer{w}, writeSorted(ctx, w, rows)
}

// recordPage is how many funds or investors one registry read asks for.
const recordPage = 100
