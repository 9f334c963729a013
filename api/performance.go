package api

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// The performance routes: a position's, an investor's and a fund's NAV,
// multiples and net IRR on a date, and a document's statements reconciled
// with the notices. The arithmetic is package positions'.

// DefaultMaxFundPerformancePositions bounds the positions one fund
// performance pools (Options.MaxFundPerformancePositions): each costs a
// Query or more, and the answer cannot be paged without splitting the pool.
const DefaultMaxFundPerformancePositions = 2000

// getPositionPerformance answers a position's performance; another's
// position is 404, as an unknown one.
func (s *server) getPositionPerformance(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	b := in.valuationBasis()
	if !in.ok() {
		return
	}
	p, err := s.positions.Performance(s.readContext(c), read(c, b), pos, b.asOf)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	w := wire.PerformanceOf(p)
	wb := s.wireBasis(b)
	w.Basis = &wb
	c.JSON(http.StatusOK, w)
}

// getInvestorPerformance answers a page of an investor's positions'
// performance, pooled per currency. Scope, knownAt and the cursor as
// getInvestorSummary.
func (s *server) getInvestorPerformance(c *gin.Context) {
	in := s.params(c)
	inv := in.id("investorId")
	in.date("asOf") // checked before the investor, then read with knownAt
	if !in.ok() || !ownInvestor(c, inv) {
		return
	}
	pg := in.fanoutPage("investor-performance:" + inv)
	b := in.pin(&pg, in.valuationBasis())
	if !in.ok() {
		return
	}
	ctx, done, ok := s.fanout(c, investorPerformanceReads, pg.limit)
	if !ok {
		return
	}
	defer done()
	p, next, err := s.positions.InvestorPerformance(ctx, read(c, b), inv, b.asOf, pg.limit, pg.cursor.Key)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	w := wire.InvestorPerformanceOf(p)
	w.Next = pg.next(next)
	w.Basis = s.wireBasis(b)
	c.JSON(http.StatusOK, w)
}

// getFundPerformance pools every position of a fund the admin covers, as
// known at knownAt when given.
func (s *server) getFundPerformance(c *gin.Context) {
	in := s.params(c)
	fundID := in.id("fundId")
	b := in.valuationBasis()
	if !in.ok() {
		return
	}
	if err := s.docs.As(latest(c)).FundVisible(fundID); err != nil {
		writeError(c, err)
		return
	}
	// Its positions are charged once the registry is read (charge.go).
	ctx, done, ok := s.fanout(c, fundPerformanceReads, 0)
	if !ok {
		return
	}
	defer done()
	p, err := s.positions.FundPerformance(ctx, read(c, b), fundID, b.asOf, s.maxPooled)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	w := wire.FundPerformanceOf(p)
	w.Basis = s.wireBasis(b)
	c.JSON(http.StatusOK, w)
}

// getDocumentReconciliation reconciles a page of a document's statements
// with the notices; the document's head is read first, so a document the
// admin does not cover costs what an unknown one does. With knownAt, the
// statements of the version known then, each reconciled with the notices
// as known then. Its later pages are read as known at the first page's
// instant, knownAt or not (pinnedLive).
func (s *server) getDocumentReconciliation(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	pg := in.fanoutPage("document-reconciliation:" + id)
	b := in.pin(&pg, in.documentBasis())
	if !in.ok() {
		return
	}
	reads := reconciliationReads
	if b.past && !pinnedLive(pg, b) {
		reads = reconciliationKnownAtReads
	}
	ctx, done, ok := s.fanout(c, reads, pg.limit)
	if !ok {
		return
	}
	defer done()
	rd := read(c, b)
	var head fund.DocumentHeader
	if pinnedLive(pg, b) {
		// Read from the latest version, as the first page was, unless the
		// document's fund changed since the pinned instant.
		var err error
		if head, err = s.docs.As(latest(c)).LatestDocument(ctx, id); err != nil {
			writeError(c, err)
			return
		}
		changed, err := (chargedReader{s.docs}).FundChangedSince(ctx, head.FundID, b.knownAt)
		if err != nil {
			writeChargeError(c, err)
			return
		}
		if !changed {
			rd = latest(c)
		} else if t := tabOf(ctx); t != nil {
			t.anotherListing() // the search for the version known then
		}
	}
	version := head
	if rd.Past || head.ID == "" {
		known, err := s.docs.As(rd).Known(ctx, id)
		if err != nil {
			writeError(c, err)
			return
		}
		version = known.Header()
	}
	r, next, err := s.positions.DocumentReconciliation(ctx, rd, version, pg.limit, pg.cursor.Key)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	w := wire.DocumentReconciliationOf(r, cmp.Or(r.Version, version.Version))
	w.Next = pg.next(next)
	w.Basis = s.wireBasis(b)
	setETag(c, w.Version)
	c.JSON(http.StatusOK, w)
}

