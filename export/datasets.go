package export

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"golang.org/x/sync/errgroup"
)

// dataset is one table of the snapshot.
type dataset struct {
	name string
	// row is a zero row: its type is the dataset's Parquet schema and,
	// through it, its Athena DDL.
	row any
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
	{name: "document_versions", row: documentVersionRow{},
		newSort: sortBy(func(a, b *documentVersionRow) int {
			return cmp.Or(byDocument(a.FundID, a.DocumentID, b.FundID, b.DocumentID), cmp.Compare(a.Version, b.Version))
		}),
		write:   writeDocuments,
		history: func(itemsFrom int) int { return max(itemsFrom-1, 1) }},
	{name: "capital_activities", row: capitalActivityRow{},
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
		{name: "funds", row: fundRow{}, write: writeFunds},
		{name: "investors", row: investorRow{}, write: writeInvestors},
		{name: "positions", row: positionRow{},
			newSort: sortBy(func(a, b *positionRow) int {
				return cmp.Or(cmp.Compare(a.FundID, b.FundID), cmp.Compare(a.PositionID, b.PositionID))
			}),
			write: writePositions},
	})

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
	plan := sync.OnceValue(func() *rowPlan {
		return mustPlan[T]([]any{declared}, &store.VersionItem{}, &fund.CapitalAccount{})
	})
	toRow := func(v *store.VersionItem) (T, error) {
		var r T
		var err error
		if kind == fund.Statement && v.CapitalAccount == nil {
			err = fmt.Errorf("the statement has no capital account")
		}
		plan().fill(&r, []any{v, v.CapitalAccount}, &err)
		if err != nil {
			return r, fmt.Errorf("export: %s of position %s in version %d of document %s: %w",
				kind, v.PositionID, v.DocumentVersion, v.DocumentID, err)
		}
		return r, nil
	}
	var zero T
	return []dataset{{
		name: name, row: zero, kind: kind, declares: []any{declared}, kinds: []fund.ItemKind{kind},
		newSort: sortBy(func(a, b *T) int { return P(a).key().compare(P(b).key()) }),
		write: func(ctx context.Context, x *exporter, rows rowSort) ([]closer, error) {
			latest, versions, err := writeItems[T, P](ctx, x, name, versionsName, kind, rows.(*sorter[T]), toRow)
			return []closer{latest, versions}, err
		},
		itemRow: func(v *store.VersionItem) (any, error) { return toRow(v) },
	}, {name: versionsName, row: zero, history: itemHistory}}
}

// rowSort is the sort of one dataset's rows, of any row type.
type rowSort interface {
	spiller
	addRow(any)
	remove()
}

// spiller is a sorter of any row type.
type spiller interface {
	buffered() int
	spill() error
	settle() error
}

// sorts holds the heads, the versions' commits and one sort per dataset
// with rows of its own, all sorted by fund and document first, and keeps
// their joint memory budget; and, once they are settled, the committed
// versions resolved from them (resolveVersions).
type sorts struct {
	heads    *sorter[store.CommitHead]
	commits  *sorter[store.VersionCommit]
	rows     []rowSort // by index in datasets; nil for a dataset without rows of its own
	refs     *sorter[positionRef]
	versions *sorter[committedVersion]
	buffered int
}

func newSorts(dir string) *sorts {
	s := &sorts{
		heads: newSorter(dir, "heads", func(a, b *store.CommitHead) int {
			return byDocument(a.FundID, a.DocumentID, b.FundID, b.DocumentID)
		}),
		commits: newSorter(dir, "commits", func(a, b *store.VersionCommit) int {
			return cmp.Or(byDocument(a.FundID, a.DocumentID, b.FundID, b.DocumentID), cmp.Compare(a.Version, b.Version))
		}),
		rows:     make([]rowSort, len(datasets)),
		versions: newVersionsSort(dir),
		refs: newSorter(dir, "position_refs", func(a, b *positionRef) int {
			return cmp.Or(cmp.Compare(a.FundID, b.FundID), cmp.Compare(a.PositionID, b.PositionID),
				cmp.Compare(a.DocumentID, b.DocumentID))
		}),
	}
	for i, d := range datasets {
		if d.newSort != nil {
			s.rows[i] = d.newSort(dir, d.name)
		}
	}
	return s
}

