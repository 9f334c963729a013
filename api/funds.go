package api

import (
	"net/http"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// listFundDocuments lists a fund's documents by asOf, optionally of one kind.
// Another fund is not found, as an unknown one.
func (s *server) listFundDocuments(c *gin.Context) {
	in := s.params(c)
	fundID := in.id("fundId")
	from, to := in.dateRange()
	kind := in.documentKind()
	if !in.ok() {
		return
	}
	// Another fund is refused before its cursor is read, as an unknown one.
	funds := s.docs.As(latest(c))
	if err := funds.FundVisible(fundID); err != nil {
		writeError(c, err)
		return
	}
	pg := in.page("fund-documents:" + fundID + ":" + from.String() + ":" + to.String() + ":" + string(kind))
	b := in.pin(&pg, in.instantBasis())
	if !in.ok() {
		return
	}
	view, settle := s.view(c, b)
	docs, next, err := view.FundDocuments(c.Request.Context(), fundID, from, to, kind, pg.limit, pg.cursor.Key)
	settle()
	if err != nil {
		writeChargeError(c, err)
		return
	}
	headers := make([]wire.DocumentHeader, 0, len(docs))
	for _, d := range docs {
		headers = append(headers, wire.HeaderOf(d, ""))
	}
	nextCursor := pg.next(next)
	c.JSON(http.StatusOK, wire.Page[wire.DocumentHeader]{Items: headers, Next: nextCursor, Basis: s.basisOf(b)})
}

// listFundPositions lists the positions registered in a fund; with
// knownAt, those registered then. Another fund is not found, as an unknown
// one.
func (s *server) listFundPositions(c *gin.Context) {
	in := s.params(c)
	fundID := in.id("fundId")
	if !in.ok() {
		return
	}
	ctx, funds := c.Request.Context(), s.docs.As(latest(c))
	if err := funds.FundVisible(fundID); err != nil {
		writeError(c, err)
		return
	}
	pg := in.page("fund-positions:" + fundID)
	b := in.pin(&pg, in.instantBasis())
	if !in.ok() {
		return
	}
	if b.past {
		// Before the feed's start nothing existed: the fund is unknown.
		reads := s.knownAtReads(c)
		before, err := s.docs.BeforeFeed(ctx, b.knownAt, reads)
		s.settleReads(c, reads)
		if err == nil && before {
			err = fund.Errorf(fund.ENOTFOUND, "fund %s not found", fundID)
		}
		if err != nil {
			writeChargeError(c, err)
			return
		}
	}
	rs, next, err := s.positions.OfFund(ctx, fundID, pg.limit, pg.cursor.Key)
	rs = registeredAt(rs, b)
	if err == nil && len(rs) == 0 && pg.cursor.Key == nil {
		view, settle := s.view(c, b)
		err = view.FundMustExist(ctx, fundID)
		settle()
	}
	if err != nil {
		writeChargeError(c, err)
		return
	}
	names, err := s.registeredNames(c, rs, b)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.Page[wire.RegisteredPosition]{Items: wire.RegisteredOf(rs, names), Next: pg.next(next), Basis: s.basisOf(b)})
}
