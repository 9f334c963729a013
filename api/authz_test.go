package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"
)

// The authorization matrix: every route the router registers, crossed with
// every kind of token (missing, forged, expired, of the wrong algorithm or
// audience, with unusable claims) and with every principal (an admin of the
// data's fund, an admin of another fund, the investor of the data, another
// investor). A route the router serves without an entry in authzRoutes
// fails TestAuthzMatrix, so a new route cannot ship unexamined.

// Principals of the matrix. The demo data is all FUND_A; INVESTOR_1 holds
// POSITION_1 and INVESTOR_2 holds POSITION_2.
var (
	authzAdminA    = api.Principal{Subject: "admin-of-fund-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}}
	authzAdminZ    = api.Principal{Subject: "admin-of-fund-z", Role: api.RoleAdmin, Funds: []string{"FUND_Z"}}
	authzInvestor1 = api.Principal{Subject: "investor-1", Role: api.RoleInvestor, Investor: "INVESTOR_1"}
)

// authzAccess is who a route is for.
type authzAccess int

const (
	authzOpen      authzAccess = iota // anyone, no token
	authzAnyToken                     // any valid token, of either role
	authzEveryFund                    // admin tokens of every fund only (/metrics: 403 for any other valid token)
	authzAdmin                        // admin tokens only, within their funds
	authzPortal                       // investors for their own investor; admins within their funds
	// authzRecord: the records of funds and investors, whose rules are
	// neither authzAdmin's nor authzPortal's (an investor reads the funds
	// it holds positions of; an admin of some funds the investors of
	// them): the entry's cases say who gets what.
	authzRecord
	authzWebhooks // admin tokens only, on endpoints of funds they all cover (authzWebhookCases)
	authzImports  // admin tokens only: templates for any admin, a file only of funds the token covers (authzImportCases)
	authzFeed     // both roles, each answered only its own events: admins their funds', investors their positions'
)

// authzCase is one request of an authzRecord route by one principal.
type authzCase struct {
	who    string // A (the admin of FUND_A), Z (the admin of FUND_Z), INV1 (investor INVESTOR_1)
	path   string
	status int
	// unknown, for a refusal: the pairs that turn path into the same
	// request for IDs that do not exist, answered the same.
	unknown []string
}

// authzProbe is one request on a route.
type authzProbe struct {
	path string
	// status is what the owner of the data gets: 200 unless set (404 for a
	// probe of something absent inside an existing document).
	status int
	// unknown are old, new pairs that turn path into the same request for
	// IDs that do not exist; the same pairs map a not-yours answer's detail
	// onto the unknown one's, for comparison.
	unknown []string
}

type authzRoute struct {
	method, path string // as gin registers it
	access       authzAccess
	// probes are requests on FUND_A's data; for portal routes, on
	// INVESTOR_1's. probes[0] is the one every token case sends.
	probes []authzProbe
	// others are portal requests on INVESTOR_2's data (also FUND_A's).
	others []authzProbe
	// body is the request body for fundID, for writes.
	body func(fundID string) any
	// cases are an authzRecord route's requests.
	cases []authzCase
}

func (r authzRoute) name() string { return r.method + " " + authzTemplate(r.path) }

func (r authzRoute) bodyFor(fundID string) any {
	if r.body == nil {
		return nil
	}
	return r.body(fundID)
}

var authzParam = strings.NewReplacer(":documentId", "{documentId}", ":version", "{version}", ":positionId", "{positionId}",
	":fundId", "{fundId}", ":investorId", "{investorId}", ":webhookId", "{webhookId}", ":eventId", "{eventId}")

// authzTemplate turns gin's ":documentId" into "{documentId}".
func authzTemplate(ginPath string) string { return authzParam.Replace(ginPath) }

// authzDocument is a small valid document of fundID, on positions of its own
// so that creating it leaves the demo positions as they are.
func authzDocument(fundID string) any {
	return map[string]any{
		"fundId": fundID, "kind": "capital_call_notice", "title": "Authorization matrix notice", "asOf": "2025-12-01", "currency": "USD",
		"positions": []any{map[string]any{"positionId": "AUTHZ_POS_" + fundID, "investorId": "AUTHZ_INV_" + fundID,
			"capitalCall": map[string]any{"amount": "1.00", "status": "pending", "dueDate": "2025-12-31"}}},
	}
}

// authzFundRecord is a valid fund record, named after fundID.
func authzFundRecord(fundID string) any {
	return map[string]any{"name": "Authorization matrix " + fundID, "baseCurrency": "USD"}
}

// authzInvestorRecord is a valid investor record.
func authzInvestorRecord(string) any {
	return map[string]any{"displayName": "Authorization matrix investor", "investorType": "other"}
}

// authzRoutes is the matrix's table: one entry for every route. An
// authzRecord route's probe, which every token case sends, is its first
// case's request.
func authzRoutes() []authzRoute {
	routes := authzRouteTable()
	for i, r := range routes {
		if len(r.probes) == 0 && len(r.cases) > 0 {
			routes[i].probes = []authzProbe{{path: r.cases[0].path}}
		}
	}
	return routes
}

func authzRouteTable() []authzRoute {
	doc := func(path string) authzProbe {
		return authzProbe{path: path, unknown: []string{"DOC001", "DOC999", "DOC002", "DOC999"}}
	}
	absentIn := func(path string) authzProbe { p := doc(path); p.status = http.StatusNotFound; return p }
	fundA := func(path string) authzProbe {
		return authzProbe{path: path, unknown: []string{"FUND_A", "FUND_999"}}
	}
	inv := func(path string) authzProbe {
		return authzProbe{path: path, unknown: []string{"INVESTOR_1", "INVESTOR_999", "INVESTOR_2", "INVESTOR_999"}}
	}
	pos := func(path string) authzProbe {
		return authzProbe{path: path, unknown: []string{"POSITION_1", "POSITION_999", "POSITION_2", "POSITION_999"}}
	}
	positionProbes := func(p string) []authzProbe {
		return []authzProbe{pos("/v1/positions/" + p), pos("/v1/positions/" + p + "?itemType=capital_call"),
			pos("/v1/positions/" + p + "?itemType=distribution"), pos("/v1/positions/" + p + "?itemType=unfunded_commitment"),
			pos("/v1/positions/" + p + "?limit=1")}
	}
	// asOfProbes read a summary now, on a date between the demo's two
	// documents, and before either.
	asOfProbes := func(probe func(string) authzProbe, path string) []authzProbe {
		return []authzProbe{probe(path), probe(path + "?asOf=2025-09-15"), probe(path + "?asOf=2020-01-01")}
	}
	// largestPage adds to a fan-out route's probes its largest page.
	largestPage := func(probe func(string) authzProbe, probes []authzProbe) []authzProbe {
		return append(probes, probe(fmt.Sprintf("%s?limit=%d", probes[0].path, api.MaxFanoutPage)))
	}
	// changesProbes read a position's changes over the demo's writes (all
	// on 2026-01-02), on two dates.
	changesProbes := func(probe func(string) authzProbe, p, route string) []authzProbe {
		path := "/v1/positions/" + p + "/" + route + "/changes?from=2026-01-02T00:00:00Z"
		return []authzProbe{probe(path), probe(path + "&asOf=2025-09-15")}
	}
	wh := func(path string) authzProbe {
		return authzProbe{path: path, unknown: []string{"WH_AUTHZ", "WH_999"}}
	}
	callProbes := func(p string) []authzProbe {
		return []authzProbe{pos("/v1/positions/" + p + "/capital-calls"), pos("/v1/positions/" + p + "/capital-calls?document=DOC001"),
			pos("/v1/positions/" + p + "/capital-calls?document=DOC004"), pos("/v1/positions/" + p + "/capital-calls?limit=1")}
	}
	return []authzRoute{
		{method: http.MethodGet, path: "/livez", access: authzOpen, probes: []authzProbe{{path: "/livez"}}},
		{method: http.MethodGet, path: "/readyz", access: authzOpen, probes: []authzProbe{{path: "/readyz"}}},
		{method: http.MethodGet, path: "/metrics", access: authzEveryFund, probes: []authzProbe{{path: "/metrics"}}},
		{method: http.MethodGet, path: "/openapi.json", access: authzAnyToken, probes: []authzProbe{{path: "/openapi.json"}}},
		{method: http.MethodGet, path: "/docs", access: authzAnyToken, probes: []authzProbe{{path: "/docs"}}},
		{method: http.MethodGet, path: "/docs/:file", access: authzAnyToken, probes: []authzProbe{{path: "/docs/init.js"}}},

		{method: http.MethodPut, path: "/v1/documents/:documentId", access: authzAdmin, body: authzDocument,
			probes: []authzProbe{doc("/v1/documents/DOC001")}},
		{method: http.MethodDelete, path: "/v1/documents/:documentId", access: authzAdmin,
			probes: []authzProbe{doc("/v1/documents/DOC001")}},
		{method: http.MethodGet, path: "/v1/documents/:documentId", access: authzAdmin,
			probes: []authzProbe{doc("/v1/documents/DOC001"), doc("/v1/documents/DOC002"), doc("/v1/documents/DOC001?limit=1")}},
		{method: http.MethodGet, path: "/v1/documents/:documentId/versions", access: authzAdmin,
			probes: []authzProbe{doc("/v1/documents/DOC001/versions"), doc("/v1/documents/DOC001/versions?from=2025-01-01&to=2025-12-31"),
				doc("/v1/documents/DOC002/versions?from=2025-10-01")}},
		{method: http.MethodGet, path: "/v1/documents/:documentId/versions/:version", access: authzAdmin,
			probes: []authzProbe{doc("/v1/documents/DOC001/versions/latest"), doc("/v1/documents/DOC001/versions/1"),
				doc("/v1/documents/DOC001/versions/2"), doc("/v1/documents/DOC002/versions/1"), absentIn("/v1/documents/DOC001/versions/3")}},
		{method: http.MethodGet, path: "/v1/documents/:documentId/positions/:positionId", access: authzAdmin,
			probes: []authzProbe{doc("/v1/documents/DOC001/positions/POSITION_1"), doc("/v1/documents/DOC001/positions/POSITION_2"),
				doc("/v1/documents/DOC002/positions/POSITION_1?itemType=distribution"), doc("/v1/documents/DOC001/positions/POSITION_2?itemType=unfunded_commitment"),
				absentIn("/v1/documents/DOC001/positions/POSITION_999"), absentIn("/v1/documents/DOC001/positions/POSITION_2?itemType=distribution")}},
		{method: http.MethodGet, path: "/v1/documents/:documentId/capital", access: authzAdmin,
			probes: []authzProbe{doc("/v1/documents/DOC001/capital"), doc("/v1/documents/DOC002/capital")}},
		{method: http.MethodGet, path: "/v1/documents/:documentId/analysis", access: authzAdmin,
			probes: []authzProbe{doc("/v1/documents/DOC001/analysis"), doc("/v1/documents/DOC002/analysis")}},
		{method: http.MethodGet, path: "/v1/documents/:documentId/reconciliation", access: authzAdmin,
			probes: []authzProbe{doc("/v1/documents/DOC001/reconciliation"), doc("/v1/documents/DOC002/reconciliation?limit=1"),
				{path: "/v1/documents/DOC007/reconciliation", unknown: []string{"DOC007", "DOC999"}},
				{path: fmt.Sprintf("/v1/documents/DOC007/reconciliation?limit=%d", api.MaxFanoutPage), unknown: []string{"DOC007", "DOC999"}}}},
		{method: http.MethodGet, path: "/v1/funds/:fundId/documents", access: authzAdmin,
			probes: []authzProbe{fundA("/v1/funds/FUND_A/documents"), fundA("/v1/funds/FUND_A/documents?kind=capital_call_notice&from=2025-01-01&to=2025-12-31"),
				fundA("/v1/funds/FUND_A/documents?limit=1")}},
		{method: http.MethodGet, path: "/v1/funds/:fundId/positions", access: authzAdmin,
			probes: []authzProbe{fundA("/v1/funds/FUND_A/positions"), fundA("/v1/funds/FUND_A/positions?limit=1")}},
		{method: http.MethodGet, path: "/v1/funds/:fundId/performance", access: authzAdmin,
			probes: []authzProbe{fundA("/v1/funds/FUND_A/performance"), fundA("/v1/funds/FUND_A/performance?asOf=2025-12-31"),
				fundA("/v1/funds/FUND_A/performance?asOf=2025-09-15")}},

		{method: http.MethodGet, path: "/v1/funds", access: authzRecord, cases: []authzCase{
			{who: "A", path: "/v1/funds", status: 200}, {who: "Z", path: "/v1/funds", status: 200},
			{who: "INV1", path: "/v1/funds", status: 200}, {who: "A", path: "/v1/funds?limit=1", status: 200}}},
		{method: http.MethodGet, path: "/v1/funds/:fundId", access: authzRecord, cases: []authzCase{
			{who: "A", path: "/v1/funds/FUND_A", status: 200}, {who: "INV1", path: "/v1/funds/FUND_A", status: 200},
			{who: "Z", path: "/v1/funds/FUND_A", status: 404, unknown: []string{"FUND_A", "FUND_999"}},
			{who: "INV1", path: "/v1/funds/FUND_Y", status: 404, unknown: []string{"FUND_Y", "FUND_999"}}}},
		{method: http.MethodPut, path: "/v1/funds/:fundId", access: authzRecord, body: authzFundRecord, cases: []authzCase{
			{who: "A", path: "/v1/funds/FUND_A", status: 200},
			{who: "Z", path: "/v1/funds/FUND_A", status: 404, unknown: []string{"FUND_A", "FUND_999"}},
			{who: "INV1", path: "/v1/funds/FUND_A", status: 403}}},
		{method: http.MethodGet, path: "/v1/investors", access: authzRecord, cases: []authzCase{
			{who: "A", path: "/v1/investors?fundId=FUND_A", status: 200},
			{who: "Z", path: "/v1/investors?fundId=FUND_A", status: 404, unknown: []string{"FUND_A", "FUND_999"}},
			{who: "A", path: "/v1/investors", status: 400}, {who: "INV1", path: "/v1/investors?fundId=FUND_A", status: 403}}},
		{method: http.MethodGet, path: "/v1/investors/:investorId", access: authzRecord, cases: []authzCase{
			{who: "A", path: "/v1/investors/INVESTOR_1", status: 200}, {who: "INV1", path: "/v1/investors/INVESTOR_1", status: 200},
			{who: "A", path: "/v1/investors/INVESTOR_3", status: 200},
			{who: "Z", path: "/v1/investors/INVESTOR_1", status: 404, unknown: []string{"INVESTOR_1", "INVESTOR_999"}},
			{who: "INV1", path: "/v1/investors/INVESTOR_2", status: 404, unknown: []string{"INVESTOR_2", "INVESTOR_999"}}}},
		{method: http.MethodPut, path: "/v1/investors/:investorId", access: authzRecord, body: authzInvestorRecord, cases: []authzCase{
			{who: "A", path: "/v1/investors/INVESTOR_2", status: 200},
			{who: "Z", path: "/v1/investors/INVESTOR_2", status: 404, unknown: []string{"INVESTOR_2", "INVESTOR_999"}},
			{who: "INV1", path: "/v1/investors/INVESTOR_1", status: 403}}},
		{method: http.MethodPost, path: "/v1/webhooks", access: authzWebhooks, body: authzWebhookBody,
			probes: []authzProbe{{path: "/v1/webhooks"}}},
		{method: http.MethodGet, path: "/v1/webhooks", access: authzWebhooks, probes: []authzProbe{{path: "/v1/webhooks"}}},
		{method: http.MethodGet, path: "/v1/webhooks/:webhookId", access: authzWebhooks, probes: []authzProbe{wh("/v1/webhooks/WH_AUTHZ")}},
		{method: http.MethodPatch, path: "/v1/webhooks/:webhookId", access: authzWebhooks, body: func(string) any { return map[string]any{"enabled": true} },
			probes: []authzProbe{wh("/v1/webhooks/WH_AUTHZ")}},
		{method: http.MethodDelete, path: "/v1/webhooks/:webhookId", access: authzWebhooks, probes: []authzProbe{wh("/v1/webhooks/WH_AUTHZ")}},
		{method: http.MethodGet, path: "/v1/webhooks/:webhookId/deliveries", access: authzWebhooks,
			probes: []authzProbe{wh("/v1/webhooks/WH_AUTHZ/deliveries"), wh("/v1/webhooks/WH_AUTHZ/deliveries?limit=1")}},
		{method: http.MethodPost, path: "/v1/webhooks/:webhookId/deliveries/:eventId/redeliver", access: authzWebhooks,
			probes: []authzProbe{{path: "/v1/webhooks/WH_AUTHZ/deliveries/evt_DOC001_v1/redeliver", status: http.StatusNotFound, unknown: []string{"WH_AUTHZ", "WH_999"}}}},
		{method: http.MethodGet, path: "/v1/imports/templates/:documentKind", access: authzImports,
			probes: []authzProbe{{path: "/v1/imports/templates/capital_call_notice"}, {path: "/v1/imports/templates/capital_account_statement?format=xlsx"}}},
		{method: http.MethodPost, path: "/v1/imports", access: authzImports, probes: []authzProbe{{path: "/v1/imports?dryRun=true"}, {path: "/v1/imports"}}},
		{method: http.MethodGet, path: "/v1/events", access: authzFeed,
			probes: []authzProbe{fundA("/v1/events"), fundA("/v1/events?fund=FUND_A"), fundA("/v1/events?type=document.restated&fund=FUND_A"),
				fundA("/v1/events?limit=1&fund=FUND_A")}},

		{method: http.MethodGet, path: "/v1/investors/:investorId/positions", access: authzPortal,
			probes: []authzProbe{inv("/v1/investors/INVESTOR_1/positions"), inv("/v1/investors/INVESTOR_1/positions?limit=1")},
			others: []authzProbe{inv("/v1/investors/INVESTOR_2/positions"), inv("/v1/investors/INVESTOR_2/positions?limit=1")}},
		{method: http.MethodGet, path: "/v1/positions/:positionId", access: authzPortal,
			probes: positionProbes("POSITION_1"), others: positionProbes("POSITION_2")},
		{method: http.MethodGet, path: "/v1/positions/:positionId/capital-calls", access: authzPortal,
			probes: callProbes("POSITION_1"), others: callProbes("POSITION_2")},
		{method: http.MethodGet, path: "/v1/positions/:positionId/summary", access: authzPortal,
			probes: asOfProbes(pos, "/v1/positions/POSITION_1/summary"), others: asOfProbes(pos, "/v1/positions/POSITION_2/summary")},
		{method: http.MethodGet, path: "/v1/positions/:positionId/cashflows", access: authzPortal,
			probes: asOfProbes(pos, "/v1/positions/POSITION_1/cashflows"), others: asOfProbes(pos, "/v1/positions/POSITION_2/cashflows")},
		{method: http.MethodGet, path: "/v1/investors/:investorId/summary", access: authzPortal,
			probes: largestPage(inv, asOfProbes(inv, "/v1/investors/INVESTOR_1/summary")), others: largestPage(inv, asOfProbes(inv, "/v1/investors/INVESTOR_2/summary"))},
		{method: http.MethodGet, path: "/v1/positions/:positionId/performance", access: authzPortal,
			probes: asOfProbes(pos, "/v1/positions/POSITION_1/performance"), others: asOfProbes(pos, "/v1/positions/POSITION_2/performance")},
		{method: http.MethodGet, path: "/v1/investors/:investorId/performance", access: authzPortal,
			probes: largestPage(inv, asOfProbes(inv, "/v1/investors/INVESTOR_1/performance")), others: largestPage(inv, asOfProbes(inv, "/v1/investors/INVESTOR_2/performance"))},
		{method: http.MethodGet, path: "/v1/positions/:positionId/summary/changes", access: authzPortal,
			probes: changesProbes(pos, "POSITION_1", "summary"), others: changesProbes(pos, "POSITION_2", "summary")},
		{method: http.MethodGet, path: "/v1/positions/:positionId/performance/changes", access: authzPortal,
			probes: changesProbes(pos, "POSITION_1", "performance"), others: changesProbes(pos, "POSITION_2", "performance")},
	}
}

// authzEngine is a second server built with newServer's Options, as the
// router whose routes the matrix must cover.
func authzEngine(t *testing.T, s *testServer) *gin.Engine {
	t.Helper()
	h := api.NewServer(testOptions(t, s.Env, io.Discard))
	e, ok := h.(*gin.Engine)
	if !ok {
		t.Fatalf("api.NewServer returned %T, want *gin.Engine", h)
	}
	return e
}

// authzServer is the API on env with verifier v and newServer's other options.
func authzServer(t *testing.T, env *fundtest.Env, v *api.Verifier) *testServer {
	t.Helper()
	return startAPI(t, env, func(o *api.Options) { o.Verifier = v })
}

// authzTable returns the matrix's entries in the router's order, and fails t
// for every registered route without an entry and every entry without a route.
func authzTable(t *testing.T, s *testServer) []authzRoute {
	t.Helper()
	entries := map[string]authzRoute{}
	for _, r := range authzRoutes() {
		entries[r.method+" "+r.path] = r
	}
	authzWebhookFixture(t, s)
	var registered []string
	for _, r := range authzEngine(t, s).Routes() {
		registered = append(registered, r.Method+" "+r.Path)
	}
	sort.Strings(registered)
	if len(registered) == 0 {
		t.Fatal("the router registers no routes")
	}
	var out []authzRoute
	for _, k := range registered {
		r, ok := entries[k]
		if !ok {
			t.Errorf("route %s is registered but has no entry in the authorization matrix (authzRoutes in api/authz_test.go): "+
				"say who may call it and give it probes", k)
			continue
		}
		out = append(out, r)
		delete(entries, k)
	}
	for k := range entries {
		t.Errorf("the authorization matrix has an entry for %s, which the router does not register", k)
	}
	return out
}

// authzSend sends a request with Authorization set to auth ("" for none).
func authzSend(t *testing.T, s *testServer, method, path string, body any, auth string, headers ...string) response {
	t.Helper()
	r := s.do(t, method, path, body, append([]string{"Authorization", auth}, headers...)...)
	if r.Status >= 500 {
		t.Errorf("%s %s answered %d: an authorization case must never be a server error\n%s", method, path, r.Status, r.Body)
	}
	return r
}

func authzBearer(tok string) string { return "Bearer " + tok }

func authzProblemOf(t *testing.T, r response) problemBody {
	t.Helper()
	var p problemBody
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json (status %d)\n%s", ct, r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Errorf("the error answer is not a problem object: %v\n%s", err, r.Body)
	}
	return p
}

