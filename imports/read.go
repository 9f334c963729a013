package imports

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// Limits bound what one file may hold. A zero field takes its default
// (DefaultLimits).
type Limits struct {
	MaxBytes     int64 // the file's size
	MaxRows      int   // its data rows (blank rows do not count)
	MaxDocuments int   // its documents (distinct documentIds)
	MaxPositions int   // the positions of one document, as FUNDSVC_MAX_POSITIONS on PUT
	// MaxProblems bounds the problems File.Errors holds: the first ones by
	// row then column; File.MoreProblems counts the rest.
	MaxProblems int
}

// DefaultLimits are the limits a zero Limits field takes.
var DefaultLimits = Limits{MaxBytes: 32 << 20, MaxRows: 20000, MaxDocuments: 500, MaxPositions: fund.DefaultMaxPositions, MaxProblems: 1000}

// MaxColumns is the most cells a row may hold: XLSX's last column, XFD.
// A wider row (a CSV record) makes the file unreadable (EINVALID), before
// any of its cells is checked.
const MaxColumns = 16384

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxRows <= 0 {
		l.MaxRows = DefaultLimits.MaxRows
	}
	if l.MaxDocuments <= 0 {
		l.MaxDocuments = DefaultLimits.MaxDocuments
	}
	if l.MaxPositions <= 0 {
		l.MaxPositions = DefaultLimits.MaxPositions
	}
	if l.MaxProblems <= 0 {
		l.MaxProblems = DefaultLimits.MaxProblems
	}
	return l
}

// ErrTooLarge is the error of a file over one of its Limits; errors.Is
// finds it in a *LimitError.
var ErrTooLarge = errors.New("imports: the file is over a limit")

