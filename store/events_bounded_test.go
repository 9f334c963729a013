package store_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// feedEvent is the event of version v of document doc of fundID committed
// at, touching the positions of ps.
func feedEvent(doc, fundID string, v int, typ fund.EventType, at time.Time, ps ...fund.EventPosition) fund.Event {
	if ps == nil {
		ps = []fund.EventPosition{}
	}
	return fund.Event{ID: fund.EventID(doc, v), Type: typ, Timestamp: at,
		Data: fund.EventData{DocumentID: doc, FundID: fundID, Kind: fund.KindCapitalCallNotice, Version: v,
			VersionPath: fund.VersionPath(doc, v), Positions: ps}}
}

// pagedQueries reads the feed through read page by page, and returns every
// event, the pages and the most Queries a page made.
func pagedQueries(t *testing.T, e *fundtest.Env, read func(after fund.EventCursor) (fund.EventPage, error)) (events []fund.Event, pages, most int) {
	t.Helper()
	var after fund.EventCursor
	for {
		e.Counter.Reset()
		page, err := read(after)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		most = max(most, e.Counter.Count("Query"))
		events = append(events, page.Events...)
		if !page.More {
			return events, pages, most
		}
		if page.Next == after {
			t.Fatalf("page %d does not move on from %v", pages, after)
		}
		after = page.Next
		if pages > 500 {
			t.Fatal("the feed never ends")
		}
	}
}

// TestFilteredFeedPagesCostBoundedQueries writes 1,200 events of 300 funds
// in one UTC day, of which one fund has one event and one event is a
// void, and reads them filtered: by that fund, by the void's type (limit
// 1), and as an administrator of the 300 funds. Each page makes at most
// 64 Queries whatever the filter; the type filter finds its one event in
// one Query per shard, and the 300 funds' feed is read from the feed of
// every fund, not one Query per fund.
func TestFilteredFeedPagesCostBoundedQueries(t *testing.T) {
	e := fundtest.New(t)
	day := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	setClock(e, day.Add(48*time.Hour))
	var es []fund.Event
	var funds []string
	for f := range 300 {
		funds = append(funds, fmt.Sprintf("F%03d", f))
	}
	for i := range 1200 {
		fundID := funds[i%300]
		if fundID == "F007" && i != 7 {
			fundID = "F008"
		}
		typ := fund.EventDocumentRestated
		if i == 1100 {
			typ = fund.EventDocumentVoided
		}
		es = append(es, feedEvent(fmt.Sprintf("D%04d", i), fundID, 2, typ, day.Add(time.Duration(i)*time.Second)))
	}
	if err := e.Store.PutEventsForTest(ctx, es); err != nil {
		t.Fatal(err)
	}
	until := fund.EventFilter{Until: day.Add(24 * time.Hour)}

	t.Run("one fund among many", func(t *testing.T) {
		f := until
		f.Funds = []string{"F007"}
		got, _, most := pagedQueries(t, e, func(after fund.EventCursor) (fund.EventPage, error) {
			return e.Store.EventsAfter(ctx, after, 1, f)
		})
		if ids := eventIDs(got); len(ids) != 1 || ids[0] != "evt_D0007_v2" {
			t.Errorf("F007's events: %v", ids)
		}
		if most > 1 {
			t.Errorf("a page of one fund's feed made %d Queries", most)
		}
	})
	t.Run("a type that one event has", func(t *testing.T) {
		f := until
		f.Types = []fund.EventType{fund.EventDocumentVoided}
		got, pages, most := pagedQueries(t, e, func(after fund.EventCursor) (fund.EventPage, error) {
			return e.Store.EventsAfter(ctx, after, 1, f)
		})
		if ids := eventIDs(got); len(ids) != 1 || ids[0] != "evt_D1100_v2" {
			t.Errorf("the voids: %v", ids)
		}
		if total := pages * most; most > 2*store.DefaultChangeShards || pages > 2 {
			t.Errorf("%d pages of at most %d Queries (%d) to find one void among 1,200 events", pages, most, total)
		}
	})
	t.Run("a token naming 300 funds", func(t *testing.T) {
		admin := e.Store.As(fund.Latest(fund.Viewer{Funds: funds}))
		got, pages, most := pagedQueries(t, e, func(after fund.EventCursor) (fund.EventPage, error) {
			return admin.EventsAfter(ctx, after, 1000, until)
		})
		if len(got) != 1200 {
			t.Errorf("the 300 funds' feed lists %d events, want 1200", len(got))
		}
		if most > 64 {
			t.Errorf("a page of 300 funds' feed made %d Queries", most)
		}
		t.Logf("%d pages, at most %d Queries a page", pages, most)
	})
	t.Run("300 funds and a type", func(t *testing.T) {
		f := until
		f.Types = []fund.EventType{fund.EventDocumentVoided}
		_, _, most := pagedQueries(t, e, func(after fund.EventCursor) (fund.EventPage, error) {
			return e.Store.As(fund.Latest(fund.Viewer{Funds: funds})).EventsAfter(ctx, after, 1, f)
		})
		if most > 64 {
			t.Errorf("a page made %d Queries", most)
		}
	})
}