// authzWantProblem asserts r is a problem of status and type.
func authzWantProblem(t *testing.T, r response, status int, typ string) problemBody {
	t.Helper()
	if r.Status != status {
		t.Errorf("status = %d, want %d\n%s", r.Status, status, r.Body)
	}
	p := authzProblemOf(t, r)
	if p.Type != typ || p.Status != r.Status {
		t.Errorf("problem type %q status %d, want %q %d\n%s", p.Type, p.Status, typ, status, r.Body)
	}
	return p
}

// authzWant401 asserts r refuses the request's credentials.
func authzWant401(t *testing.T, r response, presented bool) {
	t.Helper()
	authzWantProblem(t, r, http.StatusUnauthorized, "/problems/unauthorized")
	wa := r.Header.Get("WWW-Authenticate")
	if !strings.HasPrefix(wa, "Bearer") {
		t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", wa)
	}
	if presented && !strings.Contains(wa, `error="invalid_token"`) {
		t.Errorf("WWW-Authenticate = %q, want error=\"invalid_token\" for a bearer token that was sent but refused", wa)
	}
}

// authzOwnData asserts that a successful answer holds data, and only data p
// may see: an admin's every fundId is one of its funds, an investor's every
// investorId is its own (and there is at least one).
func authzOwnData(t *testing.T, r response, p api.Principal) {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("the answer is not JSON: %v\n%s", err, r.Body)
	}
	seen, investors := 0, 0
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if f, ok := x["fundId"].(string); ok {
				seen++
				if p.Role == api.RoleAdmin && !administers(p, f) {
					t.Errorf("the answer to %s holds data of fund %s\n%s", p.Subject, f, r.Body)
				}
			}
			if inv, ok := x["investorId"].(string); ok {
				seen, investors = seen+1, investors+1
				if p.Role == api.RoleInvestor && inv != p.Investor {
					t.Errorf("the answer to investor %s holds data of investor %s\n%s", p.Investor, inv, r.Body)
				}
			}
			if _, ok := x["documentId"].(string); ok {
				seen++
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if m, ok := v.(map[string]any); ok {
		if next, ok := m["next"].(string); ok {
			authzCursorHidesOthers(t, next, p)
		}
	}
	if seen == 0 {
		t.Errorf("the answer holds no data to check\n%s", r.Body)
	}
	if p.Role == api.RoleInvestor && investors == 0 {
		t.Errorf("the answer to investor %s names no investor\n%s", p.Investor, r.Body)
	}
}

