package export

import (
	"cmp"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
)

// The rows of every dataset, one Go struct each: the struct is the Parquet
// schema (parquet-go reads the tags) and, through hiveType, the Athena DDL.
// Columns are flat snake_case; money is DECIMAL(19,4), the exact range of
// fund.Money (15 integer digits, 4 decimal places), stored as a 9-byte
// FIXED_LEN_BYTE_ARRAY because 19 digits do not fit an INT64; dates are DATE
// (days since 1970-01-01); instants are UTC TIMESTAMP in milliseconds.
//
// Fields tagged parquet:"-" are not written: they travel with a row through
// the sort so the committed version can be chosen (see eachDocument).
//
// The line items of a capital call, a distribution and an unfunded
// commitment are declared in fund/lines.go; each has a column here, the
// field of the line's Go name, named after its JSON name in snake_case
// (lineColumns checks it, and fills them), so a new line is one field in
// fund/lines.go and one column here.

// SchemaVersion changes whenever a dataset's columns change; manifests and
// DDL carry it so a reader can tell snapshots of different shapes apart.
const SchemaVersion = 1

// decimal19 is a DECIMAL(19,4) value: the unscaled amount × 10⁴ as a
// big-endian two's-complement integer.
type decimal19 = [9]byte

// documentRow is one version of a document. documents holds each
// document's latest committed version, document_versions every committed one.
type documentRow struct {
	FundID        string    `parquet:"fund_id,dict"`
	DocumentID    string    `parquet:"document_id"`
	Kind          string    `parquet:"kind,dict"`
	Title         string    `parquet:"title"`
	AsOf          int32     `parquet:"as_of,date"`
	Currency      string    `parquet:"currency,dict"`
	PositionCount int32     `parquet:"position_count"`
	Version       int32     `parquet:"version"`
	CommitID      string    `parquet:"commit_id"`
	CreatedAt     time.Time `parquet:"created_at,timestamp(millisecond)"`
	CreatedBy     string    `parquet:"created_by,dict"`
}

// documentVersionRow is a documentRow that says whether it is the latest.
// Parquet and the sort's JSON spill files both flatten the embedded row.
type documentVersionRow struct {
	documentRow
	IsLatest bool `parquet:"is_latest"`
}

// capitalActivityRow is the capital activity of a document's latest version.
type capitalActivityRow struct {
	FundID          string    `parquet:"fund_id,dict"`
	DocumentID      string    `parquet:"document_id"`
	DocumentVersion int32     `parquet:"document_version"`
	AsOf            int32     `parquet:"as_of,date"`
	Currency        string    `parquet:"currency,dict"`
	Amount          decimal19 `parquet:"amount,decimal(4:19)"`
	Status          string    `parquet:"status,dict"`
	ActivityDate    *int32    `parquet:"activity_date,date,optional"`
	Description     string    `parquet:"description"`
	CreatedAt       time.Time `parquet:"created_at,timestamp(millisecond)"`
}

// capitalCallRow is one position's capital call in a document's latest version.
type capitalCallRow struct {
	FundID          string     `parquet:"fund_id,dict"`
	DocumentID      string     `parquet:"document_id"`
	InvestorID      string     `parquet:"investor_id"`
	PositionID      string     `parquet:"position_id"`
	DocumentVersion int32      `parquet:"document_version"`
	AsOf            int32      `parquet:"as_of,date"`
	Currency        string     `parquet:"currency,dict"`
	Amount          decimal19  `parquet:"amount,decimal(4:19)"`
	Status          string     `parquet:"status,dict"`
	DueDate         *int32     `parquet:"due_date,date,optional"`
	Investment      *decimal19 `parquet:"investment,decimal(4:19),optional"`
	ManagementFee   *decimal19 `parquet:"management_fee,decimal(4:19),optional"`
	FundExpenses    *decimal19 `parquet:"fund_expenses,decimal(4:19),optional"`
	CreatedAt       time.Time  `parquet:"created_at,timestamp(millisecond)"`
	CommitID        string     `parquet:"-"`
}

