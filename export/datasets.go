package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
)

// dataset is one table of the snapshot.
type dataset struct {
	name string
	// row is a zero row: its type is the dataset's Parquet schema and,
	// through it, its Athena DDL.
	row any
	// plan fills the row by name from the records it exports (fill.go);
	// nil for a row the code fills.
	plan lazyPlan
	// newSort makes the sort of the dataset's own rows, ordered by fund and
	// document first as the heads are; nil for a dataset written from
	// another's rows.
	newSort func(dir, name string) rowSort
	// write joins the dataset's sorted rows with the heads and writes them,
	// returning its writers (and those of the datasets written from its
	// rows), in the order of datasets.
	write func(ctx context.Context, x *exporter, rows rowSort) ([]closer, error)
	// For a dataset of one position-level kind: the kind, and the structs
	// fund declares of it (each of their fields has a column in the row;
	// see fill.go).
	kind     fund.ItemKind
	declares []any
	// For a dataset made of position items: the kinds of the items its
	// rows come from, and the row of one item (for a position-level kind,
	// the item's row; for transaction_lines, its typed lines).
	kinds   []fund.ItemKind
	itemRow func(*store.VersionItem) (any, error)
	// history is set for a dataset of every committed version of each
	// document, not only its latest: given the first version whose items
	// an incremental run read of a changed document (store.CommitHead's
	// ItemsFrom), it is the first version whose rows the run writes again;
	// the rows of the versions before are the previous snapshot's.
	history func(itemsFrom int) int
}

// datasets is the one list of datasets, in the order they are written.
// Everything else derives from it: Datasets, the sorts, the writers, the
// Parquet schemas (Schema) and the DDL.
var datasets = slices.Concat([]dataset{
	// documents and document_versions come from the same history records:
	// every committed version up to the head, and the head's own version.
	// An incremental run writes again the row of the version before the
	// first it read, which the first superseded.
	{name: "documents", row: documentRow{}},
	{name: "document_versions", row: documentVersionRow{}, plan: documentPlan,
		newSort: sortBy(func(a, b *documentVersionRow) int {
			return cmp.Or(byDocument(a.FundID, a.DocumentID, b.FundID, b.DocumentID), cmp.Compare(a.Version, b.Version))
		}),
		write:   writeDocuments,
		history: func(itemsFrom int) int { return max(itemsFrom-1, 1) }},
	{name: "capital_activities", row: capitalActivityRow{}, plan: activityPlan,
		newSort: sortBy(func(a, b *capitalActivityRow) int {
			return cmp.Or(byDocument(a.FundID, a.DocumentID, b.FundID, b.DocumentID), cmp.Compare(a.DocumentVersion, b.DocumentVersion))
		}),
		write: writeActivities}},
	kindDatasets[capitalAccountRow]("capital_accounts", "capital_account_versions", fund.Statement, fund.CapitalAccount{}),
	kindDatasets[capitalCallRow]("capital_calls", "capital_call_versions", fund.CapitalCall, fund.CapitalCallItem{}),
	kindDatasets[distributionRow]("distributions", "distribution_versions", fund.Distribution, fund.DistributionItem{}),
	[]dataset{
		// One row per typed line of every call and distribution, from the
		// same items as capital_calls and distributions; of the latest
		// versions, and of every committed version.
		{name: "transaction_lines", row: transactionLineRow{},
			kinds: transactionKinds,
			newSort: sortBy(func(a, b *transactionItemRow) int {
				return cmp.Or(a.key().compare(b.key()), cmp.Compare(a.Kind, b.Kind))
			}),
			write:   writeTransactionLines,
			itemRow: func(v *store.VersionItem) (any, error) { return transactionItemRowOf(v) }},
		{name: "transaction_line_versions", row: transactionLineRow{}, history: itemHistory},
	},
	kindDatasets[unfundedCommitmentRow]("unfunded_commitments", "unfunded_commitment_versions", fund.UnfundedCommitment, fund.UnfundedCommitmentItem{}),
	[]dataset{
		// Every fund and every investor, of a record or of documents, read
		// whole from the store's registries at every run (records are few,
		// and the change index knows documents only), so an incremental run
		// writes them as a full one does.
		{name: "funds", row: fundRow{}, plan: fundPlan, write: writeFunds},
		{name: "investors", row: investorRow{}, plan: investorPlan, write: writeInvestors},
		{name: "positions", row: positionRow{}, plan: positionPlan,
			newSort: sortBy(func(a, b *positionRow) int {
				return cmp.Or(cmp.Compare(a.FundID, b.FundID), cmp.Compare(a.PositionID, b.PositionID))
			}),
			write: writePositions},
	})