var authzCursorKey = regexp.MustCompile(`(FUND|INVESTOR)#([A-Za-z0-9_.:-]+)`)

// authzCursorHidesOthers asserts that a cursor given to p, read as what it
// is (base64url JSON before the signature), names no fund and no investor
// whose data p may not see: signed is not secret.
func authzCursorHidesOthers(t *testing.T, cursor string, p api.Principal) {
	t.Helper()
	body, _, _ := strings.Cut(cursor, ".")
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return // not readable
	}
	for _, m := range authzCursorKey.FindAllStringSubmatch(string(b), -1) {
		leak := false
		switch {
		case m[1] == "FUND" && p.Role == api.RoleAdmin:
			leak = !administers(p, m[2])
		case m[1] == "INVESTOR" && p.Role == api.RoleInvestor:
			leak = m[2] != p.Investor
		}
		if leak {
			t.Errorf("the cursor given to %s reveals %s, which it may not see: %s", p.Subject, m[0], b)
		}
	}
}

// authzLikeUnknown sends a request about someone else's data and the same
// request naming IDs that do not exist, and asserts that both are the same
// answer with status want: same type, title, field, and detail and instance
// once the IDs are substituted.
func authzLikeUnknown(t *testing.T, s *testServer, method, path string, body any, auth string, pairs []string, want int, headers ...string) {
	t.Helper()
	rep := strings.NewReplacer(pairs...)
	unknownPath := rep.Replace(path)
	if unknownPath == path {
		t.Fatalf("no made-up ID for %s", path)
	}
	s.Counter.Reset()
	got := authzSend(t, s, method, path, body, auth, headers...)
	gotOps := s.Counter.Ops()
	s.Counter.Reset()
	ctl := authzSend(t, s, method, unknownPath, body, auth, headers...)
	ctlOps := s.Counter.Ops()
	if got.Status >= 400 && ctl.Status >= 400 {
		// Authorization comes before any read that depends on the data: the
		// refusal costs what an unknown ID costs, operation for operation.
		slices.Sort(gotOps)
		slices.Sort(ctlOps)
		if !slices.Equal(gotOps, ctlOps) || len(gotOps) > 3 {
			t.Errorf("%s %s costs DynamoDB operations %v, but for IDs that do not exist %v: a refusal must cost what an unknown ID costs, at most three operations",
				method, path, gotOps, ctlOps)
		}
	}
	if ctl.Status != want {
		t.Errorf("control: %s %s, naming IDs that do not exist, is %d, want %d\n%s", method, unknownPath, ctl.Status, want, ctl.Body)
	}
	if got.Status != want {
		t.Errorf("%s %s is %d, want %d\n%s", method, path, got.Status, want, got.Body)
	}
	if got.Status != ctl.Status {
		t.Fatalf("not-yours is distinguishable from unknown: %s %s is %d %s, but %s is %d %s",
			method, path, got.Status, got.Body, unknownPath, ctl.Status, ctl.Body)
	}
	if got.Status == http.StatusOK {
		return
	}
	g, c := authzProblemOf(t, got), authzProblemOf(t, ctl)
	if g.Type != c.Type || g.Title != c.Title || g.Field != c.Field {
		t.Errorf("not-yours is distinguishable from unknown: %s is %+v, %s is %+v", path, g, unknownPath, c)
	}
	if rep.Replace(g.Detail) != c.Detail {
		t.Errorf("not-yours is distinguishable from unknown by its detail: %s says %q, but %s says %q", path, g.Detail, unknownPath, c.Detail)
	}
	if rep.Replace(g.Instance) != c.Instance {
		t.Errorf("instance %q does not match %q", g.Instance, c.Instance)
	}
	for _, h := range []string{"ETag", "Location", "WWW-Authenticate", "Content-Type", "Cache-Control"} {
		if (got.Header.Get(h) == "") != (ctl.Header.Get(h) == "") {
			t.Errorf("header %s: %q for %s but %q for %s", h, got.Header.Get(h), path, ctl.Header.Get(h), unknownPath)
		}
	}
}