// distributionRow is one position's distribution in a document's latest version.
type distributionRow struct {
	FundID          string     `parquet:"fund_id,dict"`
	DocumentID      string     `parquet:"document_id"`
	InvestorID      string     `parquet:"investor_id"`
	PositionID      string     `parquet:"position_id"`
	DocumentVersion int32      `parquet:"document_version"`
	AsOf            int32      `parquet:"as_of,date"`
	Currency        string     `parquet:"currency,dict"`
	Amount          decimal19  `parquet:"amount,decimal(4:19)"`
	Status          string     `parquet:"status,dict"`
	PaymentDate     *int32     `parquet:"payment_date,date,optional"`
	ReturnOfCapital *decimal19 `parquet:"return_of_capital,decimal(4:19),optional"`
	RealizedGain    *decimal19 `parquet:"realized_gain,decimal(4:19),optional"`
	Income          *decimal19 `parquet:"income,decimal(4:19),optional"`
	Recallable      *decimal19 `parquet:"recallable,decimal(4:19),optional"`
	Withholding     *decimal19 `parquet:"withholding,decimal(4:19),optional"`
	CreatedAt       time.Time  `parquet:"created_at,timestamp(millisecond)"`
	CommitID        string     `parquet:"-"`
}

// unfundedCommitmentRow is one position's unfunded commitment in a
// document's latest version.
type unfundedCommitmentRow struct {
	FundID          string     `parquet:"fund_id,dict"`
	DocumentID      string     `parquet:"document_id"`
	InvestorID      string     `parquet:"investor_id"`
	PositionID      string     `parquet:"position_id"`
	DocumentVersion int32      `parquet:"document_version"`
	AsOf            int32      `parquet:"as_of,date"`
	Currency        string     `parquet:"currency,dict"`
	Amount          decimal19  `parquet:"amount,decimal(4:19)"`
	Status          string     `parquet:"status,dict"`
	Commitment      *decimal19 `parquet:"commitment,decimal(4:19),optional"`
	CreatedAt       time.Time  `parquet:"created_at,timestamp(millisecond)"`
	CommitID        string     `parquet:"-"`
}

// positionRow is one position (one fund plus one investor) that at least
// one document reports at its latest committed version.
type positionRow struct {
	FundID        string    `parquet:"fund_id,dict"`
	PositionID    string    `parquet:"position_id"`
	InvestorID    string    `parquet:"investor_id"`
	Currency      string    `parquet:"currency,dict"`
	RegisteredAt  time.Time `parquet:"registered_at,timestamp(millisecond)"`
	DocumentCount int32     `parquet:"document_count"`
	FirstAsOf     int32     `parquet:"first_as_of,date"`
	LastAsOf      int32     `parquet:"last_as_of,date"`
}

// itemKey is what the join needs of a position-level row.
type itemKey struct {
	fund, doc, pos, commit string
	asOf                   int32
}

func (r *capitalCallRow) key() itemKey {
	return itemKey{r.FundID, r.DocumentID, r.PositionID, r.CommitID, r.AsOf}
}

func (r *distributionRow) key() itemKey {
	return itemKey{r.FundID, r.DocumentID, r.PositionID, r.CommitID, r.AsOf}
}

func (r *unfundedCommitmentRow) key() itemKey {
	return itemKey{r.FundID, r.DocumentID, r.PositionID, r.CommitID, r.AsOf}
}

// compare orders position-level rows by fund, document, position, commit.
func (k itemKey) compare(o itemKey) int {
	return cmp.Or(cmp.Compare(k.fund, o.fund), cmp.Compare(k.doc, o.doc), cmp.Compare(k.pos, o.pos), cmp.Compare(k.commit, o.commit))
}

// positionRef says that a committed document reports a position, and
// what it says of the position (for a position whose registry item the
// Scan did not find; see lookupPosition).
type positionRef struct {
	FundID, PositionID, DocumentID string
	AsOf                           int32
	InvestorID, Currency           string
	CreatedAt                      time.Time
}

func (r *capitalCallRow) ref() positionRef {
	return positionRef{r.FundID, r.PositionID, r.DocumentID, r.AsOf, r.InvestorID, r.Currency, r.CreatedAt}
}

