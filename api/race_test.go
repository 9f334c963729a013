package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// TestAConcurrentCreateByAnotherFundIsNotFound: two funds' admins create
// the same document ID through two instances at once. The one whose write
// loses, after it passed the check that the ID is free, is answered 404, as
// for a document of another fund, never a 409 that names the other fund.
func TestAConcurrentCreateByAnotherFundIsNotFound(t *testing.T) {
	env := fundtest.New(t)
	instY := startAPI(t, env, nil)
	hook := &dynamotest.WriteHook{}
	instZ := instanceWithHook(t, env, hook, nil)
	asY := "Bearer " + token(t, api.Principal{Subject: "admin-y", Role: api.RoleAdmin, Funds: []string{"FUND_Y"}})
	asZ := "Bearer " + token(t, api.Principal{Subject: "admin-z", Role: api.RoleAdmin, Funds: []string{"FUND_Z"}})
	body := func(fundID, pos string) map[string]any {
		d := smallDocument("race")
		d["fundId"] = fundID
		d["positions"] = []any{map[string]any{"positionId": pos, "investorId": "INV_" + pos, "capitalCall": map[string]any{"amount": "10.00"}}}
		return d
	}
	// Z's write has found the ID free and is about to write when Y's create
	// of the same ID completes on the other instance.
	hook.OnWrite(1, func() {
		if r := instY.do(t, http.MethodPut, "/v1/documents/RACE", body("FUND_Y", "POS_Y"), "Authorization", asY); r.Status != http.StatusCreated {
			t.Errorf("Y's create: %d %s", r.Status, r.Body)
		}
	})
	r := instZ.do(t, http.MethodPut, "/v1/documents/RACE", body("FUND_Z", "POS_Z"), "Authorization", asZ)
	if !hook.Fired() {
		t.Fatal("Z's write never reached its first write")
	}
	if r.Status != http.StatusNotFound || strings.Contains(string(r.Body), "FUND_Y") {
		t.Fatalf("Z's losing create: %d %s, want 404 that does not name FUND_Y", r.Status, r.Body)
	}
	// Z's write left nothing: its position is not listed, and the ID is free.
	if r := instZ.do(t, http.MethodGet, "/v1/funds/FUND_Z/positions", nil, "Authorization", asZ); r.Status != http.StatusNotFound {
		t.Fatalf("FUND_Z after its refused create: %d %s, want 404 (no such fund)", r.Status, r.Body)
	}
}
