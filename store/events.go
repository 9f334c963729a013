package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
	"golang.org/x/sync/errgroup"
)

// The event feed: every commit transaction puts one event item for the
// version it commits (commitRequest), so a committed version always has
// its event and a refused or uncommitted write never has one. The item is
// keyed by document and version (EventPK, EventSK), and indexed by the
// commit's instant, then document, then version (EventOrderSK): in GSI1
// under the UTC day and shard of the change index (EventsGSI1PK), for the
// feed across every fund, and in GSI2 under the fund and UTC month
// (FundEventsGSI2PK), for a fund's feed. The feed is read by Queries over
// those keys in time order, never a Scan. docs/events.md describes the
// order, the watermark, the scoping and the cost.

// afterSK is c's exclusive lower bound as an inclusive one: the lowest
// sort key after c. An event's key has a fixed form, so no other key begins
// with it, and key + " " is above it and below every key after it.
func afterSK(c fund.EventCursor) string {
	if c.DocumentID == "" {
		return EventsAfterSK(c.At)
	}
	return EventOrderSK(c.At, c.DocumentID, c.Version) + " "
}

// MaxEventPage bounds the events of one page.
const MaxEventPage = 1000

// MaxEventPageBytes bounds a page in bytes: once the events it lists
// reach about this many bytes of JSON (eventBytes), the page ends with
// More. A page lists at least one event, however large.
const MaxEventPageBytes = 1 << 20

// maxEventQueries is how many Queries a page makes (or the partitions of
// one period, when a period has more): it then ends, with More and Next
// at the last place up to which it read every partition, so a replay over
// empty periods, or over events a filter passes over, answers in bounded
// time and goes on from there.
const maxEventQueries = 64

// maxEventScan is the most items one Query of a filtered read evaluates
// (DynamoDB also stops at 1 MB), so that a filter keeping few events
// costs a Query per 1,000 events passed over, not per event kept.
const maxEventScan = 1000

// maxFundFeeds is the most funds whose feeds (GSI2, one partition per fund
// and UTC month) a read Queries one by one; a read of more funds reads the
// feed of every fund (GSI1, the day's shards) and keeps theirs.
const maxFundFeeds = 16

// EventsAfter reads the feed across every fund (as an administrator of
// every fund sees it): up to limit events committed after the cursor and at
// or before f.Until, of f's types and funds, in commit order. Without
// f.Funds, or with more than maxFundFeeds of them, it Queries GSI1, one
// partition per UTC day and shard of the change index (keeping f.Funds');
// otherwise GSI2, one partition per fund and UTC month. A page makes at
// most maxEventQueries Queries (or a period's partitions, when more) and
// holds about MaxEventPageBytes at most. It returns EINVALID for a limit
// outside 1..MaxEventPage or an unknown type.
func (s *Store) EventsAfter(ctx context.Context, after fund.EventCursor, limit int, f fund.EventFilter) (fund.EventPage, error) {
	src, err := s.feedOf(ctx, f.Funds, len(f.Funds) > 0)
	if err != nil {
		return fund.EventPage{}, err
	}
	return s.readEvents(ctx, after, limit, f, src, nil)
}

// feedOf is the source of the events of funds (every fund when !some):
// each fund's feed, or, beyond maxFundFeeds funds, the feed of every fund,
// keeping theirs.
func (s *Store) feedOf(ctx context.Context, funds []string, some bool) (eventSource, error) {
	if some && len(funds) <= maxFundFeeds {
		return fundEvents(funds), nil
	}
	shards, err := s.changeShardsInUse(ctx)
	if err != nil {
		return eventSource{}, err
	}
	src := allEvents(shards)
	if some {
		src.funds = map[string]bool{}
		for _, id := range funds {
			src.funds[id] = true
		}
	}
	return src, nil
}