// Tokens.

func authzClaims(p api.Principal, now time.Time) jwt.MapClaims {
	c := jwt.MapClaims{"sub": p.Subject, "role": p.Role, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	if len(p.Funds) > 0 {
		c["funds"] = p.Funds
	}
	if p.Investor != "" {
		c["investor"] = p.Investor
	}
	return c
}

func authzSign(t *testing.T, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", m.Alg(), err)
	}
	return s
}

func authzSegment(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// authzUnsigned builds a token by hand: header, claims, empty signature.
func authzUnsigned(t *testing.T, header map[string]any, c jwt.MapClaims) string {
	t.Helper()
	return authzSegment(t, header) + "." + authzSegment(t, c) + "."
}

// authzBadToken is a credential every protected route must refuse with 401.
type authzBadToken struct {
	name string
	auth string // the Authorization header, "" for none
	// presented: a bearer token was sent (and refused), so the challenge
	// carries error="invalid_token".
	presented bool
}

// authzBadHS256Tokens are refused by a server that accepts HS256 tokens
// signed with testSecret.
func authzBadHS256Tokens(t *testing.T) []authzBadToken {
	now := time.Now()
	secret := []byte(testSecret)
	with := func(p api.Principal, change func(c jwt.MapClaims)) jwt.MapClaims {
		c := authzClaims(p, now)
		change(c)
		return c
	}
	hs := func(c jwt.MapClaims) string { return authzBearer(authzSign(t, jwt.SigningMethodHS256, secret, "", c)) }
	valid := authzSign(t, jwt.SigningMethodHS256, secret, "", authzClaims(authzInvestor1, now))
	head, _, _ := strings.Cut(valid, ".")
	sig := valid[strings.LastIndex(valid, ".")+1:]
	return []authzBadToken{
		{name: "no token", auth: ""},
		{name: "a Basic credential instead of a bearer token", auth: "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+testSecret))},
		{name: "a valid token without the Bearer scheme", auth: valid},
		{name: "an empty bearer token", auth: "Bearer "},
		{name: "an expired token", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) {
			c["iat"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix()
		}))},
		{name: "a token expired 30 seconds ago, beyond the 5-second leeway", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) {
			c["iat"], c["exp"] = now.Add(-time.Hour).Unix(), now.Add(-30*time.Second).Unix()
		}))},
		{name: "a token signed with another secret", presented: true,
			auth: authzBearer(authzSign(t, jwt.SigningMethodHS256, []byte("another-secret-0123456789-abcdefghijkl"), "", authzClaims(authzAdminA, now)))},
		{name: "an alg none token", presented: true,
			auth: authzBearer(authzUnsigned(t, map[string]any{"alg": "none", "typ": "JWT"}, authzClaims(authzAdminA, now)))},
		{name: "an alg none token carrying a valid token's signature", presented: true,
			auth: authzBearer(authzSegment(t, map[string]any{"alg": "none", "typ": "JWT"}) + "." + authzSegment(t, authzClaims(authzInvestor1, now)) + "." + sig)},
		{name: "an HS256 token with its signature removed", presented: true, auth: authzBearer(strings.TrimSuffix(valid, sig))},
		{name: "a token whose payload was changed after signing", presented: true,
			auth: authzBearer(head + "." + authzSegment(t, authzClaims(adminOfAll, now)) + "." + sig)},
		{name: "an HS384 token signed with the right secret", presented: true,
			auth: authzBearer(authzSign(t, jwt.SigningMethodHS384, secret, "", authzClaims(authzAdminA, now)))},
		{name: "a token without exp", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) { delete(c, "exp") }))},
		{name: "a token issued an hour from now", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) {
			c["iat"], c["exp"] = now.Add(time.Hour).Unix(), now.Add(2*time.Hour).Unix()
		}))},
		{name: "a token not valid before an hour from now", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() }))},
		{name: "a token with role root", presented: true, auth: hs(with(adminOfAll, func(c jwt.MapClaims) { c["role"] = "root" }))},
		{name: "a token without a role", presented: true, auth: hs(with(adminOfAll, func(c jwt.MapClaims) { delete(c, "role") }))},
		{name: "an admin token without funds", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) { delete(c, "funds") }))},
		{name: "an admin token with an empty funds list", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) { c["funds"] = []string{} }))},
		{name: "an admin token that also names an investor", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) { c["investor"] = "INVESTOR_1" }))},
		{name: "an admin token naming an invalid fund ID", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) { c["funds"] = []string{"FUND#A"} }))},
		{name: "an investor token without an investor", presented: true, auth: hs(with(authzInvestor1, func(c jwt.MapClaims) { delete(c, "investor") }))},
		{name: "an investor token that also names funds", presented: true, auth: hs(with(authzInvestor1, func(c jwt.MapClaims) { c["funds"] = []string{"*"} }))},
		{name: "a token without a subject", presented: true, auth: hs(with(authzAdminA, func(c jwt.MapClaims) { delete(c, "sub") }))},
		{name: "a token that is not a JWT", presented: true, auth: "Bearer not-a-token"},
	}
}

// authzFreshID names a document no other request has used.
var authzFreshID atomic.Int64

// authzPositive sends r's first probe as the admin of FUND_A with auth (a
// new document for a write) and checks the answer is a success with only
// FUND_A's data.
func authzPositive(t *testing.T, s *testServer, r authzRoute, auth string) {
	t.Helper()
	path, want := r.probes[0].path, http.StatusOK
	var headers []string
	switch {
	case r.access == authzEveryFund: // the token is accepted, and refused by its scope
		want = http.StatusForbidden
	case r.access == authzRecord: // a record PUT replaces the demo's record: 200
	case r.method == http.MethodPut:
		path, want = fmt.Sprintf("/v1/documents/AUTHZ_DOC_%d", authzFreshID.Add(1)), http.StatusCreated
	case r.method == http.MethodDelete:
		// A document of its own to void, created with the same token.
		path = fmt.Sprintf("/v1/documents/AUTHZ_DOC_%d", authzFreshID.Add(1))
		if res := authzSend(t, s, http.MethodPut, path, authzDocument("FUND_A"), auth); res.Status != http.StatusCreated {
			t.Fatalf("PUT %s: status %d\n%s", path, res.Status, res.Body)
		}
		headers = []string{"If-Match", `"1"`}
	}
	if r.access == authzWebhooks {
		path, want = authzWebhookPositive(t, s, r, auth)
	}
	body := r.bodyFor("FUND_A")
	if r.access == authzImports && r.method == http.MethodPost {
		body, headers = authzImportFile("FUND_A"), []string{"Content-Type", "text/csv"}
	}
	res := authzSend(t, s, r.method, path, body, auth, headers...)
	if res.Status != want {
		t.Fatalf("%s %s: status %d, want %d\n%s", r.method, path, res.Status, want, res.Body)
	}
	if r.access == authzAdmin || r.access == authzPortal || r.access == authzFeed {
		authzOwnData(t, res, authzAdminA)
	}
	if r.access == authzRecord {
		authzRecordData(t, s, res, authzAdminA)
	}
}

