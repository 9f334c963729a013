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
// A row's columns are filled from the records it exports by their Go
// names (fill.go). The column of a field declared in fund (a document's
// fields, a capital activity's, an item's and its details', a statement's
// lines, a registered position's) is a field of the same Go name. Its
// column is named after the field's JSON name in snake_case, which the
// export checks. So a new field is one field in fund and its column here.
//
// The typed transaction lines of calls and distributions (fund.Transaction,
// stated or derived: PositionItem.TypedLines) are rows of their own, one per
// line, in transaction_lines.

// SchemaVersion changes whenever a dataset's columns change; manifests and
// DDL carry it so a reader can tell snapshots of different shapes apart.
const SchemaVersion = 5 // 2: capital_accounts and transaction_lines; 3: one vocabulary ; 4: funds and investors; 5: every version's commit and items

// decimal19 is a DECIMAL(19,4) value: the unscaled amount × 10⁴ as a
// big-endian two's-complement integer.
type decimal19 = [9]byte

// fundRow is a fund: every fund of a record or of documents, with its
// record's columns, which are null while it has none (fund.FundFields,
// filled by name, and the record's version, instant and author).
type fundRow struct {
	FundID        string     `parquet:"fund_id" from:"ID"`
	Name          string     `parquet:"name,optional"`
	LegalName     string     `parquet:"legal_name,optional"`
	BaseCurrency  string     `parquet:"base_currency,optional,dict"`
	VintageYear   int32      `parquet:"vintage_year,optional"`
	TargetSize    *decimal19 `parquet:"target_size,decimal(4:19),optional"`
	InceptionDate *int32     `parquet:"inception_date,date,optional"`
	ExternalIDs   string     `parquet:"external_ids,optional"`
	Version       int32      `parquet:"version,optional"`
	UpdatedAt     time.Time  `parquet:"updated_at,timestamp(millisecond),optional"`
	UpdatedBy     string     `parquet:"updated_by,optional,dict"`
}

// investorRow is an investor: every investor of a record or of positions,
// with its record's columns, null while it has none (see fundRow).
type investorRow struct {
	InvestorID   string    `parquet:"investor_id" from:"ID"`
	DisplayName  string    `parquet:"display_name,optional"`
	InvestorType string    `parquet:"investor_type,optional,dict"`
	ExternalIDs  string    `parquet:"external_ids,optional"`
	Version      int32     `parquet:"version,optional"`
	UpdatedAt    time.Time `parquet:"updated_at,timestamp(millisecond),optional"`
	UpdatedBy    string    `parquet:"updated_by,optional,dict"`
}

// documentRow is one version of a document. documents holds each
// document's latest committed version, document_versions every committed one.
type documentRow struct {
	FundID        string    `parquet:"fund_id,dict"`
	DocumentID    string    `parquet:"document_id" from:"ID"`
	Kind          string    `parquet:"kind,dict"`
	Title         string    `parquet:"title"`
	AsOf          int32     `parquet:"as_of,date"`
	Currency      string    `parquet:"currency,dict"`
	PositionCount int32     `parquet:"position_count"`
	Version       int32     `parquet:"version"`
	CommitID      string    `parquet:"-"` // which commit the row is of, for the join; not a column
	CreatedAt     time.Time `parquet:"created_at,timestamp(millisecond)"`
	CreatedBy     string    `parquet:"created_by,dict"`
	Voided        bool      `parquet:"-"` // the version voided the document: its status, not a column of its own
}

// The statuses of document_versions, as the API spells them
// (wire.VersionLatest, wire.VersionSuperseded, wire.VersionVoided).
const (
	versionLatest     = "latest"
	versionSuperseded = "superseded"
	versionVoided     = "voided"
)

// documentVersionRow is a documentRow that says whether it is the latest
// version or a superseded one, as the API does, when it was committed, and
// when the next version superseded it (null for the latest): the version
// was the document as known at every instant from committed_at up to, not
// including, superseded_at.
// Parquet and the sort's JSON spill files both flatten the embedded row.
type documentVersionRow struct {
	documentRow
	Status       string    `parquet:"status,dict" from:"-"`
	CommittedAt  time.Time `parquet:"committed_at,timestamp(millisecond)" from:"-"`
	SupersededAt time.Time `parquet:"superseded_at,timestamp(millisecond),optional" from:"-"`
}

// The position-level rows below are those of a document's latest version
// in capital_accounts, capital_calls, distributions, transaction_lines and
// unfunded_commitments, and of every committed version in
// capital_account_versions, capital_call_versions, distribution_versions,
// transaction_line_versions and unfunded_commitment_versions (the same
// columns: a version's document_version joins it to document_versions).