// Event reads the event of one version of a document with one GetItem. It
// returns ENOTFOUND when that version was never committed.
func (s *Store) Event(ctx context.Context, doc string, version int) (fund.Event, error) {
	var it eventItem
	err := s.table.Get(AttrPK, EventPK(doc)).Range(AttrSK, dynamo.Equal, EventSK(version)).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) {
		return fund.Event{}, fund.Errorf(fund.ENOTFOUND, "no event of document %s version %d", doc, version)
	}
	if err != nil {
		return fund.Event{}, fmt.Errorf("read the event of document %s version %d: %w", doc, version, err)
	}
	return s.eventOf(ctx, &it)
}

// eventSource is where a read of the feed finds events: the index, the
// periods it is partitioned by and the partitions of one period, and, for
// the feed of every fund read for some, the funds kept.
type eventSource struct {
	index string
	attrs [2]string // partition and sort key attributes of the index
	// period is the start of the period holding t; next the following one.
	period func(t time.Time) time.Time
	next   func(p time.Time) time.Time
	keys   func(p time.Time) []string
	funds  map[string]bool // nil: every fund the partitions hold
}

// allEvents is the feed of every fund: GSI1, by UTC day and shard.
func allEvents(shards int) eventSource {
	return eventSource{
		index: IndexGSI1, attrs: [2]string{AttrGSI1PK, AttrGSI1SK},
		period: utcDay, next: func(p time.Time) time.Time { return p.AddDate(0, 0, 1) },
		keys: func(p time.Time) []string {
			out := make([]string, shards)
			for i := range shards {
				out[i] = EventsGSI1PK(p, i)
			}
			return out
		},
	}
}

// fundEvents is the feed of some funds: GSI2, by fund and UTC month.
func fundEvents(funds []string) eventSource {
	funds = slices.Compact(slices.Sorted(slices.Values(funds)))
	return eventSource{
		index: IndexGSI2, attrs: [2]string{AttrGSI2PK, AttrGSI2SK},
		period: utcMonth, next: func(p time.Time) time.Time { return p.AddDate(0, 1, 0) },
		keys: func(p time.Time) []string {
			out := make([]string, len(funds))
			for i, f := range funds {
				out[i] = FundEventsGSI2PK(f, p)
			}
			return out
		},
	}
}

