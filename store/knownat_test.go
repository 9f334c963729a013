package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestVersionAtFindsTheVersionKnownAtAnInstantInConstantReads commits
// nine versions a minute apart on an injected clock and asks for the
// version known at instants before, at, between and after them: each
// answer costs the head, one Query of the instant index and the version's
// record, whatever the version.
func TestVersionAtFindsTheVersionKnownAtAnInstantInConstantReads(t *testing.T) {
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

	check := func(stage string, most int) {
		t.Helper()
		if _, err := e.Store.VersionAt(ctx, "D1", t0.Add(time.Minute-time.Nanosecond)); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Errorf("%s: before the first commit: %v, want ENOTFOUND", stage, err)
		}
		if _, err := e.Store.VersionAt(ctx, "NOPE", now); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Errorf("%s: an unknown document: %v, want ENOTFOUND", stage, err)
		}
		worst := 0.0
		for v := 1; v <= versions; v++ {
			for _, at := range []time.Time{t0.Add(time.Duration(v) * time.Minute), t0.Add(time.Duration(v)*time.Minute + 59*time.Second)} {
				before := e.Store.Consumed()
				got, err := e.Store.VersionAt(ctx, "D1", at)
				if err != nil {
					t.Fatalf("%s: at %s: %v", stage, at, err)
				}
				if got.Version != v || got.CommitID != committed[v].CommitID || !got.CommittedAt.Equal(t0.Add(time.Duration(v)*time.Minute)) || got.Latest != (v == versions) {
					t.Errorf("%s: at %s: %+v, want version %d commit %s", stage, at, got, v, committed[v].CommitID)
				}
				reads := e.Store.Consumed().Sub(before).Total().Read
				worst = max(worst, reads)
				if reads > float64(most) {
					t.Errorf("%s: at %s: %.1f read units, want at most %d", stage, at, reads, most)
				}
			}
		}
		t.Logf("%s: at most %.1f read units", stage, worst)
	}
	check("indexed", 3) // the head, the index's entry, the record
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

// TestARecordKnownAtIsFoundInOneQuery writes five versions of a fund's
// record a minute apart and reads its name as known at each: the latest
// costs the record's BatchGet alone, an earlier one a Query of the
// record's instant index and a GetItem more.
func TestARecordKnownAtIsFoundInOneQuery(t *testing.T) {
	e := fundtest.New(t)
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	var now time.Time
	e.Store.Now = func() time.Time { return now }
	const versions = 5
	for v := 1; v <= versions; v++ {
		now = t0.Add(time.Duration(v) * time.Minute)
		if _, err := e.Store.PutFundRecord(ctx, "FUND_R", fund.FundFields{Name: fmt.Sprintf("R v%d", v), BaseCurrency: "USD"}, nil, "test", now); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(time.Hour)
	check := func(stage string, most int) {
		t.Helper()
		for v := 0; v <= versions; v++ {
			var reads store.Reads
			at := t0.Add(time.Duration(v)*time.Minute + 30*time.Second)
			names, _, err := e.Store.As(fund.KnownAt(fund.Operator.Viewer, at)).Paying(&reads).RecordNames(ctx, []string{"FUND_R"}, nil)
			if err != nil {
				t.Fatalf("%s: version %d: %v", stage, v, err)
			}
			want := fmt.Sprintf("R v%d", v)
			if v == 0 {
				want = ""
			}
			if names["FUND_R"] != want {
				t.Errorf("%s: as known after version %d: %q, want %q", stage, v, names["FUND_R"], want)
			}
			switch {
			case v == versions && reads.N != 1:
				t.Errorf("%s: the latest version: %d requests, want the BatchGet alone", stage, reads.N)
			case reads.N > most:
				t.Errorf("%s: version %d: %d requests, want at most %d", stage, v, reads.N, most)
			}
		}
	}
	check("indexed", 3) // the BatchGet, the index's entry, the version
}
