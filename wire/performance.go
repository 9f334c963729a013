package wire

import (
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/shopspring/decimal"
)

// The performance answers: a position's NAV, flows, multiples and net IRR
// (positions.Performance), pooled per currency for an investor or a fund,
// and the reconciliation of statements to notices.

// Conventions states, in every performance answer, the rules its figures
// follow (docs/analytics.md, "Performance: NAV, net IRR and multiples").
type Conventions struct {
	FlowDates string `json:"flowDates"`
	Netting   string `json:"netting"`
	NAV       string `json:"nav"`
	IRR       string `json:"irr"`
	Rounding  string `json:"rounding"`
}

// PerformanceConventions is the one statement of the conventions.
var PerformanceConventions = Conventions{
	FlowDates: "A call's typed lines are dated by its due date, a distribution's by its payment date, either by its document's asOf when it has none; lines dated after asOf are left out. Pending and completed items both count. Each document counts at its latest version dated on or before asOf.",
	Netting:   "Paid-in and distributed are gross (no netting of calls against distributions). The IRR sums the flows of one date into one, as a spreadsheet's XIRR does.",
	NAV:       "The ending NAV of the latest capital account statement whose period ends on or before asOf, plus the paid-in and less the distributed lines dated after its period end up to asOf (status rolled_forward); absent with status no_statement when there is none.",
	IRR:       "Net IRR: XIRR over the typed lines counted by ILPA's net methodology (contributions negative, distributions and returns of excess capital positive) and the NAV as a terminal value dated asOf, actual/365 from the first date, solved by bracketing and bisection to 1e-10; when there is no single root the status says why and no rate is given.",
	Rounding:  "Money is exact. DPI, RVPI and TVPI are exact quotients rounded once, half away from zero, to 6 places, with RVPI = TVPI − DPI; the IRR is rounded half away from zero to 6 places (0.123457 is 12.3457%).",
}

type NAV struct {
	Status             string          `json:"status"`
	Value              *fund.Money     `json:"value,omitempty"`
	Statement          *DocumentSource `json:"statement,omitempty"`
	StatementNAV       *fund.Money     `json:"statementNav,omitempty"`
	ContributionsAfter *fund.Money     `json:"contributionsAfter,omitempty"`
	DistributionsAfter *fund.Money     `json:"distributionsAfter,omitempty"`
}

func navOf(n positions.NAV) NAV {
	w := NAV{Status: string(n.Status), Value: n.Value, Statement: SourceOf(n.Statement), StatementNAV: n.StatementNAV}
	if n.Statement != nil {
		c, d := n.ContributionsAfter, n.DistributionsAfter
		w.ContributionsAfter, w.DistributionsAfter = &c, &d
	}
	return w
}

// DatedAmount is one flow of an IRR: the flows of one date netted.
type DatedAmount struct {
	Date   string     `json:"date"`
	Amount fund.Money `json:"amount"`
}

type IRR struct {
	Rate   string        `json:"rate,omitempty"`
	Status string        `json:"status"`
	Flows  []DatedAmount `json:"flows"`
}

func irrOf(r positions.IRR) IRR {
	w := IRR{Status: string(r.Status), Rate: fixed(r.Rate, positions.IRRScale), Flows: make([]DatedAmount, 0, len(r.Flows))}
	for _, f := range r.Flows {
		w.Flows = append(w.Flows, DatedAmount{Date: f.Date.String(), Amount: f.Amount})
	}
	return w
}

func fixed(d *decimal.Decimal, places int32) string {
	if d == nil {
		return ""
	}
	return d.StringFixed(places)
}

// Multiples are DPI, RVPI and TVPI, each absent when the status says so.
type Multiples struct {
	DPI    string `json:"dpi,omitempty"`
	RVPI   string `json:"rvpi,omitempty"`
	TVPI   string `json:"tvpi,omitempty"`
	Status string `json:"multiplesStatus"`
}

func multiplesOf(m positions.PaidInMultiples) Multiples {
	return Multiples{DPI: fixed(m.DPI, positions.MultipleScale), RVPI: fixed(m.RVPI, positions.MultipleScale),
		TVPI: fixed(m.TVPI, positions.MultipleScale), Status: string(m.Status)}
}

type PerformanceFlow struct {
	Date       string     `json:"date"`
	Type       string     `json:"type"`
	Treatment  string     `json:"treatment"`
	Amount     fund.Money `json:"amount"`
	DocumentID string     `json:"documentId"`
	Version    int        `json:"version"`
	PositionID string     `json:"positionId"`
	Status     string     `json:"status"`
}

type Compared struct {
	Statement  fund.Money `json:"statement"`
	Notices    fund.Money `json:"notices"`
	Difference fund.Money `json:"difference"`
}

type Reconciliation struct {
	Statement      DocumentSource `json:"statement"`
	PositionID     string         `json:"positionId"`
	PeriodStart    string         `json:"periodStart"`
	PeriodEnd      string         `json:"periodEnd"`
	Contributions  Compared       `json:"contributions"`
	Distributions  Compared       `json:"distributions"`
	EndingUnfunded *Compared      `json:"endingUnfunded,omitempty"`
}

func reconciliationsOf(rs []positions.Reconciliation) []Reconciliation {
	out := make([]Reconciliation, 0, len(rs))
	for _, r := range rs {
		w := Reconciliation{Statement: *SourceOf(&r.Statement), PositionID: r.PositionID, PeriodStart: r.PeriodStart.String(),
			PeriodEnd: r.PeriodEnd.String(), Contributions: Compared(r.Contributions), Distributions: Compared(r.Distributions)}
		if r.EndingUnfunded != nil {
			c := Compared(*r.EndingUnfunded)
			w.EndingUnfunded = &c
		}
		out = append(out, w)
	}
	return out
}

