package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
)

// Requests are fund's declared types, decoded by the strict decoder
// (decode.go). Server-owned fields (version, createdAt) are not among
// them, so a client cannot set them.

// DocumentRequest is the body of PUT /v1/documents/{documentId}.
type DocumentRequest struct {
	fund.DocumentFields
	CapitalActivity *fund.CapitalActivity `json:"capitalActivity,omitempty" doc:"The document-level capital movement, if any."`
	Positions       PositionList          `json:"positions" doc:"Required (an empty list is allowed). At most 5000 positions by default (the server's FUNDSVC_MAX_POSITIONS), each 'positionId' at most once. A position ID already registered in the fund to another investor is 409. The server stores and returns positions sorted by 'positionId'."`
}

func (r *DocumentRequest) positionsLimit() int { return r.Positions.Max }

// PositionList is a document's positions as sent: the strict decoder reads
// them one at a time and stops at the first one past Max.
type PositionList struct {
	Max   int // 0: no limit; set before decoding
	items []fund.Position
	set   bool // the field was present
}

// PositionsOf is the list ps, as a client sends it.
func PositionsOf(ps ...fund.Position) PositionList {
	return PositionList{items: append([]fund.Position{}, ps...), set: true}
}

// Items returns the positions.
func (l PositionList) Items() []fund.Position { return l.items }

// MarshalJSON writes the positions as a JSON array (null when absent).
func (l PositionList) MarshalJSON() ([]byte, error) {
	if !l.set {
		return []byte("null"), nil
	}
	return json.Marshal(l.items)
}

// RequestOf is the request that writes d (its ID goes in the path).
func RequestOf(d fund.Document) DocumentRequest {
	return DocumentRequest{DocumentFields: d.DocumentFields, CapitalActivity: d.CapitalActivity, Positions: PositionsOf(d.Positions...)}
}

// CodeTooLarge is the error code of a body over the size limit.
const CodeTooLarge = "too_large"

// JSONError turns a decoding error into an EINVALID (or CodeTooLarge)
// error naming the offending input.
func JSONError(err error) error {
	var fe *fund.Error
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.Is(err, io.EOF):
		return fund.Invalid("body", "is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fund.Invalid("body", "ends in the middle of a JSON value")
	case errors.As(err, &syn):
		return fund.Invalid("body", "is not valid JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ) && typ.Field == "":
		return fund.Invalid("body", "must be a JSON object, not %s", typ.Value)
	case errors.As(err, &typ):
		return fund.Invalid(typ.Field, "must be a JSON %s, not %s", typ.Type.Kind(), typ.Value)
	default:
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &fund.Error{Code: CodeTooLarge, Field: "body", Message: fmt.Sprintf("exceeds the limit of %d bytes", tooLarge.Limit)}
		}
		return fund.Invalid("body", "cannot be read")
	}
}

// ToDocument is the domain document the request states, as version 0 of
// document id (the store numbers it). fund's Validate checks its rules.
func (r *DocumentRequest) ToDocument(id string) (fund.Document, error) {
	if !r.Positions.set {
		return fund.Document{}, fund.Invalid("positions", "is required (an empty list is allowed)")
	}
	return fund.Document{ID: id, DocumentFields: r.DocumentFields, CapitalActivity: r.CapitalActivity, Positions: r.Positions.items}, nil
}

// ParseDate parses an optional query parameter's date, naming field in its
// error.
func ParseDate(field, s string, mandatory bool) (fund.Date, error) {
	if s == "" {
		if mandatory {
			return fund.Date{}, fund.Invalid(field, "is required (YYYY-MM-DD)")
		}
		return fund.Date{}, nil
	}
	d, err := fund.ParseDate(s)
	if err != nil {
		return d, fund.Invalid(field, "%s", fund.ErrorMessage(err))
	}
	return d, nil
}

// Responses.

// Version states of a document's version records.
const (
	VersionLatest     = "latest"     // the document's latest version
	VersionSuperseded = "superseded" // a version a later one replaced
	VersionVoided     = "voided"     // the version that voided the document (DELETE)
)

