package positions

import (
	"strconv"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

func TestAnalyzeTotalsEachPositionExactly(t *testing.T) {
	latest := map[string]fund.Document{}
	for _, d := range fund.DemoVersions() {
		latest[d.ID] = d // the last write of a document is its latest version
	}
	// DOC001 is the first call notice (a call and the unfunded commitment
	// after it), DOC002 the recallable distribution (a distribution and the
	// unfunded commitment it raises): called, distributed, unfunded and the
	// counts of calls, distributions and unfunded commitments.
	for doc, want := range map[string]map[string][6]string{
		"DOC001": {"POSITION_1": {"409500.00", "0.00", "1590500.00", "1", "0", "1"}, "POSITION_2": {"206000.00", "0.00", "794000.00", "1", "0", "1"},
			"POSITION_3": {"103000.00", "0.00", "397000.00", "1", "0", "1"}},
		"DOC002": {"POSITION_1": {"0.00", "100000.00", "1690500.00", "0", "1", "1"}, "POSITION_2": {"0.00", "50000.00", "844000.00", "0", "1", "1"},
			"POSITION_3": {"0.00", "25000.00", "422000.00", "0", "1", "1"}},
	} {
		got := Analyze(latest[doc])
		if len(got) != len(want) {
			t.Fatalf("%s: %d positions, want %d", doc, len(got), len(want))
		}
		for _, a := range got {
			g := [6]string{a.TotalCalled.String(), a.TotalDistributed.String(), a.TotalUnfunded.String(),
				strconv.Itoa(a.CapitalCalls), strconv.Itoa(a.Distributions), strconv.Itoa(a.UnfundedCommitments)}
			if w := want[a.PositionID]; g != w {
				t.Errorf("%s %s: totals and counts %v, want %v", doc, a.PositionID, g, w)
			}
		}
	}
	// A position with only a call counts nothing else and totals zero for the rest.
	only := Analyze(fund.Document{Positions: []fund.Position{{ID: "P", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("0.10")}}}})
	if a := only[0]; a.CapitalCalls != 1 || a.Distributions != 0 || !a.TotalDistributed.Equal(fund.MustMoney("0")) || a.TotalCalled.String() != "0.10" {
		t.Fatalf("%+v", a)
	}
}