// TestAuthzMatrix runs every route against every kind of bad token and every
// principal on the demo data.
func TestAuthzMatrix(t *testing.T) {
	s := newServer(t, true)
	authzSettled(s.Env)
	table := authzTable(t, s)
	bad := authzBadHS256Tokens(t)
	asA, asZ, asInv := authzBearer(token(t, authzAdminA)), authzBearer(token(t, authzAdminZ)), authzBearer(token(t, authzInvestor1))

	cases := 0
	run := func(name string, f func(t *testing.T)) {
		cases++
		t.Run(name, f)
	}

	for _, r := range table {
		name := r.name()
		first := r.probes[0]

		if r.access == authzOpen {
			run(name+" with no token is 200", func(t *testing.T) {
				if res := authzSend(t, s, r.method, first.path, nil, ""); res.Status != http.StatusOK {
					t.Errorf("status %d\n%s", res.Status, res.Body)
				}
			})
			continue
		}

		// Credentials: every protected route refuses every bad token the same way.
		for _, k := range bad {
			run(fmt.Sprintf("%s with %s is 401", name, k.name), func(t *testing.T) {
				authzWant401(t, authzSend(t, s, r.method, first.path, r.bodyFor("FUND_A"), k.auth), k.presented)
			})
		}

		switch r.access {
		case authzWebhooks:
			for _, p := range r.probes {
				for _, path := range []string{p.path, strings.NewReplacer(p.unknown...).Replace(p.path)} {
					run(fmt.Sprintf("%s %s by investor INVESTOR_1 is 403", r.method, path), func(t *testing.T) {
						authzWantProblem(t, authzSend(t, s, r.method, path, r.bodyFor("FUND_A"), asInv), http.StatusForbidden, "/problems/forbidden")
					})
				}
			}
			authzWebhookCases(t, s, r, run, asA, asZ)

		case authzAnyToken:
			for _, who := range []struct{ name, auth string }{{"the admin of FUND_A", asA}, {"the admin of FUND_Z", asZ}, {"investor INVESTOR_1", asInv}} {
				run(fmt.Sprintf("%s by %s is 200", name, who.name), func(t *testing.T) {
					if res := authzSend(t, s, r.method, first.path, nil, who.auth); res.Status != http.StatusOK {
						t.Errorf("status %d\n%s", res.Status, res.Body)
					}
				})
			}

		case authzEveryFund:
			for _, who := range []struct{ name, auth string }{{"the admin of FUND_A", asA}, {"the admin of FUND_Z", asZ}, {"investor INVESTOR_1", asInv}} {
				run(fmt.Sprintf("%s by %s is 403", name, who.name), func(t *testing.T) {
					authzWantProblem(t, authzSend(t, s, r.method, first.path, nil, who.auth), http.StatusForbidden, "/problems/forbidden")
				})
			}
			run(name+" by an admin of every fund is 200", func(t *testing.T) {
				if res := authzSend(t, s, r.method, first.path, nil, authzBearer(token(t, adminOfAll))); res.Status != http.StatusOK {
					t.Errorf("status %d\n%s", res.Status, res.Body)
				}
			})

		case authzAdmin:
			// Investors may not use admin routes, whatever the ID.
			for _, p := range r.probes {
				for _, path := range []string{p.path, strings.NewReplacer(p.unknown...).Replace(p.path)} {
					run(fmt.Sprintf("%s %s by investor INVESTOR_1 is 403", r.method, path), func(t *testing.T) {
						authzWantProblem(t, authzSend(t, s, r.method, path, r.bodyFor("FUND_A"), asInv), http.StatusForbidden, "/problems/forbidden")
					})
				}
			}
			if r.method == http.MethodPut {
				authzPutCases(t, s, run, asA, asZ)
				continue
			}
			if r.method == http.MethodDelete {
				authzDeleteCases(t, s, run, asA, asZ)
				continue
			}
			for _, p := range r.probes {
				want := p.status
				if want == 0 {
					want = http.StatusOK
				}
				run(fmt.Sprintf("%s %s by the admin of FUND_A is %d with only FUND_A's data", r.method, p.path, want), func(t *testing.T) {
					res := authzSend(t, s, r.method, p.path, nil, asA)
					if want != http.StatusOK {
						authzWantProblem(t, res, want, "/problems/not_found")
						return
					}
					if res.Status != http.StatusOK {
						t.Fatalf("status %d\n%s", res.Status, res.Body)
					}
					authzOwnData(t, res, authzAdminA)
				})
				unknown := strings.NewReplacer(p.unknown...).Replace(p.path)
				run(fmt.Sprintf("%s %s by the admin of FUND_Z is 404, as for %s", r.method, p.path, unknown), func(t *testing.T) {
					authzLikeUnknown(t, s, r.method, p.path, nil, asZ, p.unknown, http.StatusNotFound)
				})
			}

		case authzRecord:
			as := map[string]struct {
				auth string
				p    api.Principal
			}{"A": {asA, authzAdminA}, "Z": {asZ, authzAdminZ}, "INV1": {asInv, authzInvestor1}}
			for _, k := range r.cases {
				who := as[k.who]
				run(fmt.Sprintf("%s %s by %s is %d", r.method, k.path, who.p.Subject, k.status), func(t *testing.T) {
					if k.unknown != nil {
						authzLikeUnknown(t, s, r.method, k.path, r.bodyFor("FUND_A"), who.auth, k.unknown, k.status)
						return
					}
					res := authzSend(t, s, r.method, k.path, r.bodyFor("FUND_A"), who.auth)
					if res.Status != k.status {
						t.Fatalf("status %d\n%s", res.Status, res.Body)
					}
					if k.status == http.StatusOK {
						authzRecordData(t, s, res, who.p)
					}
				})
			}
		case authzFeed:
			authzFeedCases(t, s, r, run, asA, asZ, asInv)
		case authzImports:
			authzImportCases(t, s, r, run, asA, asZ, asInv)

		case authzPortal:
			for _, p := range r.probes {
				unknown := strings.NewReplacer(p.unknown...).Replace(p.path)
				run(fmt.Sprintf("%s %s by investor INVESTOR_1 is 200 with only INVESTOR_1's data", r.method, p.path), func(t *testing.T) {
					res := authzSend(t, s, r.method, p.path, nil, asInv)
					if res.Status != http.StatusOK {
						t.Fatalf("status %d\n%s", res.Status, res.Body)
					}
					authzOwnData(t, res, authzInvestor1)
				})
				run(fmt.Sprintf("%s %s by the admin of FUND_A is 200 with only FUND_A's data", r.method, p.path), func(t *testing.T) {
					res := authzSend(t, s, r.method, p.path, nil, asA)
					if res.Status != http.StatusOK {
						t.Fatalf("status %d\n%s", res.Status, res.Body)
					}
					authzOwnData(t, res, authzAdminA)
				})
				run(fmt.Sprintf("%s %s by the admin of FUND_Z is 404, as for %s", r.method, p.path, unknown), func(t *testing.T) {
					authzLikeUnknown(t, s, r.method, p.path, nil, asZ, p.unknown, http.StatusNotFound)
				})
			}
			for _, p := range r.others {
				unknown := strings.NewReplacer(p.unknown...).Replace(p.path)
				run(fmt.Sprintf("%s %s by investor INVESTOR_1 is 404, as for %s", r.method, p.path, unknown), func(t *testing.T) {
					authzLikeUnknown(t, s, r.method, p.path, nil, asInv, p.unknown, http.StatusNotFound)
				})
				run(fmt.Sprintf("%s %s by the admin of FUND_A is 200 with only FUND_A's data", r.method, p.path), func(t *testing.T) {
					res := authzSend(t, s, r.method, p.path, nil, asA)
					if res.Status != http.StatusOK {
						t.Fatalf("status %d\n%s", res.Status, res.Body)
					}
					authzOwnData(t, res, authzAdminA)
				})
				run(fmt.Sprintf("%s %s by the admin of FUND_Z is 404, as for %s", r.method, p.path, unknown), func(t *testing.T) {
					authzLikeUnknown(t, s, r.method, p.path, nil, asZ, p.unknown, http.StatusNotFound)
				})
			}
		}
	}

	run("no refused request changed the demo documents", func(t *testing.T) {
		for doc, version := range map[string]float64{"DOC001": 2, "DOC002": 1} {
			res := s.do(t, http.MethodGet, "/v1/documents/"+doc+"/versions/latest", nil)
			if res.Status != http.StatusOK {
				t.Fatalf("GET %s latest: %d\n%s", doc, res.Status, res.Body)
			}
			got := res.JSON(t)
			if got["version"] != version || got["fundId"] != "FUND_A" {
				t.Errorf("%s is now version %v of %v, want version %v of FUND_A", doc, got["version"], got["fundId"], version)
			}
		}
		for _, path := range []string{"/v1/documents/DOC999/versions/latest", "/v1/funds/FUND_Z/documents"} {
			if res := s.do(t, http.MethodGet, path, nil); res.Status != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404 (a refused write created it)\n%s", path, res.Status, res.Body)
			}
		}
	})
	t.Logf("authorization matrix: %d routes, %d cases", len(table), cases)
}

// authzRecordData asserts that a record answer names only funds and
// investors p may read: an admin's funds, an investor's own record and the
// funds it holds positions of (INVESTOR_1: FUND_A), and an admin's
// investors only those holding positions of its funds.
func authzRecordData(t *testing.T, s *testServer, r response, p api.Principal) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("the answer is not a JSON object: %v\n%s", err, r.Body)
	}
	items, ok := v["items"].([]any)
	if !ok {
		items = []any{v}
	}
	for _, e := range items {
		m, _ := e.(map[string]any)
		if f, ok := m["fundId"].(string); ok {
			if (p.Role == api.RoleAdmin && !administers(p, f)) || (p.Role == api.RoleInvestor && f != "FUND_A") {
				t.Errorf("the answer to %s names fund %s\n%s", p.Subject, f, r.Body)
			}
		}
		if inv, ok := m["investorId"].(string); ok {
			if (p.Role == api.RoleInvestor && inv != p.Investor) || (p.Role == api.RoleAdmin && !administers(p, "FUND_A")) {
				t.Errorf("the answer to %s names investor %s\n%s", p.Subject, inv, r.Body)
			}
		}
	}
	if next, ok := v["next"].(string); ok {
		authzCursorHidesOthers(t, next, p)
	}
}

// authzFeedCases are the event feed's: a route without an ID in its path,
// whose scope is a filter. The admin of FUND_A and investor INVESTOR_1 get
// only their own events (the admin's of FUND_A, the investor's listing
// only its positions); the admin of FUND_Z gets no event of FUND_A, and
// asking for FUND_A by name is 404, as for a fund that does not exist.
func authzFeedCases(t *testing.T, s *testServer, r authzRoute, run func(string, func(*testing.T)), asA, asZ, asInv string) {
	items := func(t *testing.T, res response) []any {
		t.Helper()
		if res.Status != http.StatusOK {
			t.Fatalf("status %d\n%s", res.Status, res.Body)
		}
		list, _ := res.JSON(t)["items"].([]any)
		return list
	}
	for _, p := range r.probes {
		run(fmt.Sprintf("GET %s by the admin of FUND_A is 200 with only FUND_A's events", p.path), func(t *testing.T) {
			res := authzSend(t, s, http.MethodGet, p.path, nil, asA)
			if len(items(t, res)) == 0 {
				t.Fatalf("no event\n%s", res.Body)
			}
			authzOwnData(t, res, authzAdminA)
		})
		run(fmt.Sprintf("GET %s by investor INVESTOR_1 is 200 with only INVESTOR_1's positions", p.path), func(t *testing.T) {
			res := authzSend(t, s, http.MethodGet, p.path, nil, asInv)
			if len(items(t, res)) == 0 {
				t.Fatalf("no event\n%s", res.Body)
			}
			authzOwnData(t, res, authzInvestor1)
		})
		if strings.Contains(p.path, "fund=FUND_A") {
			run(fmt.Sprintf("GET %s by the admin of FUND_Z is 404, as for FUND_999", p.path), func(t *testing.T) {
				authzLikeUnknown(t, s, http.MethodGet, p.path, nil, asZ, p.unknown, http.StatusNotFound)
			})
		} else {
			run(fmt.Sprintf("GET %s by the admin of FUND_Z is 200 with no event of FUND_A", p.path), func(t *testing.T) {
				if got := items(t, authzSend(t, s, http.MethodGet, p.path, nil, asZ)); len(got) != 0 {
					t.Errorf("the admin of FUND_Z sees %v", got)
				}
			})
		}
	}
}

