package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
)

// TestARefusalNeverReadsTheDocument puts a large document of another fund,
// restated many times, and asks every document route for it: the refusal
// must cost the same operations as an unknown document (one GetItem of the
// head), never a Query of the document's items or history, so that neither
// its existence nor its size shows in the cost or the time of the answer.
func TestARefusalNeverReadsTheDocument(t *testing.T) {
	s := newServer(t, false)
	big := fund.Document{ID: "BIG", FundID: "FUND_Z", Kind: fund.KindCapitalCallNotice, Title: "Big", AsOf: fund.MustDate("2025-06-30")}
	for i := range 600 {
		big.Positions = append(big.Positions, fund.Position{ID: fmt.Sprintf("BIGPOS_%04d", i), InvestorID: fmt.Sprintf("BIGINV_%04d", i),
			CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("10.00")}})
	}
	for range 30 { // 30 versions, so the history is long too
		if _, err := s.Store.Restate(context.Background(), big, nil); err != nil {
			t.Fatal(err)
		}
		big.Title += "."
	}
	asA := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	for _, route := range []string{"", "/analysis", "/capital", "/versions", "/versions?from=2025-01-01", "/versions/latest", "/versions/3",
		"/positions/BIGPOS_0001", "/positions/BIGPOS_0001?type=CapitalCall"} {
		var ops [2][]string
		for i, doc := range []string{"BIG", "NOSUCHDOC"} {
			s.Counter.Reset()
			r := s.do(t, http.MethodGet, "/v1/documents/"+doc+route, nil, "Authorization", asA)
			if r.Status != http.StatusNotFound {
				t.Fatalf("GET %s%s: %d, want 404\n%s", doc, route, r.Status, r.Body)
			}
			ops[i] = s.Counter.Ops()
			slices.Sort(ops[i])
		}
		if !slices.Equal(ops[0], ops[1]) || slices.Contains(ops[0], "Query") {
			t.Errorf("GET /v1/documents/BIG%s as another fund's admin costs %v, an unknown document %v; want the same, and no Query", route, ops[0], ops[1])
		}
	}
}
