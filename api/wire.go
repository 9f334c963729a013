package api

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

type documentRequest struct {
	FundID          string           `json:"fundId"`
	Kind            string           `json:"kind"`
	Title           string           `json:"title"`
	AsOf            string           `json:"asOf"`
	Currency        string           `json:"currency"`
	CapitalActivity *activityRequest `json:"capitalActivity"`
	Positions       positionList     `json:"positions"`
}

// positionList decodes a document's positions one at a time and stops at
// the first one past max, so an oversized body never becomes tens of
// thousands of positions in memory before the limit is applied.
type positionList struct {
	max   int // 0: no limit
	items []positionWire
	set   bool // the field was present (null counts as absent)
}

func (l *positionList) UnmarshalJSON(b []byte) error {
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
	l.set, l.items = true, []positionWire{}
	for dec.More() {
		if l.max > 0 && len(l.items) == l.max {
			return fund.Invalid("positions", "a document holds at most %d positions; more were sent", l.max)
		}
		var p positionWire
		if err := dec.Decode(&p); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				typ.Field = fmt.Sprintf("positions[%d].%s", len(l.items), typ.Field)
			}
			return err
		}
		l.items = append(l.items, p)
	}
	return nil
}

type activityRequest struct {
	Amount      amount `json:"amount"`
	Status      string `json:"status"`
	Date        string `json:"date"`
	Description string `json:"description"`
}

// positionWire is a position in a request and in a version's response.
type positionWire struct {
	PositionID         string        `json:"positionId"`
	InvestorID         string        `json:"investorId"`
	CapitalCall        *callWire     `json:"capitalCall,omitempty"`
	Distribution       *distWire     `json:"distribution,omitempty"`
	UnfundedCommitment *unfundedWire `json:"unfundedCommitment,omitempty"`
}

type callWire struct {
	Amount        amount `json:"amount"`
	Status        string `json:"status,omitempty"`
	DueDate       string `json:"dueDate,omitempty"`
	Investment    amount `json:"investment,omitzero"`
	ManagementFee amount `json:"managementFee,omitzero"`
	FundExpenses  amount `json:"fundExpenses,omitzero"`
}

type distWire struct {
	Amount          amount `json:"amount"`
	Status          string `json:"status,omitempty"`
	Date            string `json:"date,omitempty"`
	ReturnOfCapital amount `json:"returnOfCapital,omitzero"`
	RealizedGain    amount `json:"realizedGain,omitzero"`
	Income          amount `json:"income,omitzero"`
	Recallable      amount `json:"recallable,omitzero"`
	Withholding     amount `json:"withholding,omitzero"`
}

type unfundedWire struct {
	Amount     amount `json:"amount"`
	Commitment amount `json:"commitment,omitzero"`
	Status     string `json:"status,omitempty"`
}

// amount is a money field on the wire. Decoding never fails on it, so that
// the conversion to the domain can name the offending field; it remembers
// whether the field was present and whether it was null, which no amount
// may be.
type amount struct {
	m         fund.Money
	set, null bool
	err       error
}

// UnmarshalJSON is called for null too, because amount is not a pointer.
func (a *amount) UnmarshalJSON(b []byte) error {
	a.set = true
	if string(b) == "null" {
		a.null = true
		return nil
	}
	a.err = a.m.UnmarshalJSON(b)
	return nil
}

func (a amount) MarshalJSON() ([]byte, error) { return a.m.MarshalJSON() }

// IsZero makes an absent amount disappear from responses (omitzero).
func (a amount) IsZero() bool { return !a.set }

func wrap(m *fund.Money) amount {
	if m == nil {
		return amount{}
	}
	return amount{m: *m, set: true}
}

// optional converts an optional amount, naming field in any error.
func optional(field string, a amount) (*fund.Money, error) {
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
func required(field string, a amount) (fund.Money, error) {
	if !a.set || a.null {
		return fund.Money{}, fund.Invalid(field, "is required and may not be null")
	}
	m, err := optional(field, a)
	if err != nil {
		return fund.Money{}, err
	}
	return *m, nil
}

// decodeStrict decodes exactly one JSON value into v: unknown fields and
// trailing data are refused, and every error says where the input went wrong.
func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fund.Invalid("body", "holds data after the JSON value; send exactly one JSON object")
	}
	return nil
}

