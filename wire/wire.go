package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
)

// Requests. Server-owned fields (version, createdAt) have no place here, and
// unknown fields are refused, so a client cannot set them.

type DocumentRequest struct {
	FundID          string                `json:"fundId"`
	Kind            string                `json:"kind"`
	Title           string                `json:"title"`
	AsOf            string                `json:"asOf"`
	Currency        string                `json:"currency"`
	CapitalActivity *CapitalActivityInput `json:"capitalActivity"`
	Positions       PositionList          `json:"positions"`
}

// PositionList decodes a document's positions one at a time and stops at
// the first one past Max, so an oversized body never becomes tens of
// thousands of positions in memory before the limit is applied.
type PositionList struct {
	Max   int // 0: no limit; set before decoding
	items []Position
	set   bool // the field was present (null counts as absent)
}

// PositionsOf is the list ps, as a client sends it.
func PositionsOf(ps ...Position) PositionList {
	return PositionList{items: append([]Position{}, ps...), set: true}
}

// Items returns the positions.
func (l PositionList) Items() []Position { return l.items }

// MarshalJSON writes the positions as a JSON array (null when absent).
func (l PositionList) MarshalJSON() ([]byte, error) {
	if !l.set {
		return []byte("null"), nil
	}
	return json.Marshal(l.items)
}

func (l *PositionList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) == 0 || b[0] != '[' {
		return fund.Invalid("positions", "must be a JSON array of positions")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if _, err := dec.Token(); err != nil { // '['
		return err
	}
	l.set, l.items = true, []Position{}
	for dec.More() {
		if l.Max > 0 && len(l.items) == l.Max {
			return fund.Invalid("positions", "a document holds at most %d positions; more were sent", l.Max)
		}
		var p Position
		if err := dec.Decode(&p); err != nil {
			// Named here in full, as a *fund.Error: the decoder of the
			// request would add "positions." to an UnmarshalTypeError's path.
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				field := fmt.Sprintf("positions[%d]", len(l.items))
				if typ.Field != "" {
					field += "." + typ.Field
				}
				return fund.Invalid(field, "must be a JSON %s, not %s", typ.Type.Kind(), typ.Value)
			}
			return err
		}
		l.items = append(l.items, p)
	}
	return nil
}

type CapitalActivityInput struct {
	Amount      Amount `json:"amount"`
	Status      string `json:"status"`
	Date        string `json:"date"`
	Description string `json:"description"`
}

// Position is a position in a request and in a version's response.
type Position struct {
	PositionID         string              `json:"positionId"`
	InvestorID         string              `json:"investorId"`
	CapitalCall        *CapitalCall        `json:"capitalCall,omitempty"`
	Distribution       *Distribution       `json:"distribution,omitempty"`
	UnfundedCommitment *UnfundedCommitment `json:"unfundedCommitment,omitempty"`
	CapitalAccount     *CapitalAccount     `json:"capitalAccount,omitempty"`
}

// The items of a position in a request and in a version's response. Each
// embeds fund's declaration of its line items (see lines.go).

type CapitalCall struct {
	Amount  Amount `json:"amount"`
	Status  string `json:"status,omitempty"`
	DueDate string `json:"dueDate,omitempty"`
	fund.CallLines
	Transactions []Transaction `json:"transactions,omitempty"`
	lines        lineInputs    // as sent, when decoded
}

func (c *CapitalCall) UnmarshalJSON(b []byte) (err error) {
	type fields CapitalCall // without this method
	c.lines, err = decodeItem(b, (*fields)(c), &c.CallLines)
	return err
}

type Distribution struct {
	Amount Amount `json:"amount"`
	Status string `json:"status,omitempty"`
	Date   string `json:"date,omitempty"`
	fund.DistributionLines
	Transactions []Transaction `json:"transactions,omitempty"`
	lines        lineInputs
}

