package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// revision is version v of a document restated often: every fifth version
// moves its as-of date back a quarter, every fourth has no capital
// activity, and POS_2 is reported by the even versions only.
func revision(v int) fund.Document {
	d := fund.Document{ID: "H1", CreatedBy: fmt.Sprintf("admin-%d", v%3),
		DocumentFields: fund.DocumentFields{FundID: "F1", Kind: fund.KindCapitalCallNotice, Title: fmt.Sprintf("Call no. 4, revision %d", v), AsOf: fund.MustDate("2025-06-30")}}
	if v%5 == 0 {
		d.AsOf = fund.MustDate("2025-03-31")
	}
	if v%4 != 0 {
		d.CapitalActivity = &fund.CapitalActivity{Amount: fund.MustMoney(fmt.Sprintf("%d.50", 1000+v)),
			ActivityDetails: fund.ActivityDetails{Description: fmt.Sprintf("call, revision %d", v)}}
	}
	d.Positions = append(d.Positions, fund.Position{ID: "POS_1", InvestorID: "INV_1", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(fmt.Sprintf("%d.00", 100+v))}})
	if v%2 == 0 {
		d.Positions = append(d.Positions, fund.Position{ID: "POS_2", InvestorID: "INV_2", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("7.00")}})
	}
	return d
}

// TestRecentVersionsStayCompact restates a document 30 times with
// realistic, different titles and descriptions: the head then carries its
// version's and 20 earlier versions' records (no more), and stays within
// one read unit (4 KB) with room to spare, so the GetItem of the head that
// authorizes every document route costs what it did before it carried
// them.
func TestRecentVersionsStayCompact(t *testing.T) {
	e := fundtest.New(t)
	for v := 1; v <= 30; v++ {
		d := revision(v)
		d.Title = fmt.Sprintf("Capital call notice no. %d of Fund A: Company %c follow-on, Q%d 2025 management fee and expenses", v, 'A'+v%26, 1+v%4)
		if d.CapitalActivity != nil {
			d.CapitalActivity.Description = fmt.Sprintf("Call no. %d: investment in Company %c (%d%% of commitments), management fee, organisation expenses", v, 'A'+v%26, v)
		}
		if _, err := e.Store.Restate(ctx, d, nil); err != nil {
			t.Fatal(err)
		}
	}
	head := readHead(t, e, "H1")
	av, err := head.MarshalDynamoItem()
	if err != nil {
		t.Fatal(err)
	}
	size := store.ItemSize(av)
	t.Logf("the head is %d bytes, %d of them its recent versions", size, len(head.Recent))
	if size > 2048 {
		t.Errorf("the head takes %d bytes (recent versions %d); want at most 2 KB", size, len(head.Recent))
	}
	before := e.Store.Consumed()
	if _, err := e.Store.DocumentFund(ctx, "H1"); err != nil {
		t.Fatal(err)
	}
	if read := e.Store.Consumed().Sub(before).Total().Read; read != 1 {
		t.Errorf("the head's GetItem reads %.1f units, want 1", read)
	}
	snap, err := e.Store.As(fund.Operator).Overview(ctx, "H1")
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	for _, h := range snap.History {
		versions = append(versions, h.Version)
		if !strings.HasPrefix(h.Title, fmt.Sprintf("Capital call notice no. %d of", h.Version)) {
			t.Errorf("version %d is titled %q", h.Version, h.Title)
		}
	}
	slices.Sort(versions)
	if len(versions) != store.OverviewHistory || versions[0] != 10 || versions[len(versions)-1] != 29 {
		t.Errorf("the overview lists versions %v, want 10 to 29", versions)
	}
}
