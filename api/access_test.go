package api_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
)

// TestEachAccessPatternIsOneOperation counts the DynamoDB calls behind every
// read route on the demo dataset: each access pattern of the design is served
// by the single operation it was designed for, and nothing Scans.
func TestEachAccessPatternIsOneOperation(t *testing.T) {
	s := newServer(t, true)
	cases := []struct {
		pattern, path string
		want          []string
	}{
		{"document overview is one Query of the document partition", "/v1/documents/DOC001", []string{"Query"}},
		{"per-position analysis of a document is the same one Query", "/v1/documents/DOC001/analysis", []string{"Query"}},
		{"one position's items in a document are one BatchGetItem of exact keys", "/v1/documents/DOC001/positions/POSITION_1", []string{"BatchGetItem"}},
		{"a position's capital call by exact key is one GetItem", "/v1/documents/DOC001/positions/POSITION_1?itemType=capital_call", []string{"GetItem"}},
		{"capital activities and calls are one Query on the CAPITAL_ prefix", "/v1/documents/DOC001/capital", []string{"Query"}},
		{"the latest document is one GetItem", "/v1/documents/DOC001/versions/latest", []string{"GetItem"}},
		{"latest versus historical is one GetItem of the latest record, one Query of a page of history and one of its commit instants", "/v1/documents/DOC001/versions", []string{"GetItem", "Query", "Query"}},
		{"historical documents between two dates are the same GetItem and two Queries", "/v1/documents/DOC001/versions?from=2025-01-01&to=2025-07-15", []string{"GetItem", "Query", "Query"}},
		{"a position's capital call in a document is one GSI1 Query", "/v1/positions/POSITION_1/capital-calls?document=DOC004", []string{"Query"}},
		{"a position's items across documents are one GSI2 Query", "/v1/positions/POSITION_1", []string{"Query"}},
		{"a position's items of one type are one GSI2 Query", "/v1/positions/POSITION_1?itemType=distribution", []string{"Query"}},
		{"a position's capital calls across documents are one GSI2 Query", "/v1/positions/POSITION_2/capital-calls", []string{"Query"}},
		{"a fund's documents by date and kind are one Query", "/v1/funds/FUND_A/documents?from=2025-01-01&to=2025-12-31&kind=capital_call_notice", []string{"Query"}},
		{"a fund's positions are one Query, and one BatchGetItem of the records that name the fund and the investors", "/v1/funds/FUND_A/positions", []string{"Query", "BatchGetItem"}},
		{"an investor's positions are one GSI2 Query, and the records' BatchGetItem", "/v1/investors/INVESTOR_2/positions", []string{"Query", "BatchGetItem"}},
		{"one whole past version is one GetItem of its record and one Query of its partition", "/v1/documents/DOC001/versions/1", []string{"GetItem", "Query"}},
		{"a position's summary is one GSI2 Query", "/v1/positions/POSITION_1/summary", []string{"Query"}},
		{"a position's summary on a date after every document is the same one GSI2 Query", "/v1/positions/POSITION_1/summary?asOf=2026-01-15", []string{"Query"}},
		{"a position's summary on a date before documents of one version (DOC003 to DOC006) and one restated (DOC007) adds one Query of DOC007's history", "/v1/positions/POSITION_1/summary?asOf=2025-09-15", []string{"Query", "Query"}},
		{"a position's summary on a date before two restated documents (DOC001, DOC007) adds one Query of each history", "/v1/positions/POSITION_1/summary?asOf=2025-07-01", []string{"Query", "Query", "Query"}},
		{"a position's performance is one GSI2 Query", "/v1/positions/POSITION_1/performance?asOf=2026-01-15", []string{"Query"}},
		{"a position's capital account statements are one GSI2 Query", "/v1/positions/POSITION_1?itemType=capital_account", []string{"Query"}},
		{"a position's cash flows are one GSI2 Query", "/v1/positions/POSITION_1/cashflows", []string{"Query"}},
		{"an investor's summary is one GSI2 Query for its positions and one per position, and the records' BatchGetItem", "/v1/investors/INVESTOR_1/summary", []string{"Query", "Query", "BatchGetItem"}},
		{"a fund is one BatchGetItem of its item and its record", "/v1/funds/FUND_A", []string{"BatchGetItem"}},
		{"an investor with a record is one BatchGetItem", "/v1/investors/INVESTOR_1", []string{"BatchGetItem"}},
		{"an investor without a record adds one Query of its registry partition", "/v1/investors/INVESTOR_3", []string{"BatchGetItem", "Query"}},
		{"a fund's investors are one Query of its notes and one BatchGetItem of their records", "/v1/investors?fundId=FUND_A", []string{"Query", "BatchGetItem"}},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			s.Counter.Reset()
			r := s.do(t, http.MethodGet, c.path, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", c.path, r.Status, r.Body)
			}
			if got := s.Counter.Ops(); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("GET %s made %v, want %v", c.path, got, c.want)
			}
		})
	}

	t.Run("an admin of some funds is authorized by one GetItem of the head before the read", func(t *testing.T) {
		asA := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
		for path, want := range map[string][]string{
			"/v1/documents/DOC001":                       {"GetItem", "Query"},
			"/v1/documents/DOC001/capital":               {"GetItem", "Query"},
			"/v1/documents/DOC001/positions/POSITION_1":  {"GetItem", "BatchGetItem"},
			"/v1/documents/DOC001/versions/1":            {"GetItem", "GetItem", "Query"},
			"/v1/investors/INVESTOR_1/positions?limit=1": {"Query", "BatchGetItem"},
			"/v1/funds/FUND_A":                           {"BatchGetItem"},
			"/v1/funds":                                  {"BatchGetItem"},
			"/v1/investors/INVESTOR_1":                   {"BatchGetItem", "BatchGetItem"},
		} {
			s.Counter.Reset()
			if r := s.do(t, http.MethodGet, path, nil, "Authorization", asA); r.Status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
			if got := s.Counter.Ops(); !reflect.DeepEqual(got, want) {
				t.Errorf("GET %s made %v, want %v", path, got, want)
			}
		}
	})
	t.Run("historical documents between two dates include every version of the end date", func(t *testing.T) {
		_, hs, _, err := s.Store.As(fund.Operator).Versions(context.Background(), "DOC001", 0, fund.MustDate("2025-07-01"), fund.MustDate("2025-07-15"), 100, nil)
		if err != nil || len(hs) != 2 || hs[0].Version != 2 || hs[1].Version != 1 { // newest first
			t.Fatalf("got %+v, %v", hs, err)
		}
		_, hs, _, err = s.Store.As(fund.Operator).Versions(context.Background(), "DOC001", 0, fund.MustDate("2025-07-16"), fund.Date{}, 100, nil)
		if err != nil || len(hs) != 0 {
			t.Fatalf("after the last asOf: got %+v, %v", hs, err)
		}
	})
}
