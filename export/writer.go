package export

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// Parquet files: a dataset's rows, in order, rolled near the target size.

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
	first, last clusterKey // of the open file's rows

	// In an incremental export, the previous snapshot's files of the
	// dataset, merged with the rows written (see merge.go).
	base *baseFiles[T]
}

func newDatasetWriter[T any](x *exporter, name string) *datasetWriter[T] {
	w := &datasetWriter[T]{x: x, name: name, manifest: DatasetManifest{Name: name, Files: []FileManifest{}}, bytesPerRow: 64}
	if x.inc != nil {
		w.base = newBaseFiles[T](x, name)
	}
	return w
}

const batchRows = 1024

// write writes r, a row of the dataset in its order. In an incremental
// export the previous snapshot's rows and files that come before r are
// written or reused first.
func (w *datasetWriter[T]) write(ctx context.Context, r T) error {
	if w.base != nil {
		if err := w.base.upTo(ctx, w, clusterOf(&r), false); err != nil {
			return err
		}
	}
	return w.writeRow(ctx, r)
}

// writeRow appends r to the open file, opening one if none is.
func (w *datasetWriter[T]) writeRow(ctx context.Context, r T) error {
	k := clusterOf(&r)
	if w.pw == nil || w.fileRows == 0 {
		w.first = k
	}
	w.last = k
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
	f := FileManifest{Key: w.key, URI: w.x.cfg.Sink.URI(w.key), Rows: w.fileRows, Bytes: w.count.n, First: w.first, Last: w.last}
	w.manifest.Files = append(w.manifest.Files, f)
	w.manifest.Rows += f.Rows
	w.manifest.Bytes += f.Bytes
	w.x.cfg.Progress.RowsWritten.Add(f.Rows)
	w.pw, w.obj = nil, nil
	w.x.event(Event{Kind: EventFile, Dataset: w.name, Key: f.Key, Rows: f.Rows, Bytes: f.Bytes})
	return nil
}

func (w *datasetWriter[T]) close(ctx context.Context) (DatasetManifest, error) {
	if w.base != nil {
		if err := w.base.upTo(ctx, w, clusterKey{}, true); err != nil {
			return DatasetManifest{}, err
		}
		w.base.close()
	}
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
	if w.base != nil {
		w.base.close()
	}
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