// DocumentHeader is one version of a document without its positions.
type DocumentHeader struct {
	DocumentID string `json:"documentId" doc:"The document."`
	fund.DocumentFields
	Version       int        `json:"version" doc:"The version: 1 for the document's first, one more for each restatement."`
	PositionCount int        `json:"positionCount" doc:"How many positions the version reports."`
	Status        string     `json:"status,omitempty" doc:"In overviews and version listings: 'latest' on the document's latest version, 'superseded' on every earlier one. 'voided' on the version that voided the document (DELETE), wherever it is shown: that version is the latest and last, and reports no position. Otherwise absent on a version read whole."`
	CreatedAt     time.Time  `json:"createdAt" doc:"When this version was written (UTC)."`
	CreatedBy     string     `json:"createdBy,omitempty" doc:"The subject ('sub' claim) of the token that wrote this version; 'fundsvc seed' for the demo data. Absent on versions written before tokens were required."`
	CommittedAt   *time.Time `json:"committedAt,omitempty" doc:"In version listings (/versions): the instant the version was committed (UTC, the table's clock), from which reads as known at an instant count it (docs/knownat.md). Absent elsewhere."`
	SupersededAt  *time.Time `json:"supersededAt,omitempty" doc:"In version listings (/versions): the instant the next version was committed, from which this one no longer counts; absent on the latest version (as known at basis.knownAt) and elsewhere. The export's document_versions.superseded_at."`
}

// HeaderOf renders a version record; status is VersionLatest,
// VersionSuperseded or "" (a version whole, whose place is in its ETag). The
// version that voided its document says so whatever status is asked: it is
// what a client must not miss.
func HeaderOf(h fund.DocumentHeader, status string) DocumentHeader {
	if h.Voided {
		status = VersionVoided
	}
	return DocumentHeader{DocumentID: h.ID, DocumentFields: h.DocumentFields, Version: h.Version, PositionCount: h.PositionCount,
		Status: status, CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy}
}

// HeaderStatus is the status of version record h of a document whose
// latest version is latest.
func HeaderStatus(h fund.DocumentHeader, latest int) string {
	if h.Voided {
		return VersionVoided
	}
	if h.Version == latest {
		return VersionLatest
	}
	return VersionSuperseded
}

// WrittenVersion is the answer to a write of a document: the version it
// stored and, for a restatement or a void, what that version changed.
type WrittenVersion struct {
	DocumentVersion
	Changes *Changes `json:"changes,omitempty" doc:"What this version changed against the version it replaced, position by position. Absent on a document's first version (201), which replaces none."`
}

// Changes is what a version changed against the one it replaced.
type Changes struct {
	ReplacedVersion int `json:"replacedVersion" doc:"The version compared against: the one this version replaced."`
	// Positions are the positions whole.
	Positions fund.PositionChanges `json:"positions" doc:"The positions added, removed and changed, whatever their items."`
	ItemTypes []ItemTypeChanges    `json:"itemTypes" doc:"For every item type, in the order capital_account, capital_call, distribution, unfunded_commitment (each listed, also when nothing of it changed): the positions whose item of that type was added, removed or changed."`
}

// ItemTypeChanges are the changes of the items of one type.
type ItemTypeChanges struct {
	ItemType fund.ItemKind `json:"itemType" doc:"The item type."`
	fund.PositionChanges
}

// WrittenOf renders what a write stored; c is nil for a first version.
func WrittenOf(d fund.Document, c *fund.Changes) WrittenVersion {
	w := WrittenVersion{DocumentVersion: VersionOf(d)}
	if c != nil {
		w.Changes = &Changes{ReplacedVersion: c.Replaced, Positions: c.Positions}
		for _, k := range fund.ItemKinds {
			w.Changes.ItemTypes = append(w.Changes.ItemTypes, ItemTypeChanges{ItemType: k, PositionChanges: c.Of(k)})
		}
	}
	return w
}

// CapitalActivity is one version's capital activity.
type CapitalActivity struct {
	fund.CapitalActivity
	Version int `json:"version,omitempty" doc:"The document version that reported it; absent inside a DocumentVersion."`
}