// PositionPerformance is a position's performance on a date.
type PositionPerformance struct {
	PositionID  string     `json:"positionId"`
	FundID      string     `json:"fundId"`
	InvestorID  string     `json:"investorId"`
	Currency    string     `json:"currency"`
	AsOf        string     `json:"asOf"`
	NAV         NAV        `json:"nav"`
	PaidIn      fund.Money `json:"paidIn"`
	Distributed fund.Money `json:"distributed"`
	Multiples
	IRR             IRR               `json:"irr"`
	Flows           []PerformanceFlow `json:"flows"`
	Reconciliations []Reconciliation  `json:"reconciliations"`
	Documents       []DocumentSource  `json:"documents"`
	// Conventions are stated once per answer: here for one position, at
	// the top of an investor's answer.
	Conventions *Conventions `json:"conventions,omitempty"`
}

func PerformanceOf(p positions.Performance) PositionPerformance {
	w := PositionPerformance{PositionID: p.PositionID, FundID: p.FundID, InvestorID: p.InvestorID, Currency: p.Currency,
		AsOf: p.AsOf.String(), NAV: navOf(p.NAV), PaidIn: p.PaidIn, Distributed: p.Distributed,
		Multiples: multiplesOf(p.Multiples), IRR: irrOf(p.IRR), Flows: make([]PerformanceFlow, 0, len(p.Flows)),
		Reconciliations: reconciliationsOf(p.Reconciliations), Documents: make([]DocumentSource, 0, len(p.Documents))}
	for _, f := range p.Flows {
		w.Flows = append(w.Flows, PerformanceFlow{Date: f.Date.String(), Type: string(f.Type), Treatment: string(f.Net), Amount: f.Amount,
			DocumentID: f.DocumentID, Version: f.Version, PositionID: f.PositionID, Status: string(f.Status)})
	}
	for i := range p.Documents {
		w.Documents = append(w.Documents, *SourceOf(&p.Documents[i]))
	}
	return w
}

// PooledPerformance is several positions' performance in one currency,
// their flows and NAVs pooled.
type PooledPerformance struct {
	Currency            string     `json:"currency"`
	Positions           int        `json:"positions"`
	PositionsWithoutNAV int        `json:"positionsWithoutNav"`
	NAV                 NAV        `json:"nav"`
	PaidIn              fund.Money `json:"paidIn"`
	Distributed         fund.Money `json:"distributed"`
	Multiples
	IRR IRR `json:"irr"`
}

func pooledOf(p positions.PooledPerformance) PooledPerformance {
	return PooledPerformance{Currency: p.Currency, Positions: p.Positions, PositionsWithoutNAV: p.PositionsWithoutNAV,
		NAV: navOf(p.NAV), PaidIn: p.PaidIn, Distributed: p.Distributed, Multiples: multiplesOf(p.Multiples), IRR: irrOf(p.IRR)}
}

func pooledAll(ps []positions.PooledPerformance) []PooledPerformance {
	out := make([]PooledPerformance, 0, len(ps))
	for _, p := range ps {
		out = append(out, pooledOf(p))
	}
	return out
}

// InvestorPerformance is a page of an investor's positions' performance,
// pooled per currency over the page's positions.
type InvestorPerformance struct {
	InvestorID  string                `json:"investorId"`
	AsOf        string                `json:"asOf"`
	Positions   []PositionPerformance `json:"positions"`
	Totals      []PooledPerformance   `json:"totals"`
	Next        string                `json:"next,omitempty"`
	Conventions Conventions           `json:"conventions"`
}

func InvestorPerformanceOf(p positions.InvestorPerformance) InvestorPerformance {
	w := InvestorPerformance{InvestorID: p.InvestorID, AsOf: p.AsOf.String(), Positions: make([]PositionPerformance, 0, len(p.Positions)),
		Totals: pooledAll(p.Totals), Conventions: PerformanceConventions}
	for _, pp := range p.Positions {
		w.Positions = append(w.Positions, PerformanceOf(pp))
	}
	return w
}

// FundPerformance is a fund's positions' performance pooled per currency.
type FundPerformance struct {
	FundID      string              `json:"fundId"`
	AsOf        string              `json:"asOf"`
	Positions   int                 `json:"positions"`
	Currencies  []PooledPerformance `json:"currencies"`
	Conventions Conventions         `json:"conventions"`
}

func FundPerformanceOf(p positions.FundPerformance) FundPerformance {
	return FundPerformance{FundID: p.FundID, AsOf: p.AsOf.String(), Positions: p.Positions, Currencies: pooledAll(p.Currencies),
		Conventions: PerformanceConventions}
}

// DocumentReconciliation is a page of a document's statements, each
// reconciled with the notices of its period.
type DocumentReconciliation struct {
	DocumentID      string           `json:"documentId"`
	Version         int              `json:"version"`
	Reconciliations []Reconciliation `json:"reconciliations"`
	Next            string           `json:"next,omitempty"`
}

func DocumentReconciliationOf(r positions.DocumentReconciliation, version int) DocumentReconciliation {
	return DocumentReconciliation{DocumentID: r.DocumentID, Version: version, Reconciliations: reconciliationsOf(r.Reconciliations)}
}