// pinnedLive says a fan-out page is a later page of a read of the latest
// versions: its cursor pins the first page's instant (b is past) and its
// key is the live read's, not one marked by a read as known at an instant
// (knownAtPageNext). Such a page is read as known at the pinned instant
// too, from the latest versions of the funds that did not change since
// (positions.Analytics.InvestorSummary).
func pinnedLive(pg page, b basis) bool {
	return b.past && pg.cursor.Key != nil && !positions.IsKnownAtKey(pg.cursor.Key)
}

// reconciliationKnownAtReads is reconciliationReads with the search for the
// version known at the instant (one token for its 1 + ⌈log₂ n⌉ GetItems).
const reconciliationKnownAtReads = reconciliationReads + 1

// The fan-out reads as known at an instant, charged through the request's
// tab as the live ones are: the positions when listed (the registry's
// listings above, as live), then, before any is read, one token per
// document version a position's ledger lists (PositionDocuments, in
// positions.go), each read with one Query (VersionPosition), and one per
// document whose version known at the instant is searched for
// (KnownVersion), once per document for the whole request.

// KnownVersion pays one token for the search before it is made.
func (r chargedReader) KnownVersion(ctx context.Context, doc string, at time.Time) (fund.DocumentHeader, error) {
	if t := tabOf(ctx); t != nil {
		t.owe(1)
		if err := t.beforeRead(); err != nil {
			return fund.DocumentHeader{}, err
		}
	}
	return r.Reader.KnownVersion(ctx, doc, at)
}

// FundChangedSince is charged one token whatever the bucket holds, as a
// listing Query beyond the first is: a later page asks it once per fund
// of its positions, which its up-front charge bounds.
func (r chargedReader) FundChangedSince(ctx context.Context, fundID string, at time.Time) (bool, error) {
	if t := tabOf(ctx); t != nil {
		t.anotherListing()
	}
	return r.Reader.FundChangedSince(ctx, fundID, at)
}

// VersionPosition pays for the listed documents before the first is read.
func (r chargedReader) VersionPosition(ctx context.Context, doc, commitID, pos string) ([]fund.PositionItem, error) {
	if t := tabOf(ctx); t != nil {
		if err := t.beforeRead(); err != nil {
			return nil, err
		}
	}
	return r.Reader.VersionPosition(ctx, doc, commitID, pos)
}

// VersionStatements is a listing of statements, charged as
// DocumentStatements is.
func (r chargedReader) VersionStatements(ctx context.Context, doc, commitID string, limit int, start []byte) ([]fund.PositionItem, []byte, error) {
	page, next, err := r.Reader.VersionStatements(ctx, doc, commitID, limit, start)
	if t := tabOf(ctx); t != nil && err == nil {
		t.listedPage(len(page))
	}
	return page, next, err
}

// owe adds n reads to pay for before the next one.
func (t *tab) owe(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.listed += n
}
