// Package positions computes over a position's items across documents: the
// summaries, cash flows and investor totals of the portal's position routes,
// performance (NAV from capital account statements, net IRR, DPI/RVPI/TVPI,
// per position and pooled per currency) and the reconciliation of each
// statement to the notices, and the per-position analysis of a document. Its arithmetic works on
// domain types (fund.PositionItem, fund.Registered) and needs no store; the
// reads come through Reader, a small interface the storage package's
// *store.Store satisfies, so that this package never sees a key or a Query.
package positions

import (
	"context"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// Reader is what positions reads from storage. Page keys are opaque bytes
// that only the Reader that issued them understands.
type Reader interface {
	// PositionItems lists one page of a position's latest items across
	// documents, ordered by kind then document, of one kind when kind is set.
	PositionItems(ctx context.Context, pos string, kind fund.ItemKind, limit int, start []byte) ([]fund.PositionItem, []byte, error)
	// AllPositionItems returns every latest item of a position across
	// documents (none from a document whose latest version withdrew it),
	// ordered by kind then document.
	AllPositionItems(ctx context.Context, pos string) ([]fund.PositionItem, error)
	// PositionAsOf returns what a document reported for a position in its
	// latest version dated on or before asOf among the versions below
	// before; none if there is no such version or it did not report it.
	PositionAsOf(ctx context.Context, doc, pos string, asOf fund.Date, before int) ([]fund.PositionItem, error)
	// PositionDocuments returns a position's claim (the zero Registered
	// when it has none) and the documents that have reported it in any
	// version, by document ID, up to limit+1 of them (more than limit: more
	// exist), with one read.
	PositionDocuments(ctx context.Context, pos string, limit int) (fund.Registered, []string, error)
	// PositionKnownAt returns a document's items of a position in its
	// latest version committed at or before at; none if the document had
	// no committed version then, or that version is a void or does not
	// report the position.
	PositionKnownAt(ctx context.Context, doc, pos string, at time.Time) ([]fund.PositionItem, error)
	// KnownVersion returns the header of a document's latest version
	// committed at or before at (its version, commit, asOf, voided), or
	// ENOTFOUND if the document had no committed version then.
	KnownVersion(ctx context.Context, doc string, at time.Time) (fund.DocumentHeader, error)
	// FundChangedSince reports whether a version of one of the fund's
	// documents was committed after at.
	FundChangedSince(ctx context.Context, fundID string, at time.Time) (bool, error)
	// VersionPosition returns a position's items in one committed version
	// of a document; none if the version does not report it.
	VersionPosition(ctx context.Context, doc, commitID, pos string) ([]fund.PositionItem, error)
	// VersionStatements lists one page of the capital account statements
	// (kind fund.Statement) of one committed version of a document, by
	// position, those of up to limit positions from start, a key that it
	// or DocumentStatements issued.
	VersionStatements(ctx context.Context, doc, commitID string, limit int, start []byte) ([]fund.PositionItem, []byte, error)
	// CapitalCallIn returns a position's capital call in one document, or
	// ENOTFOUND.
	CapitalCallIn(ctx context.Context, pos, doc string) (fund.PositionItem, error)
	// DocumentStatements lists one page of the capital account statements
	// (kind fund.Statement) in a document's latest version, by position.
	DocumentStatements(ctx context.Context, doc string, limit int, start []byte) ([]fund.PositionItem, []byte, error)
	// FundPositions lists one page of a fund's registered positions.
	FundPositions(ctx context.Context, fundID string, limit int, start []byte) ([]fund.Registered, []byte, error)
	// InvestorPositions lists one page of up to limit of an investor's
	// registered positions that v may read, with a bounded read: the page
	// may hold fewer than limit, even none, with a key to go on from.
	InvestorPositions(ctx context.Context, v fund.Viewer, inv string, limit int, start []byte) ([]fund.Registered, []byte, error)
}

// Analytics computes what the position routes answer (summaries, cash
// flows, performance, reconciliation) from what a Reader reads.
type Analytics struct {
	r Reader
	// Freshness is how long a NAV stays fresh after its statement's
	// period end (DefaultFreshness from NewAnalytics; serve sets
	// FUNDSVC_NAV_STALE_AFTER).
	Freshness Freshness
}

// NewAnalytics returns an Analytics reading through r (a *store.Store in
// the service).
func NewAnalytics(r Reader) *Analytics { return &Analytics{r: r, Freshness: DefaultFreshness} }

// Registered is a position as the fund partition records it: one fund plus
// one investor.
type Registered = fund.Registered

// Items lists a position's items across every document, ordered by kind
// then document, of one kind when kind is set, one page at a time, as rd
// sees them: the latest items, or, as known at rd's instant, the items of
// each document's version known then (itemsKnownAt), when the page starts
// the listing or resumes a key such a page handed on (KnownAtKeyAfter).
// Each item carries the document version it came from.
//
// Visibility is decided on what the first read returns, and a refused
// position answers exactly as an unknown one, at the same cost: ENOTFOUND
// if the page holds an item rd's viewer may not read, or if the first page
// is empty and the position is unknown or refused; a visible position with
// none of the kind asked for is an empty page. Telling those apart costs
// one more Query, which a refused position pays too.
func (s *Analytics) Items(ctx context.Context, rd fund.Read, pos string, kind fund.ItemKind, limit int, start []byte) ([]fund.PositionItem, []byte, error) {
	if rd.Past && (start == nil || IsKnownAtKey(start)) {
		return s.itemsKnownAt(ctx, pos, kind, rd.KnownAt, limit, start, rd.Viewer)
	}
	return VisibleItems(ctx, s.r.PositionItems, rd.Viewer, pos, kind, limit, start)
}

// Owned is a position item whose fund and investor decide who may read it:
// a fund.PositionItem, or a stored item not yet decoded.
type Owned interface {
	Owner() (fundID, investorID string)
}

// ItemsReader reads one page of a position's latest items across
// documents, as Reader.PositionItems does, in the form T.
type ItemsReader[T Owned] func(ctx context.Context, pos string, kind fund.ItemKind, limit int, start []byte) ([]T, []byte, error)

// VisibleItems is Analytics.Items over read, whose items are of any form that
// names its owner; Analytics.Items reads decoded items, the API's position read
// stored ones whose answers it memoizes.
func VisibleItems[T Owned](ctx context.Context, read ItemsReader[T], v fund.Viewer, pos string, kind fund.ItemKind, limit int, start []byte) ([]T, []byte, error) {
	notFound := fund.Errorf(fund.ENOTFOUND, "position %s not found", pos)
	mayRead := func(it T) bool { return v.MayReadPosition(it.Owner()) }
	items, next, err := read(ctx, pos, kind, limit, start)
	if err != nil {
		return nil, nil, err
	}
	for _, it := range items {
		if !mayRead(it) {
			if kind != "" && start == nil {
				// An unknown position costs the second Query below; so does
				// another's, or its cost would tell that it exists.
				_, _, _ = read(ctx, pos, "", 1, nil)
			}
			return nil, nil, notFound
		}
	}
	if len(items) == 0 && start == nil {
		if kind == "" {
			return nil, nil, notFound
		}
		some, _, err := read(ctx, pos, "", 1, nil)
		if err != nil {
			return nil, nil, err
		}
		if len(some) == 0 || !mayRead(some[0]) {
			return nil, nil, notFound
		}
	}
	return items, next, nil
}

// CapitalCallIn returns a position's capital call in one document as rd
// sees it: the latest, or as known at rd's instant (capitalCallKnownAt).
// It returns ENOTFOUND if there is none or rd's viewer may not read it.
func (s *Analytics) CapitalCallIn(ctx context.Context, rd fund.Read, pos, doc string) (fund.PositionItem, error) {
	if rd.Past {
		return s.capitalCallKnownAt(ctx, pos, doc, rd.KnownAt, rd.Viewer)
	}
	it, err := s.r.CapitalCallIn(ctx, pos, doc)
	if err == nil && !rd.MayReadPosition(it.FundID, it.InvestorID) {
		err = fund.Errorf(fund.ENOTFOUND, "no capital call for position %s in document %s", pos, doc)
	}
	return it, err
}

// VisibleOfInvestor lists up to limit of an investor's positions that v
// may read, resuming at start, with a bounded read (see
// store.Store.InvestorPositions). A page ends after its last position; it
// may hold fewer than limit (even none) with a key to go on from.
func (s *Analytics) VisibleOfInvestor(ctx context.Context, v fund.Viewer, inv string, limit int, start []byte) ([]Registered, []byte, error) {
	return s.r.InvestorPositions(ctx, v, inv, limit, start)
}

// OfFund lists a fund's positions, one page at a time.
func (s *Analytics) OfFund(ctx context.Context, fundID string, limit int, start []byte) ([]Registered, []byte, error) {
	return s.r.FundPositions(ctx, fundID, limit, start)
}

// Analysis is what one document reports for one position: how many items of
// each kind and their exact totals.
type Analysis struct {
	PositionID          string
	InvestorID          string
	CapitalCalls        int
	TotalCalled         fund.Money
	Distributions       int
	TotalDistributed    fund.Money
	UnfundedCommitments int
	TotalUnfunded       fund.Money
}

// Analyze computes the per-position analysis of one document version.
func Analyze(d fund.Document) []Analysis {
	out := make([]Analysis, 0, len(d.Positions))
	for _, p := range d.Positions {
		a := Analysis{PositionID: p.ID, InvestorID: p.InvestorID}
		if c := p.CapitalCall; c != nil {
			a.CapitalCalls, a.TotalCalled = a.CapitalCalls+1, a.TotalCalled.Add(c.Amount)
		}
		if x := p.Distribution; x != nil {
			a.Distributions, a.TotalDistributed = a.Distributions+1, a.TotalDistributed.Add(x.Amount)
		}
		if u := p.UnfundedCommitment; u != nil {
			a.UnfundedCommitments, a.TotalUnfunded = a.UnfundedCommitments+1, a.TotalUnfunded.Add(u.Amount)
		}
		out = append(out, a)
	}
	return out
}
