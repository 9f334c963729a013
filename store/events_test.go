package store_test

import (
	"fmt"

	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// clock is a settable clock for a Store.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func setClock(e *fundtest.Env, at time.Time) *clock {
	c := &clock{now: at}
	e.Store.Now = c.Now
	return c
}

// readFeed reads every event of the feed through read, page by page, and
// returns them with the pages' count.
func readFeed(t *testing.T, read func(after fund.EventCursor) (fund.EventPage, error)) ([]fund.Event, int) {
	t.Helper()
	var out []fund.Event
	var after fund.EventCursor
	for pages := 1; ; pages++ {
		page, err := read(after)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Events...)
		if !page.More {
			return out, pages
		}
		if !after.IsZero() && page.Next == after {
			t.Fatalf("page %d does not move on from %v", pages, after)
		}
		after = page.Next
		if pages > 1000 {
			t.Fatal("the feed never ends")
		}
	}
}

func everything(s *store.Store, limit int) func(fund.EventCursor) (fund.EventPage, error) {
	return func(after fund.EventCursor) (fund.EventPage, error) {
		return s.EventsAfter(ctx, after, limit, fund.EventFilter{Until: s.Now().Add(time.Minute)})
	}
}

func eventIDs(es []fund.Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func TestEveryCommittedVersionHasExactlyOneEventAndARefusedWriteNone(t *testing.T) {
	e := fundtest.New(t)
	c := setClock(e, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	tick := func() { c.now = c.now.Add(time.Second) }
	var commits atomic.Int32 // OnCommit's calls: the webhook deliverer's wake-up
	e.Store.OnCommit = func() { commits.Add(1) }

	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1", "POS_2", "POS_3"), nil); err != nil {
		t.Fatal(err)
	}
	tick()
	// Version 2: POS_1 changed, POS_2 kept, POS_3 removed, POS_4 added.
	v2 := doc("D1", "F1", 100, "POS_1", "POS_2", "POS_4")
	v2.Positions[0].CapitalCall.Amount = fund.MustMoney("999.00")
	v2.Positions[1].CapitalCall.Amount = fund.MustMoney("101.00") // as in version 1
	v2.Positions[2].Distribution = &fund.DistributionItem{Amount: fund.MustMoney("5.00")}
	if _, err := e.Store.Restate(ctx, v2, nil); err != nil {
		t.Fatal(err)
	}
	tick()
	// Refused: a stale If-Match (412), an invalid document (400), a
	// position of another investor (409).
	stale := 1
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 7, "POS_1"), &stale); fund.ErrorCode(err) != fund.EPRECONDITION {
		t.Fatalf("stale If-Match: %v", err)
	}
	bad := doc("D2", "F1", 1, "POS_5")
	bad.Title = ""
	if _, err := e.Store.Restate(ctx, bad, nil); fund.ErrorCode(err) != fund.EINVALID {
		t.Fatalf("invalid document: %v", err)
	}
	moved := doc("D3", "F1", 1, "POS_1")
	moved.Positions[0].InvestorID = "INV_OTHER"
	if _, err := e.Store.Restate(ctx, moved, nil); fund.ErrorCode(err) != fund.ECONFLICT {
		t.Fatalf("position of another investor: %v", err)
	}
	tick()
	if _, err := e.Store.Void(ctx, fund.Document{ID: "D1", CreatedBy: "test"}, 2); err != nil {
		t.Fatal(err)
	}
	tick()
	// A restatement of a voided document is refused.
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 1, "POS_1"), nil); fund.ErrorCode(err) != fund.ECONFLICT {
		t.Fatalf("restating a voided document: %v", err)
	}
	if _, err := e.Store.Void(ctx, fund.Document{ID: "D1", CreatedBy: "test"}, store.AnyVersion); err != nil {
		t.Fatalf("voiding twice answers the void: %v", err)
	}

	events, _ := readFeed(t, everything(e.Store, 10))
	got := eventIDs(events)
	want := []string{"evt_D1_v1", "evt_D1_v2", "evt_D1_v3"}
	if !slices.Equal(got, want) {
		t.Fatalf("the feed lists %v, want exactly the committed versions %v", got, want)
	}
	if n := int(commits.Load()); n != len(want) {
		t.Errorf("OnCommit was called %d times, want once per committed version (%d)", n, len(want))
	}
	p := func(id string, ch fund.PositionChange, kinds ...fund.ItemKind) fund.EventPosition {
		return fund.EventPosition{PositionID: id, InvestorID: "INV_" + strings.TrimPrefix(id, "POS_"), Change: ch, ItemTypes: append([]fund.ItemKind{}, kinds...)}
	}
	wantPositions := [][]fund.EventPosition{
		{p("POS_1", fund.PositionAdded, fund.CapitalCall), p("POS_2", fund.PositionAdded, fund.CapitalCall), p("POS_3", fund.PositionAdded, fund.CapitalCall)},
		{p("POS_1", fund.PositionChanged, fund.CapitalCall), p("POS_3", fund.PositionRemoved, fund.CapitalCall), p("POS_4", fund.PositionAdded, fund.CapitalCall, fund.Distribution)},
		{p("POS_1", fund.PositionRemoved, fund.CapitalCall), p("POS_2", fund.PositionRemoved, fund.CapitalCall), p("POS_4", fund.PositionRemoved, fund.CapitalCall, fund.Distribution)},
	}
	wantTypes := []fund.EventType{fund.EventDocumentCreated, fund.EventDocumentRestated, fund.EventDocumentVoided}
	for i, ev := range events {
		if ev.Type != wantTypes[i] || ev.Data.Version != i+1 || ev.Data.DocumentID != "D1" || ev.Data.FundID != "F1" ||
			ev.Data.Kind != fund.KindCapitalCallNotice || ev.Data.VersionPath != fmt.Sprintf("/v1/documents/D1/versions/%d", i+1) {
			t.Errorf("event %d: %+v", i+1, ev)
		}
		if fmt.Sprint(ev.Data.Positions) != fmt.Sprint(wantPositions[i]) {
			t.Errorf("event %d positions %v, want %v", i+1, ev.Data.Positions, wantPositions[i])
		}
		one, err := e.Store.Event(ctx, "D1", i+1)
		if err != nil || fmt.Sprint(one) != fmt.Sprint(ev) {
			t.Errorf("Event(D1, %d) = %+v, %v; the feed lists %+v", i+1, one, err, ev)
		}
		// The version the event announces is what it committed.
		v, err := e.Store.As(fund.Operator).Version(ctx, "D1", i+1)
		if err != nil || !v.CreatedAt.Before(ev.Timestamp.Add(time.Nanosecond)) {
			t.Errorf("version %d: %v, created %s, event at %s", i+1, err, v.CreatedAt, ev.Timestamp)
		}
	}
	if _, err := e.Store.Event(ctx, "D1", 4); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Errorf("an uncommitted version's event: %v", err)
	}
	for _, d := range []string{"D2", "D3"} {
		if _, err := e.Store.Event(ctx, d, 1); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Errorf("the refused document %s has an event: %v", d, err)
		}
	}
}

