package api

import (
	"net/http"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

func investorNotFound(inv string) error {
	return fund.Errorf(fund.ENOTFOUND, "investor %s not found", inv)
}

// ownInvestor answers 404, as for an unknown investor, when an investor
// token names another investor than its own.
func ownInvestor(c *gin.Context, inv string) bool {
	if p := principal(c); p.Role == RoleInvestor && p.Investor != inv {
		writeError(c, investorNotFound(inv))
		return false
	}
	return true
}

// listInvestorPositions lists an investor's positions across funds; with
// knownAt, those registered then.
func (s *server) listInvestorPositions(c *gin.Context) {
	in := s.params(c)
	inv := in.id("investorId")
	if !in.ok() || !ownInvestor(c, inv) {
		return
	}
	pg := in.page("investor-positions:" + inv)
	b := in.pin(&pg, in.instantBasis())
	if !in.ok() {
		return
	}
	// An admin sees the investor's positions in the funds the token covers,
	// read a bounded number of rows at a time: a page may hold fewer than
	// limit with a next cursor, but reading it never costs more than two
	// Queries, whoever asks.
	mine, next, err := s.positions.VisibleOfInvestor(c.Request.Context(), viewer(c), inv, pg.limit, pg.cursor.Key)
	mine = registeredAt(mine, b)
	if err != nil {
		writeError(c, err)
		return
	}
	if len(mine) == 0 && pg.cursor.Key == nil && next == nil {
		writeError(c, investorNotFound(inv))
		return
	}
	names, err := s.registeredNames(c, mine, b)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.Page[wire.RegisteredPosition]{Items: wire.RegisteredOf(mine, names), Next: pg.next(next), Basis: s.basisOf(b)})
}

// getInvestorSummary sums up an investor's positions and totals them per
// currency. An investor sees its own; an admin the investor's positions in
// its funds. Nothing visible is 404, as an unknown investor. With knownAt,
// each position as known then (positions.Analytics.InvestorSummary). A
// later page is read as known at its first page's instant (its cursor pins
// the basis), knownAt or not: after a read of the latest versions, from
// the latest versions of the funds that did not change since (pinnedLive).
func (s *server) getInvestorSummary(c *gin.Context) {
	in := s.params(c)
	inv := in.id("investorId")
	in.date("asOf") // checked before the investor, then read with knownAt
	if !in.ok() || !ownInvestor(c, inv) {
		return
	}
	pg := in.fanoutPage("investor-summary:" + inv)
	b := in.pin(&pg, in.basis())
	if !in.ok() {
		return
	}
	ctx, done, ok := s.fanout(c, investorSummaryReads, pg.limit)
	if !ok {
		return
	}
	defer done()
	sum, next, err := s.positions.InvestorSummary(ctx, read(c, b), inv, b.asOf, pg.limit, pg.cursor.Key)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	funds := make([]string, 0, len(sum.Positions))
	for _, p := range sum.Positions {
		funds = append(funds, p.FundID)
	}
	names, err := s.namesAt(c, funds, []string{inv}, b)
	if err != nil {
		writeError(c, err)
		return
	}
	sum.AsOf = b.statedAsOf()
	for i := range sum.Positions {
		sum.Positions[i].AsOf = sum.AsOf
	}
	resp := wire.InvestorSummaryOf(sum, names)
	resp.Next = pg.next(next)
	resp.Basis = s.wireBasis(b)
	c.JSON(http.StatusOK, resp)
}
