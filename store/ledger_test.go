package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestCommitsWriteThePositionLedger: every committed version's positions
// get their ledger entry, which stays when a restatement drops the position
// or a void withdraws every one, and PositionKnownAt reads each document at
// its version known at an instant.
func TestCommitsWriteThePositionLedger(t *testing.T) {
	e := fundtest.New(t)
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	var now time.Time
	e.Store.Now = func() time.Time { return now }
	at := func(minutes int) time.Time { return t0.Add(time.Duration(minutes) * time.Minute) }
	write := func(minute int, d fund.Document, ifMatch *int) {
		t.Helper()
		now = at(minute)
		if _, err := e.Store.Write(ctx, d, ifMatch); err != nil {
			t.Fatal(err)
		}
	}
	one, two := 1, 2
	write(1, doc("D1", "F1", 100, "POS_1", "POS_2"), nil)
	write(2, doc("D1", "F1", 200, "POS_1"), &one) // drops POS_2
	write(3, doc("D2", "F1", 300, "POS_2"), nil)
	now = at(4)
	if _, err := e.Store.Void(ctx, fund.Document{ID: "D1"}, two); err != nil {
		t.Fatal(err)
	}
	now = at(10)

	claim, docs, err := e.Store.PositionDocuments(ctx, "POS_2", 10)
	if err != nil {
		t.Fatal(err)
	}
	if claim.FundID != "F1" || claim.InvestorID != "INV_2" || !slices.Equal(docs, []string{"D1", "D2"}) {
		t.Errorf("POS_2's ledger: %+v %v, want F1/INV_2 and [D1 D2] (D1 dropped it, but reported it once)", claim, docs)
	}
	if _, docs, _ := e.Store.PositionDocuments(ctx, "POS_1", 10); !slices.Equal(docs, []string{"D1"}) {
		t.Errorf("POS_1's ledger after D1's void: %v, want [D1]", docs)
	}
	if _, docs, _ := e.Store.PositionDocuments(ctx, "POS_2", 1); len(docs) != 2 {
		t.Errorf("a ledger read with limit 1: %v, want 2 documents (one more than the limit: more exist)", docs)
	}
	if claim, docs, _ := e.Store.PositionDocuments(ctx, "NOPE", 10); claim.PositionID != "" || len(docs) != 0 {
		t.Errorf("an unknown position: %+v %v, want no claim and no documents", claim, docs)
	}

	amounts := func(doc, pos string, when time.Time) []string {
		t.Helper()
		items, err := e.Store.PositionKnownAt(ctx, doc, pos, when)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			out = append(out, it.Amount.String())
		}
		return out
	}
	for _, c := range []struct {
		doc, pos string
		at       time.Time
		want     []string
	}{
		{"D1", "POS_2", at(1).Add(-time.Nanosecond), nil}, // D1 did not exist yet
		{"D1", "POS_2", at(1), []string{"101.00"}},        // version 1
		{"D1", "POS_2", at(2).Add(-time.Second), []string{"101.00"}},
		{"D1", "POS_2", at(2), nil},                // version 2 dropped it
		{"D1", "POS_1", at(2), []string{"200.00"}}, // version 2
		{"D1", "POS_1", at(4), nil},                // the void
		{"D2", "POS_2", at(3), []string{"300.00"}},
		{"D2", "POS_2", at(2), nil},
	} {
		if got := amounts(c.doc, c.pos, c.at); !slices.Equal(got, c.want) {
			t.Errorf("%s's %s known at %s: %v, want %v", c.doc, c.pos, c.at.Format(time.TimeOnly), got, c.want)
		}
	}
	// The ledger entries are keyed where the claim is, and the claim
	// stands for the entry of D1, whose write put it.
	e.Delete(t, store.PositionClaimPK("POS_2"), store.PositionLedgerSK("D2"))
	e.Delete(t, store.PositionClaimPK("POS_2"), store.PositionLedgerSK("D1"))
	if _, docs, _ := e.Store.PositionDocuments(ctx, "POS_2", 10); !slices.Equal(docs, []string{"D1"}) {
		t.Errorf("after deleting D2's entry: %v, want [D1]", docs)
	}
}
