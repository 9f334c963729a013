package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// Clustering, and the merge of an incremental export with the files of the
// snapshot it starts from.
//
// Every dataset's rows are sorted by a cluster key, fund then document
// (fund then position for positions), and its files cover consecutive key
// ranges, each recorded in the manifest (FileManifest.First and Last). A
// changed document's rows can therefore only be in the files whose range
// holds its key: an incremental export rewrites those files (their rows
// less the changed documents', merged with the changed documents' new
// rows) and names every other file of the previous snapshot as it is.
// Boundaries stay where they were, so the next day's changes dirty files
// of their own. A key that falls between two files' ranges (a new
// document) goes into the file before it, which is rewritten, rather than
// into a small file of its own.

// clusterKey is the key a dataset's rows are clustered by.
type clusterKey [2]string

func (k clusterKey) compare(o clusterKey) int {
	return cmp.Or(cmp.Compare(k[0], o[0]), cmp.Compare(k[1], o[1]))
}

// clusterOf is the cluster key of a row of any dataset.
func clusterOf(r any) clusterKey {
	switch r := r.(type) {
	case *documentRow:
		return clusterKey{r.FundID, r.DocumentID}
	case *documentVersionRow:
		return clusterKey{r.FundID, r.DocumentID}
	case *capitalActivityRow:
		return clusterKey{r.FundID, r.DocumentID}
	case interface{ key() itemKey }: // a position-level row
		k := r.key()
		return clusterKey{k.fund, k.doc}
	case *transactionLineRow:
		return clusterKey{r.FundID, r.DocumentID}
	case *positionRow:
		return clusterKey{r.FundID, r.PositionID}
	case *fundRow:
		return clusterKey{r.FundID, ""}
	case *investorRow:
		return clusterKey{r.InvestorID, ""}
	}
	panic(fmt.Sprintf("export: no cluster key for %T", r))
}

// keyRange is a closed range of cluster keys that an incremental export
// replaces: one changed document, or every position of a fund.
type keyRange struct{ lo, hi clusterKey }

// baseFiles are the previous snapshot's files of one dataset, in key
// order, as a datasetWriter of an incremental export goes through them.
type baseFiles[T any] struct {
	x     *exporter
	name  string
	set   *dataset
	files []FileManifest
	dirty []bool // the file holds, or would take, rows of a changed key
	next  int    // the next file to reuse or rewrite
	cur   *baseReader[T]
}

func newBaseFiles[T any](x *exporter, name string) *baseFiles[T] {
	d, _ := x.inc.base.Dataset(name)
	b := &baseFiles[T]{x: x, name: name, set: datasetNamed[name], files: d.Files, dirty: make([]bool, len(d.Files))}
	for _, r := range x.inc.ranges(name) {
		b.mark(r)
	}
	return b
}

// mark marks dirty the files whose range meets r or, if none does, the
// file before r (the first file if r comes first): its rows go there.
func (b *baseFiles[T]) mark(r keyRange) {
	absorb := 0
	for i, f := range b.files {
		if f.First.compare(r.hi) <= 0 && f.Last.compare(r.lo) >= 0 {
			b.dirty[i] = true
			absorb = -1
		}
		if absorb >= 0 && f.First.compare(r.lo) <= 0 {
			absorb = i
		}
	}
	if absorb >= 0 && len(b.files) > 0 {
		b.dirty[absorb] = true
	}
}

// upTo brings w up to key k: the previous snapshot's files before k are
// reused whole if clean, and the rows of dirty ones up to k written again,
// less the changed keys' rows. At the end (end true) it goes through every
// file left.
func (b *baseFiles[T]) upTo(ctx context.Context, w *datasetWriter[T], k clusterKey, end bool) error {
	for {
		if b.cur != nil {
			for {
				r, err := b.cur.peek()
				if err != nil {
					return err
				}
				if r == nil {
					b.cur.close()
					b.cur = nil
					break
				}
				rk := clusterOf(r)
				if !end && rk.compare(k) > 0 {
					return nil
				}
				row := *r
				b.cur.take()
				if b.x.inc.replaces(b.set, &row) {
					continue
				}
				if b.set.history == nil { // a row of a latest version
					if err := b.x.baseRef(&row); err != nil {
						return err
					}
				}
				if err := w.writeRow(ctx, row); err != nil {
					return err
				}
			}
			continue
		}
		if b.next >= len(b.files) {
			return nil
		}
		f := b.files[b.next]
		if !end && k.compare(f.First) < 0 {
			return nil // the row goes before this file
		}
		if b.dirty[b.next] {
			rd, err := openBase[T](ctx, b.x, f)
			if err != nil {
				return err
			}
			b.cur = rd
			b.next++
			continue
		}
		if !end && k.compare(f.Last) <= 0 {
			return fmt.Errorf("export: %s: a changed row %v falls in the clean file %s", b.name, k, f.Key)
		}
		if err := b.refsOf(ctx, f); err != nil {
			return err
		}
		if err := w.reuse(f); err != nil {
			return err
		}
		b.next++
	}
}