// capitalActivityRow is the capital activity of a document's latest version.
type capitalActivityRow struct {
	FundID          string    `parquet:"fund_id,dict"`
	DocumentID      string    `parquet:"document_id"`
	DocumentVersion int32     `parquet:"document_version" from:"Version"`
	AsOf            int32     `parquet:"as_of,date"`
	Currency        string    `parquet:"currency,dict"`
	Amount          decimal19 `parquet:"amount,decimal(4:19)"`
	Status          string    `parquet:"status,dict"`
	ActivityDate    *int32    `parquet:"activity_date,date,optional"`
	Description     string    `parquet:"description"`
	CreatedAt       time.Time `parquet:"created_at,timestamp(millisecond)"`
}

// positionColumns are the first columns of the rows of capital_calls,
// distributions, unfunded_commitments and capital_accounts: the position
// and the version of the document that reports it.
type positionColumns struct {
	FundID          string `parquet:"fund_id,dict"`
	DocumentID      string `parquet:"document_id"`
	InvestorID      string `parquet:"investor_id"`
	PositionID      string `parquet:"position_id"`
	DocumentVersion int32  `parquet:"document_version"`
	AsOf            int32  `parquet:"as_of,date"`
	Currency        string `parquet:"currency,dict"`
	CommitID        string `parquet:"-"`
}

// capitalCallRow is one position's capital call in a document's latest version.
type capitalCallRow struct {
	positionColumns
	Amount        decimal19  `parquet:"amount,decimal(4:19)"`
	Status        string     `parquet:"status,dict"`
	DueDate       *int32     `parquet:"due_date,date,optional"`
	Investment    *decimal19 `parquet:"investment,decimal(4:19),optional"`
	ManagementFee *decimal19 `parquet:"management_fee,decimal(4:19),optional"`
	FundExpenses  *decimal19 `parquet:"fund_expenses,decimal(4:19),optional"`
	CreatedAt     time.Time  `parquet:"created_at,timestamp(millisecond)"`
}

// distributionRow is one position's distribution in a document's latest version.
type distributionRow struct {
	positionColumns
	Amount          decimal19  `parquet:"amount,decimal(4:19)"`
	Status          string     `parquet:"status,dict"`
	PaymentDate     *int32     `parquet:"payment_date,date,optional"`
	ReturnOfCapital *decimal19 `parquet:"return_of_capital,decimal(4:19),optional"`
	RealizedGain    *decimal19 `parquet:"realized_gain,decimal(4:19),optional"`
	Income          *decimal19 `parquet:"income,decimal(4:19),optional"`
	Recallable      *decimal19 `parquet:"recallable,decimal(4:19),optional"`
	Withholding     *decimal19 `parquet:"withholding,decimal(4:19),optional"`
	CreatedAt       time.Time  `parquet:"created_at,timestamp(millisecond)"`
}

// unfundedCommitmentRow is one position's unfunded commitment in a
// document's latest version.
type unfundedCommitmentRow struct {
	positionColumns
	Amount     decimal19  `parquet:"amount,decimal(4:19)"`
	Status     string     `parquet:"status,dict"`
	Commitment *decimal19 `parquet:"commitment,decimal(4:19),optional"`
	CreatedAt  time.Time  `parquet:"created_at,timestamp(millisecond)"`
}

// capitalAccountRow is one position's capital account statement in a
// document's latest version: its period runs from period_start to as_of,
// and each line of fund.CapitalLines has a column (NULL when absent; the
// beginning and ending NAV are always present).
type capitalAccountRow struct {
	positionColumns
	PeriodStart                    int32      `parquet:"period_start,date"`
	BeginningNAV                   decimal19  `parquet:"beginning_nav,decimal(4:19)"`
	Contributions                  *decimal19 `parquet:"contributions,decimal(4:19),optional"`
	Distributions                  *decimal19 `parquet:"distributions,decimal(4:19),optional"`
	OfferingSyndicationCosts       *decimal19 `parquet:"offering_syndication_costs,decimal(4:19),optional"`
	PlacementFees                  *decimal19 `parquet:"placement_fees,decimal(4:19),optional"`
	PartnerTransfers               *decimal19 `parquet:"partner_transfers,decimal(4:19),optional"`
	ManagementFeesGross            *decimal19 `parquet:"management_fees_gross,decimal(4:19),optional"`
	ManagementFeeRebate            *decimal19 `parquet:"management_fee_rebate,decimal(4:19),optional"`
	FeeWaivers                     *decimal19 `parquet:"fee_waivers,decimal(4:19),optional"`
	ManagementFeeOffsets           *decimal19 `parquet:"management_fee_offsets,decimal(4:19),optional"`
	AdviserRelatedPersonsExpenses  *decimal19 `parquet:"adviser_related_persons_expenses,decimal(4:19),optional"`
	PartnershipExpenses            *decimal19 `parquet:"partnership_expenses,decimal(4:19),optional"`
	InvestmentIncome               *decimal19 `parquet:"investment_income,decimal(4:19),optional"`
	NetRealizedGainLoss            *decimal19 `parquet:"net_realized_gain_loss,decimal(4:19),optional"`
	NetUnrealizedGainLoss          *decimal19 `parquet:"net_unrealized_gain_loss,decimal(4:19),optional"`
	EndingNAV                      decimal19  `parquet:"ending_nav,decimal(4:19)"`
	CarriedInterestAccruedEarned   *decimal19 `parquet:"carried_interest_accrued_earned,decimal(4:19),optional"`
	CarriedInterestPaid            *decimal19 `parquet:"carried_interest_paid,decimal(4:19),optional"`
	TotalCommitment                *decimal19 `parquet:"total_commitment,decimal(4:19),optional"`
	BeginningUnfundedCommitment    *decimal19 `parquet:"beginning_unfunded_commitment,decimal(4:19),optional"`
	LessContributions              *decimal19 `parquet:"less_contributions,decimal(4:19),optional"`
	PlusRecallableDistributions    *decimal19 `parquet:"plus_recallable_distributions,decimal(4:19),optional"`
	LessExpiredReleasedCommitments *decimal19 `parquet:"less_expired_released_commitments,decimal(4:19),optional"`
	OtherUnfundedAdjustment        *decimal19 `parquet:"other_unfunded_adjustment,decimal(4:19),optional"`
	EndingUnfundedCommitment       *decimal19 `parquet:"ending_unfunded_commitment,decimal(4:19),optional"`
	CreatedAt                      time.Time  `parquet:"created_at,timestamp(millisecond)"`
}

