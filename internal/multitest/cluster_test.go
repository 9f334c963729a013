package multitest

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/harness"
	"github.com/fundsvc/fundsvc/wire"
)

// TestCluster checks the harness itself: separate processes on loopback
// ports, one token and one cursor good on every instance, requests spread
// round robin, and nothing left running once the cluster is stopped.
func TestCluster(t *testing.T) {
	ctx := context.Background()
	c := Start(t, Options{Instances: 3})

	ports := map[string]bool{}
	pids := map[int]bool{}
	for i := range c.Instances() {
		u, err := url.Parse(c.BaseURL(i))
		if err != nil || u.Hostname() != "127.0.0.1" {
			t.Errorf("instance %d listens on %s, want 127.0.0.1 only", i, c.BaseURL(i))
		}
		ports[u.Port()] = true
		pids[c.Pid(i)] = true
	}
	if len(ports) != 3 || len(pids) != 3 {
		t.Fatalf("3 instances on %d ports in %d processes, want 3 of each", len(ports), len(pids))
	}

	admin := c.Client(c.AdminToken(t, "FUND_H"))
	doc := document("FUND_H", "harness", "2026-01-01")
	for _, p := range []string{"HP_1", "HP_2", "HP_3"} {
		doc.Positions = append(doc.Positions, fund.Position{ID: p, InvestorID: "HI_" + p, CapitalCall: callOf(100)})
	}
	resp, err := admin.On(0).PutDocument(ctx, "HDOC", doc)
	if err != nil || resp.Status != http.StatusCreated || resp.Version() != 1 {
		t.Fatalf("PUT on instance 0: %v %s", err, resp)
	}

	// One token, every instance; round robin reaches each in turn.
	seen := map[int]bool{}
	for range 2 * c.Instances() {
		var o wire.Overview
		resp, err := admin.GetJSON(ctx, "/v1/documents/HDOC", &o)
		if err != nil || resp.Status != http.StatusOK || o.Version != 1 {
			t.Fatalf("GET overview: %v %s", err, resp)
		}
		seen[resp.Instance] = true
	}
	if len(seen) != c.Instances() {
		t.Errorf("round robin reached instances %v, want all %d", seen, c.Instances())
	}

	// A cursor issued by one instance continues on another.
	var first wire.Page[wire.RegisteredPosition]
	if resp, err := admin.On(1).GetJSON(ctx, "/v1/funds/FUND_H/positions?limit=1", &first); err != nil || resp.Status != http.StatusOK || first.Next == "" {
		t.Fatalf("first page on instance 1: %v %s", err, resp)
	}
	var second wire.Page[wire.RegisteredPosition]
	resp, err = admin.On(2).GetJSON(ctx, "/v1/funds/FUND_H/positions?limit=1&cursor="+url.QueryEscape(first.Next), &second)
	if err != nil || resp.Status != http.StatusOK || len(second.Items) != 1 || second.Items[0].PositionID != "HP_2" {
		t.Fatalf("second page on instance 2 with instance 1's cursor: %v %s", err, resp)
	}
	all, resp, err := GetPages[wire.RegisteredPosition](ctx, admin, "/v1/funds/FUND_H/positions?limit=1")
	if err != nil || resp.Status != http.StatusOK || len(all) != 3 {
		t.Fatalf("GetPages over three instances: %d items, %v %s", len(all), err, resp)
	}

	// An investor token minted the same way is refused another's position.
	portal := c.Client(c.InvestorToken(t, "HI_HP_1"))
	if resp, err := portal.Do(ctx, http.MethodGet, "/v1/positions/HP_2", nil, nil); err != nil || resp.Status != http.StatusNotFound {
		t.Errorf("investor HI_HP_1 reads HP_2: %v %s, want 404", err, resp)
	}

	c.stop()
	for i := range c.Instances() {
		if harness.ProcessGroupExists(c.Pid(i)) {
			t.Errorf("instance %d (pid %d) still runs after stop", i, c.Pid(i))
		}
	}
	if _, err := admin.On(0).Do(ctx, http.MethodGet, "/livez", nil, nil); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("GET /livez after stop: %v, want connection refused", err)
	}
	t.Logf("harness: 3 instances, 1 write, %d reads across them, cursor carried between instances, stopped cleanly", 2*c.Instances()+6)
}