// refsOf files the references of a clean file of a position-level dataset
// for the changed funds' positions (see exporter.baseRef), if its range
// meets one of those funds.
func (b *baseFiles[T]) refsOf(ctx context.Context, f FileManifest) error {
	var zero T
	if _, ok := any(&zero).(referrer); !ok || b.set.history != nil {
		return nil
	}
	return eachBaseRow(ctx, b.x, []FileManifest{f}, b.x.inc.funds, func(r *T) error { return b.x.baseRef(r) })
}

func (b *baseFiles[T]) close() {
	if b.cur != nil {
		b.cur.close()
		b.cur = nil
	}
}

// reuse names a file of the previous snapshot, unchanged, as the next file
// of the dataset, ending the file being written first to keep key order.
func (w *datasetWriter[T]) reuse(f FileManifest) error {
	if w.pw != nil {
		if err := w.closeFile(); err != nil {
			return err
		}
	}
	w.manifest.Files = append(w.manifest.Files, f)
	w.manifest.Rows += f.Rows
	w.manifest.Bytes += f.Bytes
	w.x.event(Event{Kind: EventReused, Dataset: w.name, Key: f.Key, Rows: f.Rows, Bytes: f.Bytes})
	return nil
}

// baseReader reads the rows of one file of the previous snapshot, copied
// to a temporary file first (Parquet is read from its end, and S3 objects
// are streams).
type baseReader[T any] struct {
	tmp  *os.File
	rd   *parquet.GenericReader[T]
	buf  []T
	i, n int
	eof  bool
}

func openBase[T any](ctx context.Context, x *exporter, f FileManifest) (*baseReader[T], error) {
	src, err := x.cfg.Sink.Open(ctx, f.Key)
	if err != nil {
		return nil, fmt.Errorf("export: read %s of the previous snapshot: %w", f.Key, err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(x.tmp, "base-*.parquet")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	r := &baseReader[T]{tmp: tmp, buf: make([]T, batchRows)}
	size, err := io.Copy(tmp, src)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("export: read %s of the previous snapshot: %w", f.Key, err)
	}
	pf, err := parquet.OpenFile(tmp, size)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("export: open %s of the previous snapshot: %w", f.Key, err)
	}
	r.rd = parquet.NewGenericReader[T](pf)
	return r, nil
}

// peek returns the next row, or nil at the end.
func (r *baseReader[T]) peek() (*T, error) {
	for r.i >= r.n {
		if r.eof {
			return nil, nil
		}
		clear(r.buf)
		n, err := r.rd.Read(r.buf)
		r.i, r.n = 0, n
		if errors.Is(err, io.EOF) {
			r.eof = true
		} else if err != nil {
			return nil, fmt.Errorf("export: read the previous snapshot: %w", err)
		}
	}
	return &r.buf[r.i], nil
}

func (r *baseReader[T]) take() { r.i++ }

func (r *baseReader[T]) close() {
	if r.rd != nil {
		r.rd.Close()
	}
	r.tmp.Close()
	os.Remove(r.tmp.Name())
}

// eachBaseRow calls fn with every row of the files (of the previous
// snapshot) whose range meets one of the funds.
func eachBaseRow[T any](ctx context.Context, x *exporter, files []FileManifest, funds map[string]bool, fn func(*T) error) error {
	for _, f := range files {
		meets := false
		for fund := range funds {
			if f.First[0] <= fund && fund <= f.Last[0] {
				meets = true
				break
			}
		}
		if !meets {
			continue
		}
		rd, err := openBase[T](ctx, x, f)
		if err != nil {
			return err
		}
		for {
			r, err := rd.peek()
			if err != nil || r == nil {
				rd.close()
				if err != nil {
					return err
				}
				break
			}
			if err := fn(r); err != nil {
				rd.close()
				return err
			}
			rd.take()
		}
	}
	return nil
}