func utcMonth(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

// readEvents reads a page of src: period after period from the cursor's,
// each round Querying the period's partitions not read to their end yet in
// parallel, merging in commit order the events read up to the lowest place
// every such partition was read to (keep, when not nil, may refuse an
// event or trim it, as an investor's view does). Each Query reads up to
// the events the page still needs or, when a filter may pass over events,
// maxEventScan. The page ends when it holds limit events or about
// MaxEventPageBytes, when its Queries are spent (maxEventQueries, or a
// period's partitions), or at until.
func (s *Store) readEvents(ctx context.Context, after fund.EventCursor, limit int, f fund.EventFilter, src eventSource, keep func(*fund.Event) bool) (fund.EventPage, error) {
	if limit < 1 || limit > MaxEventPage {
		return fund.EventPage{}, fund.Invalid("limit", "must be between 1 and %d", MaxEventPage)
	}
	for _, t := range f.Types {
		if !t.Valid() {
			return fund.EventPage{}, fund.Invalid("type", "must be one of %v, got %q", fund.EventTypes, t)
		}
	}
	watermark := s.SettledUntil()
	until := f.Until
	if until.IsZero() {
		until = watermark
	}
	page := fund.EventPage{Next: after, Watermark: watermark, Events: []fund.Event{}}
	start := after
	if start.IsZero() {
		first, ok, err := s.eventsStart(ctx)
		if err != nil {
			return fund.EventPage{}, err
		}
		if !ok { // no process has ever committed: nothing up to until
			if !until.After(watermark) {
				page.Next = fund.EventCursor{At: until}
			}
			return page, nil
		}
		start = fund.EventCursor{At: first.Add(-time.Nanosecond)}
	}
	if until.Before(start.At) || (start.DocumentID == "" && until.Equal(start.At)) {
		return page, nil // nothing between the cursor and until
	}
	filtered := len(f.Types) > 0 || keep != nil || src.funds != nil
	wanted := func(it *eventItem) bool {
		if len(f.Types) > 0 && !slices.Contains(f.Types, fund.EventType(it.EventType)) {
			return false
		}
		if len(f.Funds) > 0 && !slices.Contains(f.Funds, it.FundID) {
			return false
		}
		return src.funds == nil || src.funds[it.FundID]
	}
	r := eventRead{s: s, src: src, lo: afterSK(start), hi: EventsAfterSK(until), wanted: wanted, keep: keep, page: &page, limit: limit}
	for p := src.period(start.At); !p.After(until); p = src.next(p) {
		keys := src.keys(p)
		budget := max(maxEventQueries, len(keys))
		parts := make([]*eventPart, len(keys))
		for i, pk := range keys {
			parts[i] = &eventPart{pk: pk}
		}
		var held []eventItem // read, kept, not listed yet
		for {
			var open []*eventPart
			for _, pt := range parts {
				if !pt.done {
					open = append(open, pt)
				}
			}
			if len(open) == 0 {
				break
			}
			if r.queries+len(open) > budget {
				// Spent: every partition is read up to bound, and the
				// events up to it are listed.
				page.Next, page.More = r.bound(parts, p), true
				return page, nil
			}
			scan := limit - len(page.Events)
			if filtered {
				scan = maxEventScan
			}
			g, gctx := errgroup.WithContext(ctx)
			g.SetLimit(s.parallelism())
			for _, pt := range open {
				g.Go(func() error { return r.query(gctx, pt, scan) })
			}
			if err := g.Wait(); err != nil {
				return fund.EventPage{}, err
			}
			r.queries += len(open)
			for _, pt := range open {
				held = append(held, pt.read...)
				pt.read = nil
			}
			upTo := r.boundSK(parts)
			slices.SortFunc(held, compareEventItems)
			n := 0
			for n < len(held) && (upTo == "" || held[n].order() <= upTo) {
				n++
			}
			full, err := r.list(ctx, held[:n])
			if err != nil || full {
				return page, err
			}
			held = slices.Delete(held, 0, n)
		}
		end := src.next(p).Add(-time.Nanosecond)
		if r.queries >= maxEventQueries && end.Before(until) {
			page.Next, page.More = fund.EventCursor{At: end}, true
			return page, nil
		}
	}
	page.Next = fund.EventCursor{At: until}
	return page, nil
}

// eventRead is the state of one page's read.
type eventRead struct {
	s       *Store
	src     eventSource
	lo, hi  string
	wanted  func(*eventItem) bool
	keep    func(*fund.Event) bool
	page    *fund.EventPage
	limit   int
	queries int
	bytes   int
}

// eventPart is one partition of a period: where its next Query starts,
// the place up to which it was read, and the items kept from its last
// Query.
type eventPart struct {
	pk   string
	from dynamo.PagingKey
	done bool
	last *eventItem // the last item read
	read []eventItem
}

// query reads the next items of pt, up to scan, keeping those wanted.
func (r *eventRead) query(ctx context.Context, pt *eventPart, scan int) error {
	q := r.s.table.Get(r.src.attrs[0], pt.pk).Index(r.src.index).Range(r.src.attrs[1], dynamo.Between, r.lo, r.hi)
	if pt.from != nil {
		q = q.StartFrom(pt.from)
	}
	iter := q.SearchLimit(scan).RequestLimit(1).Iter()
	var it eventItem
	for iter.Next(ctx, &it) {
		if it.Type == TypeEvent {
			last := it
			pt.last = &last
			if r.wanted(&it) {
				pt.read = append(pt.read, it)
			}
		}
		it = eventItem{}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("store: read the events of %s: %w", pt.pk, err)
	}
	from, err := iter.LastEvaluatedKey(ctx)
	if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
		return fmt.Errorf("store: read the events of %s: %w", pt.pk, err)
	}
	pt.from, pt.done = from, from == nil
	return nil
}

