package positions

import (
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

func TestAnalyzeTotalsEachPositionExactly(t *testing.T) {
	var doc fund.Document
	for _, d := range fund.DemoVersions() {
		if d.ID == "DOC001" {
			doc = d // the last DOC001 write is its latest version
		}
	}
	got := Analyze(doc)
	want := map[string][3]string{"POSITION_1": {"500000.00", "75000.00", "1500000.00"}, "POSITION_2": {"300000.00", "45000.00", "850000.00"}}
	if len(got) != len(want) {
		t.Fatalf("%d positions, want %d", len(got), len(want))
	}
	for _, a := range got {
		w := want[a.PositionID]
		if a.TotalCalled.String() != w[0] || a.TotalDistributed.String() != w[1] || a.TotalUnfunded.String() != w[2] ||
			a.CapitalCalls != 1 || a.Distributions != 1 || a.UnfundedCommitments != 1 {
			t.Errorf("%s: %+v, want totals %v and one of each", a.PositionID, a, w)
		}
	}
	// A position with only a call counts nothing else and totals zero for the rest.
	only := Analyze(fund.Document{Positions: []fund.Position{{ID: "P", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("0.10")}}}})
	if a := only[0]; a.CapitalCalls != 1 || a.Distributions != 0 || !a.TotalDistributed.Equal(fund.MustMoney("0")) || a.TotalCalled.String() != "0.10" {
		t.Fatalf("%+v", a)
	}
}