// ActivityOf renders a capital activity of the given version (0: none shown).
func ActivityOf(a fund.CapitalActivity, version int) *CapitalActivity {
	return &CapitalActivity{CapitalActivity: a, Version: version}
}

// DocumentVersion is one whole version of a document.
type DocumentVersion struct {
	DocumentHeader
	CapitalActivity *CapitalActivity `json:"capitalActivity,omitempty" doc:"Absent when the version has none; carries no 'version' here."`
	Positions       []fund.Position  `json:"positions" doc:"Sorted by 'positionId'."`
}

// DocumentVersionRead is one whole version as a read of it answers, with
// the basis it was read on (DocumentVersion is a write's answer too).
type DocumentVersionRead struct {
	DocumentVersion
	Basis Basis `json:"basis" doc:"What the answer was read on. The document is known at basis.knownAt: at its latest version committed at or before it. asOf is null: this route takes none."`
}

// DocumentHeaderRead is the record of a document's latest version as a
// read of it answers, with the basis it was read on (DocumentHeader is an
// item of listings too).
type DocumentHeaderRead struct {
	DocumentHeader
	Basis Basis `json:"basis" doc:"What the answer was read on. The document is known at basis.knownAt: at its latest version committed at or before it. asOf is null: this route takes none."`
}

// VersionOf renders a whole version.
func VersionOf(d fund.Document) DocumentVersion {
	v := DocumentVersion{DocumentHeader: HeaderOf(d.Header(), ""), Positions: d.Positions}
	if v.Positions == nil {
		v.Positions = []fund.Position{}
	}
	if d.CapitalActivity != nil {
		v.CapitalActivity = ActivityOf(*d.CapitalActivity, 0)
	}
	return v
}

// OverviewDocuments are the latest version record and the earlier ones.
type OverviewDocuments struct {
	Latest  DocumentHeader   `json:"latest" doc:"The document's latest version."`
	Earlier []DocumentHeader `json:"earlier" doc:"The 20 latest earlier versions, by asOf then version; /versions lists them all."`
}

// CapitalActivities are the latest version's capital activity and the
// earlier versions'.
type CapitalActivities struct {
	Latest  *CapitalActivity  `json:"latest" doc:"The capital activity of the version read, or null when that version has none (and, in /capital, on the pages after the first)."`
	Earlier []CapitalActivity `json:"earlier" doc:"The earlier versions' capital activities: in an overview, those of the 20 latest earlier versions, by activityDate then version; in /capital, a page of them, newest first."`
}

type PositionAnalysis struct {
	PositionID              string     `json:"positionId" doc:"The position."`
	InvestorID              string     `json:"investorId" doc:"The position's investor."`
	CapitalCallCount        int        `json:"capitalCallCount" doc:"The position's capital calls in the version (0 or 1)."`
	Called                  fund.Money `json:"called" doc:"Their amount."`
	DistributionCount       int        `json:"distributionCount" doc:"The position's distributions in the version (0 or 1)."`
	Distributed             fund.Money `json:"distributed" doc:"Their gross amount."`
	UnfundedCommitmentCount int        `json:"unfundedCommitmentCount" doc:"The position's unfunded commitment items in the version (0 or 1)."`
	Unfunded                fund.Money `json:"unfunded" doc:"Their amount."`
}

func AnalysisOf(a positions.Analysis) PositionAnalysis {
	return PositionAnalysis{PositionID: a.PositionID, InvestorID: a.InvestorID, CapitalCallCount: a.CapitalCalls, Called: a.TotalCalled,
		DistributionCount: a.Distributions, Distributed: a.TotalDistributed, UnfundedCommitmentCount: a.UnfundedCommitments, Unfunded: a.TotalUnfunded}
}

// RegisteredPosition is a position as its fund registers it, with the
// names its fund's and its investor's records give them.
type RegisteredPosition struct {
	fund.Registered
	FundName            string `json:"fundName,omitempty" doc:"The fund's 'name', from its record; absent while the fund has no record."`
	InvestorDisplayName string `json:"investorDisplayName,omitempty" doc:"The investor's 'displayName', from its record; absent while the investor has no record."`
}

