package webhooks

import (
	"context"
	"slices"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// feedPage is how many events one read of the feed asks for.
const feedPage = 200

// fundReads is the most funds whose feeds (one Query each per month) a
// fill reads rather than the feed of every fund (one Query per change
// shard, 8, and day).
const fundReads = 8

// fill queues, for every endpoint, the events after the fill cursor that
// it subscribes to. A disabled endpoint's queue is filled too, and waits
// for it. fill reads the feed once for all endpoints, up to now, then
// moves the cursor, but never past the feed's watermark. An event
// committed later may still appear before the watermark, so the unsettled
// tail is read again each round. Queueing an event twice changes nothing:
// the delivery's log entry is put only if absent, and this process
// remembers what it queued. Two instances may fill at once; only one moves
// the cursor.
//
// A version whose earlier version an endpoint should get but has not
// queued yet (an index that lags) stops that endpoint's fill for the
// round and holds the cursor before it. So a document's versions are
// queued, and delivered, in order. fill returns the endpoints it queued
// events for.
func (d *Deliverer) fill(ctx context.Context, st fund.WebhookState) (map[string]bool, error) {
	queued := map[string]bool{}
	if len(st.Endpoints) == 0 {
		return queued, nil
	}
	from, err := fund.ParseEventCursor(st.Fill)
	if err != nil {
		return queued, err
	}
	// No endpoint gets what was committed before it was created.
	first := slices.MinFunc(st.Endpoints, func(a, b fund.WebhookEndpoint) int { return a.CreatedAt.Compare(b.CreatedAt) }).CreatedAt
	if start := first.Add(-time.Millisecond); from.At.Before(start) {
		from = fund.EventCursor{At: start}
	}
	// Up to the present by the wall clock, which stamps commits (d.Now may
	// be a test's clock).
	filter := fund.EventFilter{Until: later(d.Now(), time.Now())}
	var funds, types []string
	everyFund, everyType := false, false
	for _, e := range st.Endpoints {
		funds, types = append(funds, e.Funds...), append(types, e.EventTypes...)
		everyFund, everyType = everyFund || len(e.Funds) == 0, everyType || len(e.EventTypes) == 0
	}
	if funds = slices.Compact(slices.Sorted(slices.Values(funds))); !everyFund && len(funds) <= fundReads {
		filter.Funds = funds
	}
	if !everyType {
		filter.Types = eventTypes(slices.Compact(slices.Sorted(slices.Values(types))))
	}
	blocked := map[string]bool{} // endpoints whose fill stopped for the round
	after, settled := from, from
	for {
		page, err := d.Feed.EventsAfter(ctx, after, feedPage, filter)
		if err != nil {
			return queued, err
		}
		for _, ev := range page.Events {
			for _, e := range st.Endpoints {
				if blocked[e.ID] || !Matches(e, ev) || d.enqueued.Contains(e.ID+"\x00"+ev.ID) {
					continue
				}
				ready, err := d.predecessorQueued(ctx, e, ev, from)
				if err != nil {
					return queued, err
				}
				if !ready {
					blocked[e.ID] = true
					continue
				}
				if err := d.enqueue(ctx, e, ev); err != nil {
					return queued, err
				}
				queued[e.ID] = true
			}
			if len(blocked) == 0 && !ev.Timestamp.After(page.Watermark) {
				settled = fund.CursorAfter(&ev)
			}
		}
		if len(blocked) == 0 {
			if !page.Next.At.After(page.Watermark) {
				settled = page.Next
			} else if page.Watermark.After(settled.At) && !page.More {
				settled = fund.EventCursor{At: page.Watermark}
			}
		}
		if !page.More {
			break
		}
		after = page.Next
	}
	if settled == from || !settled.At.After(from.At) && settled.String() == st.Fill {
		return queued, nil
	}
	_, err = d.Queue.AdvanceWebhookFill(ctx, st.Fill, settled.String())
	return queued, err // not moved: another instance moved it first, and fills from there
}

// enqueue queues ev for endpoint e.
func (d *Deliverer) enqueue(ctx context.Context, e fund.WebhookEndpoint, ev fund.Event) error {
	if _, err := d.Queue.EnqueueWebhookDelivery(ctx, fund.WebhookDelivery{
		EndpointID: e.ID, EventID: ev.ID, EventType: string(ev.Type), DocumentID: ev.Data.DocumentID,
		Version: ev.Data.Version, CommittedAt: ev.Timestamp,
	}, d.Now()); err != nil {
		return err
	}
	d.enqueued.Add(e.ID+"\x00"+ev.ID, struct{}{})
	return nil
}

// predecessorQueued reports whether the endpoint may queue ev: its
// document's previous version is queued for it already, or it is not one
// the endpoint gets (committed before the endpoint, or of a type it does
// not subscribe to).
//
// A previous version the endpoint gets but has not queued is waited for
// while it may still come in the feed after from, the cursor the round
// read from (an index that lags). At or before from, no read of the feed
// will return it again: it showed in the feed later than the settle
// margin allows (FUNDSVC_FEED_SETTLE; a writer whose clock is behind, a
// commit slower than the margin). It is queued now, after its own
// predecessor, so the document's versions still go in order and nothing
// behind it waits forever; the log says so, and
// fundsvc_webhook_events_late_total counts it.
func (d *Deliverer) predecessorQueued(ctx context.Context, e fund.WebhookEndpoint, ev fund.Event, from fund.EventCursor) (bool, error) {
	v := ev.Data.Version
	if v <= 1 {
		return true, nil
	}
	prevID := fund.EventID(ev.Data.DocumentID, v-1)
	if d.enqueued.Contains(e.ID + "\x00" + prevID) {
		return true, nil
	}
	_, err := d.Queue.WebhookDeliveryOf(ctx, e.ID, prevID)
	if err == nil {
		return true, nil
	}
	if fund.ErrorCode(err) != fund.ENOTFOUND {
		return false, err
	}
	prev, err := d.Feed.Event(ctx, ev.Data.DocumentID, v-1)
	if err != nil {
		return false, err
	}
	if !Matches(e, prev) {
		return true, nil
	}
	if !from.Passed(&prev) {
		return false, nil // still to come in the feed
	}
	if ready, err := d.predecessorQueued(ctx, e, prev, from); !ready || err != nil {
		return false, err
	}
	if err := d.enqueue(ctx, e, prev); err != nil {
		return false, err
	}
	d.metrics.Late.Inc()
	d.Log.Warn("webhook event queued late: it showed in the feed after the endpoint had read past its commit instant (see FUNDSVC_FEED_SETTLE)",
		"endpoint", e.ID, "event", prev.ID, "committed_at", prev.Timestamp, "cursor", from.String())
	return true, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func eventTypes(names []string) []fund.EventType {
	out := make([]fund.EventType, 0, len(names))
	for _, n := range names {
		out = append(out, fund.EventType(n))
	}
	return out
}

// Matches reports whether endpoint e subscribes to ev: its types (all when
// none is named), its funds (all when none is named), and only events
// committed since it was created.
func Matches(e fund.WebhookEndpoint, ev fund.Event) bool {
	if len(e.EventTypes) > 0 && !slices.Contains(e.EventTypes, string(ev.Type)) {
		return false
	}
	if !e.Scope().Administers(ev.Data.FundID) {
		return false
	}
	return !ev.Timestamp.Before(e.CreatedAt)
}
