package api

import (
	"net/http"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// allowFor is the viewer's access rule for the positions package, applied
// before any read past the first.
func allowFor(c *gin.Context) positions.Allow { return viewer(c).MayReadPosition }

// listPositionItems lists a position's items across documents, optionally
// of one type. An unknown position, or one the caller may not see, is 404;
// a visible one with none of the type asked for is an empty list.
func (s *server) listPositionItems(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	kind := in.itemKind()
	if !in.ok() {
		return
	}
	s.positionItems(c, in, pos, kind, "position-items:"+pos+":"+string(kind))
}

func (s *server) positionItems(c *gin.Context, in *params, pos string, kind fund.ItemKind, query string) {
	pg := in.page(query)
	if !in.ok() {
		return
	}
	items, next, err := s.positions.Items(c.Request.Context(), pos, kind, pg.limit, pg.cursor.Key, allowFor(c))
	if err != nil {
		writeError(c, err)
		return
	}
	nextCursor := pg.next(next)
	c.JSON(http.StatusOK, wire.Page[wire.PositionItem]{Items: wire.ItemsOf(items), Next: nextCursor})
}

// listPositionCapitalCalls lists a position's capital calls across documents,
// or, with document, its capital call in that document (through GSI1).
func (s *server) listPositionCapitalCalls(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	doc := in.optionalID("document")
	if !in.ok() {
		return
	}
	if doc == "" {
		s.positionItems(c, in, pos, fund.CapitalCall, "position-calls:"+pos)
		return
	}
	it, err := s.positions.CapitalCallIn(c.Request.Context(), pos, doc, allowFor(c))
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.Page[wire.PositionItem]{Items: []wire.PositionItem{wire.ItemOf(it)}})
}

// getPositionSummary sums up a position on the date asOf (every document
// when absent). Another's position is 404, as an unknown one.
func (s *server) getPositionSummary(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	asOf := in.date("asOf")
	if !in.ok() {
		return
	}
	sum, err := s.positions.SummaryFor(c.Request.Context(), pos, asOf, allowFor(c))
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.SummaryOf(sum))
}

// getPositionCashflows lists a position's dated contributions and
// distributions with running totals, whole: a running total needs every
// flow before it, and a position has two flows per document at most.
func (s *server) getPositionCashflows(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	asOf := in.date("asOf")
	if !in.ok() {
		return
	}
	identity, flows, err := s.positions.CashflowsFor(c.Request.Context(), pos, asOf, allowFor(c))
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.CashflowsOf(identity, asOf, flows))
}