// RegisteredOf renders registered positions with the names of their funds
// and investors.
func RegisteredOf(rs []positions.Registered, names Names) []RegisteredPosition {
	return renderAll(rs, func(r positions.Registered) RegisteredPosition {
		return RegisteredPosition{Registered: r, FundName: names.Funds[r.FundID], InvestorDisplayName: names.Investors[r.InvestorID]}
	})
}

// Page is the envelope of every paginated list.
type Page[T any] struct {
	Items []T    `json:"items" doc:"One page of the list, in the list's order."`
	Next  string `json:"next,omitempty" doc:"Present when more items may follow."`
	Basis *Basis `json:"basis,omitempty" doc:"What the page was read on: the basis of the listing's first page, which its cursor pins (docs/knownat.md). Absent from the listings that do not take knownAt yet."`
}

// PositionItemsPage is a page of a position's items with the basis it
// was read on: Page, which many listings share, stays as it is.
type PositionItemsPage struct {
	Page[PositionItem]
	Basis Basis `json:"basis" doc:"What the page was read on: each document at its version known at 'knownAt' (asOf is always null: the items routes take every document whatever its date). A later page is read on its first page's basis."`
}

// ByStatus is an amount split by status.
type ByStatus struct {
	Total     fund.Money `json:"total" doc:"Pending and completed together."`
	Pending   fund.Money `json:"pending" doc:"Of the pending items: declared, not yet paid."`
	Completed fund.Money `json:"completed" doc:"Of the completed items: paid."`
}

func ByStatusOf(b positions.ByStatus) ByStatus {
	return ByStatus{Total: b.Total, Pending: b.Pending, Completed: b.Completed}
}

type Distributed struct {
	Gross       ByStatus `json:"gross" doc:"The distributions' amounts."`
	Withholding ByStatus `json:"withholding" doc:"The tax withheld from them."`
	Net         ByStatus `json:"net" doc:"What reached the investor: gross − withholding."`
}

type UnfundedFigures struct {
	Reported   *fund.Money `json:"reported,omitempty" doc:"The most recently reported unfunded commitment (by date, of the unfunded commitment items and the statements' A.2 ending unfunded commitments); absent when none is reported."`
	Computed   *fund.Money `json:"computed,omitempty" doc:"commitment − called + recallable, each line by its effect on unfunded commitment; absent without a commitment."`
	Difference *fund.Money `json:"difference,omitempty" doc:"reported − computed; absent when either is."`
}

type Counts struct {
	CapitalCallCount        int `json:"capitalCallCount" doc:"Capital calls counted."`
	DistributionCount       int `json:"distributionCount" doc:"Distributions counted."`
	UnfundedCommitmentCount int `json:"unfundedCommitmentCount" doc:"Unfunded commitment items counted."`
}

// Figures is the money of a position summary, and of an investor's
// totals in one currency.
type Figures struct {
	Currency       string          `json:"currency" doc:"The currency of every figure."`
	Commitment     *fund.Money     `json:"commitment,omitempty" doc:"The total commitment as most recently reported: by an unfunded commitment item that states one (dated by its document's asOf) or by a capital account statement's A.2 total commitment (dated by its period end, its document's asOf); ties go to the later write, then the greater document ID, then the statement. Absent when none is reported."`
	Called         fund.Money      `json:"called" doc:"Capital called: every capital call counted, pending or completed."`
	PaidIn         fund.Money      `json:"paidIn" doc:"Capital paid in (contributions, ILPA's sense): the completed calls due on or before asOf (every completed one without asOf)."`
	Outstanding    fund.Money      `json:"outstanding" doc:"called − paidIn: called and not yet paid in."`
	PaidInReturned fund.Money      `json:"paidInReturned" doc:"Paid-in capital the distributions paid back (ILPA's returns of excess capital called), on the terms of paidIn."`
	Distributed    Distributed     `json:"distributed" doc:"Distributions: gross, the tax withheld from them, and net of it (gross − withholding), each by status."`
	Recallable     fund.Money      `json:"recallable" doc:"The part of the distributions that may be called again."`
	Unfunded       UnfundedFigures `json:"unfunded" doc:"The unfunded commitment as reported (the most recent by date of the unfunded commitment items and the capital account statements' A.2 ending unfunded commitments, ordered as the commitment's reports are), as computed (commitment − paidIn.total + recallable), and the difference (reported − computed). Each is absent when a figure it needs is."`
	DPI            string          `json:"dpi,omitempty" doc:"The one DPI of the API, as the performance's: the distributed typed lines of the distributions paid ÷ (paidIn − paidInReturned), computed exactly and rounded once, half away from zero, to 6 places. Absent when nothing is left paid in."`
	Counts         Counts          `json:"counts" doc:"How many items of each kind were counted."`
}