// authzSettled moves the clock of env's store past the settle margin of
// the demo's commits, so that the event feed lists them.
func authzSettled(env *fundtest.Env) {
	env.Store.Now = func() time.Time { return fundtest.Clock.Add(store.ChangeSettleMargin + time.Minute) }
}

// authzPutCases are the writes by admins: the admin of FUND_A creates and
// restates its documents; the admin of FUND_Z can neither restate FUND_A's
// document for its own fund (404, as if absent) nor write for FUND_A (403).
func authzPutCases(t *testing.T, s *testServer, run func(string, func(*testing.T)), asA, asZ string) {
	run("PUT /v1/documents/{documentId} by the admin of FUND_A creates a FUND_A document (201) and restates it (200)", func(t *testing.T) {
		path := fmt.Sprintf("/v1/documents/AUTHZ_DOC_%d", authzFreshID.Add(1))
		for _, want := range []int{http.StatusCreated, http.StatusOK} {
			res := authzSend(t, s, http.MethodPut, path, authzDocument("FUND_A"), asA)
			if res.Status != want {
				t.Fatalf("PUT %s: status %d, want %d\n%s", path, res.Status, want, res.Body)
			}
			authzOwnData(t, res, authzAdminA)
		}
	})
	run("PUT /v1/documents/DOC001 for fund FUND_Z by the admin of FUND_Z is 404, as GET of an unknown document", func(t *testing.T) {
		res := authzSend(t, s, http.MethodPut, "/v1/documents/DOC001", authzDocument("FUND_Z"), asZ)
		p := authzWantProblem(t, res, http.StatusNotFound, "/problems/not_found")
		ctl := authzProblemOf(t, authzSend(t, s, http.MethodGet, "/v1/documents/DOC999", nil, asZ))
		if d := strings.ReplaceAll(p.Detail, "DOC001", "DOC999"); d != ctl.Detail || p.Type != ctl.Type {
			t.Errorf("PUT DOC001 says %s %q; GET of an unknown document says %s %q", p.Type, p.Detail, ctl.Type, ctl.Detail)
		}
	})
	run("PUT /v1/documents/DOC001 for fund FUND_A by the admin of FUND_Z is 403 (token does not cover), as for DOC999", func(t *testing.T) {
		res := authzSend(t, s, http.MethodPut, "/v1/documents/DOC001", authzDocument("FUND_A"), asZ)
		p := authzWantProblem(t, res, http.StatusForbidden, "/problems/forbidden")
		if !strings.Contains(p.Detail, "token does not cover") || p.Field != "fundId" {
			t.Errorf("detail %q field %q, want one that says the token does not cover the fund, on fundId", p.Detail, p.Field)
		}
		authzLikeUnknown(t, s, http.MethodPut, "/v1/documents/DOC001", authzDocument("FUND_A"), asZ, []string{"DOC001", "DOC999"}, http.StatusForbidden)
	})
	run("PUT /v1/documents/{documentId} with the admin of FUND_A's Idempotency-Key is replayed to it alone, not to the admin of FUND_Z", func(t *testing.T) {
		path := fmt.Sprintf("/v1/documents/AUTHZ_DOC_%d", authzFreshID.Add(1))
		key := fmt.Sprintf("authz-key-%d", authzFreshID.Add(1))
		first := authzSend(t, s, http.MethodPut, path, authzDocument("FUND_A"), asA, "Idempotency-Key", key)
		if first.Status != http.StatusCreated {
			t.Fatalf("first PUT: %d\n%s", first.Status, first.Body)
		}
		again := authzSend(t, s, http.MethodPut, path, authzDocument("FUND_A"), asA, "Idempotency-Key", key)
		if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("control: the same PUT by the same admin is %d, Idempotent-Replayed %q; want the 201 replayed\n%s",
				again.Status, again.Header.Get("Idempotent-Replayed"), again.Body)
		}
		other := authzSend(t, s, http.MethodPut, path, authzDocument("FUND_A"), asZ, "Idempotency-Key", key)
		if other.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the admin of FUND_Z got the admin of FUND_A's response replayed: %d\n%s", other.Status, other.Body)
		}
		p := authzWantProblem(t, other, http.StatusForbidden, "/problems/forbidden")
		if !strings.Contains(p.Detail, "token does not cover") {
			t.Errorf("detail %q, want one that says the token does not cover the fund", p.Detail)
		}
		// Keys are per principal: another admin's different request under
		// the same key is judged on its own (404: the document is FUND_A's),
		// never 422, which would reveal that someone used the key.
		asY := authzBearer(token(t, api.Principal{Subject: "admin-of-fund-y", Role: api.RoleAdmin, Funds: []string{"FUND_Y"}}))
		mine := authzSend(t, s, http.MethodPut, path, authzDocument("FUND_Y"), asY, "Idempotency-Key", key)
		authzWantProblem(t, mine, http.StatusNotFound, "/problems/not_found")
	})
	run("PUT /v1/documents/DOC001 with If-Match: * for fund FUND_Z by the admin of FUND_Z is 412, as for DOC999", func(t *testing.T) {
		authzLikeUnknown(t, s, http.MethodPut, "/v1/documents/DOC001", authzDocument("FUND_Z"), asZ, []string{"DOC001", "DOC999"},
			http.StatusPreconditionFailed, "If-Match", "*")
	})
}

// authzDeleteCases are the voids by admins: the admin of FUND_A voids its
// document; the admin of FUND_Z cannot void FUND_A's (404, as an unknown
// document, with nothing written: the matrix's last case finds DOC001 at
// its version 2).
func authzDeleteCases(t *testing.T, s *testServer, run func(string, func(*testing.T)), asA, asZ string) {
	run("DELETE /v1/documents/{documentId} by the admin of FUND_A voids a FUND_A document (200)", func(t *testing.T) {
		path := fmt.Sprintf("/v1/documents/AUTHZ_DOC_%d", authzFreshID.Add(1))
		if res := authzSend(t, s, http.MethodPut, path, authzDocument("FUND_A"), asA); res.Status != http.StatusCreated {
			t.Fatalf("PUT %s: %d\n%s", path, res.Status, res.Body)
		}
		res := authzSend(t, s, http.MethodDelete, path, nil, asA, "If-Match", `"1"`)
		if res.Status != http.StatusOK || res.JSON(t)["status"] != "voided" {
			t.Fatalf("DELETE %s: status %d\n%s", path, res.Status, res.Body)
		}
		authzOwnData(t, res, authzAdminA)
	})
	for _, ifMatch := range []string{`"2"`, "*"} {
		run("DELETE /v1/documents/DOC001 with If-Match: "+ifMatch+" by the admin of FUND_Z is 404, as for DOC999", func(t *testing.T) {
			authzLikeUnknown(t, s, http.MethodDelete, "/v1/documents/DOC001", nil, asZ, []string{"DOC001", "DOC999"}, http.StatusNotFound, "If-Match", ifMatch)
		})
	}
	run("DELETE /v1/documents/DOC001 without If-Match by the admin of FUND_Z is 428, as for DOC999", func(t *testing.T) {
		authzLikeUnknown(t, s, http.MethodDelete, "/v1/documents/DOC001", nil, asZ, []string{"DOC001", "DOC999"}, http.StatusPreconditionRequired)
	})
}

