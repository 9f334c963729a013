package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestAVintageYearFrom1900To2100IsKeptAndBeyondIsRefused drives the bounds
// of a fund's vintage year: 1900 and 2100 are stored and answered back;
// 1899 and 2101 are 400 /problems/invalid of field vintageYear naming the
// bounds, and the record stays as it was.
func TestAVintageYearFrom1900To2100IsKeptAndBeyondIsRefused(t *testing.T) {
	s := newServer(t, false) // no demo data: FUND_V is the test's own
	body := func(year int) map[string]any {
		return map[string]any{"name": "Fund V", "baseCurrency": "USD", "vintageYear": year}
	}
	put := s.do(t, http.MethodPut, "/v1/funds/FUND_V", body(1900))
	if put.Status != http.StatusCreated || put.JSON(t)["vintageYear"] != float64(1900) {
		t.Fatalf("PUT with vintage year 1900: %d\n%s", put.Status, put.Body)
	}
	if got := s.do(t, http.MethodGet, "/v1/funds/FUND_V", nil).JSON(t)["vintageYear"]; got != float64(1900) {
		t.Fatalf("GET after 1900: vintageYear %v", got)
	}
	put = s.do(t, http.MethodPut, "/v1/funds/FUND_V", body(2100), "If-Match", `"1"`)
	if put.Status != http.StatusOK || put.JSON(t)["vintageYear"] != float64(2100) {
		t.Fatalf("PUT with vintage year 2100: %d\n%s", put.Status, put.Body)
	}
	before := s.do(t, http.MethodGet, "/v1/funds/FUND_V", nil)
	if before.JSON(t)["vintageYear"] != float64(2100) || before.Header.Get("ETag") != `"2"` {
		t.Fatalf("GET after 2100: %s %s", before.Header.Get("ETag"), before.Body)
	}
	for _, year := range []int{1899, 2101} {
		p := checkProblem(t, s.do(t, http.MethodPut, "/v1/funds/FUND_V", body(year)), http.StatusBadRequest, "/problems/invalid")
		if p.Field != "vintageYear" || !strings.Contains(p.Detail, "1900") || !strings.Contains(p.Detail, "2100") {
			t.Errorf("vintage year %d: field %q detail %q, want vintageYear naming 1900 and 2100", year, p.Field, p.Detail)
		}
	}
	after := s.do(t, http.MethodGet, "/v1/funds/FUND_V", nil)
	if string(after.Body) != string(before.Body) || after.Header.Get("ETag") != `"2"` {
		t.Errorf("the refusals changed FUND_V:\n%s\nwas\n%s", after.Body, before.Body)
	}
}