// TestAFeedPageIsBoundedInBytes writes 100 events touching 200 positions
// each (64-character IDs: about 45 KB of JSON an event, 4.5 MB in all) and
// reads them MaxEventPage a page: each page holds about MaxEventPageBytes
// at most (one event more than fits ends it), so a page that could list
// all 100 lists about 23, and the pages list every event once, in order.
func TestAFeedPageIsBoundedInBytes(t *testing.T) {
	e := fundtest.New(t)
	day := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	setClock(e, day.Add(48*time.Hour))
	ps := make([]fund.EventPosition, 200)
	for i := range ps {
		ps[i] = fund.EventPosition{PositionID: fmt.Sprintf("P%063d", i), InvestorID: fmt.Sprintf("I%063d", i),
			Change: fund.PositionChanged, ItemTypes: []fund.ItemKind{fund.CapitalCall}}
	}
	var es []fund.Event
	const events = 100
	for i := range events {
		es = append(es, feedEvent(fmt.Sprintf("D%04d", i), "F1", 1, fund.EventDocumentCreated, day.Add(time.Duration(i)*time.Millisecond), ps...))
	}
	if err := e.Store.PutEventsForTest(ctx, es); err != nil {
		t.Fatal(err)
	}
	var after fund.EventCursor
	var ids []string
	pages := 1
	for ; ; pages++ {
		page, err := e.Store.EventsAfter(ctx, after, store.MaxEventPage, fund.EventFilter{Funds: []string{"F1"}, Until: day.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for _, ev := range page.Events {
			b, _ := jsonSize(ev)
			size += b
			ids = append(ids, ev.ID)
		}
		if len(page.Events) > 1 && size > store.MaxEventPageBytes+size/len(page.Events) {
			t.Fatalf("page %d: %d events, %d bytes of JSON", pages, len(page.Events), size)
		}
		if !page.More {
			break
		}
		after = page.Next
		if pages > 2000 {
			t.Fatal("the feed never ends")
		}
	}
	if len(ids) != events || ids[0] != "evt_D0000_v1" || ids[events-1] != "evt_D0099_v1" || strings.Join(ids, ",") != strings.Join(uniqSorted(ids), ",") {
		t.Errorf("the pages listed %d events", len(ids))
	}
	if pages < 4 {
		t.Errorf("%d pages of 4.5 MB of events, want at least 4 of about 1 MiB", pages)
	}
}

// jsonSize is the length of v's JSON.
func jsonSize(v any) (int, error) {
	b, err := json.Marshal(v)
	return len(b), err
}

// uniqSorted is ids sorted, each once.
func uniqSorted(ids []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(ids)))
}