// TestAuthzCursorsAreBoundToThePrincipal presents cursors to principals and
// queries other than the ones they were issued to.
func TestAuthzCursorsAreBoundToThePrincipal(t *testing.T) {
	s := newServer(t, true)
	asAll := authzBearer(token(t, adminOfAll))
	asA := authzBearer(token(t, authzAdminA))
	asASameSubject := authzBearer(token(t, api.Principal{Subject: adminOfAll.Subject, Role: api.RoleAdmin, Funds: []string{"FUND_A"}}))
	asInv := authzBearer(token(t, authzInvestor1))

	next := func(t *testing.T, path, auth string) string {
		t.Helper()
		res := authzSend(t, s, http.MethodGet, path, nil, auth)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, res.Status, res.Body)
		}
		n, _ := res.JSON(t)["next"].(string)
		if n == "" {
			t.Fatalf("GET %s gave no next cursor\n%s", path, res.Body)
		}
		return n
	}
	with := func(path, cur string) string {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		return path + sep + "cursor=" + url.QueryEscape(cur)
	}
	refused := func(t *testing.T, path, auth string) {
		t.Helper()
		p := authzWantProblem(t, authzSend(t, s, http.MethodGet, path, nil, auth), http.StatusBadRequest, "/problems/invalid")
		if p.Field != "cursor" {
			t.Errorf("field = %q, want cursor", p.Field)
		}
	}
	accepted := func(t *testing.T, path, auth string) {
		t.Helper()
		if res := authzSend(t, s, http.MethodGet, path, nil, auth); res.Status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", path, res.Status, res.Body)
		}
	}

	const positions = "/v1/funds/FUND_A/positions?limit=1"
	cur := next(t, positions, asAll)
	t.Run("a fund positions cursor is accepted from the admin of all funds that obtained it", func(t *testing.T) {
		accepted(t, with(positions, cur), asAll)
	})
	t.Run("a fund positions cursor of the admin of all funds is refused to the admin of FUND_A", func(t *testing.T) {
		refused(t, with(positions, cur), asA)
	})
	t.Run("a fund positions cursor of the admin of all funds is refused to an admin of FUND_A with the same subject", func(t *testing.T) {
		refused(t, with(positions, cur), asASameSubject)
	})
	for _, other := range []string{"/v1/funds/FUND_A/documents?limit=1", "/v1/investors/INVESTOR_1/positions?limit=1",
		"/v1/positions/POSITION_1?limit=1", "/v1/positions/POSITION_1/capital-calls?limit=1", "/v1/documents/DOC001?limit=1"} {
		t.Run("a fund positions cursor is refused by the same token on "+other, func(t *testing.T) {
			refused(t, with(other, cur), asAll)
		})
	}

	const items = "/v1/positions/POSITION_1?limit=1"
	invCur := next(t, items, asInv)
	t.Run("an investor's position cursor is accepted from that investor", func(t *testing.T) { accepted(t, with(items, invCur), asInv) })
	t.Run("an investor's position cursor is refused to the admin of all funds", func(t *testing.T) { refused(t, with(items, invCur), asAll) })
	t.Run("an investor's position cursor is refused to the admin of FUND_A", func(t *testing.T) { refused(t, with(items, invCur), asA) })

	const overview = "/v1/documents/DOC001?limit=1"
	ovCur := next(t, overview, asAll)
	t.Run("an overview cursor is accepted from the admin that obtained it", func(t *testing.T) { accepted(t, with(overview, ovCur), asAll) })
	t.Run("an overview cursor of the admin of all funds is refused to the admin of FUND_A", func(t *testing.T) {
		refused(t, with(overview, ovCur), asA)
	})
}

// TestAuthzAnInvestorInTwoFunds gives INVESTOR_1 a position in FUND_Z too:
// each fund's admin sees only its own fund's part of the investor.
func TestAuthzAnInvestorInTwoFunds(t *testing.T) {
	s := newServer(t, true)
	body := map[string]any{"fundId": "FUND_Z", "kind": "capital_call_notice", "title": "Fund Z notice", "asOf": "2025-11-01", "currency": "USD",
		"positions": []any{
			map[string]any{"positionId": "POSITION_Z1", "investorId": "INVESTOR_1", "capitalCall": map[string]any{"amount": "10.00"}},
			map[string]any{"positionId": "POSITION_Z2", "investorId": "INVESTOR_Z", "capitalCall": map[string]any{"amount": "20.00"}},
		}}
	if res := s.do(t, http.MethodPut, "/v1/documents/DOC_Z1", body); res.Status != http.StatusCreated {
		t.Fatalf("PUT DOC_Z1: %d\n%s", res.Status, res.Body)
	}
	asA, asZ, asInv := authzBearer(token(t, authzAdminA)), authzBearer(token(t, authzAdminZ)), authzBearer(token(t, authzInvestor1))

	// pages follows next from path and returns every item's positionId.
	pages := func(t *testing.T, path, auth string, p api.Principal) []string {
		t.Helper()
		var ids []string
		cur := ""
		for range 20 {
			u := path
			if cur != "" {
				u += "&cursor=" + url.QueryEscape(cur)
			}
			res := authzSend(t, s, http.MethodGet, u, nil, auth)
			if res.Status != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", u, res.Status, res.Body)
			}
			var pg struct {
				Items []struct{ PositionID, FundID, InvestorID string }
				Next  string
			}
			if err := json.Unmarshal(res.Body, &pg); err != nil {
				t.Fatal(err)
			}
			if pg.Next != "" {
				authzCursorHidesOthers(t, pg.Next, p)
			}
			for _, it := range pg.Items {
				if (p.Role == api.RoleAdmin && !administers(p, it.FundID)) || (p.Role == api.RoleInvestor && it.InvestorID != p.Investor) {
					t.Errorf("GET %s as %s holds %+v", u, p.Subject, it)
				}
				ids = append(ids, it.PositionID)
			}
			if cur = pg.Next; cur == "" {
				sort.Strings(ids)
				return ids
			}
		}
		t.Fatalf("GET %s: too many pages", path)
		return nil
	}

	for _, tc := range []struct {
		who  string
		auth string
		p    api.Principal
		want []string
	}{
		{"the admin of FUND_A", asA, authzAdminA, []string{"POSITION_1"}},
		{"the admin of FUND_Z", asZ, authzAdminZ, []string{"POSITION_Z1"}},
		{"investor INVESTOR_1", asInv, authzInvestor1, []string{"POSITION_1", "POSITION_Z1"}},
	} {
		for _, limit := range []string{"100", "2", "1"} {
			path := "/v1/investors/INVESTOR_1/positions?limit=" + limit
			t.Run(fmt.Sprintf("GET %s by %s lists %v", path, tc.who, tc.want), func(t *testing.T) {
				if got := pages(t, path, tc.auth, tc.p); !slices.Equal(got, tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			})
		}
	}
	t.Run("GET /v1/positions/POSITION_Z1 by the admin of FUND_Z and by investor INVESTOR_1 is 200", func(t *testing.T) {
		for _, who := range []struct {
			auth string
			p    api.Principal
		}{{asZ, authzAdminZ}, {asInv, authzInvestor1}} {
			res := authzSend(t, s, http.MethodGet, "/v1/positions/POSITION_Z1", nil, who.auth)
			if res.Status != http.StatusOK {
				t.Fatalf("as %s: %d\n%s", who.p.Subject, res.Status, res.Body)
			}
			authzOwnData(t, res, who.p)
		}
	})
	for _, tc := range []struct {
		path  string
		pairs []string
	}{
		{"/v1/positions/POSITION_Z1", []string{"POSITION_Z1", "POSITION_999"}},
		{"/v1/positions/POSITION_Z2/capital-calls?document=DOC_Z1", []string{"POSITION_Z2", "POSITION_999"}},
		{"/v1/investors/INVESTOR_Z/positions", []string{"INVESTOR_Z", "INVESTOR_999"}},
		{"/v1/documents/DOC_Z1", []string{"DOC_Z1", "DOC999"}},
		{"/v1/funds/FUND_Z/positions", []string{"FUND_Z", "FUND_999"}},
	} {
		t.Run(fmt.Sprintf("GET %s by the admin of FUND_A is 404, as for an unknown ID", tc.path), func(t *testing.T) {
			authzLikeUnknown(t, s, http.MethodGet, tc.path, nil, asA, tc.pairs, http.StatusNotFound)
		})
	}
	t.Run("GET /v1/positions/POSITION_Z2 by investor INVESTOR_1 is 404, as for an unknown ID", func(t *testing.T) {
		authzLikeUnknown(t, s, http.MethodGet, "/v1/positions/POSITION_Z2", nil, asInv, []string{"POSITION_Z2", "POSITION_999"}, http.StatusNotFound)
	})
}

// authzKeys is a JWKS of one RSA and one P-256 key, with their private halves.
type authzKeys struct {
	jwks []byte
	rsa  *rsa.PrivateKey
	ec   *ecdsa.PrivateKey
}

