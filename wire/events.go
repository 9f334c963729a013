package wire

import (
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// EventFeed is one page of GET /v1/events. Its items are fund.Event, the
// Standard Webhooks payload a webhook delivers, declared once in fund.
type EventFeed struct {
	Items     []fund.Event `json:"items" doc:"The events of the page, in commit order: by commit instant (timestamp), then document ID, then version, so each document's versions come in version order. Only events committed at or before the watermark."`
	Next      string       `json:"next" doc:"Always present: pass it as after to read on. With more it names the next page, to read at once; without, the feed is read up to the watermark, and the same cursor read later returns the events committed since."`
	More      bool         `json:"more" doc:"True when the page stopped before the watermark (it is full, or it read its share of empty days): read on from next at once."`
	Watermark time.Time    `json:"watermark" doc:"The instant up to which the feed is complete: every version committed at or before it is listed (in this or an earlier page) and none can appear before it later. It runs the settle margin (5 minutes) behind the server's clock; events committed after it are listed once it passes them."`
}
