package export

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"golang.org/x/sync/errgroup"
)

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