func (x *Distribution) UnmarshalJSON(b []byte) (err error) {
	type fields Distribution
	x.lines, err = decodeItem(b, (*fields)(x), &x.DistributionLines)
	return err
}

type UnfundedCommitment struct {
	Amount Amount `json:"amount"`
	fund.UnfundedLines
	Status string `json:"status,omitempty"`
	lines  lineInputs
}

func (u *UnfundedCommitment) UnmarshalJSON(b []byte) (err error) {
	type fields UnfundedCommitment
	u.lines, err = decodeItem(b, (*fields)(u), &u.UnfundedLines)
	return err
}

// Amount is a money member of a request. Decoding never fails on it, so
// that the conversion to the domain can name the offending field; it
// remembers whether the member was present and whether it was null, which
// no amount may be.
type Amount struct {
	m         fund.Money
	set, null bool
	err       error
}

// UnmarshalJSON is called for null too, because amount is not a pointer.
func (a *Amount) UnmarshalJSON(b []byte) error {
	a.set = true
	if string(b) == "null" {
		a.null = true
		return nil
	}
	a.err = a.m.UnmarshalJSON(b)
	return nil
}

func (a Amount) MarshalText() ([]byte, error) { return a.m.MarshalText() }

// Money is the amount; zero when it was absent, null or malformed.
func (a Amount) Money() fund.Money { return a.m }

func (a Amount) String() string { return a.m.String() }

// IsZero reports whether the amount was absent, so that omitzero leaves it out.
func (a Amount) IsZero() bool { return !a.set }

// AmountOf is the amount m, as a client sends it or a response carries it.
func AmountOf(m fund.Money) Amount { return Amount{m: m, set: true} }

// optional converts an optional amount, naming field in any error.
func optional(field string, a Amount) (*fund.Money, error) {
	if !a.set {
		return nil, nil
	}
	if a.null {
		return nil, fund.Invalid(field, "may not be null; leave the field out instead")
	}
	if a.err != nil {
		return nil, fund.Invalid(field, "%s", a.err.(*fund.Error).Message)
	}
	m := a.m
	return &m, nil
}

// required converts a mandatory amount, naming field in any error.
func required(field string, a Amount) (fund.Money, error) {
	if !a.set || a.null {
		return fund.Money{}, fund.Invalid(field, "is required and may not be null")
	}
	m, err := optional(field, a)
	if err != nil {
		return fund.Money{}, err
	}
	return *m, nil
}

// DecodeStrict decodes exactly one JSON value into v: unknown fields and
// trailing data are refused, and every error says where the input went wrong.
func DecodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return JSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fund.Invalid("body", "holds data after the JSON value; send exactly one JSON object")
	}
	return nil
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
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fund.Invalid(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "is not a field of this request")
	default:
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &fund.Error{Code: CodeTooLarge, Field: "body", Message: fmt.Sprintf("exceeds the limit of %d bytes", tooLarge.Limit)}
		}
		return fund.Invalid("body", "cannot be read")
	}
}

// ToDocument converts a request into the domain document. Every missing or
// malformed field is EINVALID naming the field.
func (r *DocumentRequest) ToDocument(id string) (fund.Document, error) {
	d := fund.Document{ID: id, FundID: r.FundID, Kind: fund.Kind(r.Kind), Title: r.Title, Currency: r.Currency}
	var err error
	if d.AsOf, err = ParseDate("asOf", r.AsOf, true); err != nil {
		return d, err
	}
	if a := r.CapitalActivity; a != nil {
		act := fund.CapitalActivity{Status: fund.Status(a.Status), Description: a.Description}
		if act.Amount, err = required("capitalActivity.amount", a.Amount); err != nil {
			return d, err
		}
		if act.Date, err = ParseDate("capitalActivity.date", a.Date, false); err != nil {
			return d, err
		}
		d.CapitalActivity = &act
	}
	if !r.Positions.set {
		return d, fund.Invalid("positions", "is required (an empty list is allowed)")
	}
	for i, p := range r.Positions.items {
		pos, err := p.toPosition(fmt.Sprintf("positions[%d]", i))
		if err != nil {
			return d, err
		}
		d.Positions = append(d.Positions, pos)
	}
	return d, nil
}

