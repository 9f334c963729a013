package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

// queryProblem sends method target to h as an admin of every
// fund and returns the status and the problem's field and detail.
func queryProblem(t *testing.T, h http.Handler, method, target string) (status int, field, detail string) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set("Authorization", "Bearer "+internalAdminToken(t))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var p Problem
	if rec.Code >= 400 {
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatalf("%s %s: %d, not a problem: %v\n%s", method, target, rec.Code, err, rec.Body)
		}
	}
	return rec.Code, p.Field, p.Detail
}

// routeParam fills a path parameter of the route table with a valid value.
var routeParam = regexp.MustCompile(`:[A-Za-z]+`)

// swapCase turns asOf into ASoF: the same name but for case.
func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		if r >= 'A' && r <= 'Z' {
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// TestEveryV1RouteRefusesWhatItDoesNotDeclare walks the route table: each
// /v1 operation refuses a parameter its Params do not declare, a declared
// one spelt in another case (suggesting it), given twice or given empty.
// The server has no store: a request the rule let through to a handler
// would reach DynamoDB and panic (500), so a 400 here also proves that the
// refusal read nothing.
func TestEveryV1RouteRefusesWhatItDoesNotDeclare(t *testing.T) {
	e := openAPITestEngine(t)
	checked := 0
	for _, op := range (&server{metrics: NewMetrics()}).operations() {
		if !strings.HasPrefix(op.Path, "/v1/") {
			continue
		}
		checked++
		path := routeParam.ReplaceAllString(op.Path, "X1")
		var declared []string
		for _, name := range op.Params {
			if p := apiParameters[name]; p.In == "query" {
				declared = append(declared, p.name(name))
			}
		}
		refused := func(t *testing.T, query, field, detail string) {
			t.Helper()
			status, gotField, gotDetail := queryProblem(t, e, op.Method, path+"?"+query)
			if status != http.StatusBadRequest || gotField != field || !strings.Contains(gotDetail, detail) {
				t.Errorf("%s %s?%s: %d, field %q, detail %q; want 400, field %q, a detail that says %q", op.Method, path, query, status, gotField, gotDetail, field, detail)
			}
		}
		t.Run(op.Method+" "+op.Path, func(t *testing.T) {
			refused(t, "unknownParameter=1", "unknownParameter", `"unknownParameter" is not a parameter of this route`)
			// A parameter another route declares is still not this one's.
			for _, other := range []string{"asOf", "limit", "document", "kind"} {
				if !strings.Contains(strings.Join(declared, " "), other) {
					refused(t, other+"=1", other, "is not a parameter of this route")
				}
			}
			if len(declared) == 0 {
				refused(t, "x=1", "x", "which takes no query parameter")
			}
			for _, name := range declared {
				refused(t, url.QueryEscape(swapCase(name))+"=1", swapCase(name), "did you mean "+name+"?")
				refused(t, name+"=", name, "is empty")
				refused(t, name, name, "is empty")
				refused(t, name+"=1&"+name+"=2", name, "is given 2 times")
			}
		})
	}
	if checked < 15 { // 19 when this was written: the walk must not be vacuous
		t.Fatalf("only %d /v1 operations in the route table", checked)
	}
}

// TestOpsRoutesIgnoreQueryParameters checks the routes checksQuery leaves
// out: scrapers, probes and browsers may add parameters they take no
// notice of.
func TestOpsRoutesIgnoreQueryParameters(t *testing.T) {
	e := openAPITestEngine(t)
	for _, target := range []string{
		"/livez?probe=1", "/metrics?format=prometheus&format=x", "/openapi.json?v=3", "/docs?url=x&", "/docs/swagger-ui.css?v=5.0", "/docs/init.js?",
	} {
		if status, field, detail := queryProblem(t, e, http.MethodGet, target); status != http.StatusOK {
			t.Errorf("GET %s: %d (field %q: %s), want 200", target, status, field, detail)
		}
	}
}

// TestUnknownParametersAreSuggestedTheirDeclaredSpelling checks which
// declared parameter a refusal suggests: the same name but for case, or
// the nearest within one edit (names of up to four letters) or two.
func TestUnknownParametersAreSuggestedTheirDeclaredSpelling(t *testing.T) {
	page := []string{"from", "to", "kind", "limit", "cursor"}
	for _, tc := range []struct {
		name     string
		declared []string
		want     string
	}{
		{"asof", []string{"asOf"}, "; did you mean asOf?"},
		{"ASOF", []string{"asOf", "limit", "cursor"}, "; did you mean asOf?"},
		{"as_of", []string{"asOf"}, "; did you mean asOf?"},
		{"limt", page, "; did you mean limit?"},
		{"limits", page, "; did you mean limit?"},
		{"curosr", page, "; did you mean cursor?"},
		{"form", page, "; did you mean from?"},
		{"kinds", page, "; did you mean kind?"},
		{"tpye", []string{"type", "limit", "cursor"}, "; did you mean type?"},
		{"documents", []string{"document", "limit", "cursor"}, "; did you mean document?"},
		{"documentId", []string{"document", "limit", "cursor"}, "; did you mean document?"},
		{"date", []string{"asOf"}, ", which takes only asOf"},
		{"asOf", []string{"limit", "cursor"}, ", which takes limit and cursor"},
		{"id", page, ", which takes from, to, kind, limit and cursor"},
		{"page", []string{"type", "limit", "cursor"}, ", which takes type, limit and cursor"},
		{"limit", nil, ", which takes no query parameter"},
		{strings.Repeat("a", 5000), []string{"asOf"}, ", which takes only asOf"},
	} {
		if got := suggestParameter(tc.name, tc.declared); got != tc.want {
			t.Errorf("suggestParameter(%.20q, %v) = %q, want %q", tc.name, tc.declared, got, tc.want)
		}
	}
}

// TestMalformedQueryStringsAreRefused checks what url.ParseQuery, which gin
// reads parameters through, would drop without a word.
func TestMalformedQueryStringsAreRefused(t *testing.T) {
	declared := []string{"asOf", "limit"}
	for _, tc := range []struct {
		raw, field, detail string
	}{
		{"asOf=2025-12-31;limit=1", "", "separate them with &"},
		{"asOf=%zz", "asOf", `holds "%zz", which is not a valid percent-encoding`},
		{"as%zzOf=1", "", `holds "as%zzOf", which is not a valid percent-encoding`},
		{"=2025-12-31", "", "a value without a parameter name"},
		{"asOf=2025-12-31&asOf=2025-12-31", "asOf", "is given 2 times; give it once"},
		{"limit=1&asof=2025-12-31&asOf=", "asof", `"asof" is not a parameter of this route; did you mean asOf?`},
		{"asOf=&zz=1", "asOf", "is empty; give a value or leave the parameter out"},
	} {
		var e *fund.Error
		if err := checkQuery(tc.raw, declared); !errors.As(err, &e) || e.Code != fund.EINVALID {
			t.Errorf("checkQuery(%q) = %v, want EINVALID", tc.raw, err)
			continue
		}
		if e.Field != tc.field || !strings.Contains(e.Message, tc.detail) {
			t.Errorf("checkQuery(%q) = %v; want field %q and a message that says %q", tc.raw, e, tc.field, tc.detail)
		}
	}
	for _, raw := range []string{"", "asOf=2025-12-31", "asOf=2025-12-31&", "&limit=5&&asOf=2025-12-31", "as%4Ff=2025-12-31", "limit=1+"} {
		if err := checkQuery(raw, declared); err != nil {
			t.Errorf("checkQuery(%q) = %v, want it accepted", raw, err)
		}
	}
}
