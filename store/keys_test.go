package store

import (
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

func TestCapitalRangeHoldsTheCapitalItemsAndTheHead(t *testing.T) {
	clo, chi := CapitalRange()
	// Statements (CAPITAL_ACCOUNT#) are in it too; Capital filters them out.
	for _, sk := range []string{HeadSK, CapitalActivityLatestSK, PositionItemSK(fund.CapitalCall, "P1"), PositionItemSK(fund.Statement, "P1")} {
		if sk < clo || sk > chi {
			t.Errorf("%s outside the capital range", sk)
		}
	}
	for _, sk := range []string{PositionItemSK(fund.Distribution, "P1"), DocumentLatestSK, PositionItemSK(fund.UnfundedCommitment, "P1")} {
		if sk >= clo && sk <= chi {
			t.Errorf("%s inside the capital range", sk)
		}
	}
}

func TestStatementPrefixSelectsStatementsOnly(t *testing.T) {
	for _, k := range fund.ItemKinds {
		if got := strings.HasPrefix(PositionItemSK(k, "P1"), StatementPrefix); got != (k == fund.Statement) {
			t.Errorf("the statement prefix selects %s: %v", PositionItemSK(k, "P1"), got)
		}
	}
	for _, sk := range []string{HeadSK, CapitalActivityLatestSK, DocumentLatestSK} {
		if strings.HasPrefix(sk, StatementPrefix) {
			t.Errorf("the statement prefix selects %s", sk)
		}
	}
}

// TestHistoryRecordsSortAfterTheLatestView checks the keys that keep a
// read of the latest view from reading history: every key the latest view
// has sorts below HistoryStart, every history record's above it, and a
// range of versions holds exactly those versions, of its prefix only.
func TestHistoryRecordsSortAfterTheLatestView(t *testing.T) {
	latest := []string{HeadSK, DocumentLatestSK, CapitalActivityLatestSK}
	for _, k := range fund.ItemKinds {
		latest = append(latest, PositionItemSK(k, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"))
	}
	for _, sk := range latest {
		if sk >= HistoryStart {
			t.Errorf("latest-view key %s sorts at or after HistoryStart", sk)
		}
	}
	for _, sk := range []string{DocumentVersionSK(1), ActivityVersionSK(1), DocumentVersionSK(MaxVersion)} {
		if sk < HistoryStart {
			t.Errorf("history key %s sorts before HistoryStart", sk)
		}
	}
	lo, hi := VersionRange(DocumentVersionPrefix, 9, 10)
	for v, in := range map[int]bool{8: false, 9: true, 10: true, 11: false, 100: false} {
		if sk := DocumentVersionSK(v); (sk >= lo && sk <= hi) != in {
			t.Errorf("%s in [%s, %s]: %v, want %v", sk, lo, hi, !in, in)
		}
		if sk := ActivityVersionSK(v); sk >= lo && sk <= hi {
			t.Errorf("the document range selects %s", sk)
		}
	}
	for sk, want := range map[string]int{DocumentVersionSK(42): 42, ActivityVersionSK(7): 7} {
		if v, ok := VersionOfSK(sk); !ok || v != want {
			t.Errorf("VersionOfSK(%s) = %d, %v; want %d", sk, v, ok, want)
		}
	}
	for _, sk := range []string{DocumentLatestSK, CapitalActivityLatestSK, HeadSK, PositionItemSK(fund.CapitalCall, "P1")} {
		if v, ok := VersionOfSK(sk); ok {
			t.Errorf("VersionOfSK(%s) = %d, want none", sk, v)
		}
	}
}

// TestACursorPassesWhatTheFeedReadsNoMore holds fund.EventCursor.Passed to
// the order of the feed's keys: an event is passed exactly when its key is
// below the cursor's lower bound, the first key a read after the cursor
// returns.
func TestACursorPassesWhatTheFeedReadsNoMore(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 500, time.UTC)
	instants := []time.Time{at.Add(-time.Nanosecond), at, at.In(time.FixedZone("X", 3600)), at.Add(time.Nanosecond), at.Add(time.Hour)}
	docs := []string{"A", "A-1", "A.b", "A:c", "A_d", "AB", "B", "a", "0"}
	var cursors []fund.EventCursor
	var events []fund.Event
	for _, i := range instants {
		cursors = append(cursors, fund.EventCursor{At: i})
		for _, d := range docs {
			for _, v := range []int{1, 2, 9, 10, 11} {
				cursors = append(cursors, fund.EventCursor{At: i, DocumentID: d, Version: v})
				events = append(events, fund.Event{Timestamp: i, Data: fund.EventData{DocumentID: d, Version: v}})
			}
		}
	}
	for _, c := range cursors {
		for _, e := range events {
			key := EventOrderSK(e.Timestamp, e.Data.DocumentID, e.Data.Version)
			if got, want := c.Passed(&e), key < afterSK(c); got != want {
				t.Fatalf("cursor %q passed the event keyed %s: %v, the key says %v", c, key, got, want)
			}
		}
	}
}