func FiguresOf(f positions.Figures) Figures {
	return Figures{
		Currency: f.Currency, Commitment: f.Commitment, Called: f.Called, PaidIn: f.PaidIn, Outstanding: f.Outstanding, PaidInReturned: f.PaidInReturned,
		Distributed: Distributed{Gross: ByStatusOf(f.Distributed), Withholding: ByStatusOf(f.Withholding), Net: ByStatusOf(f.DistributedNet)},
		Recallable:  f.Recallable,
		Unfunded:    UnfundedFigures{Reported: f.UnfundedReported, Computed: f.UnfundedComputed, Difference: f.UnfundedDifference},
		Counts:      Counts{CapitalCallCount: f.CapitalCalls, DistributionCount: f.Distributions, UnfundedCommitmentCount: f.UnfundedCommitments},
		DPI:         fixed(f.DPI, positions.MultipleScale),
	}
}

type DocumentSource struct {
	DocumentID string `json:"documentId" doc:"The document."`
	Version    int    `json:"version" doc:"The version counted."`
	AsOf       string `json:"asOf" doc:"That version's asOf."`
}

func SourceOf(s *positions.Source) *DocumentSource {
	if s == nil {
		return nil
	}
	return &DocumentSource{DocumentID: s.DocumentID, Version: s.Version, AsOf: s.AsOf.String()}
}

// sourcesOf renders the documents an answer counts.
func sourcesOf(ss []positions.Source) []DocumentSource {
	return renderAll(ss, func(s positions.Source) DocumentSource { return *SourceOf(&s) })
}

// renderAll renders each of ts with of, into a list that is empty rather
// than nil when ts is, so that an answer's list is [] and never null.
func renderAll[T, W any](ts []T, of func(T) W) []W {
	out := make([]W, 0, len(ts))
	for _, t := range ts {
		out = append(out, of(t))
	}
	return out
}

type SummarySources struct {
	Commitment *DocumentSource `json:"commitment,omitempty" doc:"The document version the commitment comes from; absent when none states one."`
	Unfunded   *DocumentSource `json:"unfunded,omitempty" doc:"The document version the reported unfunded commitment comes from; absent when none reports one."`
}

// PositionSummary is a position summary.
type PositionSummary struct {
	PositionID string `json:"positionId" doc:"The position."`
	FundID     string `json:"fundId" doc:"The position's fund."`
	FundName   string `json:"fundName,omitempty" doc:"In an investor summary: the fund's 'name', from its record; absent while the fund has no record, and on /v1/positions/{positionId}/summary."`
	InvestorID string `json:"investorId" doc:"The position's investor."`
	AsOf       string `json:"asOf,omitempty" doc:"The date asked for (on a later page, the first page's); absent when none was, also with knownAt, whose date basis.asOf then states: a read with knownAt answers the same keys as the live read."`
	Figures
	Sources SummarySources `json:"sources" doc:"The documents the reported commitment and unfunded commitment came from."`
	// The documents counted, their number and the first and last asOf among
	// them: the export's positions dataset has the same figures.
	Documents     []DocumentSource `json:"documents" doc:"The document versions counted, by as-of date, then document ID."`
	DocumentCount int              `json:"documentCount" doc:"How many documents are counted."`
	FirstAsOf     string           `json:"firstAsOf,omitempty" doc:"The earliest asOf among them."`
	LastAsOf      string           `json:"lastAsOf,omitempty" doc:"The latest asOf among them."`
	Basis         *Basis           `json:"basis,omitempty" doc:"What the summary was read on; present on '/v1/positions/{positionId}/summary' (an investor's answer lists its positions without it)."`
}