// lowestRead is the lowest last item of the partitions not read to their
// end (nil when all were); unread says one of them has read nothing yet.
func lowestRead(parts []*eventPart) (low *eventItem, unread bool) {
	for _, pt := range parts {
		switch {
		case pt.done:
		case pt.last == nil:
			return nil, true
		case low == nil || pt.last.order() < low.order():
			low = pt.last
		}
	}
	return low, false
}

// boundSK is the order key up to which every partition of a period was
// read: the cursor's when one has read nothing yet, else the lowest last
// item of those not read to their end ("" when all were).
func (r *eventRead) boundSK(parts []*eventPart) string {
	low, unread := lowestRead(parts)
	switch {
	case unread:
		return r.lo
	case low == nil:
		return ""
	}
	return low.order()
}

// bound is the cursor up to which every partition of period p was read,
// and every event up to it listed: its lowest last item, or, when one of
// them has read none of p, the page's cursor or the end of the period
// before p, whichever is later.
func (r *eventRead) bound(parts []*eventPart, p time.Time) fund.EventCursor {
	if low, unread := lowestRead(parts); !unread && low != nil {
		return fund.EventCursor{At: low.CommittedAt.UTC(), DocumentID: low.DocumentID, Version: low.Version}
	}
	before := fund.EventCursor{At: p.Add(-time.Nanosecond)}
	if afterSK(before) < afterSK(r.page.Next) {
		return r.page.Next
	}
	return before
}

// list adds items, in commit order, to the page until it holds limit
// events or about MaxEventPageBytes; full says it does. Next is right
// after the last item listed (or passed over by keep).
func (r *eventRead) list(ctx context.Context, items []eventItem) (full bool, err error) {
	for i := range items {
		e, err := r.s.eventOf(ctx, &items[i])
		if err != nil {
			return false, err
		}
		if r.keep != nil && !r.keep(&e) {
			continue
		}
		size := eventBytes(&e)
		if len(r.page.Events) > 0 && r.bytes+size > MaxEventPageBytes {
			r.page.More = true
			return true, nil
		}
		r.page.Events = append(r.page.Events, e)
		r.page.Next, r.bytes = fund.CursorAfter(&e), r.bytes+size
		if len(r.page.Events) == r.limit || r.bytes >= MaxEventPageBytes {
			r.page.More = true
			return true, nil
		}
	}
	return false, nil
}

// The start of the feed: before its first commit, each process lowers the
// recorded earliest instant to its clock's present if that is earlier, so
// that every event's instant is at or after the record (its commit instant
// is taken later, and never before its document's previous one), and a
// replay from the beginning starts there instead of at some fixed date.

// startRecord remembers that this process has recorded its start, and the
// latest start it read (an upper bound of the table's start, which is only
// ever lowered).
type startRecord struct {
	mu   sync.Mutex
	done bool
	read time.Time
}

// recordEventsStart lowers the table's record of the feed's start to the
// instant the version being committed was created at (its positions count
// as registered from then), unless this process has done so already.
func (s *Store) recordEventsStart(ctx context.Context, created time.Time) error {
	s.start.mu.Lock()
	defer s.start.mu.Unlock()
	if s.start.done {
		return nil
	}
	at := s.Now()
	if !created.IsZero() && created.Before(at) {
		at = created
	}
	if err := s.lowerEventsStart(ctx, at); err != nil {
		return err
	}
	s.start.done = true
	// The table's start is at or before at from now on.
	if s.start.read.IsZero() || at.Before(s.start.read) {
		s.start.read = at
	}
	return nil
}