// TestTheFeedIsInCommitOrderAcrossDaysShardsAndFunds writes versions of
// many documents over several days, some at the same instant and one
// committed by a clock that went back, then pages through the feed of
// every fund and of each fund with small pages.
func TestTheFeedIsInCommitOrderAcrossDaysShardsAndFunds(t *testing.T) {
	e := fundtest.New(t)
	c := setClock(e, time.Date(2026, 1, 30, 23, 59, 0, 0, time.UTC))
	var committed []string
	version := map[string]int{}
	for round := range 4 {
		for i := range 9 {
			id := fmt.Sprintf("DOC_%d", i)
			fundID := fmt.Sprintf("F%d", i%3)
			if _, err := e.Store.Restate(ctx, doc(id, fundID, 100+round, fmt.Sprintf("POS_%d", i)), nil); err != nil {
				t.Fatal(err)
			}
			version[id]++
			committed = append(committed, fund.EventID(id, version[id]))
			if i%3 != 2 { // every third commit shares the instant of the one before
				c.now = c.now.Add(7 * time.Second)
			}
		}
		c.now = c.now.Add(26 * time.Hour) // the next day (and month)
	}
	// A clock that lags: DOC_0's next version is stamped after its last.
	c.now = c.now.Add(-10 * 24 * time.Hour)
	if _, err := e.Store.Restate(ctx, doc("DOC_0", "F0", 1, "POS_0"), nil); err != nil {
		t.Fatal(err)
	}
	c.now = c.now.Add(20 * 24 * time.Hour)

	all, pages := readFeed(t, everything(e.Store, 4))
	if pages < 9 {
		t.Errorf("%d events in %d pages of 4", len(all), pages)
	}
	if !slices.IsSortedFunc(all, func(a, b fund.Event) int {
		return strings.Compare(store.EventOrderSK(a.Timestamp, a.Data.DocumentID, a.Data.Version), store.EventOrderSK(b.Timestamp, b.Data.DocumentID, b.Data.Version))
	}) {
		t.Errorf("not in commit order: %v", eventIDs(all))
	}
	ids := eventIDs(all)
	want := append(slices.Clone(committed), "evt_DOC_0_v5")
	if !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("the feed lists %d events %v, want the %d committed %v", len(ids), ids, len(want), want)
	}
	if i := slices.Index(ids, "evt_DOC_0_v5"); i < 1 || ids[i-1] != "evt_DOC_0_v4" || !all[i].Timestamp.Equal(all[i-1].Timestamp.Add(time.Millisecond)) {
		t.Errorf("the version committed by a lagging clock is not stamped right after its predecessor: %v", ids)
	}
	last := map[string]int{}
	for _, ev := range all {
		if ev.Data.Version != last[ev.Data.DocumentID]+1 {
			t.Errorf("%s follows version %d", ev.ID, last[ev.Data.DocumentID])
		}
		last[ev.Data.DocumentID] = ev.Data.Version
	}

	// Each fund's feed (GSI2 by month) is the feed of every fund, filtered.
	for _, f := range []string{"F0", "F1", "F2"} {
		got, _ := readFeed(t, func(after fund.EventCursor) (fund.EventPage, error) {
			return e.Store.EventsAfter(ctx, after, 3, fund.EventFilter{Funds: []string{f}, Until: e.Store.Now()})
		})
		var want []string
		for _, ev := range all {
			if ev.Data.FundID == f {
				want = append(want, ev.ID)
			}
		}
		if !slices.Equal(eventIDs(got), want) {
			t.Errorf("fund %s's feed %v, want %v", f, eventIDs(got), want)
		}
	}
	// A type filter keeps the order and only that type.
	created, _ := readFeed(t, func(after fund.EventCursor) (fund.EventPage, error) {
		return e.Store.EventsAfter(ctx, after, 5, fund.EventFilter{Types: []fund.EventType{fund.EventDocumentCreated}, Until: e.Store.Now()})
	})
	if len(created) != 9 || created[0].ID != "evt_DOC_0_v1" {
		t.Errorf("created events: %v", eventIDs(created))
	}
	// A cursor persisted as a string resumes where it was.
	page, err := e.Store.EventsAfter(ctx, fund.EventCursor{}, 10, fund.EventFilter{Until: e.Store.Now()})
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := fund.ParseEventCursor(page.Next.String())
	if err != nil || resumed != page.Next {
		t.Fatalf("cursor %q read back as %v, %v", page.Next.String(), resumed, err)
	}
	rest, err := e.Store.EventsAfter(ctx, resumed, 1, fund.EventFilter{Until: e.Store.Now()})
	if err != nil || len(rest.Events) != 1 || rest.Events[0].ID != ids[10] {
		t.Errorf("after the first 10: %v %v, want %s", rest.Events, err, ids[10])
	}
}

