package export

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/fundsvc/fundsvc/store"
)

// sorter is an external merge sort: rows are buffered in memory, and when
// the exporter's row budget is spent the largest buffer is sorted and
// spilled to a run file (JSON lines) in a temporary directory. (Not gob,
// which drops zero values: a pointer to 0, an optional DATE of 1970-01-01,
// would come back nil.) Reading merges all runs and the buffer in one
// pass, so memory depends on the budget and on the number of runs (a
// 64 KiB read buffer each), which grows with the table.
type sorter[T any] struct {
	name string
	cmp  func(a, b *T) int
	dir  string
	buf  []T
	runs []string
	// sorted says the buffer is sorted, so iterate leaves it be: datasets
	// written at once iterate the heads at once.
	sorted bool
}

// inPlace sorts rows by cmp without copying them to compare.
type inPlace[T any] struct {
	rows []T
	cmp  func(a, b *T) int
}

func (p inPlace[T]) Len() int           { return len(p.rows) }
func (p inPlace[T]) Less(i, j int) bool { return p.cmp(&p.rows[i], &p.rows[j]) < 0 }
func (p inPlace[T]) Swap(i, j int)      { p.rows[i], p.rows[j] = p.rows[j], p.rows[i] }

func newSorter[T any](dir, name string, cmp func(a, b *T) int) *sorter[T] {
	return &sorter[T]{name: name, cmp: cmp, dir: dir}
}

func (s *sorter[T]) add(r T)       { s.buf, s.sorted = append(s.buf, r), false }
func (s *sorter[T]) buffered() int { return len(s.buf) }

// sortBuffer sorts the buffer in place, comparing rows where they lie
// (slices.SortFunc would hand the comparison copies of these wide rows).
func (s *sorter[T]) sortBuffer() {
	if !s.sorted {
		sort.Sort(inPlace[T]{s.buf, s.cmp})
		s.sorted = true
	}
}

// spill writes the sorted buffer to a new run file and empties the buffer.
func (s *sorter[T]) spill() error {
	if len(s.buf) == 0 {
		return nil
	}
	s.sortBuffer()
	f, err := os.CreateTemp(s.dir, s.name+"-run-*.jsonl")
	if err != nil {
		return fmt.Errorf("spill %s: %w", s.name, err)
	}
	w := bufio.NewWriterSize(f, 256<<10)
	enc := json.NewEncoder(w)
	for i := range s.buf {
		if err := enc.Encode(&s.buf[i]); err != nil {
			f.Close()
			return fmt.Errorf("spill %s: %w", s.name, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("spill %s: %w", s.name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("spill %s: %w", s.name, err)
	}
	s.runs = append(s.runs, f.Name())
	clear(s.buf)
	s.buf = s.buf[:0]
	return nil
}

// settle ends the adding: a sort that has spilled runs spills the rest of
// its buffer too and lets the buffer's memory go, so the datasets written
// first do not share the memory with buffers that wait for their turn; a
// sort that never spilled keeps its rows in memory.
func (s *sorter[T]) settle() error {
	if len(s.runs) == 0 {
		return nil
	}
	if err := s.spill(); err != nil {
		return err
	}
	s.buf = nil
	return nil
}

// iterate returns the rows in order. It may be called more than once once
// adding has stopped; every call reads the runs afresh.
func (s *sorter[T]) iterate() (*merge[T], error) {
	s.sortBuffer()
	m := &merge[T]{cmp: s.cmp}
	for _, path := range s.runs {
		f, err := os.Open(path)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("read %s run: %w", s.name, err)
		}
		src := &runReader[T]{dec: json.NewDecoder(bufio.NewReaderSize(f, 64<<10))}
		m.closers = append(m.closers, f)
		if err := m.push(src); err != nil {
			m.Close()
			return nil, fmt.Errorf("read %s run: %w", s.name, err)
		}
	}
	if err := m.push(&sliceReader[T]{rows: s.buf}); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// remove deletes the run files.
func (s *sorter[T]) remove() {
	for _, path := range s.runs {
		_ = os.Remove(path)
	}
	s.runs, s.buf = nil, nil
}

// A source yields rows in order; ok is false at the end.
type source[T any] interface {
	next() (row T, ok bool, err error)
}

type runReader[T any] struct {
	dec *json.Decoder
}

func (r *runReader[T]) next() (T, bool, error) {
	var row T // fresh each time: a decoder leaves absent fields alone
	err := r.dec.Decode(&row)
	if errors.Is(err, io.EOF) {
		return row, false, nil
	}
	return row, err == nil, err
}

type sliceReader[T any] struct {
	rows []T
	i    int
}

func (r *sliceReader[T]) next() (T, bool, error) {
	if r.i == len(r.rows) {
		var zero T
		return zero, false, nil
	}
	r.i++
	return r.rows[r.i-1], true, nil
}

// merge is a k-way merge of sorted sources.
type merge[T any] struct {
	cmp     func(a, b *T) int
	heads   []mergeHead[T]
	closers []io.Closer
}

type mergeHead[T any] struct {
	row T
	src source[T]
}

func (m *merge[T]) push(src source[T]) error {
	row, ok, err := src.next()
	if err != nil || !ok {
		return err
	}
	heap.Push((*mergeHeap[T])(m), mergeHead[T]{row: row, src: src})
	return nil
}

// next returns the smallest remaining row.
func (m *merge[T]) next() (T, bool, error) {
	if len(m.heads) == 0 {
		var zero T
		return zero, false, nil
	}
	top := &m.heads[0]
	row := top.row
	nextRow, ok, err := top.src.next()
	if err != nil {
		return row, false, err
	}
	if ok {
		top.row = nextRow
		heap.Fix((*mergeHeap[T])(m), 0)
	} else {
		heap.Pop((*mergeHeap[T])(m))
	}
	return row, true, nil
}

// Close closes the run files.
func (m *merge[T]) Close() {
	for _, c := range m.closers {
		_ = c.Close()
	}
	m.closers = nil
}

type mergeHeap[T any] merge[T]

func (h *mergeHeap[T]) Len() int           { return len(h.heads) }
func (h *mergeHeap[T]) Less(i, j int) bool { return h.cmp(&h.heads[i].row, &h.heads[j].row) < 0 }
func (h *mergeHeap[T]) Swap(i, j int)      { h.heads[i], h.heads[j] = h.heads[j], h.heads[i] }
func (h *mergeHeap[T]) Push(x any)         { h.heads = append(h.heads, x.(mergeHead[T])) }
func (h *mergeHeap[T]) Pop() any {
	last := h.heads[len(h.heads)-1]
	h.heads = h.heads[:len(h.heads)-1]
	return last
}

// peeker lets a join look at the next row without taking it.
type peeker[T any] struct {
	src  source[T]
	row  T
	ok   bool
	read bool
}

func (p *peeker[T]) peek() (*T, error) {
	if !p.read {
		row, ok, err := p.src.next()
		if err != nil {
			return nil, err
		}
		p.row, p.ok, p.read = row, ok, true
	}
	if !p.ok {
		return nil, nil
	}
	return &p.row, nil
}

func (p *peeker[T]) take() { p.read = false }

// addRow adds a row of the sorter's type, given as any.
func (s *sorter[T]) addRow(r any) { s.add(r.(T)) }

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
