package store_test

import (
	"errors"
	"math/bits"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestVersionAtFindsTheVersionKnownAtAnInstantInLogarithmicReads commits
// nine versions a minute apart on an injected clock and asks for the
// version known at instants before, at, between and after them.
func TestVersionAtFindsTheVersionKnownAtAnInstantInLogarithmicReads(t *testing.T) {
	e := fundtest.New(t)
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	var now time.Time
	e.Store.Now = func() time.Time { return now }
	const versions = 9
	committed := make([]fund.Document, versions+1)
	for v := 1; v <= versions; v++ {
		now = t0.Add(time.Duration(v) * time.Minute)
		w, err := e.Store.Write(ctx, doc("D1", "F1", 100*v, "POS_1"), nil)
		if err != nil || w.Document.Version != v {
			t.Fatalf("version %d: %+v %v", v, w.Document.Version, err)
		}
		committed[v] = w.Document
	}
	now = t0.Add(time.Hour)

	if _, err := e.Store.VersionAt(ctx, "D1", t0.Add(time.Minute-time.Nanosecond)); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Errorf("before the first commit: %v, want ENOTFOUND", err)
	}
	if _, err := e.Store.VersionAt(ctx, "NOPE", now); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Errorf("an unknown document: %v, want ENOTFOUND", err)
	}
	most := 2 + bits.Len(uint(versions-1)) // the head, ⌈log₂ n⌉ events, the record
	for v := 1; v <= versions; v++ {
		for _, at := range []time.Time{t0.Add(time.Duration(v) * time.Minute), t0.Add(time.Duration(v)*time.Minute + 59*time.Second)} {
			before := e.Store.Consumed()
			got, err := e.Store.VersionAt(ctx, "D1", at)
			if err != nil {
				t.Fatalf("at %s: %v", at, err)
			}
			if got.Version != v || got.CommitID != committed[v].CommitID || !got.CommittedAt.Equal(t0.Add(time.Duration(v)*time.Minute)) || got.Latest != (v == versions) {
				t.Errorf("at %s: %+v, want version %d commit %s", at, got, v, committed[v].CommitID)
			}
			if reads := e.Store.Consumed().Sub(before).Total().Read; reads > float64(most) {
				t.Errorf("at %s: %.1f read units, want at most %d", at, reads, most)
			}
		}
	}
}

// TestVersionAtNamesTheBackfillWhenAVersionHasNoEvent: a version committed
// before the feed has no event, and so no commit instant, until the
// backfill writes it.
func TestVersionAtNamesTheBackfillWhenAVersionHasNoEvent(t *testing.T) {
	e := fundtest.New(t)
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	var now time.Time
	e.Store.Now = func() time.Time { return now }
	for v := 1; v <= 2; v++ {
		now = t0.Add(time.Duration(v) * time.Minute)
		if _, err := e.Store.Write(ctx, doc("D1", "F1", 100*v, "POS_1"), nil); err != nil {
			t.Fatal(err)
		}
	}
	e.Delete(t, store.EventPK("D1"), store.EventSK(1))
	if _, err := e.Store.VersionAt(ctx, "D1", t0.Add(90*time.Second)); !errors.Is(err, store.ErrNoCommitInstant) {
		t.Errorf("a version without its event: %v, want ErrNoCommitInstant", err)
	}
}

// TestVersionsCommittedInTheSameMillisecondAreKnownOneAfterTheOther: the
// clock reads the same instant for two commits; the second is stamped a
// millisecond after the first (plan.go), so knownAt tells them apart.
func TestVersionsCommittedInTheSameMillisecondAreKnownOneAfterTheOther(t *testing.T) {
	e := fundtest.New(t)
	at := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	e.Store.Now = func() time.Time { return at }
	for v := 1; v <= 2; v++ {
		if _, err := e.Store.Write(ctx, doc("D1", "F1", 100*v, "POS_1"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		at   time.Time
		want int
	}{{at, 1}, {at.Add(time.Millisecond - time.Nanosecond), 1}, {at.Add(time.Millisecond), 2}} {
		got, err := e.Store.VersionAt(ctx, "D1", c.at)
		if err != nil || got.Version != c.want {
			t.Errorf("at %s: version %d (%v), want %d", c.at.Format(time.RFC3339Nano), got.Version, err, c.want)
		}
	}
}