// checkPlans makes every dataset's plan, and returns the errors of those
// that cannot be made (a declared field without its column, a column
// without its source), each naming the field and the column.
func checkPlans() error {
	var errs []error
	for _, d := range datasets {
		if d.plan != nil {
			_, err := d.plan()
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// itemHistory is the history of the datasets of every version's position
// items: an incremental run writes again the versions it read.
func itemHistory(itemsFrom int) int { return itemsFrom }

// datasetNamed finds a dataset by name; init fills it, since the
// datasets' writers, which datasets refers to, use it.
var datasetNamed map[string]*dataset

func init() {
	datasetNamed = make(map[string]*dataset, len(datasets))
	for i := range datasets {
		datasetNamed[datasets[i].name] = &datasets[i]
	}
}

// Datasets lists the datasets' names in the order they are written.
var Datasets = func() []string {
	names := make([]string, len(datasets))
	for i, d := range datasets {
		names[i] = d.name
	}
	return names
}()

// The datasets the scan files rows of each record type in.
var (
	versionsDataset   = datasetIndex("document_versions")
	activitiesDataset = datasetIndex("capital_activities")
	positionsDataset  = datasetIndex("positions")
	itemDatasets      = func() map[fund.ItemKind][]int {
		m := map[fund.ItemKind][]int{}
		for i, d := range datasets {
			for _, k := range d.kinds {
				m[k] = append(m[k], i)
			}
		}
		return m
	}()
)

func datasetIndex(name string) int {
	i := slices.IndexFunc(datasets, func(d dataset) bool { return d.name == name })
	if i < 0 {
		panic("export: unknown dataset " + name)
	}
	return i
}

func byDocument(af, ad, bf, bd string) int { return cmp.Or(cmp.Compare(af, bf), cmp.Compare(ad, bd)) }

// sortBy makes the sort of rows of type T in the order cmp.
func sortBy[T any](cmp func(a, b *T) int) func(dir, name string) rowSort {
	return func(dir, name string) rowSort { return newSorter(dir, name, cmp) }
}

// itemRowPtr is what the join needs of a position-level row.
type itemRowPtr[T any] interface {
	*T
	key() itemKey
	ref() positionRef
}

// kindDatasets declares the two datasets of a position-level kind: name
// holds the items of each document's latest version, versionsName those of
// every committed version, in the same columns; both are written in one
// pass over the kind's rows (writeItems). A row is an item of kind, filled
// by name (fill.go) from the item and, for a statement, its capital
// account; declared is fund's struct of the kind, each of whose fields has
// its column.
func kindDatasets[T any, P itemRowPtr[T]](name, versionsName string, kind fund.ItemKind, declared any) []dataset {
	plan := planFor[T]([]any{declared}, &store.VersionItem{}, &fund.CapitalAccount{})
	toRow := func(v *store.VersionItem) (T, error) {
		var r T
		var err error
		if kind == fund.Statement && v.CapitalAccount == nil {
			err = fmt.Errorf("the statement has no capital account")
		}
		plan.fill(&r, []any{v, v.CapitalAccount}, &err)
		if err != nil {
			return r, fmt.Errorf("export: %s of position %s in version %d of document %s: %w",
				kind, v.PositionID, v.DocumentVersion, v.DocumentID, err)
		}
		return r, nil
	}
	var zero T
	return []dataset{{
		name: name, row: zero, plan: plan, kind: kind, declares: []any{declared}, kinds: []fund.ItemKind{kind},
		newSort: sortBy(func(a, b *T) int { return P(a).key().compare(P(b).key()) }),
		write: func(ctx context.Context, x *exporter, rows rowSort) ([]closer, error) {
			latest, versions, err := writeItems[T, P](ctx, x, name, versionsName, kind, rows.(*sorter[T]), toRow)
			return []closer{latest, versions}, err
		},
		itemRow: func(v *store.VersionItem) (any, error) { return toRow(v) },
	}, {name: versionsName, row: zero, plan: plan, history: itemHistory}}
}

// fundPlan and investorPlan fill a record's row from the fund or investor
// and its record: every field of fund.FundFields (fund.InvestorFields) has
// its column, named after its JSON name.
var (
	fundPlan     = planFor[fundRow]([]any{fund.FundFields{}}, &fund.Fund{}, &fund.FundRecord{})
	investorPlan = planFor[investorRow]([]any{fund.InvestorFields{}}, &fund.Investor{}, &fund.InvestorRecord{})
)