func (p *Position) toPosition(field string) (fund.Position, error) {
	out := fund.Position{ID: p.PositionID, InvestorID: p.InvestorID}
	var err error
	if c := p.CapitalCall; c != nil {
		f := field + ".capitalCall"
		item := fund.CapitalCallItem{Status: fund.Status(c.Status), CallLines: c.CallLines}
		if item.Amount, err = required(f+".amount", c.Amount); err != nil {
			return out, err
		}
		if err = c.lines.toLines(f, &item.CallLines); err != nil {
			return out, err
		}
		if item.DueDate, err = ParseDate(f+".dueDate", c.DueDate, false); err != nil {
			return out, err
		}
		if item.Transactions, err = toTransactions(f+".transactions", c.Transactions); err != nil {
			return out, err
		}
		out.CapitalCall = &item
	}
	if x := p.Distribution; x != nil {
		f := field + ".distribution"
		item := fund.DistributionItem{Status: fund.Status(x.Status), DistributionLines: x.DistributionLines}
		if item.Amount, err = required(f+".amount", x.Amount); err != nil {
			return out, err
		}
		if err = x.lines.toLines(f, &item.DistributionLines); err != nil {
			return out, err
		}
		if item.Date, err = ParseDate(f+".date", x.Date, false); err != nil {
			return out, err
		}
		if item.Transactions, err = toTransactions(f+".transactions", x.Transactions); err != nil {
			return out, err
		}
		out.Distribution = &item
	}
	if u := p.UnfundedCommitment; u != nil {
		f := field + ".unfundedCommitment"
		item := fund.UnfundedCommitmentItem{Status: fund.Status(u.Status), UnfundedLines: u.UnfundedLines}
		if item.Amount, err = required(f+".amount", u.Amount); err != nil {
			return out, err
		}
		if err = u.lines.toLines(f, &item.UnfundedLines); err != nil {
			return out, err
		}
		out.UnfundedCommitment = &item
	}
	if c := p.CapitalAccount; c != nil {
		if out.CapitalAccount, err = c.toCapitalAccount(field + ".capitalAccount"); err != nil {
			return out, err
		}
	}
	return out, nil
}

func ParseDate(field, s string, mandatory bool) (fund.Date, error) {
	if s == "" {
		if mandatory {
			return fund.Date{}, fund.Invalid(field, "is required (YYYY-MM-DD)")
		}
		return fund.Date{}, nil
	}
	d, err := fund.ParseDate(s)
	if err != nil {
		return d, fund.Invalid(field, "%s", err.(*fund.Error).Message)
	}
	return d, nil
}

// Responses.