// transactionLineRow is one typed line (an ILPA Performance Template
// transaction type) of a position's capital call or distribution in a
// document's latest version: stated by the administrator, or derived from
// the item's line items (fund.CallTransactions, DistributionTransactions).
type transactionLineRow struct {
	FundID          string    `parquet:"fund_id,dict"`
	DocumentID      string    `parquet:"document_id"`
	InvestorID      string    `parquet:"investor_id"`
	PositionID      string    `parquet:"position_id"`
	DocumentVersion int32     `parquet:"document_version"`
	AsOf            int32     `parquet:"as_of,date"`
	Currency        string    `parquet:"currency,dict"`
	ItemType        string    `parquet:"item_type,dict"` // capital_call or distribution
	Status          string    `parquet:"status,dict"`    // the item's
	Line            int32     `parquet:"line"`           // 1, 2, … within the item
	TransactionType string    `parquet:"transaction_type,dict"`
	ILPALabel       string    `parquet:"ilpa_label,dict"`
	NetTreatment    string    `parquet:"net_treatment,dict"`
	UnfundedEffect  string    `parquet:"unfunded_effect,dict"`
	Amount          decimal19 `parquet:"amount,decimal(4:19)"`
	// EffectiveDate dates the line as the performance figures do: the
	// call's due date or the distribution's payment date, else the
	// document's as-of date.
	EffectiveDate int32     `parquet:"effective_date,date"`
	Stated        bool      `parquet:"stated"`
	CreatedAt     time.Time `parquet:"created_at,timestamp(millisecond)"`
}

// transactionItemRow is what the sort of transaction_lines holds: the typed
// lines of one call or distribution, so the join can count a document's
// items against its head (an item of zero amount has no line).
type transactionItemRow struct {
	FundID, DocumentID, PositionID, CommitID string
	Kind                                     fund.ItemKind
	AsOf                                     int32
	Lines                                    []transactionLineRow
}

// positionRow is one position (one fund plus one investor) that at least
// one document reports at its latest committed version, with the count
// and dates of those documents (a position summary's documentCount,
// firstAsOf and lastAsOf).
type positionRow struct {
	FundID        string    `parquet:"fund_id,dict"`
	PositionID    string    `parquet:"position_id"`
	InvestorID    string    `parquet:"investor_id"`
	Currency      string    `parquet:"currency,dict"`
	RegisteredAt  time.Time `parquet:"registered_at,timestamp(millisecond)"`
	DocumentCount int32     `parquet:"document_count" from:"-"`
	FirstAsOf     int32     `parquet:"first_as_of,date" from:"-"`
	LastAsOf      int32     `parquet:"last_as_of,date" from:"-"`
}

// itemKey is what the join needs of a position-level row.
type itemKey struct {
	fund, doc, pos, commit string
	asOf                   int32
}

func (r *positionColumns) key() itemKey {
	return itemKey{r.FundID, r.DocumentID, r.PositionID, r.CommitID, r.AsOf}
}

func (r *transactionItemRow) key() itemKey {
	return itemKey{r.FundID, r.DocumentID, r.PositionID, r.CommitID, r.AsOf}
}

