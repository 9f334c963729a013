package api_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/api"
)

// TestQueryParametersAreAsStrictAsBodies sends the demo's routes query
// strings that a lax reader would ignore, and dates the calendar does not
// have, in queries and in bodies alike. Each is a 400 problem naming its
// parameter or field, and costs no DynamoDB operation and no change; the
// token is checked first (401, 403).
func TestQueryParametersAreAsStrictAsBodies(t *testing.T) {
	s := newServer(t, true)
	investor := "Bearer " + token(t, api.Principal{Subject: "lp", Role: api.RoleInvestor, Investor: "INVESTOR_1"})
	const invalid = "/problems/invalid"
	badDate := inputDocumentWith(func(d map[string]any) { d["asOf"] = "2025-02-29" })
	badDueDate := inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["dueDate"] = "31-12-2025" })
	badPeriod := inputDocumentWith(func(d map[string]any) { inputStatement(d)["periodStart"] = "2025-09-31" })
	cases := []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		typ, field, detail string
	}{
		// The case: a misspelt asOf answered today's figures.
		{name: "asof in lower case is refused, suggesting asOf", path: "/v1/positions/POSITION_1/performance?asof=2025-12-31",
			status: 400, typ: invalid, field: "asof", detail: `"asof" is not a parameter of this route; did you mean asOf?`},
		{name: "AsOf is refused on a summary, suggesting asOf", path: "/v1/positions/POSITION_1/summary?AsOf=2025-12-31",
			status: 400, typ: invalid, field: "AsOf", detail: "did you mean asOf?"},
		{name: "as_of is refused on a fund's performance, suggesting asOf", path: "/v1/funds/FUND_A/performance?as_of=2025-12-31",
			status: 400, typ: invalid, field: "as_of", detail: "did you mean asOf?"},
		{name: "a misspelt limit is refused, suggesting limit", path: "/v1/funds/FUND_A/positions?limt=1",
			status: 400, typ: invalid, field: "limt", detail: "did you mean limit?"},
		{name: "form for from is refused, suggesting from", path: "/v1/funds/FUND_A/documents?form=2025-01-01",
			status: 400, typ: invalid, field: "form", detail: "did you mean from?"},
		{name: "asOf on a route that does not take it is refused, listing what it takes", path: "/v1/documents/DOC001/versions?asOf=2025-12-31",
			status: 400, typ: invalid, field: "asOf", detail: `"asOf" is not a parameter of this route, which takes from, to, limit, cursor and knownAt`},
		{name: "limit on a route that takes knownAt alone is refused", path: "/v1/documents/DOC001/analysis?limit=1",
			status: 400, typ: invalid, field: "limit", detail: "which takes only knownAt"},
		{name: "a path parameter sent in the query is refused", path: "/v1/documents/DOC001?documentId=DOC002",
			status: 400, typ: invalid, field: "documentId", detail: "is not a parameter of this route"},
		{name: "an unknown parameter beside valid ones is refused", path: "/v1/investors/INVESTOR_1/summary?asOf=2025-12-31&limit=1&verbose=true",
			status: 400, typ: invalid, field: "verbose", detail: "which takes asOf, limit, cursor and knownAt"},
		{name: "an unknown parameter is named before a declared one's bad value", path: "/v1/positions/POSITION_1/summary?asOf=2026-02-30&asof=2025-12-31",
			status: 400, typ: invalid, field: "asof", detail: "did you mean asOf?"},
		{name: "a parameter on a write is refused before the Idempotency-Key is claimed", method: http.MethodPut, path: "/v1/documents/DOC_QUERY?dryRun=true",
			body: inputDocument(), headers: []string{"Idempotency-Key", "query-strict-1"}, status: 400, typ: invalid, field: "dryRun", detail: "which takes no query parameter"},

		{name: "transactions of a value it does not take is refused", path: "/v1/positions/POSITION_1?transactions=mapped",
			status: 400, typ: invalid, field: "transactions", detail: `must be one of stated, all, got "mapped"`},

		{name: "a template format it does not take is refused", path: "/v1/imports/templates/capital_call_notice?format=ods",
			status: 400, typ: invalid, field: "format", detail: `must be one of csv, xlsx, got "ods"`},
		{name: "a template of no document kind is refused", path: "/v1/imports/templates/capital_call?format=csv",
			status: 400, typ: invalid, field: "documentKind", detail: `got "capital_call"`},
		{name: "dryRun of neither true nor false is refused before the file is read", method: http.MethodPost, path: "/v1/imports?dryRun=yes",
			body: "fundId\n", headers: []string{"Content-Type", "text/csv"}, status: 400, typ: invalid, field: "dryRun", detail: `must be one of false, true, got "yes"`},

		// Repeated, empty and malformed.
		{name: "asOf given twice is refused", path: "/v1/positions/POSITION_1/summary?asOf=2025-09-30&asOf=2025-12-31",
			status: 400, typ: invalid, field: "asOf", detail: "is given 2 times; give it once"},
		{name: "limit given twice with the same value is refused", path: "/v1/funds/FUND_A/positions?limit=1&limit=1",
			status: 400, typ: invalid, field: "limit", detail: "is given 2 times"},
		{name: "an empty asOf is refused rather than read as today", path: "/v1/positions/POSITION_1/performance?asOf=",
			status: 400, typ: invalid, field: "asOf", detail: "is empty; give a value or leave the parameter out"},
		{name: "asOf without a value is refused", path: "/v1/positions/POSITION_1/performance?asOf",
			status: 400, typ: invalid, field: "asOf", detail: "is empty"},
		{name: "an empty limit is refused rather than read as the default", path: "/v1/funds/FUND_A/positions?limit=",
			status: 400, typ: invalid, field: "limit", detail: "is empty"},
		{name: "an empty cursor is refused", path: "/v1/funds/FUND_A/positions?cursor=",
			status: 400, typ: invalid, field: "cursor", detail: "is empty"},
		{name: "parameters separated by ; are refused", path: "/v1/investors/INVESTOR_1/summary?asOf=2025-12-31;limit=1",
			status: 400, typ: invalid, detail: "separate them with &"},
		{name: "a broken percent-encoding is refused", path: "/v1/positions/POSITION_1/summary?asOf=2025%2G12-31",
			status: 400, typ: invalid, field: "asOf", detail: "not a valid percent-encoding"},

		// Dates the calendar does not have, in queries.
		{name: "asOf of February 30 is refused as not a calendar date", path: "/v1/positions/POSITION_1/summary?asOf=2026-02-30",
			status: 400, typ: invalid, field: "asOf", detail: `"2026-02-30" is not a calendar date: February 2026 has 28 days`},
		{name: "from of month 13 is refused as not a calendar date", path: "/v1/funds/FUND_A/documents?from=2025-13-01",
			status: 400, typ: invalid, field: "from", detail: `"2025-13-01" is not a calendar date: there is no month 13`},
		{name: "to of February 29 in a common year is refused as not a calendar date", path: "/v1/documents/DOC001/versions?to=2025-02-29",
			status: 400, typ: invalid, field: "to", detail: "February 2025 has 28 days (2025 is not a leap year)"},
		{name: "asOf with slashes is refused as malformed", path: "/v1/positions/POSITION_1/performance?asOf=2025/12/31",
			status: 400, typ: invalid, field: "asOf", detail: `"2025/12/31" is not a valid date: want YYYY-MM-DD`},
		{name: "asOf day first is refused as malformed", path: "/v1/funds/FUND_A/performance?asOf=31-12-2025",
			status: 400, typ: invalid, field: "asOf", detail: "want YYYY-MM-DD"},

		// The same dates in bodies, with the same words.
		{name: "a body asOf of February 29 in a common year is refused as not a calendar date", method: http.MethodPut, path: "/v1/documents/DOC_QUERY",
			body: badDate, status: 400, typ: invalid, field: "asOf", detail: `"2025-02-29" is not a calendar date: February 2025 has 28 days`},
		{name: "a body period start of September 31 is refused as not a calendar date", method: http.MethodPut, path: "/v1/documents/DOC_QUERY",
			body: badPeriod, status: 400, typ: invalid, field: "positions[1].capitalAccount.periodStart", detail: "September 2025 has 30 days"},
		{name: "a body due date day first is refused as malformed", method: http.MethodPut, path: "/v1/documents/DOC_QUERY",
			body: badDueDate, status: 400, typ: invalid, field: "positions[0].capitalCall.dueDate", detail: `"31-12-2025" is not a valid date: want YYYY-MM-DD`},

		// The token comes first.
		{name: "without a token an unknown parameter is 401", path: "/v1/positions/POSITION_1/summary?asof=2025-12-31",
			headers: []string{"Authorization", ""}, status: 401, typ: "/problems/unauthorized"},
		{name: "an investor token on an admin route with an unknown parameter is 403", path: "/v1/funds/FUND_A/positions?limt=1",
			headers: []string{"Authorization", investor}, status: 403, typ: "/problems/forbidden"},
		{name: "an investor token on its own position with an unknown parameter is 400", path: "/v1/positions/POSITION_1/summary?asof=2025-12-31",
			headers: []string{"Authorization", investor}, status: 400, typ: invalid, field: "asof", detail: "did you mean asOf?"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			before := s.Dump(t)
			s.Counter.Reset()
			r := s.do(t, method, tc.path, tc.body, tc.headers...)
			ops := s.Counter.Ops()
			if after := s.Dump(t); !reflect.DeepEqual(before, after) {
				t.Errorf("the table changed: %s", dumpDifference(before, after))
			}
			if len(ops) > 0 {
				t.Errorf("the refusal cost DynamoDB operations: %v", ops)
			}
			p := checkProblem(t, r, tc.status, tc.typ)
			if p.Field != tc.field {
				t.Errorf("field = %q, want %q\n%s", p.Field, tc.field, r.Body)
			}
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail = %q, want it to say %q", p.Detail, tc.detail)
			}
		})
	}

	// The positive controls: declared parameters, spelt right, reach the
	// handler, which reads the table.
	for _, tc := range []struct{ name, path string }{
		{"asOf spelt right is read", "/v1/positions/POSITION_1/summary?asOf=2025-12-31"},
		{"a trailing & adds no parameter", "/v1/positions/POSITION_1/summary?asOf=2025-12-31&"},
		{"a leap day is a calendar date", "/v1/positions/POSITION_1/summary?asOf=2024-02-29"},
		{"every parameter of a route at once is read", "/v1/funds/FUND_A/documents?from=2025-01-01&to=2025-12-31&kind=capital_call_notice&limit=2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Counter.Reset()
			if r := s.do(t, http.MethodGet, tc.path, nil); r.Status != http.StatusOK {
				t.Fatalf("GET %s: %d, want 200\n%s", tc.path, r.Status, r.Body)
			}
			if len(s.Counter.Ops()) == 0 {
				t.Errorf("GET %s read nothing", tc.path)
			}
		})
	}
	t.Run("a percent-encoded name is the parameter it encodes", func(t *testing.T) {
		september := s.do(t, http.MethodGet, "/v1/positions/POSITION_1/summary?asOf=2025-09-30", nil)
		encoded := s.do(t, http.MethodGet, "/v1/positions/POSITION_1/summary?as%4Ff=2025-09-30", nil)
		december := s.do(t, http.MethodGet, "/v1/positions/POSITION_1/summary?asOf=2025-12-31", nil)
		for _, r := range []response{september, encoded, december} {
			if r.Status != http.StatusOK {
				t.Fatalf("status %d\n%s", r.Status, r.Body)
			}
		}
		if !reflect.DeepEqual(september.JSON(t), encoded.JSON(t)) {
			t.Errorf("as%%4Ff=2025-09-30 answers\n%s\nbut asOf=2025-09-30\n%s", encoded.Body, september.Body)
		}
		if reflect.DeepEqual(september.JSON(t), december.JSON(t)) {
			t.Errorf("the summary is the same on 2025-09-30 and 2025-12-31, so the comparison above proves nothing")
		}
	})

	t.Run("an Idempotency-Key refused with its query is not taken: the write without it succeeds", func(t *testing.T) {
		r := s.do(t, http.MethodPut, "/v1/documents/DOC_QUERY", inputDocument(), "Idempotency-Key", "query-strict-1")
		if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("status %d, Idempotent-Replayed %q; want 201, not a replay\n%s", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
		}
	})
}
