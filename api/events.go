package api

import (
	"net/http"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// listEvents serves the event feed: the token's events after a cursor, in
// commit order, up to the watermark (docs/events.md).
func (s *server) listEvents(c *gin.Context) {
	in := s.params(c)
	eventType := fund.EventType(c.Query("type"))
	if eventType != "" && !eventType.Valid() {
		in.fail(fund.Invalid("type", "must be one of %v", fund.EventTypes))
	}
	fundID := in.optionalID("fund")
	if !in.ok() {
		return
	}
	var f fund.EventFilter
	if eventType != "" {
		f.Types = []fund.EventType{eventType}
	}
	if fundID != "" {
		f.Funds = []string{fundID}
	}
	feed := s.docs.As(latest(c))
	if fundID != "" && viewer(c).Investor == "" {
		// Another fund is refused before the cursor is read, as an unknown one.
		if err := feed.FundVisible(fundID); err != nil {
			writeError(c, err)
			return
		}
	}
	pg := in.pageAt("after", "events:"+string(eventType)+":"+fundID)
	if !in.ok() {
		return
	}
	after, err := fund.ParseEventCursor(pg.cursor.After)
	if err != nil {
		writeError(c, fund.Invalid("after", "is not a cursor this query issued; start again without one"))
		return
	}
	page, err := feed.EventsAfter(c.Request.Context(), after, pg.limit, f)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.EventFeed{
		Items: page.Events, More: page.More, Watermark: page.Watermark,
		Next: pg.codec.encode(cursor{Query: pg.query, After: page.Next.String()}),
	})
}
