package api

import (
	"cmp"
	"net/http"

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
	var p positions.Performance
	var err error
	if b.past {
		p, err = s.pooled.PerformanceKnownAt(s.knownAtContext(c), pos, b.asOf, b.knownAt, allowFor(c))
	} else {
		p, err = s.positions.PerformanceFor(c.Request.Context(), pos, b.asOf, allowFor(c))
	}
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
// performance, pooled per currency. Scope as getInvestorSummary.
func (s *server) getInvestorPerformance(c *gin.Context) {
	in := s.params(c)
	inv := in.id("investorId")
	asOf := in.valuationDate()
	if !in.ok() || !ownInvestor(c, inv) {
		return
	}
	pg := in.fanoutPage("investor-performance:" + inv + ":" + asOf.String())
	if !in.ok() {
		return
	}
	ctx, done, ok := s.fanout(c, investorPerformanceReads, pg.limit)
	if !ok {
		return
	}
	defer done()
	v := viewer(c)
	keep := func(r positions.Registered) bool { return v.MayReadPosition(r.FundID, r.InvestorID) }
	p, next, err := s.pooled.InvestorPerformance(ctx, inv, asOf, keep, filtersInvestor(principal(c)), pg.limit, pg.cursor.Key)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	w := wire.InvestorPerformanceOf(p)
	w.Next = pg.next(next)
	c.JSON(http.StatusOK, w)
}

// getFundPerformance pools every position of a fund the admin covers.
func (s *server) getFundPerformance(c *gin.Context) {
	in := s.params(c)
	fundID := in.id("fundId")
	asOf := in.valuationDate()
	if !in.ok() {
		return
	}
	if err := s.docs.As(viewer(c)).FundVisible(fundID); err != nil {
		writeError(c, err)
		return
	}
	// Its positions are charged once the registry is read (charge.go).
	ctx, done, ok := s.fanout(c, fundPerformanceReads, 0)
	if !ok {
		return
	}
	defer done()
	p, err := s.pooled.FundPerformance(ctx, fundID, asOf, s.maxPooled)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.FundPerformanceOf(p))
}

// getDocumentReconciliation reconciles a page of a document's statements
// with the notices; the document's head is read first, so a document the
// admin does not cover costs what an unknown one does.
func (s *server) getDocumentReconciliation(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	pg := in.fanoutPage("document-reconciliation:" + id)
	if !in.ok() {
		return
	}
	ctx, done, ok := s.fanout(c, reconciliationReads, pg.limit)
	if !ok {
		return
	}
	defer done()
	head, err := s.docs.As(viewer(c)).LatestDocument(ctx, id)
	if err != nil {
		writeError(c, err)
		return
	}
	r, next, err := s.pooled.DocumentReconciliation(ctx, id, pg.limit, pg.cursor.Key)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	w := wire.DocumentReconciliationOf(r, cmp.Or(r.Version, head.Version))
	w.Next = pg.next(next)
	setETag(c, w.Version)
	c.JSON(http.StatusOK, w)
}