func authzNewKeys(t *testing.T) authzKeys {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	point, err := ek.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	doc, err := json.Marshal(map[string]any{"keys": []any{
		map[string]string{"kty": "RSA", "kid": "rsa-1", "alg": "RS256", "use": "sig",
			"n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
		map[string]string{"kty": "EC", "kid": "ec-1", "alg": "ES256", "use": "sig", "crv": "P-256",
			"x": b64(point[1:33]), "y": b64(point[33:])},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return authzKeys{jwks: doc, rsa: rk, ec: ek}
}

// TestAuthzVerifierConfigurations runs every protected route on servers
// configured with only a JWKS (RS256 and ES256) and the audience it
// requires (tokens without it, or for other audiences only, are 401), and
// with an issuer and an audience.
func TestAuthzVerifierConfigurations(t *testing.T) {
	env := fundtest.New(t)
	env.Seed(t)
	authzSettled(env)
	plain := &testServer{Env: env}
	table := authzTable(t, plain)
	now := time.Now()
	cases := 0

	t.Run("a server with only a JWKS", func(t *testing.T) {
		keys := authzNewKeys(t)
		const aud = "fundsvc-api"
		v, err := api.NewVerifier(api.AuthConfig{JWKS: keys.jwks, Audience: aud, Leeway: 5 * time.Second})
		if err != nil {
			t.Fatalf("NewVerifier with the JWKS: %v", err)
		}
		s := authzServer(t, env, v)

		other, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		pkix, err := x509.MarshalPKIXPublicKey(&keys.rsa.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		pkcs1 := x509.MarshalPKCS1PublicKey(&keys.rsa.PublicKey)
		ecPKIX, err := x509.MarshalPKIXPublicKey(&keys.ec.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		pkixPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})
		// claimsFor are an admin of FUND_A's claims, with aud when given.
		claimsFor := func(audience any) jwt.MapClaims {
			c := authzClaims(authzAdminA, now)
			if audience != nil {
				c["aud"] = audience
			}
			return c
		}
		claims := claimsFor(aud)
		hs := func(secret []byte) string {
			return authzBearer(authzSign(t, jwt.SigningMethodHS256, secret, "rsa-1", claims))
		}
		bad := []authzBadToken{
			{name: "an HS256 token whose secret is the RSA public key's PEM (PKIX)", auth: hs(pkixPEM)},
			{name: "an HS256 token whose secret is the RSA public key's PEM (PKIX) without its final newline", auth: hs([]byte(strings.TrimSuffix(string(pkixPEM), "\n")))},
			{name: "an HS256 token whose secret is the RSA public key's PEM (PKCS #1)", auth: hs(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: pkcs1}))},
			{name: "an HS256 token whose secret is the RSA public key's DER (PKIX)", auth: hs(pkix)},
			{name: "an HS256 token whose secret is the RSA public key's DER (PKCS #1)", auth: hs(pkcs1)},
			{name: "an HS256 token whose secret is the EC public key's PEM", auth: authzBearer(authzSign(t, jwt.SigningMethodHS256,
				pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecPKIX}), "ec-1", claims))},
			{name: "an HS256 token whose secret is the JWKS document", auth: hs(keys.jwks)},
			{name: "an RS256 token whose kid names the EC key", auth: authzBearer(authzSign(t, jwt.SigningMethodRS256, keys.rsa, "ec-1", claims))},
			{name: "an ES256 token whose kid names the RSA key", auth: authzBearer(authzSign(t, jwt.SigningMethodES256, keys.ec, "rsa-1", claims))},
			{name: "an RS256 token without a kid", auth: authzBearer(authzSign(t, jwt.SigningMethodRS256, keys.rsa, "", claims))},
			{name: "an RS256 token with an unknown kid", auth: authzBearer(authzSign(t, jwt.SigningMethodRS256, keys.rsa, "rsa-2", claims))},
			{name: "an RS256 token signed by another RSA key under the JWKS key's kid", auth: authzBearer(authzSign(t, jwt.SigningMethodRS256, other, "rsa-1", claims))},
			{name: "a PS256 token signed by the JWKS's RSA key", auth: authzBearer(authzSign(t, jwt.SigningMethodPS256, keys.rsa, "rsa-1", claims))},
			{name: "an RS512 token signed by the JWKS's RSA key", auth: authzBearer(authzSign(t, jwt.SigningMethodRS512, keys.rsa, "rsa-1", claims))},
			{name: "an alg none token with the RSA key's kid", auth: authzBearer(authzUnsigned(t, map[string]any{"alg": "none", "typ": "JWT", "kid": "rsa-1"}, claims))},
			{name: "an RS256 token without an audience", auth: authzBearer(authzSign(t, jwt.SigningMethodRS256, keys.rsa, "rsa-1", claimsFor(nil)))},
			{name: "an ES256 token without an audience", auth: authzBearer(authzSign(t, jwt.SigningMethodES256, keys.ec, "ec-1", claimsFor(nil)))},
			{name: "an RS256 token for another audience", auth: authzBearer(authzSign(t, jwt.SigningMethodRS256, keys.rsa, "rsa-1", claimsFor("another-api")))},
			{name: "an ES256 token whose audiences are all others", auth: authzBearer(authzSign(t, jwt.SigningMethodES256, keys.ec, "ec-1", claimsFor([]string{"another-api", "fundsvc"})))},
			{name: "an expired RS256 token", auth: authzBearer(authzSign(t, jwt.SigningMethodRS256, keys.rsa, "rsa-1", func() jwt.MapClaims {
				c := claimsFor(aud)
				c["iat"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix()
				return c
			}()))},
			{name: "an RS256 token with role root", auth: authzBearer(authzSign(t, jwt.SigningMethodRS256, keys.rsa, "rsa-1", func() jwt.MapClaims {
				c := claimsFor(aud)
				c["role"] = "root"
				return c
			}()))},
			{name: "a valid HS256 token of the test secret", auth: authzBearer(token(t, authzAdminA))},
		}
		for i := range bad {
			bad[i].presented = true
		}
		good := []struct{ name, auth string }{
			{"a correct RS256 token with the RSA key's kid", authzBearer(authzSign(t, jwt.SigningMethodRS256, keys.rsa, "rsa-1", claims))},
			{"a correct ES256 token with the EC key's kid", authzBearer(authzSign(t, jwt.SigningMethodES256, keys.ec, "ec-1", claims))},
			{"a correct ES256 token whose audiences include the server's", authzBearer(authzSign(t, jwt.SigningMethodES256, keys.ec, "ec-1", claimsFor([]string{"another-api", aud})))},
		}
		for _, r := range table {
			if r.access == authzOpen {
				continue
			}
			for _, k := range bad {
				cases++
				t.Run(fmt.Sprintf("%s with %s is 401", r.name(), k.name), func(t *testing.T) {
					authzWant401(t, authzSend(t, s, r.method, r.probes[0].path, r.bodyFor("FUND_A"), k.auth), k.presented)
				})
			}
			for _, g := range good {
				cases++
				t.Run(fmt.Sprintf("%s with %s succeeds", r.name(), g.name), func(t *testing.T) {
					authzPositive(t, s, r, g.auth)
				})
			}
		}
	})

	t.Run("a server with an issuer and an audience", func(t *testing.T) {
		const iss, aud = "https://issuer.fundsvc.test", "fundsvc-api"
		v, err := api.NewVerifier(api.AuthConfig{HS256Secret: []byte(testSecret), Issuer: iss, Audience: aud, Leeway: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s := authzServer(t, env, v)
		mint := func(issuer, audience string) string {
			tok, err := api.MintToken([]byte(testSecret), authzAdminA, issuer, audience, time.Hour, now)
			if err != nil {
				t.Fatal(err)
			}
			return authzBearer(tok)
		}
		bad := []authzBadToken{
			{name: "a token for another audience", auth: mint(iss, "another-api"), presented: true},
			{name: "a token from another issuer", auth: mint("https://elsewhere.test", aud), presented: true},
			{name: "a token without an audience", auth: mint(iss, ""), presented: true},
			{name: "a token without an issuer", auth: mint("", aud), presented: true},
			{name: "a token with neither issuer nor audience", auth: mint("", ""), presented: true},
		}
		right := mint(iss, aud)
		for _, r := range table {
			if r.access == authzOpen {
				continue
			}
			for _, k := range bad {
				cases++
				t.Run(fmt.Sprintf("%s with %s is 401", r.name(), k.name), func(t *testing.T) {
					authzWant401(t, authzSend(t, s, r.method, r.probes[0].path, r.bodyFor("FUND_A"), k.auth), k.presented)
				})
			}
			cases++
			t.Run(fmt.Sprintf("%s with the right issuer and audience succeeds", r.name()), func(t *testing.T) {
				authzPositive(t, s, r, right)
			})
		}
	})
	t.Logf("verifier configurations: %d cases", cases)
}

// authzImportCases: an investor may use neither import route; any admin
// downloads a template (it holds the demo, no fund's data); a file is
// written only by an admin of every document's fund, and one of another
// fund is 403 with nothing written, dry run or not.
// authzImportFile is a CSV file of one new capital call notice of fundID.
func authzImportFile(fundID string) []byte {
	return []byte("documentId,fundId,kind,title,asOf,currency,positionId,investorId,capitalCall.amount,capitalCall.status,capitalCall.dueDate\n" +
		fmt.Sprintf("AUTHZ_IMPORT_%d,%s,capital_call_notice,Imported,2025-12-01,USD,AUTHZ_POS_%s,AUTHZ_INV_%s,1.00,pending,2025-12-31\n", authzFreshID.Add(1), fundID, fundID, fundID))
}

func authzImportCases(t *testing.T, s *testServer, r authzRoute, run func(string, func(*testing.T)), asA, asZ, asInv string) {
	file := authzImportFile
	send := func(t *testing.T, path string, body []byte, auth string) response {
		if r.method == http.MethodGet {
			return authzSend(t, s, r.method, path, nil, auth)
		}
		return authzSend(t, s, r.method, path, body, auth, "Content-Type", "text/csv")
	}
	for _, p := range r.probes {
		run(fmt.Sprintf("%s %s by investor INVESTOR_1 is 403", r.method, p.path), func(t *testing.T) {
			authzWantProblem(t, send(t, p.path, file("FUND_A"), asInv), http.StatusForbidden, "/problems/forbidden")
		})
		if r.method == http.MethodGet {
			for _, who := range []struct{ name, auth string }{{"the admin of FUND_A", asA}, {"the admin of FUND_Z", asZ}} {
				run(fmt.Sprintf("%s %s by %s is 200", r.method, p.path, who.name), func(t *testing.T) {
					if res := send(t, p.path, nil, who.auth); res.Status != http.StatusOK {
						t.Errorf("status %d\n%s", res.Status, res.Body)
					}
				})
			}
			continue
		}
		run(fmt.Sprintf("%s %s of a FUND_A document by the admin of FUND_A is 200", r.method, p.path), func(t *testing.T) {
			if res := send(t, p.path, file("FUND_A"), asA); res.Status != http.StatusOK {
				t.Errorf("status %d\n%s", res.Status, res.Body)
			}
		})
		run(fmt.Sprintf("%s %s of a FUND_A document by the admin of FUND_Z is 403 and writes nothing", r.method, p.path), func(t *testing.T) {
			f := file("FUND_A")
			id := strings.SplitN(strings.Split(string(f), "\n")[1], ",", 2)[0]
			authzWantProblem(t, send(t, p.path, f, asZ), http.StatusForbidden, "/problems/forbidden")
			if res := s.do(t, http.MethodGet, "/v1/documents/"+id+"/versions/latest", nil); res.Status != http.StatusNotFound {
				t.Errorf("%s after a refused import: %d, want 404", id, res.Status)
			}
		})
	}
}

// administers is the test's own statement of the rule: an admin token
// covers the funds its claim names, every fund with "*".
func administers(p api.Principal, fundID string) bool {
	return p.Role == api.RoleAdmin && (slices.Contains(p.Funds, api.AllFunds) || slices.Contains(p.Funds, fundID))
}