func (r *distributionRow) ref() positionRef {
	return positionRef{r.FundID, r.PositionID, r.DocumentID, r.AsOf, r.InvestorID, r.Currency, r.CreatedAt}
}

func (r *unfundedCommitmentRow) ref() positionRef {
	return positionRef{r.FundID, r.PositionID, r.DocumentID, r.AsOf, r.InvestorID, r.Currency, r.CreatedAt}
}

// Conversions from the store's committed records.

func documentRowOf(r *store.DocumentVersion) documentVersionRow {
	return documentVersionRow{documentRow: documentRow{
		FundID: r.FundID, DocumentID: r.ID, Kind: string(r.Kind), Title: r.Title,
		AsOf: days(r.AsOf), Currency: r.Currency, PositionCount: int32(r.PositionCount),
		Version: int32(r.Version), CommitID: r.CommitID, CreatedAt: r.CreatedAt.UTC(), CreatedBy: r.CreatedBy,
	}}
}

func capitalActivityRowOf(r *store.ActivityVersion) (capitalActivityRow, error) {
	var err error
	row := capitalActivityRow{
		FundID: r.FundID, DocumentID: r.DocumentID, DocumentVersion: int32(r.Version),
		AsOf: days(r.AsOf), Currency: r.Currency, Amount: mustDecimal(&r.Amount, &err),
		Status: string(r.Status), ActivityDate: optDays(r.Date), Description: r.Description, CreatedAt: r.CreatedAt.UTC(),
	}
	if err != nil {
		return row, fmt.Errorf("export: capital activity of version %d of document %s: %w", r.Version, r.DocumentID, err)
	}
	return row, nil
}

func positionRowOf(r *store.RegisteredPosition) positionRow {
	return positionRow{FundID: r.FundID, PositionID: r.PositionID, InvestorID: r.InvestorID,
		Currency: r.Currency, RegisteredAt: r.RegisteredAt.UTC()}
}

// fill sets the columns of a position-level row that are not lines.
func (r *capitalCallRow) fill(v *store.VersionItem, err *error) {
	*r = capitalCallRow{
		FundID: v.FundID, DocumentID: v.DocumentID, InvestorID: v.InvestorID, PositionID: v.PositionID,
		DocumentVersion: int32(v.DocumentVersion), AsOf: days(v.AsOf), Currency: v.Currency,
		Amount: mustDecimal(&v.Amount, err), Status: string(v.Status), DueDate: optDays(v.Date),
		CreatedAt: v.CreatedAt.UTC(), CommitID: v.CommitID,
	}
}

func (r *distributionRow) fill(v *store.VersionItem, err *error) {
	*r = distributionRow{
		FundID: v.FundID, DocumentID: v.DocumentID, InvestorID: v.InvestorID, PositionID: v.PositionID,
		DocumentVersion: int32(v.DocumentVersion), AsOf: days(v.AsOf), Currency: v.Currency,
		Amount: mustDecimal(&v.Amount, err), Status: string(v.Status), PaymentDate: optDays(v.Date),
		CreatedAt: v.CreatedAt.UTC(), CommitID: v.CommitID,
	}
}

func (r *unfundedCommitmentRow) fill(v *store.VersionItem, err *error) {
	*r = unfundedCommitmentRow{
		FundID: v.FundID, DocumentID: v.DocumentID, InvestorID: v.InvestorID, PositionID: v.PositionID,
		DocumentVersion: int32(v.DocumentVersion), AsOf: days(v.AsOf), Currency: v.Currency,
		Amount: mustDecimal(&v.Amount, err), Status: string(v.Status),
		CreatedAt: v.CreatedAt.UTC(), CommitID: v.CommitID,
	}
}

// lineColumn is the column of one line item in a row type: the index of
// the row's field.
type lineColumn struct {
	line  fund.Line
	field []int
}

var lineColumnsCache sync.Map // reflect.Type of the row → []lineColumn

