package multitest

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// TestCursorsContinueAcrossInstancesWithoutACursorKey: two instances on one
// table, neither given FUNDSVC_CURSOR_KEY, seal cursors with the key kept
// in the table: page 1 read from instance A continues, with its cursor, on
// instance B, and B's cursor on A, to the last page.
func TestCursorsContinueAcrossInstancesWithoutACursorKey(t *testing.T) {
	ctx := context.Background()
	c := Start(t, Options{Instances: 2, Env: map[string]string{"FUNDSVC_CURSOR_KEY": ""}})
	admin := c.Client(c.AdminToken(t, "FUND_K"))
	doc := document("FUND_K", "cursor key", "2026-01-01")
	for _, p := range []string{"KP_1", "KP_2", "KP_3"} {
		doc.Positions = append(doc.Positions, fund.Position{ID: p, InvestorID: "KI_" + p, CapitalCall: callOf(100)})
	}
	if resp, err := admin.On(0).PutDocument(ctx, "KDOC", doc); err != nil || resp.Status != http.StatusCreated {
		t.Fatalf("PUT on instance 0: %v %s", err, resp)
	}

	var got []string
	cursor := ""
	for page := 0; page < 3; page++ {
		path := "/v1/funds/FUND_K/positions?limit=1"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var p wire.Page[wire.RegisteredPosition]
		resp, err := admin.On(page).GetJSON(ctx, path, &p)
		if err != nil || resp.Status != http.StatusOK || resp.Instance != page%2 || len(p.Items) != 1 {
			t.Fatalf("page %d on instance %d with the other instance's cursor: %v %s", page+1, page%2, err, resp)
		}
		got = append(got, p.Items[0].PositionID)
		cursor = p.Next
	}
	if cursor != "" || got[0] != "KP_1" || got[1] != "KP_2" || got[2] != "KP_3" {
		t.Fatalf("pages %v, next %q; want KP_1, KP_2, KP_3 and no next", got, cursor)
	}
}
