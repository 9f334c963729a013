package wire

import (
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/shopspring/decimal"
)

// PositionFigureChanges answers "why did this number move": the document
// versions committed in a window of instants that changed a position's
// figures (its summary's, or its performance's), each with the figures it
// changed, before and after, and its contribution.
type PositionFigureChanges struct {
	PositionID  string         `json:"positionId" doc:"The position."`
	FundID      string         `json:"fundId" doc:"The position's fund."`
	InvestorID  string         `json:"investorId" doc:"The position's investor."`
	Currency    string         `json:"currency" doc:"The currency of every money figure."`
	KnownAtFrom bool           `json:"knownAtFrom" doc:"Whether some document's version known at 'from' reported the position. When not, its figures then are those of no document: money figures zero, the others absent (null)."`
	KnownAtTo   bool           `json:"knownAtTo" doc:"Whether some document's version known at 'to' reported the position (as 'knownAtFrom')."`
	Figures     []FigureChange `json:"figures" doc:"Every figure, as known at 'from' ('before') and at 'to' ('after'), with the change of each money figure ('contribution': after − before), which the contributions of 'changes' add up to exactly. In the order the figures appear in the answer they come from."`
	Changes     []FigureMove   `json:"changes" doc:"The versions committed after 'from' and at or before 'to' that changed a figure, in commit order (commit instant, then document ID, then version); a version that changed none is left out. Empty when no version of the window changed any."`
	Basis       ChangesBasis   `json:"basis" doc:"What the changes were read on."`
}

// FigureMove is one version and the figures it changed.
type FigureMove struct {
	DocumentID  string         `json:"documentId" doc:"The document the version is of."`
	Version     int            `json:"version" doc:"The version."`
	VersionPath string         `json:"versionPath" doc:"Where the version is read whole: '/v1/documents/{documentId}/versions/{version}'."`
	EventType   fund.EventType `json:"eventType" doc:"What the version did: document.created, document.restated or document.voided, as the event feed names it."`
	CommittedAt time.Time      `json:"committedAt" doc:"The instant the version was committed (UTC, RFC 3339): the figures 'after' are the read as known at it, but for versions of other documents committed in the same instant, which come after it in commit order."`
	Figures     []FigureChange `json:"figures" doc:"The figures the version changed, each before and after it; the others are left out."`
}

// FigureChange is one figure before and after.
type FigureChange struct {
	Figure       string  `json:"figure" doc:"The figure, by its path in the answer it comes from: 'paidIn', 'distributed.gross.total', 'unfunded.reported', 'nav.value', 'irr.rate'."`
	Unit         string  `json:"unit" doc:"'money': an amount in the position's currency, whose changes add up; 'ratio': a multiple (DPI, RVPI, TVPI) or a rate (IRR), given before and after only, as ratios do not add up."`
	Before       *string `json:"before" doc:"The exact decimal before (money as the answer renders it, a ratio to 6 places); null when the answer leaves the figure out (no commitment stated, no NAV, nothing paid in)."`
	After        *string `json:"after" doc:"The exact decimal after; null as 'before'."`
	Contribution *string `json:"contribution,omitempty" doc:"after − before, exact, for a money figure present on both sides; absent for a ratio, or when either side is null."`
}

// ChangesBasis is what a changes answer was read on: a window of instants
// and the date figures are taken at.
type ChangesBasis struct {
	AsOf    fund.Date `json:"asOf" doc:"The date the figures are taken at: each document counts at its latest version dated on or before it, among those known at the instant read."`
	From    time.Time `json:"from" doc:"The window's start (excluded): the figures 'before' are the position as known at it."`
	To      time.Time `json:"to" doc:"The window's end (included): the request's 'to', or, without one, the instant the read began by the server's clock; the figures 'after' are the position as known at it."`
	Settled bool      `json:"settled" doc:"Whether 'to' is older than the settle margin (FUNDSVC_FEED_SETTLE, 5 minutes by default), so that every version committed in the window is known and the answer can no longer change."`
}

// PositionFigureChangesOf renders c with its basis's settled flag.
func PositionFigureChangesOf(c positions.Changes, settled bool) PositionFigureChanges {
	w := PositionFigureChanges{PositionID: c.PositionID, FundID: c.FundID, InvestorID: c.InvestorID, Currency: c.Currency,
		KnownAtFrom: c.KnownAtFrom, KnownAtTo: c.KnownAtTo, Figures: figureChangesOf(c.Figures), Changes: make([]FigureMove, 0, len(c.Versions)),
		Basis: ChangesBasis{AsOf: c.AsOf, From: c.From.UTC(), To: c.To.UTC(), Settled: settled}}
	for _, v := range c.Versions {
		w.Changes = append(w.Changes, FigureMove{DocumentID: v.Event.Data.DocumentID, Version: v.Event.Data.Version,
			VersionPath: fund.VersionPath(v.Event.Data.DocumentID, v.Event.Data.Version), EventType: v.Event.Type,
			CommittedAt: v.Event.Timestamp.UTC(), Figures: figureChangesOf(v.Figures)})
	}
	return w
}

func figureChangesOf(cs []positions.FigureChange) []FigureChange {
	return renderAll(cs, func(c positions.FigureChange) FigureChange {
		return FigureChange{Figure: c.Name, Unit: string(c.Kind), Before: figureText(c.Kind, c.Before),
			After: figureText(c.Kind, c.After), Contribution: figureText(c.Kind, c.Contribution)}
	})
}

// figureText renders a figure as its answer does: money as fund.Money, a
// ratio to 6 places.
func figureText(k positions.FigureKind, d *decimal.Decimal) *string {
	if d == nil {
		return nil
	}
	var s string
	if k == positions.FigureMoney {
		s = fund.MoneyOf(*d).String()
	} else {
		s = fixed(d, positions.MultipleScale)
	}
	return &s
}