// lineColumns returns the column of every line of lines (a lines struct:
// fund.CallLines, DistributionLines or UnfundedLines) in row (a row type),
// or an error naming a line that has no column, or a column that is not an
// optional DECIMAL(19,4) named after the line.
func lineColumns(row reflect.Type, lines any) ([]lineColumn, error) {
	if v, ok := lineColumnsCache.Load(row); ok {
		return v.([]lineColumn), nil
	}
	var out []lineColumn
	for _, l := range fund.LinesOf(lines) {
		f, ok := row.FieldByName(l.Field)
		if !ok {
			return nil, fmt.Errorf("export: %s has no column for the line %s of fund.%T; add a field %s *decimal19 `parquet:\"%s,decimal(4:19),optional\"`",
				row.Name(), l.Field, lines, l.Field, snakeCase(l.Name))
		}
		want := snakeCase(l.Name) + ",decimal(4:19),optional"
		if f.Type != reflect.TypeFor[*decimal19]() || f.Tag.Get("parquet") != want {
			return nil, fmt.Errorf("export: %s.%s, the column of a line, must be *decimal19 tagged parquet:%q", row.Name(), l.Field, want)
		}
		out = append(out, lineColumn{line: l, field: f.Index})
	}
	lineColumnsCache.Store(row, out)
	return out, nil
}

// setLines fills the line columns of row (a pointer to a row) from lines,
// recording the first error.
func setLines(row any, cols []lineColumn, lines any, err *error) {
	v := reflect.ValueOf(row).Elem()
	for _, c := range cols {
		if m := c.line.Get(lines); m != nil {
			v.FieldByIndex(c.field).Set(reflect.ValueOf(optDecimal(m, err)))
		}
	}
}

// snakeCase turns a JSON name (returnOfCapital) into a column name
// (return_of_capital).
func snakeCase(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Conversions of values.

// days is a fund.Date as a Parquet DATE: days since 1970-01-01. (Not
// through time.Duration, which ends in 2262.)
func days(d fund.Date) int32 {
	secs := d.Time().Unix()
	n := secs / 86400
	if secs%86400 < 0 {
		n-- // floor, for dates before 1970 (dates are midnights, so exact anyway)
	}
	return int32(n)
}

// optDays is an optional date.
func optDays(d fund.Date) *int32 {
	if d.IsZero() {
		return nil
	}
	v := days(d)
	return &v
}

var (
	decimalLimit = new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil)
	ten4         = big.NewInt(10_000)
)

// toDecimal encodes m as DECIMAL(19,4). Money the API accepted always fits;
// anything else is an error rather than a silently different number.
func toDecimal(m fund.Money) (decimal19, error) {
	var out decimal19
	d := m.Decimal()
	scaled := d.Shift(4)
	if !scaled.Equal(scaled.Truncate(0)) {
		return out, fmt.Errorf("amount %s has more than 4 decimal places", m)
	}
	u := scaled.BigInt()
	if new(big.Int).Abs(u).Cmp(decimalLimit) >= 0 {
		return out, fmt.Errorf("amount %s does not fit DECIMAL(19,4)", m)
	}
	if u.Sign() < 0 {
		// Two's complement: 2^72 + u.
		u.Add(u, new(big.Int).Lsh(big.NewInt(1), 72))
	}
	u.FillBytes(out[:])
	return out, nil
}

// optDecimal encodes an optional amount.
func optDecimal(m *fund.Money, err *error) *decimal19 {
	if m == nil {
		return nil
	}
	v, e := toDecimal(*m)
	if e != nil && *err == nil {
		*err = e
	}
	return &v
}

// mustDecimal encodes a required amount, recording the first error.
func mustDecimal(m *fund.Money, err *error) decimal19 {
	if m == nil {
		if *err == nil {
			*err = fmt.Errorf("amount is missing")
		}
		return decimal19{}
	}
	return *optDecimal(m, err)
}

// fromDecimal decodes a DECIMAL(19,4) value (used by tests and checks).
func fromDecimal(b decimal19) string {
	u := new(big.Int).SetBytes(b[:])
	if b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), 72))
	}
	q, r := new(big.Int).QuoRem(u, ten4, new(big.Int))
	sign := ""
	if u.Sign() < 0 {
		sign = "-"
		q.Abs(q)
		r.Abs(r)
	}
	return fmt.Sprintf("%s%s.%04d", sign, q, r.Int64())
}
