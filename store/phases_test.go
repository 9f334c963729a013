package store_test

import (
	"fmt"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// phasesOf is what one write added to each phase's totals.
func phasesOf(t *testing.T, s *store.Store, write func() error) map[store.Phase]store.PhaseTotals {
	t.Helper()
	before := s.WritePhases()
	if err := write(); err != nil {
		t.Fatal(err)
	}
	out := map[store.Phase]store.PhaseTotals{}
	for p, a := range s.WritePhases() {
		out[p] = a.Sub(before[p])
	}
	return out
}

// TestAWriteCountsItsPhases: each phase of a write counts the requests it
// sent and the items they wrote, as the commit protocol says: a version of
// n new positions stages its items alone (the claims it puts stand for
// their ledger entries) and confirms two items a position (registry row,
// investor's note); a restatement of the same positions
// stages their items alone and reads no claim and confirms nothing; one
// that adds a position reads and puts that position's claim only.
func TestAWriteCountsItsPhases(t *testing.T) {
	e := fundtest.New(t)
	const n = 60
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("POS_%02d", i))
	}
	write := func(base int, positions ...string) func() error {
		return func() error {
			_, err := e.Store.Restate(ctx, doc("D1", "F1", base, positions...), nil)
			return err
		}
	}

	v1 := phasesOf(t, e.Store, write(100, ids...))
	// The document and n calls, 25 to a request: the claims this write
	// put stand for its ledger entries.
	if got := v1[store.PhaseStage]; got.Items != 1+n || got.Requests != (1+n+24)/25 {
		t.Errorf("version 1 staged %+v, want %d items in %d requests", got, 1+n, (1+n+24)/25)
	}
	if got := v1[store.PhaseConfirm]; got.Items != 2*n {
		t.Errorf("version 1 confirmed %+v, want %d items", got, 2*n)
	}
	if got := v1[store.PhaseMaterialize]; got.Requests < 2 || got.Items < n {
		t.Errorf("version 1 materialized %+v, want the latest view read and %d items written", got, n)
	}
	for _, p := range []store.Phase{store.PhaseRead, store.PhaseClaim, store.PhaseStage, store.PhaseCommit, store.PhaseConfirm, store.PhaseMaterialize, store.PhaseFinish} {
		if v1[p].Requests == 0 || v1[p].Seconds <= 0 {
			t.Errorf("version 1 spent nothing in phase %s: %+v", p, v1[p])
		}
	}

	v2 := phasesOf(t, e.Store, write(200, ids...))
	if got := v2[store.PhaseStage]; got.Items != 1+n {
		t.Errorf("a restatement of the same positions staged %d items, want %d (no ledger entry)", got.Items, 1+n)
	}
	if got := v2[store.PhaseConfirm]; got.Items != 0 {
		t.Errorf("a restatement of the same positions confirmed %d items, want none", got.Items)
	}
	if got := v2[store.PhaseClaim]; got.Requests != 0 {
		t.Errorf("a restatement of the same positions sent %d requests for their claims, want none", got.Requests)
	}

	v3 := phasesOf(t, e.Store, write(300, append(ids, "POS_NEW")...))
	if got := v3[store.PhaseStage]; got.Items != 1+n+1 {
		t.Errorf("a restatement adding one position staged %d items, want %d (no ledger entry: its claim stands for it)", got.Items, 1+n+1)
	}
	if got := v3[store.PhaseConfirm]; got.Items != 2 {
		t.Errorf("a restatement adding one position confirmed %d items, want 2", got.Items)
	}
	// Its claim alone is read (and found missing), then the fence and the
	// claim are put.
	if got := v3[store.PhaseClaim]; got.Requests != 3 || got.Items != 2 {
		t.Errorf("a restatement adding one position claimed with %+v, want 3 requests, 2 items written", got)
	}

	// A new position of an investor the fund knows: its registry row
	// alone is written, after a read that finds the investor's note.
	v4doc := doc("D1", "F1", 400, append(ids, "POS_NEW")...)
	v4doc.Positions = append(v4doc.Positions, fund.Position{ID: "POS_MORE", InvestorID: "INV_00",
		CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("1.00")}})
	v4 := phasesOf(t, e.Store, func() error { _, err := e.Store.Restate(ctx, v4doc, nil); return err })
	if got := v4[store.PhaseConfirm]; got.Requests != 2 || got.Items != 2 {
		t.Errorf("a new position of a known investor confirmed with %+v, want 2 requests: the note read (1 item), the registry row written (1)", got)
	}

	// The ledger still names the document for every position it reported.
	for _, pos := range []string{"POS_00", "POS_NEW", "POS_MORE"} {
		_, docs, err := e.Store.PositionDocuments(ctx, pos, 10)
		if err != nil || len(docs) != 1 || docs[0] != "D1" {
			t.Errorf("the ledger of %s names %v (%v), want D1", pos, docs, err)
		}
	}
}
