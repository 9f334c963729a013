package export

import (
	"cmp"
	"fmt"
	"math/big"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The rows of every dataset, one Go struct each: the struct is the Parquet
// schema (parquet-go reads the tags) and, through hiveType, the Athena DDL.
// Columns are flat snake_case; money is DECIMAL(19,4), the exact range of
// fund.Money (15 integer digits, 4 decimal places), stored as a 9-byte
// FIXED_LEN_BYTE_ARRAY because 19 digits do not fit an INT64; dates are DATE
// (days since 1970-01-01); instants are UTC TIMESTAMP in milliseconds.
//
// Fields tagged parquet:"-" are not written: they travel with a row through
// the sort so the committed version can be chosen (see join).

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

// headRow is a document's commit head as scanned: the one version of the
// document that the snapshot shows.
type headRow struct {
	FundID, DocumentID string
	Version            int32
	CommitID           string
	Materialized       bool
	PositionCount      int32
	// Set by checkHeads: Whole says the latest view, as scanned, is exactly
	// the head's version, and Expect then counts that version's items of
	// each kind (indexed by kindIndex).
	Whole  bool
	Expect [3]int32
}

// latestRow is one item of a document's latest view, as scanned: what
// checkHeads needs to know how many items the head's version has.
type latestRow struct {
	DocumentID, PositionID string
	Kind                   int8
	Version                int32
	Tombstone              bool
}

// kindIndex numbers the position-level kinds, in the order of fund.ItemKinds.
func kindIndex(k fund.ItemKind) int8 {
	for i, kk := range fund.ItemKinds {
		if kk == k {
			return int8(i)
		}
	}
	return 0
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

// Conversions from stored items.

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