// all are the sorts the scan fills.
func (s *sorts) all() []spiller {
	out := []spiller{s.heads, s.commits}
	for _, r := range s.rows {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// settle ends the adding (see sorter.settle).
func (s *sorts) settle() error {
	for _, sp := range s.all() {
		if err := sp.settle(); err != nil {
			return err
		}
	}
	s.buffered = 0
	return nil
}

// add files a scanned row; once budget rows are held, the largest buffer
// is spilled.
func (s *sorts) add(row sortedRow, budget int) error {
	switch row.dataset {
	case headRows:
		s.heads.add(row.row.(store.CommitHead))
	case commitRows:
		s.commits.add(row.row.(store.VersionCommit))
	default:
		s.rows[row.dataset].addRow(row.row)
	}
	s.buffered++
	if s.buffered < budget {
		return nil
	}
	var largest spiller
	for _, sp := range s.all() {
		if largest == nil || sp.buffered() > largest.buffered() {
			largest = sp
		}
	}
	s.buffered -= largest.buffered()
	return largest.spill()
}

// addRef files that a committed document reports a position, for the
// positions dataset; datasets written at once file theirs at once.
func (x *exporter) addRef(r positionRef) error {
	x.refsMu.Lock()
	defer x.refsMu.Unlock()
	refs := x.sorts.refs
	refs.add(r)
	if refs.buffered() >= x.cfg.MemoryRows {
		return refs.spill()
	}
	return nil
}

// write writes every dataset, each joined with the heads, as many at once
// as there are CPUs. Once the rows are sorted (spilled to runs, or held),
// writing is CPU work. A dataset's writer holds a bounded share of memory
// (a row from each of its runs, its row group), so writing two at once
// bounds memory as one at a time does, at twice that share, whatever the
// table's size. positions, which counts the references the others file,
// comes last. Each sort is removed once its dataset is written.
func (x *exporter) write(ctx context.Context) ([]DatasetManifest, error) {
	// Once, before they are read at once.
	x.sorts.heads.sortBuffer()
	x.sorts.versions.sortBuffer()
	written := make([][]DatasetManifest, len(datasets))
	writeOne := func(i int) error {
		ws, err := datasets[i].write(ctx, x, x.sorts.rows[i])
		if r := x.sorts.rows[i]; r != nil {
			r.remove()
		}
		written[i], err = finish(ctx, nil, err, ws...)
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, d := range datasets {
		if d.write != nil && i != positionsDataset {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				return writeOne(i)
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := writeOne(positionsDataset); err != nil {
		return nil, err
	}
	x.sorts.heads.remove()
	x.sorts.commits.remove()
	x.sorts.versions.remove()
	x.sorts.refs.remove()
	var out []DatasetManifest
	for _, w := range written {
		out = append(out, w...)
	}
	return out, nil
}

// writeDocuments writes documents (each document at its head's version,
// but for a voided document, which is no current document) and
// document_versions (the committed versions resolveVersions found, up to
// the head's, each with its commit instant and the next one's, a voided
// document's last one with status voided).
func writeDocuments(ctx context.Context, x *exporter, rows rowSort) ([]closer, error) {
	docs := newDatasetWriter[documentRow](x, "documents")
	versions := newDatasetWriter[documentVersionRow](x, "document_versions")
	err := func() error {
		rm, err := rows.(*sorter[documentVersionRow]).iterate()
		if err != nil {
			return err
		}
		defer rm.Close()
		vm, err := x.sorts.versions.iterate()
		if err != nil {
			return err
		}
		defer vm.Close()
		vp := &peeker[committedVersion]{src: vm}
		for {
			r, ok, err := rm.next()
			if err != nil || !ok {
				return err
			}
			var v *committedVersion
			for {
				if v, err = vp.peek(); err != nil {
					return err
				}
				if v == nil || cmp.Or(byDocument(v.FundID, v.DocumentID, r.FundID, r.DocumentID), cmp.Compare(v.Version, int(r.Version))) >= 0 {
					break
				}
				vp.take()
			}
			if v == nil || v.FundID != r.FundID || v.DocumentID != r.DocumentID || v.Version != int(r.Version) {
				continue // after the head, before what the run writes again, or of no head
			}
			r.CommittedAt, r.SupersededAt = v.CommittedAt, v.SupersededAt
			latest := v.SupersededAt.IsZero()
			switch {
			case r.Voided:
				r.Status = versionVoided
			case latest:
				r.Status = versionLatest
			default:
				r.Status = versionSuperseded
			}
			if err := versions.write(ctx, r); err != nil {
				return err
			}
			if latest && !r.Voided {
				if err := docs.write(ctx, r.documentRow); err != nil {
					return err
				}
			}
		}
	}()
	return []closer{docs, versions}, err
}

// writeActivities writes the capital activity of each document's head.
func writeActivities(ctx context.Context, x *exporter, rows rowSort) ([]closer, error) {
	activities := newDatasetWriter[capitalActivityRow](x, "capital_activities")
	err := joinHeads(x.sorts.heads, rows.(*sorter[capitalActivityRow]), func(r *capitalActivityRow) (string, string) { return r.FundID, r.DocumentID },
		func(r *capitalActivityRow, h *store.CommitHead) error {
			if int(r.DocumentVersion) != h.Version {
				return nil
			}
			return activities.write(ctx, *r)
		})
	return []closer{activities}, err
}

// writeItems writes the two datasets of one position-level kind: name,
// the items of each document's head, and versionsName, the items of each
// of its committed versions. Rows come from version partitions, and only
// committed ones count, so a staged version that never committed (or lost
// the race for its version number) is left out. A document whose head's
// rows the Scan may have caught short (the store's CommitHead.Complete
// says when) is read again from its version partition, so every document
// is whole at its head's version; so is an earlier version the Scan may
// have caught short (committedVersion.Reread). Each row of the head
// written also records, for the positions dataset, that a committed
// document reports its position.
func writeItems[T any, P itemRowPtr[T]](ctx context.Context, x *exporter, name, versionsName string, kind fund.ItemKind, rows *sorter[T], toRow func(*store.VersionItem) (T, error)) (*datasetWriter[T], *datasetWriter[T], error) {
	w := newDatasetWriter[T](x, name)
	vw := newDatasetWriter[T](x, versionsName)
	reread := func(doc, commitID, dataset string, into []T) ([]T, error) {
		items, err := x.cfg.Store.CommitItems(ctx, doc, commitID, kind)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		into = into[:0]
		for i := range items {
			r, err := toRow(&items[i])
			if err != nil {
				return nil, err
			}
			into = append(into, r)
		}
		x.event(Event{Kind: EventReread, Dataset: dataset, Key: store.VersionPK(doc, commitID), Rows: int64(len(into))})
		return into, nil
	}
	err := eachDocument(x, rows, func(r *T) itemKey { return P(r).key() }, func(r *T) error { return vw.write(ctx, *r) },
		func(h *store.CommitHead, versions *documentVersions, doc []T) error {
			var err error
			if !h.Complete(kind, len(doc)) {
				if doc, err = reread(h.DocumentID, h.CommitID, kind.Type(), doc); err != nil {
					return err
				}
			}
			for i := range doc {
				if err := x.addRef(P(&doc[i]).ref()); err != nil {
					return err
				}
				if err := w.write(ctx, doc[i]); err != nil {
					return err
				}
				if err := vw.write(ctx, doc[i]); err != nil {
					return err
				}
			}
			for _, v := range versions.all {
				if !v.Reread {
					continue
				}
				if doc, err = reread(v.DocumentID, v.CommitID, versionsName, doc); err != nil {
					return err
				}
				for i := range doc {
					if err := vw.write(ctx, doc[i]); err != nil {
						return err
					}
				}
			}
			return nil
		})
	return w, vw, err
}

// transactionKinds are the kinds of items that have typed lines.
var transactionKinds = []fund.ItemKind{fund.CapitalCall, fund.Distribution}

// writeTransactionLines writes transaction_lines and
// transaction_line_versions: the typed lines of the calls and
// distributions of each document's head, checked against the head's
// counts of both kinds as writeItems checks each kind, and read again from
// the version partition when the Scan may have caught them short; and
// those of each of its committed versions, read again as writeItems reads
// them.
func writeTransactionLines(ctx context.Context, x *exporter, rows rowSort) ([]closer, error) {
	w := newDatasetWriter[transactionLineRow](x, "transaction_lines")
	vw := newDatasetWriter[transactionLineRow](x, "transaction_line_versions")
	reread := func(doc, commitID, dataset string, into []transactionItemRow) ([]transactionItemRow, error) {
		into = into[:0]
		for _, k := range transactionKinds {
			items, err := x.cfg.Store.CommitItems(ctx, doc, commitID, k)
			if err != nil {
				return nil, fmt.Errorf("export: %w", err)
			}
			for i := range items {
				r, err := transactionItemRowOf(&items[i])
				if err != nil {
					return nil, err
				}
				into = append(into, r)
			}
		}
		slices.SortFunc(into, func(a, b transactionItemRow) int {
			return cmp.Or(cmp.Compare(a.PositionID, b.PositionID), cmp.Compare(a.Kind, b.Kind))
		})
		x.event(Event{Kind: EventReread, Dataset: dataset, Key: store.VersionPK(doc, commitID), Rows: int64(len(into))})
		return into, nil
	}
	writeLines := func(w *datasetWriter[transactionLineRow], items []transactionItemRow) error {
		for i := range items {
			for _, l := range items[i].Lines {
				if err := w.write(ctx, l); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := eachDocument(x, rows.(*sorter[transactionItemRow]), func(r *transactionItemRow) itemKey { return r.key() },
		func(r *transactionItemRow) error { return writeLines(vw, []transactionItemRow{*r}) },
		func(h *store.CommitHead, versions *documentVersions, doc []transactionItemRow) error {
			complete := true
			for _, k := range transactionKinds {
				n := 0
				for i := range doc {
					if doc[i].Kind == k {
						n++
					}
				}
				complete = complete && h.Complete(k, n)
			}
			var err error
			if !complete {
				if doc, err = reread(h.DocumentID, h.CommitID, "transaction_lines", doc); err != nil {
					return err
				}
			}
			if err := writeLines(w, doc); err != nil {
				return err
			}
			if err := writeLines(vw, doc); err != nil {
				return err
			}
			for _, v := range versions.all {
				if !v.Reread {
					continue
				}
				if doc, err = reread(v.DocumentID, v.CommitID, "transaction_line_versions", doc); err != nil {
					return err
				}
				if err := writeLines(vw, doc); err != nil {
					return err
				}
			}
			return nil
		})
	return []closer{w, vw}, err
}

// writePositions writes the positions dataset (see exporter.writePositions).
func writePositions(ctx context.Context, x *exporter, rows rowSort) ([]closer, error) {
	positions := newDatasetWriter[positionRow](x, "positions")
	err := x.writePositions(ctx, positions, rows.(*sorter[positionRow]))
	return []closer{positions}, err
}

// eachDocument walks the heads, the committed versions (resolveVersions)
// and rows, all sorted by fund and document, and calls fn once per head
// with the document's committed versions and its rows at the head's commit
// (none, when the Scan found none). A row of an earlier committed version
// is passed to earlier as it comes, unless that version's items are read
// again (committedVersion.Reread) or were not read (before the head's
// ItemsFrom: an incremental run keeps them from the previous snapshot).
// Rows of other commits (staged versions that never committed, or lost
// the race for their version number, or committed after the Scan read the
// head), and of documents without a head, are dropped. It holds one
// document's versions and its head's rows at a time.
func eachDocument[T any](x *exporter, rows *sorter[T], key func(*T) itemKey, earlier func(*T) error, fn func(*store.CommitHead, *documentVersions, []T) error) error {
	hm, err := x.sorts.heads.iterate()
	if err != nil {
		return err
	}
	defer hm.Close()
	vm, err := x.sorts.versions.iterate()
	if err != nil {
		return err
	}
	defer vm.Close()
	rm, err := rows.iterate()
	if err != nil {
		return err
	}
	defer rm.Close()
	vp := &peeker[committedVersion]{src: vm}
	rp := &peeker[T]{src: rm}
	var versions documentVersions
	var doc []T
	for {
		h, ok, err := hm.next()
		if err != nil || !ok {
			return err
		}
		if err := versionsOf(vp, h.FundID, h.DocumentID, &versions); err != nil {
			return err
		}
		doc = doc[:0]
		for {
			r, err := rp.peek()
			if err != nil {
				return err
			}
			if r == nil {
				break
			}
			k := key(r)
			if c := byDocument(k.fund, k.doc, h.FundID, h.DocumentID); c > 0 {
				break
			} else if c == 0 && k.commit == h.CommitID {
				doc = append(doc, *r)
			} else if v := versions.of(k.commit); c == 0 && v != nil && v.Version < h.Version && !v.Reread && v.Version >= h.ItemsFrom {
				if err := earlier(r); err != nil {
					return err
				}
			}
			rp.take()
		}
		if err := fn(&h, &versions, doc); err != nil {
			return err
		}
	}
}

// writePositions joins the fund registries with the references of
// committed documents: a position is exported once at least one document
// reports it at its latest committed version, so a position registered by
// an ingest that never committed stays out. A position that a document
// reports but whose registry item the Scan passed before it was written
// (an ingest during the Scan) is read by key (see lookupPosition).
func (x *exporter) writePositions(ctx context.Context, w *datasetWriter[positionRow], registry *sorter[positionRow]) error {
	reg, err := registry.iterate()
	if err != nil {
		return err
	}
	defer reg.Close()
	refs, err := x.sorts.refs.iterate()
	if err != nil {
		return err
	}
	defer refs.Close()
	gp := &peeker[positionRow]{src: reg}
	rp := &peeker[positionRef]{src: refs}
	for {
		g, err := gp.peek()
		if err != nil {
			return err
		}
		r, err := rp.peek()
		if err != nil {
			return err
		}
		if g == nil && r == nil {
			return nil
		}
		// The next position, in order, of either stream.
		var p positionRow
		registered := false
		switch {
		case r == nil || g != nil && cmp.Or(cmp.Compare(g.FundID, r.FundID), cmp.Compare(g.PositionID, r.PositionID)) <= 0:
			p, registered = *g, true
			gp.take()
		default:
			p = positionRow{FundID: r.FundID, PositionID: r.PositionID}
		}
		lastDoc := ""
		var first positionRef
		for {
			r, err := rp.peek()
			if err != nil {
				return err
			}
			if r == nil || r.FundID != p.FundID || r.PositionID != p.PositionID {
				break
			}
			if p.DocumentCount == 0 {
				first = *r
			}
			rp.take()
			if r.DocumentID != lastDoc {
				lastDoc = r.DocumentID
				p.DocumentCount++
			}
			if p.DocumentCount == 1 { // the first document (dates before 1970 are negative)
				p.FirstAsOf, p.LastAsOf = r.AsOf, r.AsOf
			}
			p.FirstAsOf, p.LastAsOf = min(p.FirstAsOf, r.AsOf), max(p.LastAsOf, r.AsOf)
		}
		if p.DocumentCount == 0 {
			continue
		}
		if !registered {
			if err := x.lookupPosition(ctx, &p, &first); err != nil {
				return err
			}
		}
		if err := w.write(ctx, p); err != nil {
			return err
		}
	}
}

// lookupPosition fills in a position that committed documents report but
// whose registry item the Scan did not find (see store.FindPosition);
// failing the store, it takes what the first document that reports the
// position says of it (its investor and currency, which the position's
// claim fixed before that document could commit).
func (x *exporter) lookupPosition(ctx context.Context, p *positionRow, ref *positionRef) error {
	p.InvestorID, p.Currency, p.RegisteredAt = ref.InvestorID, ref.Currency, ref.CreatedAt
	found, ok, err := x.cfg.Store.FindPosition(ctx, p.FundID, p.PositionID, ref.InvestorID, func(key string) {
		x.event(Event{Kind: EventReread, Dataset: "positions", Key: key, Rows: 1})
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if ok {
		p.Currency, p.RegisteredAt = cmp.Or(found.Currency, p.Currency), found.RegisteredAt.UTC()
	}
	return nil
}

// joinHeads walks rows and heads, both sorted by fund and document, and
// calls emit for every row whose document has a head. Rows of documents
// without a head (a first version that never committed) are dropped.
func joinHeads[T any](heads *sorter[store.CommitHead], rows *sorter[T], key func(*T) (fund, doc string), emit func(*T, *store.CommitHead) error) error {
	hm, err := heads.iterate()
	if err != nil {
		return err
	}
	defer hm.Close()
	rm, err := rows.iterate()
	if err != nil {
		return err
	}
	defer rm.Close()
	hp := &peeker[store.CommitHead]{src: hm}
	for {
		r, ok, err := rm.next()
		if err != nil || !ok {
			return err
		}
		f, d := key(&r)
		h, err := hp.peek()
		for ; err == nil && h != nil && cmp.Or(cmp.Compare(h.FundID, f), cmp.Compare(h.DocumentID, d)) < 0; h, err = hp.peek() {
			hp.take()
		}
		if err != nil {
			return err
		}
		if h != nil && h.FundID == f && h.DocumentID == d {
			if err := emit(&r, h); err != nil {
				return err
			}
		}
	}
}

// writeFunds writes every fund, by ID: the funds' registry is read a page
// at a time (store.Store.AllFunds, then their records), its pages sorted
// by the exporter's external sort, as a registry lists funds shard by
// shard.
func writeFunds(ctx context.Context, x *exporter, _ rowSort) ([]closer, error) {
	plan := fundPlan()
	rows := newSorter(x.tmp, "funds", func(a, b *fundRow) int { return cmp.Compare(a.FundID, b.FundID) })
	defer rows.remove()
	var start store.PageKey
	for {
		ids, next, err := x.cfg.Store.AllFunds(ctx, recordPage, start)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		fs, err := x.cfg.Store.Funds(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		for i := range fs {
			var r fundRow
			plan.fill(&r, []any{&fs[i], fs[i].Record}, &err)
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
	plan := investorPlan()
	rows := newSorter(x.tmp, "investors", func(a, b *investorRow) int { return cmp.Compare(a.InvestorID, b.InvestorID) })
	defer rows.remove()
	var start store.PageKey
	for {
		ids, next, err := x.cfg.Store.AllInvestors(ctx, recordPage, start)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		is, err := x.cfg.Store.Investors(ctx, ids, true)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		for i := range is {
			var r investorRow
			plan.fill(&r, []any{&is[i], is[i].Record}, &err)
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

// addSpilling adds r to rows, spilling once the exporter's row budget is
// held.
func addSpilling[T any](x *exporter, rows *sorter[T], r T) error {
	rows.add(r)
	if rows.buffered() >= x.cfg.MemoryRows {
		return rows.spill()
	}
	return nil
}

// writeSorted writes the sorted rows.
func writeSorted[T any](ctx context.Context, w *datasetWriter[T], rows *sorter[T]) error {
	if err := rows.settle(); err != nil {
		return err
	}
	it, err := rows.iterate()
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		r, ok, err := it.next()
		if err != nil || !ok {
			return err
		}
		if err := w.write(ctx, r); err != nil {
			return err
		}
	}
}

// fundPlan and investorPlan fill a record's row from the fund or investor
// and its record: every field of fund.FundFields (fund.InvestorFields) has
// its column, named after its JSON name.
var (
	fundPlan = sync.OnceValue(func() *rowPlan {
		return mustPlan[fundRow]([]any{fund.FundFields{}}, &fund.Fund{}, &fund.FundRecord{})
	})
	investorPlan = sync.OnceValue(func() *rowPlan {
		return mustPlan[investorRow]([]any{fund.InvestorFields{}}, &fund.Investor{}, &fund.InvestorRecord{})
	})
)