func jsonError(err error) error {
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
			return &fund.Error{Code: codeTooLarge, Field: "body", Message: fmt.Sprintf("exceeds the limit of %d bytes", tooLarge.Limit)}
		}
		return fund.Invalid("body", "cannot be read")
	}
}

// toDocument converts a request into the domain document. Every missing or
// malformed field is EINVALID naming the field.
func (r *documentRequest) toDocument(id string) (fund.Document, error) {
	d := fund.Document{ID: id, FundID: r.FundID, Kind: fund.Kind(r.Kind), Title: r.Title, Currency: r.Currency}
	var err error
	if d.AsOf, err = parseDate("asOf", r.AsOf, true); err != nil {
		return d, err
	}
	if a := r.CapitalActivity; a != nil {
		act := fund.CapitalActivity{Status: fund.Status(a.Status), Description: a.Description}
		if act.Amount, err = required("capitalActivity.amount", a.Amount); err != nil {
			return d, err
		}
		if act.Date, err = parseDate("capitalActivity.date", a.Date, false); err != nil {
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

func (p *positionWire) toPosition(field string) (fund.Position, error) {
	out := fund.Position{ID: p.PositionID, InvestorID: p.InvestorID}
	var err error
	if c := p.CapitalCall; c != nil {
		f := field + ".capitalCall"
		item := fund.CapitalCallItem{Status: fund.Status(c.Status)}
		if item.Amount, err = required(f+".amount", c.Amount); err != nil {
			return out, err
		}
		for _, o := range []struct {
			name string
			in   amount
			out  **fund.Money
		}{{"investment", c.Investment, &item.Investment}, {"managementFee", c.ManagementFee, &item.ManagementFee}, {"fundExpenses", c.FundExpenses, &item.FundExpenses}} {
			if *o.out, err = optional(f+"."+o.name, o.in); err != nil {
				return out, err
			}
		}
		if item.DueDate, err = parseDate(f+".dueDate", c.DueDate, false); err != nil {
			return out, err
		}
		out.CapitalCall = &item
	}
	if x := p.Distribution; x != nil {
		f := field + ".distribution"
		item := fund.DistributionItem{Status: fund.Status(x.Status)}
		if item.Amount, err = required(f+".amount", x.Amount); err != nil {
			return out, err
		}
		for _, o := range []struct {
			name string
			in   amount
			out  **fund.Money
		}{{"returnOfCapital", x.ReturnOfCapital, &item.ReturnOfCapital}, {"realizedGain", x.RealizedGain, &item.RealizedGain},
			{"income", x.Income, &item.Income}, {"recallable", x.Recallable, &item.Recallable}, {"withholding", x.Withholding, &item.Withholding}} {
			if *o.out, err = optional(f+"."+o.name, o.in); err != nil {
				return out, err
			}
		}
		if item.Date, err = parseDate(f+".date", x.Date, false); err != nil {
			return out, err
		}
		out.Distribution = &item
	}
	if u := p.UnfundedCommitment; u != nil {
		f := field + ".unfundedCommitment"
		item := fund.UnfundedCommitmentItem{Status: fund.Status(u.Status)}
		if item.Amount, err = required(f+".amount", u.Amount); err != nil {
			return out, err
		}
		if item.Commitment, err = optional(f+".commitment", u.Commitment); err != nil {
			return out, err
		}
		out.UnfundedCommitment = &item
	}
	return out, nil
}

func parseDate(field, s string, mandatory bool) (fund.Date, error) {
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

type documentHeader struct {
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

func toHeader(h fund.DocumentHeader, status string) documentHeader {
	return documentHeader{DocumentID: h.ID, FundID: h.FundID, Kind: h.Kind, Title: h.Title, AsOf: h.AsOf.String(),
		Currency: h.Currency, Version: h.Version, PositionCount: h.PositionCount, Status: status, CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy}
}

type activityWire struct {
	Amount      fund.Money `json:"amount"`
	Status      string     `json:"status"`
	Date        string     `json:"date"`
	Description string     `json:"description,omitempty"`
	Version     int        `json:"version,omitempty"`
}

func toActivity(a fund.CapitalActivity, version int) *activityWire {
	return &activityWire{Amount: a.Amount, Status: string(a.Status), Date: a.Date.String(), Description: a.Description, Version: version}
}

// documentVersion is one whole version of a document.
type documentVersion struct {
	documentHeader
	CapitalActivity *activityWire  `json:"capitalActivity,omitempty"`
	Positions       []positionWire `json:"positions"`
}

func toVersion(d fund.Document) documentVersion {
	h := fund.DocumentHeader{ID: d.ID, FundID: d.FundID, Kind: d.Kind, Title: d.Title, AsOf: d.AsOf, Currency: d.Currency,
		PositionCount: len(d.Positions), Version: d.Version, CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy}
	v := documentVersion{documentHeader: toHeader(h, ""), Positions: []positionWire{}}
	if d.CapitalActivity != nil {
		v.CapitalActivity = toActivity(*d.CapitalActivity, 0)
	}
	for _, p := range d.Positions {
		v.Positions = append(v.Positions, toPositionWire(p))
	}
	return v
}

func toPositionWire(p fund.Position) positionWire {
	w := positionWire{PositionID: p.ID, InvestorID: p.InvestorID}
	if c := p.CapitalCall; c != nil {
		w.CapitalCall = &callWire{Amount: wrap(&c.Amount), Status: string(c.Status), DueDate: c.DueDate.String(),
			Investment: wrap(c.Investment), ManagementFee: wrap(c.ManagementFee), FundExpenses: wrap(c.FundExpenses)}
	}
	if x := p.Distribution; x != nil {
		w.Distribution = &distWire{Amount: wrap(&x.Amount), Status: string(x.Status), Date: x.Date.String(), ReturnOfCapital: wrap(x.ReturnOfCapital),
			RealizedGain: wrap(x.RealizedGain), Income: wrap(x.Income), Recallable: wrap(x.Recallable), Withholding: wrap(x.Withholding)}
	}
	if u := p.UnfundedCommitment; u != nil {
		w.UnfundedCommitment = &unfundedWire{Amount: wrap(&u.Amount), Commitment: wrap(u.Commitment), Status: string(u.Status)}
	}
	return w
}

// itemWire is one position item, flat, as the position routes return it.
type itemWire struct {
	Type            string      `json:"type"`
	DocumentID      string      `json:"documentId"`
	DocumentVersion int         `json:"documentVersion"`
	FundID          string      `json:"fundId"`
	InvestorID      string      `json:"investorId"`
	PositionID      string      `json:"positionId"`
	AsOf            string      `json:"asOf"`
	Currency        string      `json:"currency"`
	Amount          fund.Money  `json:"amount"`
	Status          string      `json:"status"`
	Date            string      `json:"date,omitempty"`
	Investment      *fund.Money `json:"investment,omitempty"`
	ManagementFee   *fund.Money `json:"managementFee,omitempty"`
	FundExpenses    *fund.Money `json:"fundExpenses,omitempty"`
	ReturnOfCapital *fund.Money `json:"returnOfCapital,omitempty"`
	RealizedGain    *fund.Money `json:"realizedGain,omitempty"`
	Income          *fund.Money `json:"income,omitempty"`
	Recallable      *fund.Money `json:"recallable,omitempty"`
	Withholding     *fund.Money `json:"withholding,omitempty"`
	Commitment      *fund.Money `json:"commitment,omitempty"`
}

func toItem(it fund.PositionItem) itemWire {
	return itemWire{Type: it.Kind.Type(), DocumentID: it.DocumentID, DocumentVersion: it.DocumentVersion, FundID: it.FundID,
		InvestorID: it.InvestorID, PositionID: it.PositionID, AsOf: it.AsOf.String(), Currency: it.Currency,
		Amount: it.Amount, Status: string(it.Status), Date: it.Date.String(),
		Investment: it.Investment, ManagementFee: it.ManagementFee, FundExpenses: it.FundExpenses,
		ReturnOfCapital: it.ReturnOfCapital, RealizedGain: it.RealizedGain, Income: it.Income,
		Recallable: it.Recallable, Withholding: it.Withholding, Commitment: it.Commitment}
}

func toItems(items []fund.PositionItem) []itemWire {
	out := make([]itemWire, 0, len(items))
	for _, it := range items {
		out = append(out, toItem(it))
	}
	return out
}

type overviewDocuments struct {
	Latest     documentHeader   `json:"latest"`
	Historical []documentHeader `json:"historical"`
}

type overviewActivities struct {
	Latest     *activityWire  `json:"latest"`
	Historical []activityWire `json:"historical"`
}

type analysisWire struct {
	PositionID          string     `json:"positionId"`
	InvestorID          string     `json:"investorId"`
	CapitalCalls        int        `json:"capitalCalls"`
	TotalCalled         fund.Money `json:"totalCalled"`
	Distributions       int        `json:"distributions"`
	TotalDistributed    fund.Money `json:"totalDistributed"`
	UnfundedCommitments int        `json:"unfundedCommitments"`
	TotalUnfunded       fund.Money `json:"totalUnfunded"`
}

func toAnalysis(a positions.Analysis) analysisWire {
	return analysisWire{PositionID: a.PositionID, InvestorID: a.InvestorID, CapitalCalls: a.CapitalCalls, TotalCalled: a.TotalCalled,
		Distributions: a.Distributions, TotalDistributed: a.TotalDistributed, UnfundedCommitments: a.UnfundedCommitments, TotalUnfunded: a.TotalUnfunded}
}

type registeredWire struct {
	PositionID string    `json:"positionId"`
	FundID     string    `json:"fundId"`
	InvestorID string    `json:"investorId"`
	Currency   string    `json:"currency"`
	CreatedAt  time.Time `json:"createdAt"`
}

func toRegistered(rs []positions.Registered) []registeredWire {
	out := make([]registeredWire, 0, len(rs))
	for _, r := range rs {
		out = append(out, registeredWire{PositionID: r.PositionID, FundID: r.FundID, InvestorID: r.InvestorID, Currency: r.Currency, CreatedAt: r.CreatedAt})
	}
	return out
}

// page is the envelope of every paginated list.
type page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// byStatusWire is an amount split by status.
type byStatusWire struct {
	Total     fund.Money `json:"total"`
	Pending   fund.Money `json:"pending"`
	Completed fund.Money `json:"completed"`
}

func toByStatus(b positions.ByStatus) byStatusWire {
	return byStatusWire{Total: b.Total, Pending: b.Pending, Completed: b.Completed}
}

type distributedWire struct {
	Gross       byStatusWire `json:"gross"`
	Withholding byStatusWire `json:"withholding"`
	Net         byStatusWire `json:"net"`
}

type unfundedFiguresWire struct {
	Reported   *fund.Money `json:"reported,omitempty"`
	Computed   *fund.Money `json:"computed,omitempty"`
	Difference *fund.Money `json:"difference,omitempty"`
}

type countsWire struct {
	CapitalCalls        int `json:"capitalCalls"`
	Distributions       int `json:"distributions"`
	UnfundedCommitments int `json:"unfundedCommitments"`
}

// figuresWire is the money of a position summary, and of an investor's
// totals in one currency.
type figuresWire struct {
	Currency    string              `json:"currency"`
	Commitment  *fund.Money         `json:"commitment,omitempty"`
	PaidIn      byStatusWire        `json:"paidIn"`
	Distributed distributedWire     `json:"distributed"`
	Recallable  fund.Money          `json:"recallable"`
	Unfunded    unfundedFiguresWire `json:"unfunded"`
	DPI         string              `json:"dpi,omitempty"`
	Counts      countsWire          `json:"counts"`
}

func toFigures(f positions.Figures) figuresWire {
	w := figuresWire{
		Currency: f.Currency, Commitment: f.Commitment, PaidIn: toByStatus(f.PaidIn),
		Distributed: distributedWire{Gross: toByStatus(f.Distributed), Withholding: toByStatus(f.Withholding), Net: toByStatus(f.DistributedNet)},
		Recallable:  f.Recallable,
		Unfunded:    unfundedFiguresWire{Reported: f.UnfundedReported, Computed: f.UnfundedComputed, Difference: f.UnfundedDifference},
		Counts:      countsWire{CapitalCalls: f.CapitalCalls, Distributions: f.Distributions, UnfundedCommitments: f.UnfundedCommitments},
	}
	if f.DPI != nil {
		w.DPI = f.DPI.StringFixed(positions.DPIScale)
	}
	return w
}

type sourceWire struct {
	DocumentID string `json:"documentId"`
	Version    int    `json:"version"`
	AsOf       string `json:"asOf"`
}

func toSource(s *positions.Source) *sourceWire {
	if s == nil {
		return nil
	}
	return &sourceWire{DocumentID: s.DocumentID, Version: s.Version, AsOf: s.AsOf.String()}
}

type summarySourcesWire struct {
	Commitment *sourceWire `json:"commitment,omitempty"`
	Unfunded   *sourceWire `json:"unfunded,omitempty"`
}

// summaryWire is a position summary.
type summaryWire struct {
	PositionID string `json:"positionId"`
	FundID     string `json:"fundId"`
	InvestorID string `json:"investorId"`
	AsOf       string `json:"asOf,omitempty"`
	figuresWire
	Sources   summarySourcesWire `json:"sources"`
	Documents []sourceWire       `json:"documents"`
}

func toSummary(s positions.Summary) summaryWire {
	w := summaryWire{PositionID: s.PositionID, FundID: s.FundID, InvestorID: s.InvestorID, AsOf: s.AsOf.String(),
		figuresWire: toFigures(s.Figures),
		Sources:     summarySourcesWire{Commitment: toSource(s.CommitmentSource), Unfunded: toSource(s.UnfundedSource)},
		Documents:   make([]sourceWire, 0, len(s.Documents)),
	}
	for i := range s.Documents {
		w.Documents = append(w.Documents, *toSource(&s.Documents[i]))
	}
	return w
}

type totalsWire struct {
	figuresWire
	Positions                  int `json:"positions"`
	PositionsWithoutCommitment int `json:"positionsWithoutCommitment"`
}

type investorSummaryWire struct {
	InvestorID string        `json:"investorId"`
	AsOf       string        `json:"asOf,omitempty"`
	Positions  []summaryWire `json:"positions"`
	Totals     []totalsWire  `json:"totals"` // of this page's positions
	Next       string        `json:"next,omitempty"`
}

func toInvestorSummary(s positions.InvestorSummary) investorSummaryWire {
	w := investorSummaryWire{InvestorID: s.InvestorID, AsOf: s.AsOf.String(), Positions: []summaryWire{}, Totals: []totalsWire{}}
	for _, p := range s.Positions {
		w.Positions = append(w.Positions, toSummary(p))
	}
	for _, t := range s.Totals {
		w.Totals = append(w.Totals, totalsWire{figuresWire: toFigures(t.Figures), Positions: t.Positions, PositionsWithoutCommitment: t.PositionsWithoutCommitment})
	}
	return w
}

// cashflowWire is one contribution or distribution with running totals.
type cashflowWire struct {
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

type cashflowsWire struct {
	PositionID string         `json:"positionId"`
	FundID     string         `json:"fundId"`
	InvestorID string         `json:"investorId"`
	Currency   string         `json:"currency"`
	AsOf       string         `json:"asOf,omitempty"`
	Cashflows  []cashflowWire `json:"cashflows"`
}

func toCashflows(identity fund.PositionItem, asOf fund.Date, flows []positions.Cashflow) cashflowsWire {
	w := cashflowsWire{PositionID: identity.PositionID, FundID: identity.FundID, InvestorID: identity.InvestorID,
		Currency: identity.Currency, AsOf: asOf.String(), Cashflows: make([]cashflowWire, 0, len(flows))}
	for _, f := range flows {
		cw := cashflowWire{Date: f.Date.String(), Type: "contribution", DocumentID: f.DocumentID, Version: f.Version,
			Status: string(f.Status), Amount: f.Amount, PaidIn: f.PaidIn, Distributed: f.Distributed, NetCashflow: f.NetCashflow}
		if f.Kind == fund.Distribution {
			withholding, net := f.Withholding, f.Net
			cw.Type, cw.Withholding, cw.Net = "distribution", &withholding, &net
		}
		w.Cashflows = append(w.Cashflows, cw)
	}
	return w
}
