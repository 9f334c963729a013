package positions_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/positions/positionstest"
)

// TestATransferMovesTheDemoPositionsBalancesOnItsDate: POSITION_3 on
// 2025-12-31 holds what the demo's comment works out (commitment 500,000,
// unfunded 269,000, paid in 256,000, distributions 25,000 + 13,750 gross
// with 225 withheld, 25,000 recallable, the restated Q4 statement's NAV
// 222,500), and 40% of it is each of those times 0.4 exactly.
func TestATransferMovesTheDemoPositionsBalancesOnItsDate(t *testing.T) {
	ctx := context.Background()
	m := positionstest.NewMemory(clock)
	for _, d := range fund.DemoVersions() {
		d.Normalize()
		m.Restate(d)
	}
	ps := positions.NewAnalytics(m)
	h, err := ps.Holding(ctx, fund.Operator, "POSITION_3", fund.MustDate("2025-12-31"))
	if err != nil {
		t.Fatal(err)
	}
	got := func(b fund.Balances) string {
		return fmt.Sprint(b.Commitment, b.Unfunded, b.PaidIn, b.Distributed, b.Withholding, b.DistributedNet, b.Recallable, b.CapitalAccount)
	}
	if want := "500000.00 269000.00 256000.00 38750.00 225.00 38525.00 25000.00 222500.00"; got(h.Balances) != want {
		t.Errorf("POSITION_3 holds %s, want %s", got(h.Balances), want)
	}
	if h.NAV.Status != positions.NAVStatement || h.NAV.Statement == nil || h.NAV.Statement.DocumentID != "DOC007" || h.NAV.Statement.Version != 2 {
		t.Errorf("its capital account rests on %+v, want DOC007's restated statement", h.NAV)
	}
	if h.FundID != "FUND_A" || h.InvestorID != "INVESTOR_3" || h.Currency != "USD" {
		t.Errorf("identity %s %s %s", h.FundID, h.InvestorID, h.Currency)
	}

	tr := fund.Transfer{TransferorPositionID: "POSITION_3", PerformanceTreatment: fund.TreatmentInherit,
		Transferees: []fund.Transferee{{PositionID: "POSITION_4", InvestorID: "INVESTOR_4", Share: share("0.4")}}}
	a, err := tr.Split(h.Balances)
	if err != nil {
		t.Fatal(err)
	}
	if want := "200000.00 107600.00 102400.00 15500.00 90.00 15410.00 10000.00 89000.00"; got(a.Moved[0]) != want || len(a.Residuals) != 0 {
		t.Errorf("40%% moves %s (residuals %v), want %s exactly", got(a.Moved[0]), a.Residuals, want)
	}
	if want := "300000.00 161400.00 153600.00 23250.00 135.00 23115.00 15000.00 133500.00"; got(a.Kept) != want {
		t.Errorf("the transferor keeps %s, want %s", got(a.Kept), want)
	}

	// Before its first document, and to another investor, the position
	// holds nothing to transfer.
	for _, c := range []struct {
		rd   fund.Read
		asOf string
	}{{fund.Operator, "2025-07-14"}, {fund.Latest(fund.Viewer{Investor: "INVESTOR_1"}), "2025-12-31"}} {
		if _, err := ps.Holding(ctx, c.rd, "POSITION_3", fund.MustDate(c.asOf)); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Errorf("POSITION_3 on %s read by %+v: %v, want not found", c.asOf, c.rd.Viewer, err)
		}
	}
}

func share(s string) *fund.Share { v := fund.MustShare(s); return &v }
