package export

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// sorts holds one sort per kind of scanned row, all sorted by fund and
// document first, and keeps their joint memory budget.
type sorts struct {
	heads      *sorter[headRow]
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
	return []spiller{s.heads, s.versions, s.activities, s.calls, s.dists, s.unfunded, s.registry}
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
		s.heads.add(r)
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

	calls, err := writeItems(ctx, x, "capital_calls", s.calls, (*capitalCallRow).key)
	if err := step(err, calls); err != nil {
		return nil, err
	}
	dists, err := writeItems(ctx, x, "distributions", s.dists, (*distributionRow).key)
	if err := step(err, dists); err != nil {
		return nil, err
	}
	unfunded, err := writeItems(ctx, x, "unfunded_commitments", s.unfunded, (*unfundedCommitmentRow).key)
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

// writeItems writes one position-level dataset. Its rows come from version
// partitions, and only the head's commit counts, so a staged version that
// never committed (or lost the race for its version number) is left out.
// Each row written also records, for the positions dataset, that a
// committed document reports its position.
func writeItems[T any](ctx context.Context, x *exporter, name string, rows *sorter[T], key func(*T) itemKey) (*datasetWriter[T], error) {
	w := newDatasetWriter[T](x, name)
	refs := x.sorts.refs
	err := joinHeads(x.sorts.heads, rows, func(r *T) (string, string) { k := key(r); return k.fund, k.doc },
		func(r *T, h *headRow) error {
			k := key(r)
			if k.commit != h.CommitID {
				return nil
			}
			refs.add(positionRef{FundID: k.fund, PositionID: k.pos, DocumentID: k.doc, AsOf: k.asOf})
			if refs.buffered() >= x.cfg.MemoryRows {
				if err := refs.spill(); err != nil {
					return err
				}
			}
			return w.write(ctx, *r)
		})
	rows.remove()
	return w, err
}

// writePositions joins the fund registries with the references of
// committed documents: a position is exported once at least one document
// reports it at its latest committed version, so a position registered by
// an ingest that never committed stays out.
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
	rp := &peeker[positionRef]{src: refs}
	for {
		p, ok, err := reg.next()
		if err != nil || !ok {
			return err
		}
		lastDoc := ""
		for {
			r, err := rp.peek()
			if err != nil {
				return err
			}
			if r == nil || cmp.Or(cmp.Compare(r.FundID, p.FundID), cmp.Compare(r.PositionID, p.PositionID)) > 0 {
				break
			}
			rp.take()
			if r.FundID != p.FundID || r.PositionID != p.PositionID {
				continue // a reference without a registry item
			}
			if r.DocumentID != lastDoc {
				lastDoc = r.DocumentID
				p.DocumentCount++
			}
			if p.DocumentCount == 1 { // the first document (dates before 1970 are negative)
				p.FirstAsOf, p.LastAsOf = r.AsOf, r.AsOf
			}
			p.FirstAsOf, p.LastAsOf = min(p.FirstAsOf, r.AsOf), max(p.LastAsOf, r.AsOf)
		}
		if p.DocumentCount > 0 {
			if err := w.write(ctx, p); err != nil {
				return err
			}
		}
	}
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