// lowerEventsStart lowers the table's record of the feed's start to at,
// unless it records an earlier instant.
func (s *Store) lowerEventsStart(ctx context.Context, at time.Time) error {
	now := at.UTC()
	_, err := s.db.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.name),
		Key:                       itemKey(EventsStartPK, EventsStartSK),
		UpdateExpression:          aws.String("SET #f = :f, #t = :t"),
		ConditionExpression:       aws.String("attribute_not_exists(#f) OR #f > :f"),
		ExpressionAttributeNames:  exprNames{"#f": "First", "#t": "Type"},
		ExpressionAttributeValues: exprValues{":f": attrS(changeInstant(now)), ":t": attrS(TypeEventsStart)},
	})
	if err != nil && !dynamo.IsCondCheckFailed(err) { // refused: an earlier start is recorded
		return fmt.Errorf("record the start of the event feed: %w", err)
	}
	return nil
}

// eventsStart reads the feed's start; ok is false when no process has
// committed yet.
func (s *Store) eventsStart(ctx context.Context) (first time.Time, ok bool, err error) {
	var rec struct{ First string }
	err = s.table.Get(AttrPK, EventsStartPK).Range(AttrSK, dynamo.Equal, EventsStartSK).Consistent(true).One(ctx, &rec)
	if errors.Is(err, dynamo.ErrNotFound) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: read the start of the event feed: %w", err)
	}
	first, err = time.Parse(time.RFC3339Nano, rec.First)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: the start of the event feed %q: %w", rec.First, err)
	}
	s.start.mu.Lock()
	s.start.read = first
	s.start.mu.Unlock()
	return first, true, nil
}

// EventsAfter is Store.EventsAfter as the viewer sees it. An administrator
// of every fund reads the feed of every fund (GSI1) or, with f.Funds, of
// those funds (GSI2); an administrator of some funds reads its funds' (or,
// with f.Funds, those of them) in GSI2, and f.Funds naming a fund it does
// not cover is ENOTFOUND, as for an unknown fund. An investor reads the
// events of documents touching its positions, each listing only its own
// positions: its positions are read first (Queries of GSI2 INVESTOR#<inv>,
// one per 1,000 positions), then the feeds of their funds (GSI2), whose
// events of other investors' positions are read and passed over.
func (r View) EventsAfter(ctx context.Context, after fund.EventCursor, limit int, f fund.EventFilter) (fund.EventPage, error) {
	switch {
	case r.rd.Investor != "":
		mine := map[string]bool{}
		var funds []string
		var start PageKey
		for {
			ps, next, err := r.s.InvestorPositions(ctx, r.rd.Viewer, r.rd.Investor, MaxEventPage, start)
			if err != nil {
				return fund.EventPage{}, err
			}
			for _, p := range ps {
				mine[p.PositionID] = true
				if len(f.Funds) == 0 || slices.Contains(f.Funds, p.FundID) {
					funds = append(funds, p.FundID)
				}
			}
			if start = next; start == nil {
				break
			}
		}
		if len(funds) == 0 {
			// No position (in the funds asked for): an empty feed, read up
			// to the watermark like any other.
			return r.s.readEvents(ctx, after, limit, f, fundEvents(nil), nil)
		}
		own := func(e *fund.Event) bool {
			e.Data.Positions = slices.DeleteFunc(e.Data.Positions, func(p fund.EventPosition) bool { return !mine[p.PositionID] })
			return len(e.Data.Positions) > 0
		}
		src, err := r.s.feedOf(ctx, uniq(funds), true)
		if err != nil {
			return fund.EventPage{}, err
		}
		return r.s.readEvents(ctx, after, limit, f, src, own)
	case r.rd.AllFunds:
		return r.s.EventsAfter(ctx, after, limit, f)
	default:
		for _, id := range f.Funds {
			if err := r.FundVisible(id); err != nil {
				return fund.EventPage{}, err
			}
		}
		funds := f.Funds
		if len(funds) == 0 {
			funds = r.rd.Funds
		}
		src, err := r.s.feedOf(ctx, funds, true)
		if err != nil {
			return fund.EventPage{}, err
		}
		return r.s.readEvents(ctx, after, limit, f, src, nil)
	}
}
