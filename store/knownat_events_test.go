package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestDocumentVersionsBetweenListsAWindowInConstantReads: the versions
// committed in (from, to] are listed exactly, in version order, for every
// window over a document of 9 versions, each for at most the head's
// GetItem, a Query of the instant index for each end and one Query of the
// window's events, and at most limit+1 of them.
func TestDocumentVersionsBetweenListsAWindowInConstantReads(t *testing.T) {
	e := fundtest.New(t)
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	var now time.Time
	e.Store.Now = func() time.Time { return now }
	const versions = 9
	for v := 1; v <= versions; v++ {
		now = t0.Add(time.Duration(v) * time.Minute)
		if _, err := e.Store.Write(ctx, doc("D1", "F1", 100*v, "POS_1"), nil); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(time.Hour)
	at := func(minutes int) time.Time { return t0.Add(time.Duration(minutes)*time.Minute + 30*time.Second) }
	// The head, a Query of the instant index for each end and the Query
	// of the events (a Query of at most 10 small events costs one read
	// unit, strongly consistent).
	most := 1 + 2 + 1
	for from := -1; from <= versions; from++ {
		for to := from + 1; to <= versions+1; to++ {
			before := e.Store.Consumed()
			got, err := e.Store.DocumentVersionsBetween(ctx, "D1", at(from), at(to), 50)
			if err != nil {
				t.Fatalf("(%d, %d]: %v", from, to, err)
			}
			var listed []int
			for _, ev := range got {
				listed = append(listed, ev.Data.Version)
				if !ev.Timestamp.Equal(t0.Add(time.Duration(ev.Data.Version) * time.Minute)) {
					t.Errorf("version %d committed at %s", ev.Data.Version, ev.Timestamp)
				}
			}
			var want []int
			for v := max(from+1, 1); v <= min(to, versions); v++ {
				want = append(want, v)
			}
			if !slices.Equal(listed, want) {
				t.Errorf("(%d, %d]: versions %v, want %v", from, to, listed, want)
			}
			if reads := e.Store.Consumed().Sub(before).Total().Read; reads > float64(most) {
				t.Errorf("(%d, %d]: %.1f read units, want at most %d", from, to, reads, most)
			}
		}
	}
	if got, err := e.Store.DocumentVersionsBetween(ctx, "D1", at(0), at(versions), 3); err != nil || len(got) != 4 || got[0].Data.Version != 1 || got[3].Data.Version != 4 {
		t.Errorf("limit 3: %d events (%v), want versions 1 to 4", len(got), err)
	}
	if got, err := e.Store.DocumentVersionsBetween(ctx, "NOPE", at(0), at(versions), 3); err != nil || len(got) != 0 {
		t.Errorf("an unknown document: %v %v, want none", got, err)
	}
}

// TestFundChangedSinceReadsTheFundsFeedMonthByMonth: a fund's documents
// changed since an instant when a version was committed after it, found
// in the feed's partition of a later UTC month too; an instant more than
// MaxChangedSinceMonths months back counts as changed without a read.
func TestFundChangedSinceReadsTheFundsFeedMonthByMonth(t *testing.T) {
	e := fundtest.New(t)
	march := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	now := march
	e.Store.Now = func() time.Time { return now }
	if _, err := e.Store.Write(ctx, doc("D1", "F1", 100, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	now = march.Add(2 * time.Minute) // 1 April
	changed := func(fundID string, at time.Time) bool {
		t.Helper()
		c, err := e.Store.FundChangedSince(ctx, fundID, at)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// The feed is a secondary index: poll for the commit to show.
	for deadline := time.Now().Add(10 * time.Second); !changed("F1", march.Add(-time.Second)); {
		if time.Now().After(deadline) {
			t.Fatal("the commit at 23:59 never showed as a change since 23:58:59")
		}
	}
	if changed("F1", march) || changed("F2", march.Add(-time.Hour)) {
		t.Error("a change since the commit's own instant, or in a fund without documents")
	}
	now = march.Add(3 * time.Minute)
	if _, err := e.Store.Write(ctx, doc("D1", "F1", 200, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !changed("F1", march); {
		if time.Now().After(deadline) {
			t.Fatal("the commit of 1 April never showed as a change since 31 March")
		}
	}
	now = march.AddDate(0, store.MaxChangedSinceMonths+1, 0)
	before := e.Store.Consumed()
	if !changed("F2", march) {
		t.Error("an instant more than MaxChangedSinceMonths back: not changed")
	}
	if reads := e.Store.Consumed().Sub(before).Total().Read; reads != 0 {
		t.Errorf("an instant more than MaxChangedSinceMonths back read %.1f units, want none", reads)
	}
}
