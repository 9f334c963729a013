package export_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestFundsAndInvestorsAreExportedAndJoin exports the demo with records
// put through the API, a fund with a record and no document, and a fund
// and an investor known only from a document, and reads the funds and
// investors datasets with DuckDB: one row per fund and per investor, the
// record's columns as put (money exact, dates as DATE, the external
// identifiers as a JSON object), null without a record; and positions
// join them by fund_id and investor_id as Athena would.
func TestFundsAndInvestorsAreExportedAndJoin(t *testing.T) {
	s := newService(t)
	s.Env.Seed(t)
	s.call(t, http.MethodPut, "/v1/funds/FUND_R", map[string]any{"name": "Record only", "baseCurrency": "EUR", "vintageYear": 2026,
		"targetSize": "999999999999999.9999", "externalIds": map[string]any{"carta": "R-1"}}, http.StatusCreated)
	s.call(t, http.MethodPut, "/v1/documents/DOC_D", map[string]any{"fundId": "FUND_D", "kind": "capital_call_notice", "title": "Call",
		"asOf": "2025-12-01", "currency": "USD", "positions": []any{map[string]any{"positionId": "POS_D9", "investorId": "INVESTOR_D9",
			"capitalCall": map[string]any{"amount": "2.00", "status": "pending", "dueDate": "2025-12-31"}}}}, http.StatusCreated)
	// The registries are a secondary index: wait until it lists both.
	deadline := time.Now().Add(10 * time.Second)
	for {
		funds, _, err := s.Env.Store.AllFunds(t.Context(), 100, nil)
		investors, _, err2 := s.Env.Store.AllInvestors(t.Context(), 100, nil)
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if len(funds) == 3 && len(investors) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registries list %v and %v", funds, investors)
		}
		time.Sleep(20 * time.Millisecond)
	}

	sink, dir := dirSink(t)
	runExport(t, s.Env, sink, nil)
	setup := views(t, dir, "")
	got := duck(t, setup, `SELECT fund_id, name, legal_name, base_currency, vintage_year, CAST(target_size AS VARCHAR), CAST(inception_date AS VARCHAR),
		json_extract_string(external_ids, '$.carta'), version, updated_by, typeof(target_size), typeof(inception_date), typeof(updated_at)
		FROM funds ORDER BY fund_id`)
	want := [][]string{
		{"FUND_A", "Fund A", "Fund A Partners, L.P.", "USD", "2025", "250000000.0000", "2025-02-03", "FA-2025-001", "1", "fundsvc seed", "DECIMAL(19,4)", "DATE", "TIMESTAMP WITH TIME ZONE"},
		{"FUND_D", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "DECIMAL(19,4)", "DATE", "TIMESTAMP WITH TIME ZONE"},
		{"FUND_R", "Record only", "NULL", "EUR", "2026", "999999999999999.9999", "NULL", "R-1", "1", "export-test", "DECIMAL(19,4)", "DATE", "TIMESTAMP WITH TIME ZONE"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("funds:\n%v\nwant\n%v", got, want)
	}
	got = duck(t, setup, `SELECT investor_id, display_name, investor_type, external_ids, version FROM investors ORDER BY investor_id`)
	want = [][]string{
		{"INVESTOR_1", "Northwind State Pension Plan", "pension", `{"carta":"LP-0001"}`, "1"},
		{"INVESTOR_2", "Alder University Endowment", "endowment", "NULL", "1"},
		{"INVESTOR_3", "NULL", "NULL", "NULL", "NULL"},
		{"INVESTOR_D9", "NULL", "NULL", "NULL", "NULL"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("investors:\n%v\nwant\n%v", got, want)
	}
	got = duck(t, setup, `SELECT p.position_id, f.name, i.display_name FROM positions p
		JOIN funds f USING (fund_id) JOIN investors i USING (investor_id) ORDER BY p.position_id`)
	want = [][]string{
		{"POSITION_1", "Fund A", "Northwind State Pension Plan"},
		{"POSITION_2", "Fund A", "Alder University Endowment"},
		{"POSITION_3", "Fund A", "NULL"},
		{"POS_D9", "NULL", "NULL"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("positions joined with funds and investors:\n%v\nwant\n%v", got, want)
	}
}