func SummaryOf(s positions.Summary) PositionSummary {
	w := PositionSummary{PositionID: s.PositionID, FundID: s.FundID, InvestorID: s.InvestorID, AsOf: s.AsOf.String(),
		Figures:   FiguresOf(s.Figures),
		Sources:   SummarySources{Commitment: SourceOf(s.CommitmentSource), Unfunded: SourceOf(s.UnfundedSource)},
		Documents: sourcesOf(s.Documents), DocumentCount: len(s.Documents),
	}
	if n := len(s.Documents); n > 0 {
		w.FirstAsOf, w.LastAsOf = s.Documents[0].AsOf.String(), s.Documents[n-1].AsOf.String()
	}
	return w
}

type CurrencyTotals struct {
	Figures
	Positions                  int `json:"positions" doc:"Positions of the page held in this currency."`
	PositionsWithoutCommitment int `json:"positionsWithoutCommitment" doc:"Of them, those that state no commitment, which add nothing to the commitment and the computed unfunded commitment."`
}

type InvestorSummary struct {
	InvestorID          string            `json:"investorId" doc:"The investor."`
	InvestorDisplayName string            `json:"investorDisplayName,omitempty" doc:"The investor's 'displayName', from its record; absent while the investor has no record."`
	AsOf                string            `json:"asOf,omitempty" doc:"The date asked for (on a later page, the first page's); absent when none was, also with knownAt, whose date basis.asOf then states: a read with knownAt answers the same keys as the live read."`
	Positions           []PositionSummary `json:"positions" doc:"By position ID."`
	Totals              []CurrencyTotals  `json:"totals" doc:"One entry per currency, by currency."` // of this page's positions
	Next                string            `json:"next,omitempty" doc:"Opaque cursor of the next page of positions; absent on the last page. Totals cover this page's positions."`
	Basis               Basis             `json:"basis" doc:"What the page was read on: each document at its latest version committed at or before basis.knownAt and, when basis.asOf is set, dated on or before it. A later page of a read with knownAt is read on its first page's basis, which its cursor pins; one of a read without it reads the latest versions."`
}

// InvestorSummaryOf renders an investor summary with the names of its
// investor and its positions' funds.
func InvestorSummaryOf(s positions.InvestorSummary, names Names) InvestorSummary {
	w := InvestorSummary{InvestorID: s.InvestorID, InvestorDisplayName: names.Investors[s.InvestorID], AsOf: s.AsOf.String(),
		Positions: []PositionSummary{}, Totals: []CurrencyTotals{}}
	for _, p := range s.Positions {
		ps := SummaryOf(p)
		ps.FundName = names.Funds[p.FundID]
		w.Positions = append(w.Positions, ps)
	}
	for _, t := range s.Totals {
		w.Totals = append(w.Totals, CurrencyTotals{Figures: FiguresOf(t.Figures), Positions: t.Positions, PositionsWithoutCommitment: t.PositionsWithoutCommitment})
	}
	return w
}

// The flow types of a cash flow.
const (
	FlowContribution = "contribution"
	FlowDistribution = "distribution"
)