// LimitError says which limit a file is over: "bytes", "rows" or
// "documents". Reading stops there: nothing past the limit is read.
type LimitError struct {
	Limit string
	Max   int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the file holds more %s than the limit of %d", e.Limit, e.Max)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// CellError is one problem of a file, where the spreadsheet shows it: the
// import report's problem (wire.ImportProblem, whose fields say what each
// holds), as an error.
type CellError wire.ImportProblem

func (e CellError) Error() string {
	at := e.ColumnLetter
	if at == "" {
		at = "column " + e.Column
	} else {
		at = fmt.Sprintf("%s%d (%s)", e.ColumnLetter, e.Row, e.Column)
	}
	if e.Sheet != "" {
		at = e.Sheet + "!" + at
	}
	return fmt.Sprintf("row %d, %s: %s", e.Row, at, e.Message)
}

// File is what a file holds: its documents and the problems found in it.
type File struct {
	Sheet     string
	Rows      int        // the data rows read (blank rows do not count)
	Documents []Document // in the order of their first rows
	// Errors are the file's first problems by row then column, at most
	// Limits.MaxProblems; MoreProblems counts those left out.
	Errors       []CellError
	MoreProblems int
}

// Document is one document of a file.
type Document struct {
	ID   string
	Rows []int // its rows, in file order; position i is Rows[i]
	// Body is the request body of PUT /v1/documents/{ID} the rows state.
	Body json.RawMessage
	// Document is Body decoded as PUT decodes it; set only when Problems
	// is 0.
	Document fund.Document
	Problems int // how many problems of the file are the document's rows'
}

// Read reads a CSV or XLSX file (format FormatCSV or FormatXLSX) of
// documents from r as it arrives, never holding the file whole. A CSV is
// read one record at a time. An XLSX is read from a file whose sheet
// excelize streams, since a ZIP archive is read from its end: r itself
// when it is a regular file read from its start, else a temporary copy.
//
// The first non-blank row of the first sheet is the header, every later
// non-blank row a position of the document its documentId names. Read
// returns the documents and the problems found, each cell's (CellError) in
// File.Errors. Each cell is decoded a bounded number of times, so the work
// is linear in the file. See docs/imports.md for the cell rules.
//
// Its error is a *LimitError (ErrTooLarge) when the file is over a limit,
// EINVALID when it cannot be read as the format at all or a row is wider
// than MaxColumns, or ctx's error (wrapped) when ctx ends first. The File
// is then what was read so far (its Rows).
func Read(ctx context.Context, r io.Reader, format string, limits Limits) (*File, error) {
	lim := limits.withDefaults()
	var rows sheetRows
	switch format {
	case FormatCSV:
		rows = openCSV(&limitReader{r: r, max: lim.MaxBytes})
	case FormatXLSX:
		x, err := openXLSX(r, lim)
		if err != nil {
			return &File{}, err
		}
		rows = x
	default:
		return &File{}, fund.Invalid("format", "must be %s or %s, got %q", FormatCSV, FormatXLSX, format)
	}
	defer rows.close()
	rd := &reader{ctx: ctx, rows: rows, lim: lim, file: &File{Sheet: rows.name()}, docIndex: map[string]int{},
		problems: &problems{max: lim.MaxProblems}}
	if err := rd.read(); err != nil {
		return rd.file, err
	}
	for i := range rd.docs {
		if err := rd.stopped(rd.docs[i].rows[0].num); err != nil {
			return rd.file, err
		}
		rd.document(rd.docs[i])
	}
	if len(rd.docs) > 0 {
		if err := rd.stopped(rd.docs[len(rd.docs)-1].rows[0].num); err != nil {
			return rd.file, err
		}
	}
	for _, d := range rd.docs {
		rd.file.Documents = append(rd.file.Documents, d.Document)
	}
	rd.file.Errors, rd.file.MoreProblems = rd.problems.sorted()
	return rd.file, nil
}

// stopped returns ctx's error, naming the row the check had come to, once
// ctx has ended.
func (rd *reader) stopped(row int) error {
	if err := rd.ctx.Err(); err != nil {
		return fmt.Errorf("imports: the check stopped at row %d: %w", row, err)
	}
	return nil
}

// problems keeps a file's first problems by row then column, at most max
// (a max-heap while the file is read), and counts the rest: its memory is
// bounded by max whatever the file holds.
type problems struct {
	max   int
	kept  []keptProblem
	total int
}

// keptProblem is a problem and the order it was found in, which orders
// problems of the same cell.
type keptProblem struct {
	e   CellError
	seq int
}

func (p *problems) add(e CellError) {
	k := keptProblem{e: e, seq: p.total}
	p.total++
	if len(p.kept) < p.max {
		heap.Push(p, k)
		return
	}
	if before(k, p.kept[0]) {
		p.kept[0] = k
		heap.Fix(p, 0)
	}
}

// passes reports whether a problem on row, after every row before it,
// would be left out: counting it is enough.
func (p *problems) passes(row int) bool {
	return len(p.kept) == p.max && p.kept[0].e.Row < row
}

// sorted returns the problems kept, by row then column, and how many were
// left out.
func (p *problems) sorted() ([]CellError, int) {
	sort.Slice(p.kept, func(i, j int) bool { return before(p.kept[i], p.kept[j]) })
	out := make([]CellError, len(p.kept))
	for i, k := range p.kept {
		out[i] = k.e
	}
	return out, p.total - len(p.kept)
}

func before(a, b keptProblem) bool {
	if a.e.Row != b.e.Row {
		return a.e.Row < b.e.Row
	}
	if la, lb := a.e.ColumnLetter, b.e.ColumnLetter; la != lb {
		return len(la) < len(lb) || (len(la) == len(lb) && la < lb)
	}
	return a.seq < b.seq
}

// heap.Interface, the latest problem on top.
func (p *problems) Len() int           { return len(p.kept) }
func (p *problems) Less(i, j int) bool { return before(p.kept[j], p.kept[i]) }
func (p *problems) Swap(i, j int)      { p.kept[i], p.kept[j] = p.kept[j], p.kept[i] }
func (p *problems) Push(x any)         { p.kept = append(p.kept, x.(keptProblem)) }
func (p *problems) Pop() any {
	k := p.kept[len(p.kept)-1]
	p.kept = p.kept[:len(p.kept)-1]
	return k
}

// problem records a problem of the file; d is the document of its row,
// nil when the row has none.
func (rd *reader) problem(d *document, e CellError) {
	if d != nil {
		d.Problems++
	}
	rd.problems.add(e)
}

// limitReader reads r until more than max bytes have come, then fails
// with a *LimitError.
type limitReader struct {
	r        io.Reader
	max, got int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.got > l.max {
		return 0, &LimitError{Limit: "bytes", Max: l.max}
	}
	if room := l.max - l.got + 1; int64(len(p)) > room {
		p = p[:room] // one byte past the limit is enough to know
	}
	n, err := l.r.Read(p)
	if l.got += int64(n); l.got > l.max {
		return 0, &LimitError{Limit: "bytes", Max: l.max}
	}
	return n, err
}

// reader is the reading of one file.
type reader struct {
	ctx      context.Context
	rows     sheetRows
	lim      Limits
	file     *File
	header   int            // the header's row
	columns  []*Column      // by column index; nil for a column without a (known) header
	lines    []int          // by column index: a list member's line number
	letterOf map[string]int // column index by header
	// docHeaders are the headers of the document's fields but documentId,
	// in column order: every row of a document repeats them.
	docHeaders []string
	docs       []*document
	docIndex   map[string]int
	unknown    map[int]bool // columns whose header was refused
	problems   *problems
}

// row is one data row: its cells' values for the JSON body, by header.
type row struct {
	num      int
	values   map[string]string // converted: "(1,234.56)" → "-1234.56", serial dates → YYYY-MM-DD
	reported map[string]bool   // cells whose problem is already reported
	errs     []CellError       // the problems of its cells, until its document is known
	passed   int               // problems of its cells left out of the answer (problems.passes)
}

type document struct {
	Document
	rows []*row
}

func (rd *reader) errorAt(rowNum int, header, message string) CellError {
	e := CellError{Sheet: rd.file.Sheet, Row: rowNum, Column: header, Message: message}
	if i, ok := rd.letterOf[header]; ok {
		e.ColumnLetter = columnLetter(i + 1)
	}
	return e
}

// read reads the header and groups the data rows into documents.
func (rd *reader) read() error {
	for {
		num, cells, ok, err := rd.rows.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := rd.stopped(num); err != nil {
			return err
		}
		if len(cells) > MaxColumns {
			return tooWide(num)
		}
		formulas, err := rd.rows.uncached(num)
		if err != nil {
			return err
		}
		if blank(cells) && len(formulas) == 0 {
			continue
		}
		if rd.columns == nil {
			rd.readHeader(num, cells)
			continue
		}
		if rd.file.Rows++; rd.file.Rows > rd.lim.MaxRows {
			return &LimitError{Limit: "rows", Max: int64(rd.lim.MaxRows)}
		}
		if err := rd.readRow(num, cells, formulas); err != nil {
			return err
		}
	}
	if rd.columns == nil {
		rd.problem(nil, CellError{Sheet: rd.file.Sheet, Row: 1, Message: "the file is empty: its first row must be the header (download the template)"})
	}
	return nil
}

// tooWide is the error of a row of more than MaxColumns cells.
func tooWide(row int) error {
	return fund.Invalid("body", "row %d holds more than %d cells, the most a row may hold (column %s, a spreadsheet's last)",
		row, MaxColumns, columnLetter(MaxColumns))
}

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

func (rd *reader) readHeader(num int, cells []string) {
	rd.header = num
	rd.letterOf, rd.unknown = map[string]int{}, map[int]bool{}
	for len(cells) > 0 && strings.TrimSpace(cells[len(cells)-1]) == "" {
		cells = cells[:len(cells)-1] // trailing empty columns
	}
	rd.columns = make([]*Column, len(cells))
	rd.lines = make([]int, len(cells))
	for i, h := range cells {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		letter := columnLetter(i + 1)
		if first, dup := rd.letterOf[h]; dup {
			rd.unknown[i] = true
			rd.problem(nil, CellError{Sheet: rd.file.Sheet, Row: num, Column: h, ColumnLetter: letter,
				Message: fmt.Sprintf("the header %s is given twice (first in column %s); give each column once", h, columnLetter(first+1))})
			continue
		}
		c, line, ok := columnOf(h)
		if !ok {
			rd.unknown[i] = true
			msg := fmt.Sprintf("%q is not a column of an import (see the template's %s sheet or docs/imports.md)", h, ColumnsSheet)
			if s := suggest(h); s != "" {
				msg = fmt.Sprintf("%q is not a column of an import; did you mean %s?", h, s)
			}
			rd.problem(nil, CellError{Sheet: rd.file.Sheet, Row: num, Column: h, ColumnLetter: letter, Message: msg})
			continue
		}
		rd.letterOf[h] = i
		rd.columns[i], rd.lines[i] = &c, line
		if c.scope == scopeDocument && h != DocumentIDHeader {
			rd.docHeaders = append(rd.docHeaders, h)
		}
	}
	if _, ok := rd.letterOf[DocumentIDHeader]; !ok {
		rd.problem(nil, CellError{Sheet: rd.file.Sheet, Row: num, Column: DocumentIDHeader,
			Message: "the header has no documentId column: it groups the rows into documents"})
	}
}

// readRow reads one data row into its document; formulas are its
// columns (from 1) holding a formula without a cached value.
func (rd *reader) readRow(num int, cells []string, formulas map[int]bool) error {
	r := &row{num: num, values: map[string]string{}, reported: map[string]bool{}}
	n := max(len(cells), len(rd.columns))
	for col := range formulas {
		n = max(n, col)
	}
	for i := range n {
		text := ""
		if i < len(cells) {
			text = strings.TrimSpace(cells[i])
		}
		uncached := formulas[i+1]
		if text == "" && !uncached {
			continue
		}
		if i >= len(rd.columns) || rd.columns[i] == nil {
			switch {
			case i < len(rd.columns) && rd.headerUnknown(i):
			case rd.problems.passes(num):
				r.passed++ // left out of the answer: counted, not built
			default:
				r.errs = append(r.errs, CellError{Sheet: rd.file.Sheet, Row: num, ColumnLetter: columnLetter(i + 1),
					Message: "holds a value but its column has no header"})
			}
			continue
		}
		c := rd.columns[i]
		if uncached {
			r.reported[c.Header] = true
			r.errs = append(r.errs, rd.errorAt(num, c.Header,
				"holds a formula without a cached value: open the file in a spreadsheet application, let it calculate and save it, or enter the value itself"))
			continue
		}
		v, msg := cellValue(c.value, text, rd.rows.date1904())
		if msg != "" {
			r.reported[c.Header] = true
			r.errs = append(r.errs, rd.errorAt(num, c.Header, msg))
			continue
		}
		r.values[c.Header] = v
	}
	id, ok := r.values[DocumentIDHeader]
	if !ok {
		if _, has := rd.letterOf[DocumentIDHeader]; has && !r.reported[DocumentIDHeader] {
			r.errs = append(r.errs, rd.errorAt(num, DocumentIDHeader, "is required: it names the document the row belongs to"))
		}
		for _, e := range r.errs {
			rd.problem(nil, e)
		}
		rd.problems.total += r.passed
		return nil
	}
	i, ok := rd.docIndex[id]
	if !ok {
		if len(rd.docs)+1 > rd.lim.MaxDocuments {
			return &LimitError{Limit: "documents", Max: int64(rd.lim.MaxDocuments)}
		}
		i = len(rd.docs)
		rd.docIndex[id] = i
		rd.docs = append(rd.docs, &document{Document: Document{ID: id}})
	}
	d := rd.docs[i]
	for _, e := range r.errs {
		e.DocumentID = id
		rd.problem(d, e)
	}
	rd.problems.total += r.passed
	d.Problems += r.passed
	r.errs = nil
	d.rows = append(d.rows, r)
	d.Rows = append(d.Rows, num)
	return nil
}

// headerUnknown reports whether column i has a header that was refused
// (reported once, on the header row, not on every cell below it).
func (rd *reader) headerUnknown(i int) bool {
	return rd.unknown != nil && rd.unknown[i]
}