// TestTheFeedStopsAtTheWatermark: without Until, a page ends at the
// settle margin behind the present, and its Next resumes right there, so
// the event committed meanwhile is read once it is settled, never missed.
func TestTheFeedStopsAtTheWatermark(t *testing.T) {
	e := fundtest.New(t)
	c := setClock(e, time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC))
	if _, err := e.Store.Restate(ctx, doc("OLD", "F1", 1, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	c.now = c.now.Add(time.Hour)
	if _, err := e.Store.Restate(ctx, doc("NEW", "F1", 1, "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	page, err := e.Store.EventsAfter(ctx, fund.EventCursor{}, 10, fund.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	wm := c.now.Add(-store.ChangeSettleMargin)
	if !page.Watermark.Equal(wm) || page.More || !slices.Equal(eventIDs(page.Events), []string{"evt_OLD_v1"}) || page.Next != (fund.EventCursor{At: wm}) {
		t.Fatalf("page at the watermark: %+v, want OLD only, up to %s", page, wm)
	}
	eager, err := e.Store.EventsAfter(ctx, page.Next, 10, fund.EventFilter{Until: c.now})
	if err != nil || !slices.Equal(eventIDs(eager.Events), []string{"evt_NEW_v1"}) {
		t.Fatalf("reading past the watermark: %+v %v", eager, err)
	}
	// A shorter FeedSettle (make run's, for one instance on DynamoDB
	// Local) moves the watermark nearer the present.
	e.Store.FeedSettle = 5 * time.Second
	c.now = c.now.Add(4 * time.Second)
	if early, err := e.Store.EventsAfter(ctx, page.Next, 10, fund.EventFilter{}); err != nil || len(early.Events) != 0 || !early.Watermark.Equal(c.now.Add(-5*time.Second)) {
		t.Fatalf("4s after the commit with a 5s settle: %+v %v, want nothing yet", early, err)
	}
	c.now = c.now.Add(time.Second)
	later, err := e.Store.EventsAfter(ctx, page.Next, 10, fund.EventFilter{})
	if err != nil || !slices.Equal(eventIDs(later.Events), []string{"evt_NEW_v1"}) {
		t.Fatalf("once settled: %+v %v", later, err)
	}
}

// TestAReplayOverEmptyDaysIsBoundedPerPage: a replay from the beginning
// across months without a commit stops after a bounded number of Queries
// with More, and reaches the next event.
func TestAReplayOverEmptyDaysIsBoundedPerPage(t *testing.T) {
	e := fundtest.New(t)
	c := setClock(e, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := e.Store.Restate(ctx, doc("JAN", "F1", 1, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	c.now = c.now.AddDate(0, 4, 0)
	if _, err := e.Store.Restate(ctx, doc("MAY", "F1", 1, "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	all, pages := readFeed(t, everything(e.Store, 100))
	if !slices.Equal(eventIDs(all), []string{"evt_JAN_v1", "evt_MAY_v1"}) {
		t.Fatalf("replay: %v", eventIDs(all))
	}
	// 120 days of 8 shards at most 64 Queries (8 days) a page.
	if pages < 120/8 {
		t.Errorf("the replay took %d pages: a page is not bounded", pages)
	}
}

// TestAnInvestorSeesOnlyEventsOfItsPositionsListingOnlyThem.
func TestAnInvestorSeesOnlyEventsOfItsPositionsListingOnlyThem(t *testing.T) {
	e := fundtest.New(t)
	setClock(e, time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC))
	// INV_1 holds POS_1 (F1) and POS_11 (F2); INV_2 holds POS_2.
	both := doc("BOTH", "F1", 1, "POS_1", "POS_2")
	theirs := doc("THEIRS", "F1", 1, "POS_2")
	other := doc("OTHER_FUND", "F2", 1, "POS_11")
	other.Positions[0].InvestorID = "INV_1"
	for _, d := range []fund.Document{both, theirs, other} {
		if _, err := e.Store.Restate(ctx, d, nil); err != nil {
			t.Fatal(err)
		}
	}
	read := func(v fund.Viewer, f fund.EventFilter) []fund.Event {
		f.Until = e.Store.Now()
		got, _ := readFeed(t, func(after fund.EventCursor) (fund.EventPage, error) {
			return e.Store.As(fund.Latest(v)).EventsAfter(ctx, after, 2, f)
		})
		return got
	}
	inv1 := read(fund.Viewer{Investor: "INV_1"}, fund.EventFilter{})
	if !slices.Equal(eventIDs(inv1), []string{"evt_BOTH_v1", "evt_OTHER_FUND_v1"}) {
		t.Fatalf("INV_1 sees %v", eventIDs(inv1))
	}
	for _, ev := range inv1 {
		for _, p := range ev.Data.Positions {
			if (p.PositionID != "POS_1" && p.PositionID != "POS_11") || p.InvestorID != "INV_1" {
				t.Errorf("INV_1 sees %s in %s", p.PositionID, ev.ID)
			}
		}
		if len(ev.Data.Positions) != 1 {
			t.Errorf("%s lists %v", ev.ID, ev.Data.Positions)
		}
	}
	if got := read(fund.Viewer{Investor: "INV_1"}, fund.EventFilter{Funds: []string{"F2"}}); !slices.Equal(eventIDs(got), []string{"evt_OTHER_FUND_v1"}) {
		t.Errorf("INV_1 in F2 sees %v", eventIDs(got))
	}
	if got := read(fund.Viewer{Investor: "INV_NONE"}, fund.EventFilter{}); len(got) != 0 {
		t.Errorf("an investor without positions sees %v", eventIDs(got))
	}
	if got := read(fund.Viewer{Funds: []string{"F2"}}, fund.EventFilter{}); !slices.Equal(eventIDs(got), []string{"evt_OTHER_FUND_v1"}) {
		t.Errorf("the administrator of F2 sees %v", eventIDs(got))
	}
	if _, err := e.Store.As(fund.Latest(fund.Viewer{Funds: []string{"F2"}})).EventsAfter(ctx, fund.EventCursor{}, 5, fund.EventFilter{Funds: []string{"F1"}}); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Errorf("the administrator of F2 asking for F1: %v", err)
	}
	if got := read(fund.Viewer{AllFunds: true}, fund.EventFilter{}); len(got) != 3 || len(got[0].Data.Positions) != 2 {
		t.Errorf("an administrator of every fund sees %v", got)
	}
}

func TestEventIDsAndCursorsReadBack(t *testing.T) {
	for _, tc := range []struct {
		doc string
		v   int
	}{{"D1", 1}, {"A_v2", 3}, {"x.y:z-1_v", 12}} {
		id := fund.EventID(tc.doc, tc.v)
		d, v, ok := fund.ParseEventID(id)
		if !ok || d != tc.doc || v != tc.v {
			t.Errorf("%s read back as %s %d %v", id, d, v, ok)
		}
	}
	for _, bad := range []string{"", "evt_", "evt_D1_v0", "evt_D1_v01", "evt_D1", "D1_v1", "evt_#_v1"} {
		if _, _, ok := fund.ParseEventID(bad); ok {
			t.Errorf("%q read as an event ID", bad)
		}
	}
	for _, bad := range []string{"x", "2026-01-01T00:00:00Z|D1", "2026-01-01T00:00:00Z|D#1|1", "2026-01-01T00:00:00Z|D1|0"} {
		if _, err := fund.ParseEventCursor(bad); fund.ErrorCode(err) != fund.EINVALID {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

// TestACommitThatFailsHasNoEvent fails the commit transaction of a
// restatement (its version staged): no event of that version exists, the
// feed lists version 1 only, and repeating the write commits version 2
// with its one event.
func TestACommitThatFailsHasNoEvent(t *testing.T) {
	e := fundtest.New(t)
	setClock(e, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	// The stage's one batch passes; the next write, the commit, fails.
	e.Faults.FailWrites(1, 1)
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 200, "POS_1"), nil); err == nil || e.Faults.Injected() != 1 {
		t.Fatalf("restate: %v after %d injected failures, want the commit to fail", err, e.Faults.Injected())
	}
	if h, err := e.Store.As(fund.Operator).LatestDocument(ctx, "D1"); err != nil || h.Version != 1 {
		t.Fatalf("after the failed commit D1 is %+v, %v; want version 1", h, err)
	}
	if _, err := e.Store.Event(ctx, "D1", 2); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Fatalf("the failed commit's version has an event: %v", err)
	}
	if got, _ := readFeed(t, everything(e.Store, 10)); !slices.Equal(eventIDs(got), []string{"evt_D1_v1"}) {
		t.Fatalf("after the failed commit the feed lists %v", eventIDs(got))
	}
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 200, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFeed(t, everything(e.Store, 10)); !slices.Equal(eventIDs(got), []string{"evt_D1_v1", "evt_D1_v2"}) {
		t.Fatalf("after the repeat the feed lists %v", eventIDs(got))
	}
}

// TestARepeatedRequestAddsNoEvent: the repeat of an idempotent request
// whose answer was lost finds its own commit on the head and writes
// nothing, so its version keeps its one event.
func TestARepeatedRequestAddsNoEvent(t *testing.T) {
	e := fundtest.New(t)
	setClock(e, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	d := doc("D1", "F1", 100, "POS_1")
	d.RequestID = "request-1"
	for range 2 {
		if v, err := e.Store.Restate(ctx, d, nil); err != nil || v.Version != 1 {
			t.Fatalf("restate: version %d, %v", v.Version, err)
		}
	}
	if got, _ := readFeed(t, everything(e.Store, 10)); !slices.Equal(eventIDs(got), []string{"evt_D1_v1"}) {
		t.Fatalf("the feed lists %v", eventIDs(got))
	}
}