// version is the document version a row of a dataset of every version is
// of (see dataset.history).
func (r *documentVersionRow) version() int32 { return r.Version }
func (r *positionColumns) version() int32    { return r.DocumentVersion }
func (r *transactionLineRow) version() int32 { return r.DocumentVersion }

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

func (r *capitalCallRow) ref() positionRef        { return r.refAt(r.CreatedAt) }
func (r *distributionRow) ref() positionRef       { return r.refAt(r.CreatedAt) }
func (r *unfundedCommitmentRow) ref() positionRef { return r.refAt(r.CreatedAt) }
func (r *capitalAccountRow) ref() positionRef     { return r.refAt(r.CreatedAt) }

// refAt is the reference a row makes to its position, the row's document
// version having been committed at createdAt.
func (r *positionColumns) refAt(createdAt time.Time) positionRef {
	return positionRef{r.FundID, r.PositionID, r.DocumentID, r.AsOf, r.InvestorID, r.Currency, createdAt}
}

// Conversions from the store's committed records, by the plans of fill.go.

var (
	documentPlan = planFor[documentVersionRow](nil, fund.DocumentHeader{})
	activityPlan = planFor[capitalActivityRow]([]any{fund.CapitalActivity{}}, store.ActivityVersion{})
	positionPlan = planFor[positionRow]([]any{fund.Registered{}}, store.RegisteredPosition{})
)

// lazyPlan is a row type's plan, made at its first use; an export checks
// every dataset's at its start (checkPlans).
type lazyPlan func() (*rowPlan, error)

// planFor is the plan of row type T from sources of the types of sources,
// declaring the structs of declares.
func planFor[T any](declares []any, sources ...any) lazyPlan {
	return sync.OnceValues(func() (*rowPlan, error) {
		return planOf(reflect.TypeFor[T](), typesOf(sources), typesOf(declares))
	})
}

// fill fills row from sources by the plan, recording the first error, the
// plan's own included.
func (l lazyPlan) fill(row any, sources []any, err *error) {
	p, e := l()
	if e != nil {
		*err = cmp.Or(*err, e)
		return
	}
	p.fill(row, sources, err)
}

func typesOf(vs []any) []reflect.Type {
	out := make([]reflect.Type, len(vs))
	for i, v := range vs {
		out[i] = reflect.TypeOf(v)
	}
	return out
}

func documentRowOf(r *store.DocumentVersion) (documentVersionRow, error) {
	var row documentVersionRow
	var err error
	documentPlan.fill(&row, []any{&r.DocumentHeader}, &err)
	return row, err
}

func capitalActivityRowOf(r *store.ActivityVersion) (capitalActivityRow, error) {
	var row capitalActivityRow
	var err error
	activityPlan.fill(&row, []any{r}, &err)
	if err != nil {
		return row, fmt.Errorf("export: capital activity of version %d of document %s: %w", r.Version, r.DocumentID, err)
	}
	return row, nil
}

func positionRowOf(r *store.RegisteredPosition) (positionRow, error) {
	var row positionRow
	var err error
	positionPlan.fill(&row, []any{r}, &err)
	return row, err
}

// transactionItemRowOf is the typed lines of a call or a distribution.
func transactionItemRowOf(v *store.VersionItem) (transactionItemRow, error) {
	r := transactionItemRow{FundID: v.FundID, DocumentID: v.DocumentID, PositionID: v.PositionID,
		CommitID: v.CommitID, Kind: v.Kind, AsOf: days(v.AsOf)}
	side := map[fund.ItemKind]string{fund.CapitalCall: fund.OnCall, fund.Distribution: fund.OnDistribution}[v.Kind]
	effective := v.FlowDate()
	var err error
	for i, l := range v.TypedLines() {
		info, ok := fund.TransactionTypeOf(l.Type)
		if !ok || info.On != side {
			err = fmt.Errorf("unknown transaction type %q", l.Type)
			break
		}
		r.Lines = append(r.Lines, transactionLineRow{
			FundID: v.FundID, DocumentID: v.DocumentID, InvestorID: v.InvestorID, PositionID: v.PositionID,
			DocumentVersion: int32(v.DocumentVersion), AsOf: r.AsOf, Currency: v.Currency,
			ItemType: v.Kind.Name(), Status: string(v.Status), Line: int32(i + 1),
			TransactionType: string(l.Type), ILPALabel: info.Label, NetTreatment: string(info.Net),
			UnfundedEffect: string(l.Unfunded), Amount: mustDecimal(&l.Amount, &err),
			EffectiveDate: days(effective), Stated: len(v.Transactions) > 0, CreatedAt: v.CreatedAt.UTC(),
		})
	}
	if err != nil {
		return r, fmt.Errorf("export: transaction lines of the %s of position %s in version %d of document %s: %w",
			v.Kind, v.PositionID, v.DocumentVersion, v.DocumentID, err)
	}
	return r, nil
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

var decimalLimit = new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil)

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