type DocumentHeader struct {
	DocumentID    string    `json:"documentId"`
	FundID        string    `json:"fundId"`
	Kind          fund.Kind `json:"kind"`
	Title         string    `json:"title"`
	AsOf          string    `json:"asOf"`
	Currency      string    `json:"currency"`
	Version       int       `json:"version"`
	PositionCount int       `json:"positionCount"`
	Status        string    `json:"status,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	CreatedBy     string    `json:"createdBy,omitempty"`
}

func HeaderOf(h fund.DocumentHeader, status string) DocumentHeader {
	return DocumentHeader{DocumentID: h.ID, FundID: h.FundID, Kind: h.Kind, Title: h.Title, AsOf: h.AsOf.String(),
		Currency: h.Currency, Version: h.Version, PositionCount: h.PositionCount, Status: status, CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy}
}

type CapitalActivity struct {
	Amount      fund.Money `json:"amount"`
	Status      string     `json:"status"`
	Date        string     `json:"date"`
	Description string     `json:"description,omitempty"`
	Version     int        `json:"version,omitempty"`
}

func ActivityOf(a fund.CapitalActivity, version int) *CapitalActivity {
	return &CapitalActivity{Amount: a.Amount, Status: string(a.Status), Date: a.Date.String(), Description: a.Description, Version: version}
}

// DocumentVersion is one whole version of a document.
type DocumentVersion struct {
	DocumentHeader
	CapitalActivity *CapitalActivity `json:"capitalActivity,omitempty"`
	Positions       []Position       `json:"positions"`
}

func VersionOf(d fund.Document) DocumentVersion {
	h := fund.DocumentHeader{ID: d.ID, FundID: d.FundID, Kind: d.Kind, Title: d.Title, AsOf: d.AsOf, Currency: d.Currency,
		PositionCount: len(d.Positions), Version: d.Version, CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy}
	v := DocumentVersion{DocumentHeader: HeaderOf(h, ""), Positions: []Position{}}
	if d.CapitalActivity != nil {
		v.CapitalActivity = ActivityOf(*d.CapitalActivity, 0)
	}
	for _, p := range d.Positions {
		v.Positions = append(v.Positions, PositionOf(p))
	}
	return v
}

func PositionOf(p fund.Position) Position {
	w := Position{PositionID: p.ID, InvestorID: p.InvestorID}
	if c := p.CapitalCall; c != nil {
		w.CapitalCall = &CapitalCall{Amount: AmountOf(c.Amount), Status: string(c.Status), DueDate: c.DueDate.String(), CallLines: c.CallLines,
			Transactions: TransactionsOf(c.Transactions)}
	}
	if x := p.Distribution; x != nil {
		w.Distribution = &Distribution{Amount: AmountOf(x.Amount), Status: string(x.Status), Date: x.Date.String(), DistributionLines: x.DistributionLines,
			Transactions: TransactionsOf(x.Transactions)}
	}
	if u := p.UnfundedCommitment; u != nil {
		w.UnfundedCommitment = &UnfundedCommitment{Amount: AmountOf(u.Amount), UnfundedLines: u.UnfundedLines, Status: string(u.Status)}
	}
	w.CapitalAccount = CapitalAccountOf(p.CapitalAccount)
	return w
}

// PositionItem is one position item, flat, as the position routes and the
// overview return it. Its line items are fund's declarations, embedded:
// those of its kind, the others nil and left out.
type PositionItem struct {
	Type            string     `json:"type"`
	DocumentID      string     `json:"documentId"`
	DocumentVersion int        `json:"documentVersion"`
	FundID          string     `json:"fundId"`
	InvestorID      string     `json:"investorId"`
	PositionID      string     `json:"positionId"`
	AsOf            string     `json:"asOf"`
	Currency        string     `json:"currency"`
	Amount          fund.Money `json:"amount"`
	Status          string     `json:"status"`
	Date            string     `json:"date,omitempty"`
	fund.CallLines
	fund.DistributionLines
	fund.UnfundedLines
	Transactions   []Transaction   `json:"transactions,omitempty"`
	CapitalAccount *CapitalAccount `json:"capitalAccount,omitempty"`
}

func ItemOf(it fund.PositionItem) PositionItem {
	return PositionItem{Type: it.Kind.Type(), DocumentID: it.DocumentID, DocumentVersion: it.DocumentVersion, FundID: it.FundID,
		InvestorID: it.InvestorID, PositionID: it.PositionID, AsOf: it.AsOf.String(), Currency: it.Currency,
		Amount: it.Amount, Status: string(it.Status), Date: it.Date.String(),
		CallLines: it.CallLines, DistributionLines: it.DistributionLines, UnfundedLines: it.UnfundedLines,
		Transactions: TransactionsOf(it.TypedLines()), CapitalAccount: CapitalAccountOf(it.CapitalAccount)}
}

func ItemsOf(items []fund.PositionItem) []PositionItem {
	out := make([]PositionItem, 0, len(items))
	for _, it := range items {
		out = append(out, ItemOf(it))
	}
	return out
}

type OverviewDocuments struct {
	Latest     DocumentHeader   `json:"latest"`
	Historical []DocumentHeader `json:"historical"`
}

type CapitalActivities struct {
	Latest     *CapitalActivity  `json:"latest"`
	Historical []CapitalActivity `json:"historical"`
}

type PositionAnalysis struct {
	PositionID          string     `json:"positionId"`
	InvestorID          string     `json:"investorId"`
	CapitalCalls        int        `json:"capitalCalls"`
	TotalCalled         fund.Money `json:"totalCalled"`
	Distributions       int        `json:"distributions"`
	TotalDistributed    fund.Money `json:"totalDistributed"`
	UnfundedCommitments int        `json:"unfundedCommitments"`
	TotalUnfunded       fund.Money `json:"totalUnfunded"`
}

func AnalysisOf(a positions.Analysis) PositionAnalysis {
	return PositionAnalysis{PositionID: a.PositionID, InvestorID: a.InvestorID, CapitalCalls: a.CapitalCalls, TotalCalled: a.TotalCalled,
		Distributions: a.Distributions, TotalDistributed: a.TotalDistributed, UnfundedCommitments: a.UnfundedCommitments, TotalUnfunded: a.TotalUnfunded}
}

type RegisteredPosition struct {
	PositionID string    `json:"positionId"`
	FundID     string    `json:"fundId"`
	InvestorID string    `json:"investorId"`
	Currency   string    `json:"currency"`
	CreatedAt  time.Time `json:"createdAt"`
}

func RegisteredOf(rs []positions.Registered) []RegisteredPosition {
	out := make([]RegisteredPosition, 0, len(rs))
	for _, r := range rs {
		out = append(out, RegisteredPosition{PositionID: r.PositionID, FundID: r.FundID, InvestorID: r.InvestorID, Currency: r.Currency, CreatedAt: r.CreatedAt})
	}
	return out
}

// Page is the envelope of every paginated list.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// ByStatus is an amount split by status.
type ByStatus struct {
	Total     fund.Money `json:"total"`
	Pending   fund.Money `json:"pending"`
	Completed fund.Money `json:"completed"`
}

func ByStatusOf(b positions.ByStatus) ByStatus {
	return ByStatus{Total: b.Total, Pending: b.Pending, Completed: b.Completed}
}

type Distributed struct {
	Gross       ByStatus `json:"gross"`
	Withholding ByStatus `json:"withholding"`
	Net         ByStatus `json:"net"`
}

type UnfundedFigures struct {
	Reported   *fund.Money `json:"reported,omitempty"`
	Computed   *fund.Money `json:"computed,omitempty"`
	Difference *fund.Money `json:"difference,omitempty"`
}

type Counts struct {
	CapitalCalls        int `json:"capitalCalls"`
	Distributions       int `json:"distributions"`
	UnfundedCommitments int `json:"unfundedCommitments"`
}

// Figures is the money of a position summary, and of an investor's
// totals in one currency.
type Figures struct {
	Currency    string          `json:"currency"`
	Commitment  *fund.Money     `json:"commitment,omitempty"`
	PaidIn      ByStatus        `json:"paidIn"`
	Distributed Distributed     `json:"distributed"`
	Recallable  fund.Money      `json:"recallable"`
	Unfunded    UnfundedFigures `json:"unfunded"`
	DPI         string          `json:"dpi,omitempty"`
	Counts      Counts          `json:"counts"`
}

func FiguresOf(f positions.Figures) Figures {
	w := Figures{
		Currency: f.Currency, Commitment: f.Commitment, PaidIn: ByStatusOf(f.PaidIn),
		Distributed: Distributed{Gross: ByStatusOf(f.Distributed), Withholding: ByStatusOf(f.Withholding), Net: ByStatusOf(f.DistributedNet)},
		Recallable:  f.Recallable,
		Unfunded:    UnfundedFigures{Reported: f.UnfundedReported, Computed: f.UnfundedComputed, Difference: f.UnfundedDifference},
		Counts:      Counts{CapitalCalls: f.CapitalCalls, Distributions: f.Distributions, UnfundedCommitments: f.UnfundedCommitments},
	}
	if f.DPI != nil {
		w.DPI = f.DPI.StringFixed(positions.DPIScale)
	}
	return w
}

type DocumentSource struct {
	DocumentID string `json:"documentId"`
	Version    int    `json:"version"`
	AsOf       string `json:"asOf"`
}

func SourceOf(s *positions.Source) *DocumentSource {
	if s == nil {
		return nil
	}
	return &DocumentSource{DocumentID: s.DocumentID, Version: s.Version, AsOf: s.AsOf.String()}
}

type SummarySources struct {
	Commitment *DocumentSource `json:"commitment,omitempty"`
	Unfunded   *DocumentSource `json:"unfunded,omitempty"`
}

// PositionSummary is a position summary.
type PositionSummary struct {
	PositionID string `json:"positionId"`
	FundID     string `json:"fundId"`
	InvestorID string `json:"investorId"`
	AsOf       string `json:"asOf,omitempty"`
	Figures
	Sources   SummarySources   `json:"sources"`
	Documents []DocumentSource `json:"documents"`
}

func SummaryOf(s positions.Summary) PositionSummary {
	w := PositionSummary{PositionID: s.PositionID, FundID: s.FundID, InvestorID: s.InvestorID, AsOf: s.AsOf.String(),
		Figures:   FiguresOf(s.Figures),
		Sources:   SummarySources{Commitment: SourceOf(s.CommitmentSource), Unfunded: SourceOf(s.UnfundedSource)},
		Documents: make([]DocumentSource, 0, len(s.Documents)),
	}
	for i := range s.Documents {
		w.Documents = append(w.Documents, *SourceOf(&s.Documents[i]))
	}
	return w
}

type CurrencyTotals struct {
	Figures
	Positions                  int `json:"positions"`
	PositionsWithoutCommitment int `json:"positionsWithoutCommitment"`
}

type InvestorSummary struct {
	InvestorID string            `json:"investorId"`
	AsOf       string            `json:"asOf,omitempty"`
	Positions  []PositionSummary `json:"positions"`
	Totals     []CurrencyTotals  `json:"totals"` // of this page's positions
	Next       string            `json:"next,omitempty"`
}

func InvestorSummaryOf(s positions.InvestorSummary) InvestorSummary {
	w := InvestorSummary{InvestorID: s.InvestorID, AsOf: s.AsOf.String(), Positions: []PositionSummary{}, Totals: []CurrencyTotals{}}
	for _, p := range s.Positions {
		w.Positions = append(w.Positions, SummaryOf(p))
	}
	for _, t := range s.Totals {
		w.Totals = append(w.Totals, CurrencyTotals{Figures: FiguresOf(t.Figures), Positions: t.Positions, PositionsWithoutCommitment: t.PositionsWithoutCommitment})
	}
	return w
}

// Cashflow is one contribution or distribution with running totals.
type Cashflow struct {
	Date        string      `json:"date"`
	Type        string      `json:"type"` // contribution or distribution
	DocumentID  string      `json:"documentId"`
	Version     int         `json:"version"`
	Status      string      `json:"status"`
	Amount      fund.Money  `json:"amount"`
	Withholding *fund.Money `json:"withholding,omitempty"`
	Net         *fund.Money `json:"net,omitempty"`
	PaidIn      fund.Money  `json:"paidIn"`
	Distributed fund.Money  `json:"distributed"`
	NetCashflow fund.Money  `json:"netCashflow"`
}

type Cashflows struct {
	PositionID string     `json:"positionId"`
	FundID     string     `json:"fundId"`
	InvestorID string     `json:"investorId"`
	Currency   string     `json:"currency"`
	AsOf       string     `json:"asOf,omitempty"`
	Cashflows  []Cashflow `json:"cashflows"`
}

func CashflowsOf(identity fund.PositionItem, asOf fund.Date, flows []positions.Cashflow) Cashflows {
	w := Cashflows{PositionID: identity.PositionID, FundID: identity.FundID, InvestorID: identity.InvestorID,
		Currency: identity.Currency, AsOf: asOf.String(), Cashflows: make([]Cashflow, 0, len(flows))}
	for _, f := range flows {
		cw := Cashflow{Date: f.Date.String(), Type: "contribution", DocumentID: f.DocumentID, Version: f.Version,
			Status: string(f.Status), Amount: f.Amount, PaidIn: f.PaidIn, Distributed: f.Distributed, NetCashflow: f.NetCashflow}
		if f.Kind == fund.Distribution {
			withholding, net := f.Withholding, f.Net
			cw.Type, cw.Withholding, cw.Net = "distribution", &withholding, &net
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
	DocumentID string `json:"documentId"`
	Version    int    `json:"version"`
	// Documents and capital activities come with the first page only.
	Documents         *OverviewDocuments       `json:"documents,omitempty"`
	CapitalActivities *CapitalActivities       `json:"capitalActivities,omitempty"`
	Positions         map[string]PositionGroup `json:"positions"`
	Next              string                   `json:"next,omitempty"`
}

// PositionGroup is one position's items in an overview.
type PositionGroup struct {
	InvestorID          string         `json:"investorId"`
	CapitalCalls        []PositionItem `json:"capitalCalls"`
	Distributions       []PositionItem `json:"distributions"`
	UnfundedCommitments []PositionItem `json:"unfundedCommitments"`
	CapitalAccounts     []PositionItem `json:"capitalAccounts"`
}

// GroupsOf groups position items by position, each group's items by kind
// in the order given.
func GroupsOf(items []fund.PositionItem) map[string]PositionGroup {
	out := make(map[string]PositionGroup, len(items)/len(fund.ItemKinds)+1)
	for _, it := range items {
		g, ok := out[it.PositionID]
		if !ok {
			g = PositionGroup{InvestorID: it.InvestorID, CapitalCalls: []PositionItem{}, Distributions: []PositionItem{}, UnfundedCommitments: []PositionItem{},
				CapitalAccounts: []PositionItem{}}
		}
		switch it.Kind {
		case fund.Statement:
			g.CapitalAccounts = append(g.CapitalAccounts, ItemOf(it))
		case fund.CapitalCall:
			g.CapitalCalls = append(g.CapitalCalls, ItemOf(it))
		case fund.Distribution:
			g.Distributions = append(g.Distributions, ItemOf(it))
		default:
			g.UnfundedCommitments = append(g.UnfundedCommitments, ItemOf(it))
		}
		out[it.PositionID] = g
	}
	return out
}

// Versions is a page of a document's versions.
type Versions struct {
	DocumentID string           `json:"documentId"`
	Latest     *DocumentHeader  `json:"latest,omitempty"`
	Historical []DocumentHeader `json:"historical"`
	Next       string           `json:"next,omitempty"`
}

// DocumentPosition is one position's items in a document.
type DocumentPosition struct {
	DocumentID string         `json:"documentId"`
	PositionID string         `json:"positionId"`
	Version    int            `json:"version"`
	Items      []PositionItem `json:"items"`
}

// Capital is a document's capital activity and capital calls.
type Capital struct {
	DocumentID        string            `json:"documentId"`
	Version           int               `json:"version"`
	CapitalActivities CapitalActivities `json:"capitalActivities"`
	CapitalCalls      []PositionItem    `json:"capitalCalls"`
}

// Analysis is a document's per-position analysis.
type Analysis struct {
	DocumentID string             `json:"documentId"`
	Version    int                `json:"version"`
	Positions  []PositionAnalysis `json:"positions"`
}
