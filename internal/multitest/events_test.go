package multitest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
)

// TestTheFeedListsExactlyTheCommittedVersionsAcrossInstances has writers on
// both instances create, restate (without If-Match, so they race and are
// serialized), refuse (a stale If-Match, an invalid body) and void the same
// documents at once. Afterwards the feed holds one event for every version
// each document has, and nothing else, in commit order with each
// document's versions in version order; and each instance's GET
// /v1/events answers only events at or before the watermark it states.
func TestTheFeedListsExactlyTheCommittedVersionsAcrossInstances(t *testing.T) {
	const (
		docs    = 6
		writers = 2 // per document, one on each instance
		each    = 3 // restatements per writer
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	started := time.Now()
	c := Start(t, Options{Instances: 2})
	admin := c.Client(c.AdminToken(t, restateFund))
	var p problems
	var mu sync.Mutex
	acked := map[string]int{} // document → versions acknowledged
	var wg sync.WaitGroup
	for d := range docs {
		docID := fmt.Sprintf("EV_%02d", d)
		path := "/v1/documents/" + url.PathEscape(docID)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl := admin.On(d + w)
				for k := range each {
					v := document(restateFund, fmt.Sprintf("writer %d write %d", w, k), "2026-04-30",
						fund.Position{ID: fmt.Sprintf("EP_%02d_%d", d, k%2), InvestorID: "RINV_1", CapitalCall: callOf(100*w + k + 1)})
					resp, err := cl.PutDocument(ctx, docID, v)
					mu.Lock()
					switch {
					case err != nil:
						p.add("no answer", "PUT %s: %v", docID, err)
					case acknowledged(resp.Status):
						acked[docID]++
					default:
						p.add("PUT refused", "PUT %s: %s", docID, resp)
					}
					mu.Unlock()
					// Refused writes: they must leave no event.
					stale, _ := cl.Do(ctx, http.MethodPut, path, RequestOf(v), http.Header{"If-Match": {`"999"`}})
					invalid, _ := cl.Do(ctx, http.MethodPut, path, map[string]any{"fundId": restateFund, "kind": "capital_call_notice", "title": "", "asOf": "2026-04-30", "positions": []any{}}, nil)
					if stale.Status != http.StatusPreconditionFailed || invalid.Status != http.StatusBadRequest {
						mu.Lock()
						p.add("a bad write was not refused", "PUT %s with If-Match 999: %s; with an empty title: %s", docID, stale, invalid)
						mu.Unlock()
					}
				}
			}()
		}
	}
	wg.Wait()
	// Every other document is voided, on the other instance.
	for d := 0; d < docs; d += 2 {
		docID := fmt.Sprintf("EV_%02d", d)
		resp, err := admin.On(d+1).Do(ctx, http.MethodDelete, "/v1/documents/"+docID, nil, http.Header{"If-Match": {"*"}})
		if err != nil || resp.Status != http.StatusOK {
			t.Fatalf("DELETE %s: %v %s", docID, err, resp)
		}
		acked[docID]++
	}
	p.report(t, "writes")

	// What the table says was committed: each document's versions.
	want := map[string]bool{}
	latest := map[string]int{}
	for d := range docs {
		docID := fmt.Sprintf("EV_%02d", d)
		var v wire.DocumentVersion
		if !get(ctx, &p, admin, "admin", "/v1/documents/"+docID+"/versions/latest", http.StatusOK, &v) {
			continue
		}
		latest[docID] = v.Version
		if v.Version != acked[docID] {
			p.add("versions not acknowledged", "%s is at version %d, %d writes were acknowledged", docID, v.Version, acked[docID])
		}
		for n := 1; n <= v.Version; n++ {
			want[fund.EventID(docID, n)] = true
		}
	}
	p.report(t, "versions")

	// The feed, read through the table up to now (the instances answer only
	// up to their watermark, minutes behind), in pages of 5.
	var events []fund.Event
	var after fund.EventCursor
	until := time.Now().Add(time.Second)
	for {
		page, err := c.Store.EventsAfter(ctx, after, 5, fund.EventFilter{Until: until})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, page.Events...)
		if !page.More {
			break
		}
		after = page.Next
	}
	seen := map[string]bool{}
	last := map[string]int{}
	for i, e := range events {
		if seen[e.ID] {
			t.Errorf("%s is listed twice", e.ID)
		}
		seen[e.ID] = true
		if !want[e.ID] {
			t.Errorf("%s is no committed version", e.ID)
		}
		if e.Data.Version != last[e.Data.DocumentID]+1 {
			t.Errorf("%s follows version %d of its document", e.ID, last[e.Data.DocumentID])
		}
		last[e.Data.DocumentID] = e.Data.Version
		wantType := fund.EventDocumentRestated
		switch {
		case e.Data.Version == 1:
			wantType = fund.EventDocumentCreated
		case e.Data.Version == latest[e.Data.DocumentID] && isEven(e.Data.DocumentID):
			wantType = fund.EventDocumentVoided
		}
		if e.Type != wantType {
			t.Errorf("%s is %s, want %s", e.ID, e.Type, wantType)
		}
		if e.Timestamp.Before(started.Add(-time.Minute)) || e.Timestamp.After(until) {
			t.Errorf("%s committed at %s, outside the test's time", e.ID, e.Timestamp)
		}
		if i > 0 && store.EventOrderSK(e.Timestamp, e.Data.DocumentID, e.Data.Version) <= store.EventOrderSK(events[i-1].Timestamp, events[i-1].Data.DocumentID, events[i-1].Data.Version) {
			t.Errorf("%s is listed after %s", e.ID, events[i-1].ID)
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("the committed version %s has no event", id)
		}
	}
	t.Logf("%d committed versions, %d events", len(want), len(events))

	// Each instance answers the feed up to its watermark, the settle margin
	// behind its clock.
	for i := range c.Instances() {
		for _, who := range []struct{ name, token string }{{"admin", c.AdminToken(t, restateFund)}, {"investor", c.InvestorToken(t, "RINV_1")}} {
			var feed wire.EventFeed
			before := time.Now()
			if !get(ctx, &p, c.Client(who.token).On(i), who.name, "/v1/events", http.StatusOK, &feed) {
				continue
			}
			lo, hi := before.Add(-store.ChangeSettleMargin-time.Second), time.Now().Add(-store.ChangeSettleMargin+time.Second)
			if feed.Watermark.Before(lo) || feed.Watermark.After(hi) || feed.Next == "" {
				p.add("watermark", "instance %d answers %s watermark %s, next %q; want about %s", i, who.name, feed.Watermark, feed.Next, before.Add(-store.ChangeSettleMargin))
			}
			if slices.ContainsFunc(feed.Items, func(e fund.Event) bool { return e.Timestamp.After(feed.Watermark) }) {
				p.add("past the watermark", "instance %d lists events after its watermark %s", i, feed.Watermark)
			}
		}
	}
	p.report(t, "the instances' feeds")
}

// isEven reports whether the document's number (EV_<nn>) is even: those
// documents were voided.
func isEven(docID string) bool {
	var n int
	_, _ = fmt.Sscanf(docID, "EV_%d", &n)
	return n%2 == 0
}
