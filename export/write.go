package export

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/guregu/dynamo/v2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// sorts holds one sort per kind of scanned row, all sorted by fund and
// document first, and keeps their joint memory budget.
type sorts struct {
	scanned    *sorter[headRow] // the heads as scanned, by document
	latest     *sorter[latestRow]
	heads      *sorter[headRow] // the checked heads (see checkHeads), by fund and document
	versions   *sorter[documentVersionRow]
	activities *sorter[capitalActivityRow]
	calls      *sorter[capitalCallRow]
	dists      *sorter[distributionRow]
	unfunded   *sorter[unfundedCommitmentRow]
	registry   *sorter[positionRow]
	refs       *sorter[positionRef]
	buffered   int
}

// spiller is a sorter of any row type.
type spiller interface {
	buffered() int
	spill() error
	settle() error
}

func (s *sorts) all() []spiller {
	return []spiller{s.scanned, s.latest, s.heads, s.versions, s.activities, s.calls, s.dists, s.unfunded, s.registry}
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

func newSorts(dir string) *sorts {
	byDoc := func(af, ad, bf, bd string) int { return cmp.Or(cmp.Compare(af, bf), cmp.Compare(ad, bd)) }
	return &sorts{
		scanned: newSorter(dir, "scanned_heads", func(a, b *headRow) int { return cmp.Compare(a.DocumentID, b.DocumentID) }),
		latest: newSorter(dir, "latest_view", func(a, b *latestRow) int {
			return cmp.Or(cmp.Compare(a.DocumentID, b.DocumentID), cmp.Compare(a.PositionID, b.PositionID), cmp.Compare(a.Kind, b.Kind))
		}),
		heads: newSorter(dir, "heads", func(a, b *headRow) int {
			return byDoc(a.FundID, a.DocumentID, b.FundID, b.DocumentID)
		}),
		versions: newSorter(dir, "document_versions", func(a, b *documentVersionRow) int {
			return cmp.Or(byDoc(a.FundID, a.DocumentID, b.FundID, b.DocumentID), cmp.Compare(a.Version, b.Version))
		}),
		activities: newSorter(dir, "capital_activities", func(a, b *capitalActivityRow) int {
			return cmp.Or(byDoc(a.FundID, a.DocumentID, b.FundID, b.DocumentID), cmp.Compare(a.DocumentVersion, b.DocumentVersion))
		}),
		calls:    newSorter(dir, "capital_calls", func(a, b *capitalCallRow) int { return a.key().compare(b.key()) }),
		dists:    newSorter(dir, "distributions", func(a, b *distributionRow) int { return a.key().compare(b.key()) }),
		unfunded: newSorter(dir, "unfunded_commitments", func(a, b *unfundedCommitmentRow) int { return a.key().compare(b.key()) }),
		registry: newSorter(dir, "positions", func(a, b *positionRow) int {
			return cmp.Or(cmp.Compare(a.FundID, b.FundID), cmp.Compare(a.PositionID, b.PositionID))
		}),
		refs: newSorter(dir, "position_refs", func(a, b *positionRef) int {
			return cmp.Or(cmp.Compare(a.FundID, b.FundID), cmp.Compare(a.PositionID, b.PositionID),
				cmp.Compare(a.DocumentID, b.DocumentID))
		}),
	}
}

// add files a scanned row; once budget rows are held, the largest buffer
// is spilled.
func (s *sorts) add(row any, budget int) error {
	switch r := row.(type) {
	case headRow:
		s.scanned.add(r)
	case latestRow:
		s.latest.add(r)
	case documentVersionRow:
		s.versions.add(r)
	case capitalActivityRow:
		s.activities.add(r)
	case capitalCallRow:
		s.calls.add(r)
	case distributionRow:
		s.dists.add(r)
	case unfundedCommitmentRow:
		s.unfunded.add(r)
	case positionRow:
		s.registry.add(r)
	default:
		return fmt.Errorf("export: unexpected row %T", row)
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

// write joins every dataset with the heads and writes its files, in the
// order of Datasets. Each sort is removed once its dataset is written.
func (x *exporter) write(ctx context.Context) ([]DatasetManifest, error) {
	s := x.sorts
	var out []DatasetManifest
	step := func(err error, ws ...closer) error {
		var ferr error
		out, ferr = finish(ctx, out, err, ws...)
		return ferr
	}

	// documents and document_versions come from the same history records:
	// every committed version up to the head, and the head's own version.
	docs := newDatasetWriter[documentRow](x, "documents")
	versions := newDatasetWriter[documentVersionRow](x, "document_versions")
	err := joinHeads(s.heads, s.versions, func(r *documentVersionRow) (string, string) { return r.FundID, r.DocumentID },
		func(r *documentVersionRow, h *headRow) error {
			if r.Version > h.Version {
				return nil // committed after the Scan read the head
			}
			r.IsLatest = r.Version == h.Version
			if err := versions.write(ctx, *r); err != nil {
				return err
			}
			if !r.IsLatest {
				return nil
			}
			return docs.write(ctx, r.documentRow)
		})
	s.versions.remove()
	if err := step(err, docs, versions); err != nil {
		return nil, err
	}

	activities := newDatasetWriter[capitalActivityRow](x, "capital_activities")
	err = joinHeads(s.heads, s.activities, func(r *capitalActivityRow) (string, string) { return r.FundID, r.DocumentID },
		func(r *capitalActivityRow, h *headRow) error {
			if r.DocumentVersion != h.Version {
				return nil
			}
			return activities.write(ctx, *r)
		})
	s.activities.remove()
	if err := step(err, activities); err != nil {
		return nil, err
	}

	calls, err := writeItems(ctx, x, "capital_calls", fund.CapitalCall, s.calls, (*capitalCallRow).key, (*capitalCallRow).ref)
	if err := step(err, calls); err != nil {
		return nil, err
	}
	dists, err := writeItems(ctx, x, "distributions", fund.Distribution, s.dists, (*distributionRow).key, (*distributionRow).ref)
	if err := step(err, dists); err != nil {
		return nil, err
	}
	unfunded, err := writeItems(ctx, x, "unfunded_commitments", fund.UnfundedCommitment, s.unfunded, (*unfundedCommitmentRow).key, (*unfundedCommitmentRow).ref)
	if err := step(err, unfunded); err != nil {
		return nil, err
	}
	s.heads.remove()

	positions := newDatasetWriter[positionRow](x, "positions")
	err = x.writePositions(ctx, positions)
	s.registry.remove()
	s.refs.remove()
	if err := step(err, positions); err != nil {
		return nil, err
	}
	return out, nil
}

// checkHeads joins the scanned heads with the scanned latest view, both
// sorted by document, and files each head, with what the check found, in
// the heads sort by fund and document that every dataset is joined with.
//
// A Scan is not a snapshot across partitions: a version committed while it
// runs can have its head read after its version partition was passed,
// before (or while) that partition was staged. The head does not say how
// many items its version has, but the latest view does, once it is at the
// head's version: materializing version N leaves exactly N's items and
// tombstones, all marked N, and only then marks the head materialized. The
// head sorts first in its partition, so the Scan reads it before the latest
// view's items; if the head it read is materialized and every latest item
// read after it is at the head's version, no later version had begun to
// change that view, and its live items are the version's items. So a head
// is Whole when it is materialized, every latest item is at its version,
// and the live items name as many positions as the head records; Expect
// then counts the version's items of each kind. writeItems compares those
// counts with the rows the Scan found and reads the version again when they
// differ or the head is not Whole.
func (x *exporter) checkHeads() error {
	s := x.sorts
	hs, err := s.scanned.iterate()
	if err != nil {
		return err
	}
	defer hs.Close()
	ls, err := s.latest.iterate()
	if err != nil {
		return err
	}
	defer ls.Close()
	lp := &peeker[latestRow]{src: ls}
	for {
		h, ok, err := hs.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		h.Whole, h.Expect = h.Materialized, [3]int32{}
		positions, lastPos := int32(0), ""
		for {
			r, err := lp.peek()
			if err != nil {
				return err
			}
			if r == nil || r.DocumentID > h.DocumentID {
				break
			}
			lp.take()
			if r.DocumentID < h.DocumentID {
				continue // a latest view without a head: nothing reads it
			}
			if r.Version != h.Version {
				h.Whole = false
			}
			if r.Tombstone {
				continue
			}
			h.Expect[r.Kind]++
			if positions == 0 || r.PositionID != lastPos {
				positions, lastPos = positions+1, r.PositionID
			}
		}
		if positions != h.PositionCount {
			h.Whole = false
		}
		s.heads.add(h)
		if s.heads.buffered() >= x.cfg.MemoryRows {
			if err := s.heads.spill(); err != nil {
				return err
			}
		}
	}
	hs.Close()
	ls.Close()
	s.scanned.remove()
	s.latest.remove()
	return s.heads.settle()
}

// writeItems writes one position-level dataset. Its rows come from version
// partitions, and only the head's commit counts, so a staged version that
// never committed (or lost the race for its version number) is left out.
// A document whose rows the Scan may have caught short (see checkHeads) is
// read again from its version partition with a Query, so every document is
// whole at its head's version. Each row written also records, for the
// positions dataset, that a committed document reports its position.
func writeItems[T any](ctx context.Context, x *exporter, name string, kind fund.ItemKind, rows *sorter[T], key func(*T) itemKey, ref func(*T) positionRef) (*datasetWriter[T], error) {
	w := newDatasetWriter[T](x, name)
	refs := x.sorts.refs
	k := kindIndex(kind)
	err := eachDocument(x.sorts.heads, rows, key, func(h *headRow, doc []T) error {
		if !h.Whole || len(doc) != int(h.Expect[k]) {
			var err error
			if doc, err = reread[T](ctx, x, h, kind); err != nil {
				return err
			}
		}
		for i := range doc {
			refs.add(ref(&doc[i]))
			if refs.buffered() >= x.cfg.MemoryRows {
				if err := refs.spill(); err != nil {
					return err
				}
			}
			if err := w.write(ctx, doc[i]); err != nil {
				return err
			}
		}
		return nil
	})
	rows.remove()
	return w, err
}

// reread reads the items of one kind of a head's version from its version
// partition: immutable, and complete since before the head named it. A
// Query on one partition, never a Scan.
func reread[T any](ctx context.Context, x *exporter, h *headRow, kind fund.ItemKind) ([]T, error) {
	pk := store.VersionPK(h.DocumentID, h.CommitID)
	it := x.cfg.Table.Get(store.AttrPK, pk).Range(store.AttrSK, dynamo.BeginsWith, store.VersionPositionsPrefix).
		Filter("$ = ?", "Type", kind.Type()).Consistent(true).Iter()
	var out []T
	for {
		var item store.Item
		if !it.Next(ctx, &item) {
			break
		}
		row, err := classify(&item)
		if err != nil {
			return nil, err
		}
		r, ok := row.(T)
		if !ok {
			return nil, fmt.Errorf("export: re-read %s / %s: unexpected row %T", item.PK, item.SK, row)
		}
		out = append(out, r)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("export: re-read version %d of document %s: %w", h.Version, h.DocumentID, err)
	}
	x.event(Event{Kind: EventReread, Dataset: kind.Type(), Key: pk, Rows: int64(len(out))})
	return out, nil
}

// eachDocument walks heads and rows, both sorted by fund and document, and
// calls fn once per head with the rows of its document at the head's commit
// (none, when the Scan found none). Rows of other commits, and of documents
// without a head, are dropped. It holds one document's rows at a time.
func eachDocument[T any](heads *sorter[headRow], rows *sorter[T], key func(*T) itemKey, fn func(*headRow, []T) error) error {
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
	rp := &peeker[T]{src: rm}
	var doc []T
	for {
		h, ok, err := hm.next()
		if err != nil || !ok {
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
			if c := cmp.Or(cmp.Compare(k.fund, h.FundID), cmp.Compare(k.doc, h.DocumentID)); c > 0 {
				break
			} else if c == 0 && k.commit == h.CommitID {
				doc = append(doc, *r)
			}
			rp.take()
		}
		if err := fn(&h, doc); err != nil {
			return err
		}
	}
}

// writePositions joins the fund registries with the references of
// committed documents: a position is exported once at least one document
// reports it at its latest committed version, so a position registered by
// an ingest that never committed stays out. A position that a document
// reports but whose registry item the Scan passed before it was written
// (an ingest during the Scan) is read with one GetItem.
func (x *exporter) writePositions(ctx context.Context, w *datasetWriter[positionRow]) error {
	reg, err := x.sorts.registry.iterate()
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
// whose registry item the Scan did not find: the registry item was written
// after the Scan passed its place (registry items are written after the
// commit), or not yet, if the writer died between its commit and its
// registry write. It reads the registry item, then the position's claim,
// with one GetItem each; failing both, it takes what the first document
// that reports the position says of it (its investor and currency, which
// the claim fixed before that document could commit).
func (x *exporter) lookupPosition(ctx context.Context, p *positionRow, ref *positionRef) error {
	p.InvestorID, p.Currency, p.RegisteredAt = ref.InvestorID, ref.Currency, ref.CreatedAt
	for _, key := range [][2]string{
		{store.FundPK(p.FundID), store.FundPositionSK(p.PositionID)},
		{store.PositionClaimPK(p.PositionID), store.PositionClaimSK},
	} {
		var it store.Item
		err := x.cfg.Table.Get(store.AttrPK, key[0]).Range(store.AttrSK, dynamo.Equal, key[1]).Consistent(true).One(ctx, &it)
		if errors.Is(err, dynamo.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("export: read position %s of fund %s: %w", p.PositionID, p.FundID, err)
		}
		x.event(Event{Kind: EventReread, Dataset: "positions", Key: key[0] + " / " + key[1], Rows: 1})
		if it.FundID == p.FundID && it.InvestorID == ref.InvestorID && !it.CreatedAt.IsZero() {
			p.Currency, p.RegisteredAt = cmp.Or(it.Currency, p.Currency), it.CreatedAt.UTC()
			return nil
		}
	}
	return nil
}

// joinHeads walks rows and heads, both sorted by fund and document, and
// calls emit for every row whose document has a head. Rows of documents
// without a head (a first version that never committed) are dropped.
func joinHeads[T any](heads *sorter[headRow], rows *sorter[T], key func(*T) (fund, doc string), emit func(*T, *headRow) error) error {
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
	hp := &peeker[headRow]{src: hm}
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

// closer is a dataset writer of any row type.
type closer interface {
	close(ctx context.Context) (DatasetManifest, error)
	abort()
}

// finish closes the writers of one pass (or aborts them after err) and
// appends their manifests.
func finish(ctx context.Context, out []DatasetManifest, err error, ws ...closer) ([]DatasetManifest, error) {
	if err != nil {
		for _, w := range ws {
			w.abort()
		}
		return nil, err
	}
	for i, w := range ws {
		d, err := w.close(ctx)
		if err != nil {
			for _, rest := range ws[i+1:] {
				rest.abort()
			}
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// datasetWriter writes one dataset's rows, in order, into Parquet files
// rolled near the target size.
type datasetWriter[T any] struct {
	x        *exporter
	name     string
	manifest DatasetManifest

	obj         Object
	buf         *bufio.Writer
	count       *countingWriter
	pw          *parquet.GenericWriter[T]
	key         string
	fileRows    int64
	groupRows   int64
	bytesPerRow float64
	batch       []T
}

func newDatasetWriter[T any](x *exporter, name string) *datasetWriter[T] {
	return &datasetWriter[T]{x: x, name: name, manifest: DatasetManifest{Name: name, Files: []FileManifest{}}, bytesPerRow: 64}
}

const batchRows = 1024

func (w *datasetWriter[T]) write(ctx context.Context, r T) error {
	if w.pw == nil {
		if err := w.open(ctx); err != nil {
			return err
		}
	}
	w.batch = append(w.batch, r)
	w.fileRows++
	w.groupRows++
	if len(w.batch) == batchRows {
		if err := w.flushBatch(); err != nil {
			return err
		}
	}
	// End the row group when it is full or when, by the size per row seen
	// so far, the file would reach its target.
	target := w.x.cfg.TargetFileBytes
	if w.groupRows < w.x.cfg.RowGroupRows && float64(w.count.n)+float64(w.groupRows)*w.bytesPerRow < float64(target) {
		return nil
	}
	if err := w.flushBatch(); err != nil {
		return err
	}
	if err := w.pw.Flush(); err != nil {
		return fmt.Errorf("export: %s: %w", w.name, err)
	}
	w.groupRows = 0
	if w.count.n > 0 {
		w.bytesPerRow = float64(w.count.n) / float64(w.fileRows)
	}
	if w.count.n >= target*9/10 {
		return w.closeFile()
	}
	return nil
}

func (w *datasetWriter[T]) flushBatch() error {
	if len(w.batch) == 0 {
		return nil
	}
	if _, err := w.pw.Write(w.batch); err != nil {
		return fmt.Errorf("export: %s: %w", w.name, err)
	}
	clear(w.batch)
	w.batch = w.batch[:0]
	return nil
}

func (w *datasetWriter[T]) open(ctx context.Context) error {
	w.key = fmt.Sprintf("%spart-%05d.parquet", runPrefix(w.name, w.x.cfg.Date, w.x.runID), len(w.manifest.Files))
	obj, err := w.x.cfg.Sink.Create(ctx, w.key)
	if err != nil {
		return fmt.Errorf("export: create %s: %w", w.key, err)
	}
	codec, _ := codec(w.x.cfg.Compression)
	// parquet-go writes unbuffered into the counter, so the count is the
	// file's size so far; the buffer below it keeps writes to the sink large.
	w.obj, w.buf = obj, bufio.NewWriterSize(obj, 1<<20)
	w.count = &countingWriter{w: w.buf, p: w.x.cfg.Progress}
	w.pw = parquet.NewGenericWriter[T](w.count,
		parquet.WriteBufferSize(0),
		parquet.Compression(codec),
		parquet.ColumnPageBuffers(parquet.NewFileBufferPool(w.x.tmp, "pages-*")),
		parquet.CreatedBy("fundsvc export", fmt.Sprint(SchemaVersion), w.x.runID),
		parquet.KeyValueMetadata("fundsvc.dataset", w.name),
		parquet.KeyValueMetadata("fundsvc.snapshot_date", w.x.cfg.Date.String()),
		parquet.KeyValueMetadata("fundsvc.schema_version", fmt.Sprint(SchemaVersion)),
	)
	w.fileRows, w.groupRows = 0, 0
	return nil
}

func (w *datasetWriter[T]) closeFile() error {
	if err := w.flushBatch(); err != nil {
		return err
	}
	if err := w.pw.Close(); err != nil {
		w.abort()
		return fmt.Errorf("export: finish %s: %w", w.key, err)
	}
	if err := w.buf.Flush(); err != nil {
		w.abort()
		return fmt.Errorf("export: write %s: %w", w.key, err)
	}
	if err := w.obj.Close(); err != nil {
		w.pw, w.obj = nil, nil
		return fmt.Errorf("export: write %s: %w", w.key, err)
	}
	f := FileManifest{Key: w.key, URI: w.x.cfg.Sink.URI(w.key), Rows: w.fileRows, Bytes: w.count.n}
	w.manifest.Files = append(w.manifest.Files, f)
	w.manifest.Rows += f.Rows
	w.manifest.Bytes += f.Bytes
	w.x.cfg.Progress.RowsWritten.Add(f.Rows)
	w.pw, w.obj = nil, nil
	w.x.event(Event{Kind: EventFile, Dataset: w.name, Key: f.Key, Rows: f.Rows, Bytes: f.Bytes})
	return nil
}

func (w *datasetWriter[T]) close(context.Context) (DatasetManifest, error) {
	if w.pw != nil {
		if err := w.closeFile(); err != nil {
			return DatasetManifest{}, err
		}
	}
	m := w.manifest
	w.x.event(Event{Kind: EventDataset, Dataset: w.name, Rows: m.Rows, Bytes: m.Bytes, Files: len(m.Files)})
	return m, nil
}

func (w *datasetWriter[T]) abort() {
	if w.obj != nil {
		w.obj.Abort()
	}
	w.pw, w.obj = nil, nil
}

// countingWriter counts the bytes of the file being written.
type countingWriter struct {
	w io.Writer
	n int64
	p *Progress
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.p.BytesWritten.Add(int64(n))
	return n, err
}

// codec returns the Parquet compression codec named by the configuration.
func codec(name string) (compress.Codec, error) {
	switch name {
	case "zstd":
		return &exportZstd, nil
	case "snappy":
		return &parquet.Snappy, nil
	}
	return nil, fmt.Errorf("export: compression %q: want zstd or snappy", name)
}