// Cashflow is one contribution or distribution with cumulative totals.
type Cashflow struct {
	EffectiveDate         string      `json:"effectiveDate" doc:"When the money moves: a call's due date, a distribution's payment date, else the document's asOf."`
	FlowType              string      `json:"flowType" doc:"contribution (a capital call) or distribution."`
	DocumentID            string      `json:"documentId" doc:"The document that reports the flow."`
	Version               int         `json:"version" doc:"The version of that document counted."`
	Status                fund.Status `json:"status" doc:"pending or completed; only a completed flow moves the cumulative totals."`
	Amount                fund.Money  `json:"amount" doc:"The call's or the gross distribution's amount."`
	Withholding           *fund.Money `json:"withholding,omitempty" doc:"A distribution's withholding ('\"0.00\"' when none); absent on contributions."`
	Net                   *fund.Money `json:"net,omitempty" doc:"A distribution's amount net of withholding; absent on contributions."`
	CumulativePaidIn      fund.Money  `json:"cumulativePaidIn" doc:"The completed contributions dated up to and including this flow (and on or before asOf)."`
	CumulativeDistributed fund.Money  `json:"cumulativeDistributed" doc:"The completed gross distributions dated up to and including this flow (and on or before asOf)."`
	CumulativeNetCashflow fund.Money  `json:"cumulativeNetCashflow" doc:"cumulativeDistributed less the withholding on those distributions less cumulativePaidIn: what the investor has received net of what it has paid."`
}

type Cashflows struct {
	PositionID string     `json:"positionId" doc:"The position."`
	FundID     string     `json:"fundId" doc:"The position's fund."`
	InvestorID string     `json:"investorId" doc:"The position's investor."`
	Currency   string     `json:"currency" doc:"The position's currency."`
	AsOf       string     `json:"asOf,omitempty" doc:"The date asked for (on a later page, the first page's); absent when none was, also with knownAt, whose date basis.asOf then states: a read with knownAt answers the same keys as the live read."`
	Cashflows  []Cashflow `json:"cashflows" doc:"The position's calls and distributions, oldest first."`
	Basis      Basis      `json:"basis" doc:"What the cash flows were read on."`
}

func CashflowsOf(identity fund.PositionItem, asOf fund.Date, flows []positions.Cashflow) Cashflows {
	w := Cashflows{PositionID: identity.PositionID, FundID: identity.FundID, InvestorID: identity.InvestorID,
		Currency: identity.Currency, AsOf: asOf.String(), Cashflows: make([]Cashflow, 0, len(flows))}
	for _, f := range flows {
		cw := Cashflow{EffectiveDate: f.Date.String(), FlowType: FlowContribution, DocumentID: f.DocumentID, Version: f.Version,
			Status: f.Status, Amount: f.Amount, CumulativePaidIn: f.CumulativePaidIn, CumulativeDistributed: f.CumulativeDistributed,
			CumulativeNetCashflow: f.CumulativeNetCashflow}
		if f.Kind == fund.Distribution {
			withholding, net := f.Withholding, f.Net
			cw.FlowType, cw.Withholding, cw.Net = FlowDistribution, &withholding, &net
		}
		w.Cashflows = append(w.Cashflows, cw)
	}
	return w
}

// Responses that handlers assemble from parts.

// Overview is one page of a document's overview: the document records and
// capital activities (first page only) and the page's position items,
// grouped by position.
type Overview struct {
	DocumentID string `json:"documentId" doc:"The document."`
	Version    int    `json:"version" doc:"The committed version every page shows."`
	// Documents and capital activities come with the first page only.
	Documents         *OverviewDocuments       `json:"documents,omitempty" doc:"First page only."`
	CapitalActivities *CapitalActivities       `json:"capitalActivities,omitempty" doc:"First page only."`
	Positions         map[string]PositionGroup `json:"positions" doc:"This page's positions, keyed by position ID."`
	Next              string                   `json:"next,omitempty" doc:"Present when more positions follow."`
	Basis             Basis                    `json:"basis" doc:"What the page was read on. The document is known at basis.knownAt: at its latest version committed at or before it. asOf is null: this route takes none. A later page is read on its first page's basis, which its cursor pins."`
}

// PositionGroup is one position's items in an overview.
type PositionGroup struct {
	InvestorID          string         `json:"investorId" doc:"The position's investor."`
	CapitalCalls        []PositionItem `json:"capitalCalls" doc:"The position's capital call in the version, if any."`
	Distributions       []PositionItem `json:"distributions" doc:"The position's distribution in the version, if any."`
	UnfundedCommitments []PositionItem `json:"unfundedCommitments" doc:"The position's unfunded commitment in the version, if any."`
	CapitalAccounts     []PositionItem `json:"capitalAccounts" doc:"The position's capital account statement in the version, if any."`
}

