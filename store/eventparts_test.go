package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/guregu/dynamo/v2"
)

// randomID is an ID of n characters drawn at random from the ID alphabet:
// the least compressible IDs a document may carry.
func randomID(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	b[0] = 'P' // an ID starts with a letter or digit
	return string(b)
}

func randomCall(id, fundID string, positions int) fund.Document {
	d := fund.Document{ID: id, DocumentFields: fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalCallNotice, Title: "Call " + id, AsOf: fund.MustDate("2025-06-30")}}
	for i := range positions {
		d.Positions = append(d.Positions, fund.Position{ID: randomID(fund.MaxIDLength), InvestorID: randomID(fund.MaxIDLength),
			CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(fmt.Sprintf("%d.00", 100+i))}})
	}
	return d
}

// TestTheLargestEventFitsItsItems holds the split of an event's touched
// positions to DynamoDB's item limit at the largest version the limits
// admit: a restatement of DefaultMaxPositions positions with random IDs of
// the longest length replacing as many, each touched position named twice.
// Inline, it would not fit an item; its largest part is written to the table.
func TestTheLargestEventFitsItsItems(t *testing.T) {
	before, after := randomCall("D1", "F1", fund.DefaultMaxPositions), randomCall("D1", "F1", fund.DefaultMaxPositions)
	after.CommitID = "2-abc"
	before.SortPositions()
	after.SortPositions()
	c := changesOf(&before, &after)
	tt, err := touchedOf(&after, &before, &c, maxTouchedInline)
	if err != nil {
		t.Fatal(err)
	}
	if tt.inline != nil || len(tt.parts) < 2 {
		t.Fatalf("%d positions' event kept inline (%d bytes) or in %d part(s): it must be split", 2*fund.DefaultMaxPositions, len(tt.inline), len(tt.parts))
	}
	total := 0
	for _, p := range tt.parts {
		total += len(p)
	}
	if total <= 400_000 {
		t.Fatalf("the touched positions take %d bytes: not the worst case this test means to hold", total)
	}
	ctx := context.Background()
	s := NewStore(NewDB(dynamotest.Shared().Config()), dynamotest.UniqueName(t, "eventparts"))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.table.Put(tt.partItems(&after)[0]).Run(ctx); err != nil {
		t.Fatalf("the largest part of the largest event: %v", err)
	}
}

// TestAnEventSplitIntoPartsReadsWhole writes versions whose events do not
// fit their item (a part size of 1 KB stands for the item limit) and reads
// them back through every read of events, and checks that a discarded
// version leaves no part behind.
func TestAnEventSplitIntoPartsReadsWhole(t *testing.T) {
	ctx := context.Background()
	s := NewStore(NewDB(dynamotest.Shared().Config()), dynamotest.UniqueName(t, "eventparts"))
	s.touchedPartBytes = 1024
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	v1, v2 := randomCall("D1", "F1", 40), randomCall("D1", "F1", 40)
	for _, d := range []fund.Document{v1, v2} {
		if _, err := s.Restate(ctx, d, nil); err != nil {
			t.Fatal(err)
		}
	}
	var raw eventItem
	if err := s.table.Get(AttrPK, EventPK("D1")).Range(AttrSK, dynamo.Equal, EventSK(2)).Consistent(true).One(ctx, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.TouchedParts < 2 || len(raw.Touched) != 0 || raw.CommitID == "" {
		t.Fatalf("the event of version 2 was not split: %d parts, %d bytes inline, commit %q", raw.TouchedParts, len(raw.Touched), raw.CommitID)
	}
	ids := func(ds ...fund.Document) []string {
		var out []string
		for _, d := range ds {
			for _, p := range d.Positions {
				out = append(out, p.ID)
			}
		}
		slices.Sort(out)
		return out
	}
	touchedIDs := func(e fund.Event) []string {
		out := make([]string, len(e.Data.Positions))
		for i, p := range e.Data.Positions {
			out[i] = p.PositionID
		}
		return out
	}
	want := map[int][]string{1: ids(v1), 2: ids(v1, v2)}
	for v, w := range want {
		e, err := s.Event(ctx, "D1", v)
		if err != nil {
			t.Fatal(err)
		}
		if got := touchedIDs(e); !slices.Equal(got, w) {
			t.Fatalf("Event of version %d names %d positions, want %d", v, len(got), len(w))
		}
	}
	page, err := s.EventsAfter(ctx, fund.EventCursor{}, 10, fund.EventFilter{Until: s.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 2 || !slices.Equal(touchedIDs(page.Events[1]), want[2]) {
		t.Fatalf("the feed read %d events, or version 2's positions differ", len(page.Events))
	}
	evs, err := s.DocumentVersionsBetween(ctx, "D1", time.Time{}, s.Now().Add(time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || !slices.Equal(touchedIDs(evs[1]), want[2]) {
		t.Fatalf("DocumentVersionsBetween read %d events, or version 2's positions differ", len(evs))
	}

	// A version staged and then discarded (its flip lost) leaves no part.
	v3 := randomCall("D1", "F1", 40)
	v3.ID, v3.Version, v3.CommitID = "D2", 1, "1-discarded"
	v3.SortPositions()
	c := changesOf(nil, &v3)
	tt, err := touchedOf(&v3, nil, &c, s.partBytes())
	if err != nil || len(tt.parts) < 2 {
		t.Fatalf("%d parts, %v", len(tt.parts), err)
	}
	if err := s.stage(ctx, &v3, tt, nil); err != nil {
		t.Fatal(err)
	}
	s.discardStaged(ctx, &v3, tt)
	var left []eventPartItem
	if err := s.table.Get(AttrPK, EventPartPK("D2", "1-discarded")).Consistent(true).All(ctx, &left); err != nil || len(left) != 0 {
		t.Fatalf("a discarded version left %d parts (%v)", len(left), err)
	}
}
