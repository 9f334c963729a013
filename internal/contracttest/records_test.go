package contracttest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The records the round trip puts: every member of FundRequest and
// InvestorRequest set, the investor the one of roundTripRequest's
// position, so that the fund's positions carry both names.
const (
	roundTripFund     = "FUND_RT"
	roundTripInvestor = "RT_INVESTOR"

	roundTripFundRecord = `{"name": "Round Trip Fund", "legalName": "Round Trip Fund, L.P.", "baseCurrency": "EUR",
  "vintageYear": 2024, "targetSize": "250000000.00", "inceptionDate": "2024-03-15",
  "externalIds": {"carta": "RT-001", "administrator": "ADM/42"}}`
	roundTripInvestorRecord = `{"displayName": "Round Trip Pension", "investorType": "pension",
  "externalIds": {"custodian": "C-9"}}`
)

// putRecords writes the round trip's records, before the export runs.
func putRecords(t *testing.T, s *stack) (fund, investor map[string]any) {
	t.Helper()
	fund = s.call(t, http.MethodPut, "/v1/funds/"+roundTripFund, roundTripFundRecord, http.StatusCreated)
	investor = s.call(t, http.MethodPut, "/v1/investors/"+roundTripInvestor, roundTripInvestorRecord, http.StatusCreated)
	return fund, investor
}

// testRecordRoundTrip finds every member of the records put, unchanged,
// in the PUTs' answers, the records read back, the listings, the names in
// the fund's positions and the export's funds and investors datasets
// (DuckDB; external identifiers are a JSON object in one text column).
func testRecordRoundTrip(t *testing.T, s *stack, putFund, putInvestor map[string]any) {
	decode := func(t *testing.T, body string) map[string]any {
		t.Helper()
		var v map[string]any
		d := json.NewDecoder(strings.NewReader(body))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	records := []struct {
		schema, path, id, idMember, dataset, list string
		req, put                                  map[string]any
	}{
		{"FundRequest", "/v1/funds/", roundTripFund, "fundId", "funds", "/v1/funds?limit=100",
			decode(t, roundTripFundRecord), putFund},
		{"InvestorRequest", "/v1/investors/", roundTripInvestor, "investorId", "investors", "/v1/investors?fundId=" + roundTripFund,
			decode(t, roundTripInvestorRecord), putInvestor},
	}
	for _, r := range records {
		t.Run(r.schema, func(t *testing.T) {
			t.Run("the request sets every member", func(t *testing.T) {
				var zero []string
				walkSchema(s.spec, schemaRef(r.schema), r.req, "", func(path string, v any) {
					if isZero(v) {
						zero = append(zero, path)
					}
				})
				if len(zero) > 0 {
					t.Errorf("the %s leaves these members zero or out; give each a value: %s", r.schema, strings.Join(zero, ", "))
				}
			})
			check := func(layer string, diffs []string) {
				t.Helper()
				for _, d := range diffs {
					t.Errorf("%s: %s", layer, d)
				}
			}
			check("PUT's answer", holds(r.put, r.req, ""))
			check("GET "+r.path+r.id, holds(s.call(t, http.MethodGet, r.path+r.id, "", http.StatusOK), r.req, ""))
			found := false
			items, _ := s.call(t, http.MethodGet, r.list, "", http.StatusOK)["items"].([]any)
			for _, it := range items {
				if m, _ := it.(map[string]any); m[r.idMember] == r.id {
					found = true
					check("GET "+r.list, holds(m, r.req, ""))
				}
			}
			if !found {
				t.Errorf("GET %s does not list %s", r.list, r.id)
			}

			var rows []map[string]string
			for _, row := range s.rows(t, r.dataset) {
				if row[snake(r.idMember)] == r.id {
					rows = append(rows, row)
				}
			}
			if len(rows) != 1 {
				t.Fatalf("%s: %d rows of %s, want 1", r.dataset, len(rows), r.id)
			}
			scalars := map[string]any{}
			for k, v := range r.req {
				if _, isObject := v.(map[string]any); !isObject {
					scalars[k] = v
				}
			}
			check(r.dataset, holdsRow(rows[0], scalars))
			var ids map[string]any
			if err := json.Unmarshal([]byte(rows[0]["external_ids"]), &ids); err != nil {
				t.Errorf("%s external_ids is %q, not a JSON object: %v", r.dataset, rows[0]["external_ids"], err)
			}
			check(r.dataset+" external_ids", holds(ids, r.req["externalIds"].(map[string]any), "externalIds."))
		})
	}

	t.Run("the names in the fund's positions", func(t *testing.T) {
		items, _ := s.call(t, http.MethodGet, "/v1/funds/"+roundTripFund+"/positions", "", http.StatusOK)["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("the fund's positions: %d, want 1", len(items))
		}
		m, _ := items[0].(map[string]any)
		want := map[string]any{"fundName": records[0].req["name"], "investorDisplayName": records[1].req["displayName"]}
		for _, d := range holds(m, want, "") {
			t.Errorf("the fund's positions: %s", d)
		}
	})
}