// GroupsOf groups position items by position, each group's items by kind
// in the order given, with the typed lines chosen.
func GroupsOf(items []fund.PositionItem, lines TypedLines) map[string]PositionGroup {
	out := make(map[string]PositionGroup, len(items)/len(fund.ItemKinds)+1)
	for _, it := range items {
		g, ok := out[it.PositionID]
		if !ok {
			g = PositionGroup{InvestorID: it.InvestorID, CapitalCalls: []PositionItem{}, Distributions: []PositionItem{}, UnfundedCommitments: []PositionItem{},
				CapitalAccounts: []PositionItem{}}
		}
		switch it.Kind {
		case fund.Statement:
			g.CapitalAccounts = append(g.CapitalAccounts, ItemOf(it, lines))
		case fund.CapitalCall:
			g.CapitalCalls = append(g.CapitalCalls, ItemOf(it, lines))
		case fund.Distribution:
			g.Distributions = append(g.Distributions, ItemOf(it, lines))
		default:
			g.UnfundedCommitments = append(g.UnfundedCommitments, ItemOf(it, lines))
		}
		out[it.PositionID] = g
	}
	return out
}

// Versions is a page of a document's versions.
type Versions struct {
	DocumentID string           `json:"documentId" doc:"The document."`
	Latest     *DocumentHeader  `json:"latest,omitempty" doc:"The latest version's record ('status' 'latest'); present only when neither 'from' nor 'to' is given."`
	Versions   []DocumentHeader `json:"versions" doc:"A page of the document's version records, the latest one among them, newest first; each says whether it is the latest or superseded."`
	Next       string           `json:"next,omitempty" doc:"Opaque cursor of the next page of version records; absent on the last page."`
	Basis      Basis            `json:"basis" doc:"What the page was read on. The document is known at basis.knownAt: at its latest version committed at or before it. asOf is null: this route takes none. A later page is read on its first page's basis, which its cursor pins."`
}

// DocumentPosition is one position's items in a document.
type DocumentPosition struct {
	DocumentID string         `json:"documentId" doc:"The document."`
	PositionID string         `json:"positionId" doc:"The position."`
	Version    int            `json:"version" doc:"The document's version the items are of."`
	Items      []PositionItem `json:"items" doc:"Capital account statement, capital call, distribution and unfunded commitment, in that order, those the document reports (one item with 'itemType')."`
	Basis      Basis          `json:"basis" doc:"What the answer was read on. The document is known at basis.knownAt: at its latest version committed at or before it. asOf is null: this route takes none."`
}

// Capital is a document's capital activity and capital calls.
type Capital struct {
	DocumentID        string            `json:"documentId" doc:"The document."`
	Version           int               `json:"version" doc:"The committed version every page shows: the latest when the first page was read."`
	CapitalActivities CapitalActivities `json:"capitalActivities" doc:"The version's capital activity (first page only) and a page of the earlier versions', newest first."`
	CapitalCalls      []PositionItem    `json:"capitalCalls" doc:"The version's capital calls, by position; first page only (empty on later pages)."`
	Next              string            `json:"next,omitempty" doc:"Opaque cursor of the next page of earlier capital activities; absent on the last page."`
	Basis             Basis             `json:"basis" doc:"What the page was read on. The document is known at basis.knownAt: at its latest version committed at or before it. asOf is null: this route takes none. A later page is read on its first page's basis, which its cursor pins."`
}

// Analysis is a document's per-position analysis.
type Analysis struct {
	DocumentID string             `json:"documentId" doc:"The document."`
	Version    int                `json:"version" doc:"The committed version analysed."`
	Positions  []PositionAnalysis `json:"positions" doc:"Every position of the version, by position ID (not paginated)."`
	Basis      Basis              `json:"basis" doc:"What the answer was read on. The document is known at basis.knownAt: at its latest version committed at or before it. asOf is null: this route takes none."`
}
