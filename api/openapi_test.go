package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/gin-gonic/gin"
)

// These tests need no DynamoDB: none of the requests they send reaches a
// handler that touches a store.

func openAPITestEngine(t *testing.T) *gin.Engine {
	t.Helper()
	return openAPITestEngineWith(t, true) // the configured defaults
}

// openAPITestEngineWith is the API without stores, with /metrics and
// /openapi.json public or not.
func openAPITestEngineWith(t *testing.T, public bool) *gin.Engine {
	t.Helper()
	v, err := NewVerifier(AuthConfig{HS256Secret: []byte(internalTestSecret)})
	if err != nil {
		t.Fatal(err)
	}
	h := NewServer(Options{
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxBodyBytes: 1 << 20, DefaultLimit: 100, MaxLimit: 1000, Verifier: v,
		PublicMetrics: public, PublicOpenAPI: public,
	})
	e, ok := h.(*gin.Engine)
	if !ok {
		t.Fatalf("NewServer returned %T, want *gin.Engine", h)
	}
	return e
}

// openAPISpec is the embedded document, decoded.
func openAPISpec(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("api/openapi.json is not valid JSON: %v", err)
	}
	return doc
}

// httpMethods are the operation keys of an OpenAPI path item.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// openAPIOperation is one path + method of the document.
type openAPIOperation struct {
	Path, Method string // Method in upper case
	Item, Op     map[string]any
}

// openAPIOperations lists the document's operations, sorted by path then method.
func openAPIOperations(t *testing.T, doc map[string]any) []openAPIOperation {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		t.Fatalf("the document has no paths object")
	}
	var out []openAPIOperation
	for p, v := range paths {
		item, ok := v.(map[string]any)
		if !ok {
			t.Errorf("path %s: not an object", p)
			continue
		}
		for _, m := range httpMethods {
			if op, ok := item[m]; ok {
				o, ok := op.(map[string]any)
				if !ok {
					t.Errorf("%s %s: operation is not an object", strings.ToUpper(m), p)
					continue
				}
				out = append(out, openAPIOperation{Path: p, Method: strings.ToUpper(m), Item: item, Op: o})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// openAPIPath turns gin's "/v1/documents/:documentId" into "/v1/documents/{documentId}".
func openAPIPath(ginPath string) string {
	return ginParam.ReplaceAllString(ginPath, "{$1}")
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	e := openAPITestEngine(t)
	routes := map[string]bool{}
	for _, r := range e.Routes() {
		// The interactive reference of the document is not an operation of it.
		if r.Path == "/docs" || strings.HasPrefix(r.Path, "/docs/") {
			continue
		}
		routes[r.Method+" "+openAPIPath(r.Path)] = true
	}
	if len(routes) == 0 {
		t.Fatal("the engine registers no routes")
	}
	documented := map[string]bool{}
	for _, o := range openAPIOperations(t, openAPISpec(t)) {
		documented[o.Method+" "+o.Path] = true
	}

	var missing, extra []string
	for r := range routes {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !routes[d] {
			extra = append(extra, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes that api/openapi.json does not describe (%d):\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("operations in api/openapi.json that no route serves (%d):\n  %s", len(extra), strings.Join(extra, "\n  "))
	}
}

// jsonPointer resolves a local reference such as "#/components/schemas/Id".
func jsonPointer(doc any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	frag := strings.TrimPrefix(ref, "#")
	if frag == "" {
		return doc, true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// walkRefs calls f with the location and value of every "$ref" in v.
func walkRefs(v any, at string, f func(at, ref string)) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "$ref" {
				s, _ := x[k].(string)
				f(at, s)
				continue
			}
			walkRefs(x[k], at+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), f)
		}
	case []any:
		for i, e := range x {
			walkRefs(e, at+"/"+strconv.Itoa(i), f)
		}
	}
}

// deref follows $ref until it reaches an object without one.
func deref(doc map[string]any, v any) (map[string]any, error) {
	for range 16 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not an object")
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		if v, ok = jsonPointer(doc, ref); !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	return nil, fmt.Errorf("$ref chain too long")
}

var pathTemplateParam = regexp.MustCompile(`\{([^{}]+)\}`)

func TestOpenAPIDocumentIsWellFormed(t *testing.T) {
	raw := openAPIDocument
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatalf("api/openapi.json is not valid JSON: %v", err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimRight(raw, "\n"), pretty.Bytes()) {
		t.Errorf("api/openapi.json is not pretty-printed with 2-space indentation")
	}

	doc := openAPISpec(t)
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi = %q, want 3.1.x", v)
	}
	info, _ := doc["info"].(map[string]any)
	if s, _ := info["title"].(string); s == "" {
		t.Errorf("info.title is missing")
	}
	if s, _ := info["version"].(string); s == "" {
		t.Errorf("info.version is missing")
	}

	// Every $ref resolves inside the document.
	refs := 0
	walkRefs(doc, "#", func(at, ref string) {
		refs++
		if _, ok := jsonPointer(doc, ref); !ok {
			t.Errorf("%s: $ref %q does not resolve within the document", at, ref)
		}
	})
	if refs == 0 {
		t.Errorf("the document holds no $ref at all; expected shared components")
	}
	if _, ok := jsonPointer(doc, "#/components/schemas/Problem"); !ok {
		t.Fatalf("components.schemas.Problem is missing")
	}

	ops := openAPIOperations(t, doc)
	if len(ops) == 0 {
		t.Fatal("the document has no operations")
	}
	ids := map[string]string{}
	for _, o := range ops {
		name := o.Method + " " + o.Path

		id, _ := o.Op["operationId"].(string)
		switch {
		case id == "":
			t.Errorf("%s: no operationId", name)
		case ids[id] != "":
			t.Errorf("%s: operationId %q is also used by %s", name, id, ids[id])
		default:
			ids[id] = name
		}

		// Path parameters: every template variable is declared, required,
		// and nothing else is declared "in: path".
		declared := map[string]bool{}
		var params []any
		if p, ok := o.Item["parameters"].([]any); ok {
			params = append(params, p...)
		}
		if p, ok := o.Op["parameters"].([]any); ok {
			params = append(params, p...)
		}
		for _, p := range params {
			pm, err := deref(doc, p)
			if err != nil {
				t.Errorf("%s: parameter: %v", name, err)
				continue
			}
			if pm["in"] == "path" {
				n, _ := pm["name"].(string)
				declared[n] = true
				if pm["required"] != true {
					t.Errorf("%s: path parameter %s is not required", name, n)
				}
			}
		}
		var inTemplate []string
		for _, m := range pathTemplateParam.FindAllStringSubmatch(o.Path, -1) {
			inTemplate = append(inTemplate, m[1])
			if !declared[m[1]] {
				t.Errorf("%s: path parameter %s is not declared", name, m[1])
			}
		}
		for n := range declared {
			if !slices.Contains(inTemplate, n) {
				t.Errorf("%s: declares path parameter %s that the path does not hold", name, n)
			}
		}

		// Responses: at least one 2xx; every 4xx/5xx is problem+json with
		// the Problem schema, and there is at least one of them.
		responses, ok := o.Op["responses"].(map[string]any)
		if !ok || len(responses) == 0 {
			t.Errorf("%s: no responses", name)
			continue
		}
		success, problems := 0, 0
		for code, r := range responses {
			n, err := strconv.Atoi(code)
			if err != nil {
				t.Errorf("%s: response %q is not a status code (the document uses explicit codes only)", name, code)
				continue
			}
			rm, err := deref(doc, r)
			if err != nil {
				t.Errorf("%s: response %s: %v", name, code, err)
				continue
			}
			if d, _ := rm["description"].(string); d == "" {
				t.Errorf("%s: response %s has no description", name, code)
			}
			switch {
			case n >= 200 && n < 300:
				success++
				if _, ok := rm["content"].(map[string]any); !ok {
					t.Errorf("%s: response %s has no content", name, code)
				}
			case n >= 400 && n < 600:
				problems++
				content, _ := rm["content"].(map[string]any)
				if len(content) != 1 {
					t.Errorf("%s: response %s: want exactly one media type, application/problem+json; have %d", name, code, len(content))
				}
				media, _ := content["application/problem+json"].(map[string]any)
				if media == nil {
					t.Errorf("%s: response %s is not application/problem+json", name, code)
					continue
				}
				sch, _ := media["schema"].(map[string]any)
				if ref, _ := sch["$ref"].(string); ref != "#/components/schemas/Problem" {
					t.Errorf("%s: response %s: schema is %v, want the Problem schema", name, code, media["schema"])
				}
			}
		}
		if success == 0 {
			t.Errorf("%s: no 2xx response", name)
		}
		if problems == 0 {
			t.Errorf("%s: no problem+json error response", name)
		}
	}
}

func TestOpenAPIServedAsEmbedded(t *testing.T) {
	e := openAPITestEngine(t)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json: status %d, want 200\n%s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET /openapi.json: Content-Type %q, want application/json", ct)
	}
	if len(openAPIDocument) == 0 {
		t.Fatal("the embedded document is empty")
	}
	if !bytes.Equal(rec.Body.Bytes(), openAPIDocument) {
		t.Errorf("GET /openapi.json served %d bytes that differ from the %d embedded bytes", rec.Body.Len(), len(openAPIDocument))
	}
}

// TestOpenAPIErrorsMatchCode sends requests that fail before any store is
// touched and checks that each answer is a problem the document declares for
// that operation, of the type the Problem schema lists.
func TestOpenAPIErrorsMatchCode(t *testing.T) {
	e := openAPITestEngine(t)
	doc := openAPISpec(t)
	ops := map[string]openAPIOperation{}
	for _, o := range openAPIOperations(t, doc) {
		ops[o.Method+" "+o.Path] = o
	}
	problem, _ := jsonPointer(doc, "#/components/schemas/Problem")
	typeEnum, _ := jsonPointer(problem, "#/properties/type/enum")
	types, _ := typeEnum.([]any)
	required, _ := jsonPointer(problem, "#/required")
	requiredFields, _ := required.([]any)

	// send returns the response after checking that it is a problem.
	send := func(t *testing.T, method, target string, body []byte, headers ...string) *httptest.ResponseRecorder {
		t.Helper()
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req := httptest.NewRequest(method, target, rd)
		req.Header.Set("Authorization", "Bearer "+internalAdminToken(t))
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
			if headers[i] == "Authorization" && headers[i+1] == "" {
				req.Header.Del("Authorization")
			}
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if mt, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type")); mt != "application/problem+json" {
			t.Errorf("%s %s: status %d, Content-Type %q, want application/problem+json", method, target, rec.Code, rec.Header().Get("Content-Type"))
			return rec
		}
		var p map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Errorf("%s %s: problem is not JSON: %v", method, target, err)
			return rec
		}
		for _, f := range requiredFields {
			if _, ok := p[f.(string)]; !ok {
				t.Errorf("%s %s: problem lacks required field %v: %s", method, target, f, rec.Body)
			}
		}
		if !slices.Contains(types, p["type"]) {
			t.Errorf("%s %s: problem type %v is not one the Problem schema lists", method, target, p["type"])
		}
		if p["status"] != float64(rec.Code) {
			t.Errorf("%s %s: problem status %v, HTTP status %d", method, target, p["status"], rec.Code)
		}
		if rec.Header().Get("X-Request-ID") == "" {
			t.Errorf("%s %s: no X-Request-ID", method, target)
		}
		return rec
	}

	// Every operation that declares a status must answer it for these requests.
	bigBody := append([]byte(`{"title":"`), bytes.Repeat([]byte("x"), 1<<20)...)
	asJSON := []string{"Content-Type", "application/json"}
	as := func(p Principal, more ...string) []string {
		return append([]string{"Authorization", "Bearer " + internalToken(t, p)}, more...)
	}
	adminOfF1 := Principal{Subject: "admin-f1", Role: RoleAdmin, Funds: []string{"F1"}}
	investorI1 := Principal{Subject: "investor-i1", Role: RoleInvestor, Investor: "I1"}
	validOfF2 := []byte(`{"fundId":"F2","kind":"capital_call_notice","title":"t","asOf":"2025-01-01","positions":[]}`)
	// Tokens, scope and Idempotency-Key; field names the problem's field when a case expects one.
	authCases := []struct {
		op, method, target string
		body               []byte
		headers            []string
		want               int
		field              string
	}{
		// Tokens: 401 before anything else, 403 for a role the route is not for.
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/-bad", []byte(`{}`), append([]string{"Authorization", ""}, asJSON...), 401, ""},
		{"GET /v1/documents/{documentId}", "GET", "/v1/documents/-bad", nil, []string{"Authorization", "Bearer not.a.token"}, 401, ""},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/-bad", []byte(`{}`), as(investorI1, asJSON...), 403, ""},
		{"GET /v1/funds/{fundId}/positions", "GET", "/v1/funds/-bad/positions", nil, as(investorI1), 403, ""},
		// Scope: an admin's fund, an investor's own investor.
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", validOfF2, as(adminOfF1, asJSON...), 403, "fundId"},
		{"GET /v1/funds/{fundId}/documents", "GET", "/v1/funds/F2/documents", nil, as(adminOfF1), 404, ""},
		{"GET /v1/funds/{fundId}/documents", "GET", "/v1/funds/F2/documents?limit=0", nil, as(adminOfF1), 404, ""},
		{"GET /v1/funds/{fundId}/positions", "GET", "/v1/funds/F2/positions", nil, as(adminOfF1), 404, ""},
		{"GET /v1/investors/{investorId}/positions", "GET", "/v1/investors/I2/positions", nil, as(investorI1), 404, ""},
		{"GET /v1/investors/{investorId}/positions", "GET", "/v1/investors/-bad/positions", nil, as(investorI1), 400, "investorId"},
		{"GET /v1/positions/{positionId}", "GET", "/v1/positions/P?type=Fee", nil, as(investorI1), 400, "type"},
		// Idempotency-Key: 1 to 255 visible ASCII characters.
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", validOfF2, append([]string{"Idempotency-Key", "two words"}, asJSON...), 400, "Idempotency-Key"},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", validOfF2, append([]string{"Idempotency-Key", strings.Repeat("k", 256)}, asJSON...), 400, "Idempotency-Key"},
	}
	cases := []struct {
		op, method, target string
		body               []byte
		headers            []string
		want               int
	}{
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/-bad", []byte(`{}`), []string{"Content-Type", "application/json"}, 400},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", []byte(`{}`), []string{"Content-Type", "text/plain"}, 415},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", []byte(`{}`), nil, 415},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", []byte(`{}`), []string{"Content-Type", "application/json", "If-Match", "three"}, 400},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", []byte(`{"fundId":"F","extra":1}`), []string{"Content-Type", "application/json"}, 400},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", []byte(`{"fundId":"F","kind":"capital_call_notice","title":"t","asOf":"2025-01-01","positions":[{"positionId":"P","investorId":"I","capitalCall":{"amount":null}}]}`), []string{"Content-Type", "application/json"}, 400},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", []byte(`{"fundId":"F","kind":"capital_call_notice","title":"t","asOf":"2025-01-01","positions":[{"positionId":"P","investorId":"I","capitalCall":{"amount":1e5}}]}`), []string{"Content-Type", "application/json"}, 400},
		{"PUT /v1/documents/{documentId}", "PUT", "/v1/documents/DOC1", bigBody, []string{"Content-Type", "application/json"}, 413},
		{"GET /v1/documents/{documentId}", "GET", "/v1/documents/-bad", nil, nil, 400},
		{"GET /v1/documents/{documentId}", "GET", "/v1/documents/DOC1?limit=0", nil, nil, 400},
		{"GET /v1/documents/{documentId}", "GET", "/v1/documents/DOC1?limit=1001", nil, nil, 400},
		{"GET /v1/documents/{documentId}", "GET", "/v1/documents/DOC1?cursor=forged", nil, nil, 400},
		{"GET /v1/documents/{documentId}/versions", "GET", "/v1/documents/DOC1/versions?from=2025-13-01", nil, nil, 400},
		{"GET /v1/documents/{documentId}/versions", "GET", "/v1/documents/DOC1/versions?from=2025-02-01&to=2025-01-01", nil, nil, 400},
		{"GET /v1/documents/{documentId}/versions/{version}", "GET", "/v1/documents/DOC1/versions/0", nil, nil, 400},
		{"GET /v1/documents/{documentId}/versions/{version}", "GET", "/v1/documents/DOC1/versions/first", nil, nil, 400},
		{"GET /v1/documents/{documentId}/positions/{positionId}", "GET", "/v1/documents/DOC1/positions/-bad", nil, nil, 400},
		{"GET /v1/documents/{documentId}/positions/{positionId}", "GET", "/v1/documents/DOC1/positions/P1?type=Call", nil, nil, 400},
		{"GET /v1/documents/{documentId}/capital", "GET", "/v1/documents/-bad/capital", nil, nil, 400},
		{"GET /v1/documents/{documentId}/analysis", "GET", "/v1/documents/-bad/analysis", nil, nil, 400},
		{"GET /v1/funds/{fundId}/documents", "GET", "/v1/funds/F/documents?kind=notice", nil, nil, 400},
		{"GET /v1/funds/{fundId}/documents", "GET", "/v1/funds/F/documents?limit=x", nil, nil, 400},
		{"GET /v1/funds/{fundId}/positions", "GET", "/v1/funds/-bad/positions", nil, nil, 400},
		{"GET /v1/investors/{investorId}/positions", "GET", "/v1/investors/I/positions?cursor=a.b", nil, nil, 400},
		{"GET /v1/positions/{positionId}", "GET", "/v1/positions/P?type=Fee", nil, nil, 400},
		{"GET /v1/positions/{positionId}/capital-calls", "GET", "/v1/positions/P/capital-calls?document=-bad", nil, nil, 400},
		{"GET /v1/positions/{positionId}/capital-calls", "GET", "/v1/positions/P/capital-calls?limit=-1", nil, nil, 400},
	}
	// run sends one case; field, when not empty, is the problem's field.
	run := func(op, method, target string, body []byte, headers []string, want int, field string) {
		t.Helper()
		o, ok := ops[op]
		if !ok {
			t.Errorf("%s: not in the document", op)
			return
		}
		rec := send(t, method, target, body, headers...)
		if rec.Code != want {
			t.Errorf("%s %s: status %d, want %d: %s", method, target, rec.Code, want, rec.Body)
		}
		responses, _ := o.Op["responses"].(map[string]any)
		if _, ok := responses[strconv.Itoa(rec.Code)]; !ok {
			t.Errorf("%s %s answers %d, which the document does not declare for %s", method, target, rec.Code, op)
		}
		if field != "" {
			var p Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Field != field {
				t.Errorf("%s %s: problem field %q, want %q: %s", method, target, p.Field, field, rec.Body)
			}
		}
	}
	for _, c := range cases {
		run(c.op, c.method, c.target, c.body, c.headers, c.want, "")
	}
	for _, c := range authCases {
		run(c.op, c.method, c.target, c.body, c.headers, c.want, c.field)
	}

	// An unknown path is a 404 problem.
	if rec := send(t, "GET", "/v2/nothing", nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET /v2/nothing: status %d, want 404", rec.Code)
	}

	// Every other method on a documented path is 405 with Allow listing
	// exactly the documented methods.
	byPath := map[string][]string{}
	for _, o := range ops {
		byPath[o.Path] = append(byPath[o.Path], o.Method)
	}
	fill := strings.NewReplacer("{documentId}", "DOC1", "{positionId}", "P1", "{fundId}", "F1", "{investorId}", "I1", "{version}", "1")
	for p, methods := range byPath {
		target := fill.Replace(p)
		sort.Strings(methods)
		for _, m := range []string{"GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS"} {
			if slices.Contains(methods, m) {
				continue
			}
			rec := send(t, m, target, nil)
			if rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d, want 405", m, target, rec.Code)
				continue
			}
			allow := strings.Split(rec.Header().Get("Allow"), ", ")
			sort.Strings(allow)
			if !slices.Equal(allow, methods) {
				t.Errorf("%s %s: Allow %v, but the document lists %v", m, target, allow, methods)
			}
		}
	}
	if _, ok := jsonPointer(doc, "#/components/responses/MethodNotAllowed"); !ok {
		t.Errorf("the document does not describe the 405 answer (components.responses.MethodNotAllowed)")
	}
}

const internalTestSecret = "internal-test-secret-0123456789abcdef"

// internalAdminToken is a token for an admin of every fund.
func internalAdminToken(t *testing.T) string {
	t.Helper()
	return internalToken(t, Principal{Subject: "openapi-test", Role: RoleAdmin, Funds: []string{AllFunds}})
}

// internalToken is a valid token for p, signed with internalTestSecret.
func internalToken(t *testing.T, p Principal) string {
	t.Helper()
	tok, err := MintToken([]byte(internalTestSecret), p, "", "", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// openAPISecurity is the security requirement that applies to an operation:
// its own, or else the document's.
func openAPISecurity(doc map[string]any, o openAPIOperation) ([]any, bool) {
	if sec, ok := o.Op["security"]; ok {
		s, ok := sec.([]any)
		return s, ok
	}
	s, ok := doc["security"].([]any)
	return s, ok
}

// openAPIRoles reads a security requirement list: whether it allows no
// token at all ({}), and the alternatives that need bearerAuth, each as its
// role list (empty: any role). Any other scheme is an error.
func openAPIRoles(t *testing.T, name string, sec []any) (open bool, bearer [][]string) {
	t.Helper()
	for _, alt := range sec {
		m, ok := alt.(map[string]any)
		if !ok {
			t.Errorf("%s: security requirement %v is not an object", name, alt)
			continue
		}
		if len(m) == 0 {
			open = true
			continue
		}
		for scheme, v := range m {
			if scheme != "bearerAuth" {
				t.Errorf("%s: security names scheme %q; the API has bearerAuth only", name, scheme)
				continue
			}
			list, _ := v.([]any)
			roles := []string{}
			for _, r := range list {
				s, _ := r.(string)
				if s != RoleAdmin && s != RoleInvestor {
					t.Errorf("%s: bearerAuth names role %v; roles are %s and %s", name, r, RoleAdmin, RoleInvestor)
				}
				roles = append(roles, s)
			}
			bearer = append(bearer, roles)
		}
	}
	return open, bearer
}

// openAPIAllows reports whether a security requirement lets a token of role in.
func openAPIAllows(bearer [][]string, role string) bool {
	for _, roles := range bearer {
		if len(roles) == 0 || slices.Equal(roles, []string{role}) {
			return true
		}
	}
	return false
}

// TestOpenAPISecurityIsDeclared checks the document's own account of
// authentication: the bearerAuth scheme, who needs a token, and that every
// operation that can answer 401 or 403 declares it.
func TestOpenAPISecurityIsDeclared(t *testing.T) {
	doc := openAPISpec(t)
	scheme, ok := jsonPointer(doc, "#/components/securitySchemes/bearerAuth")
	sm, _ := scheme.(map[string]any)
	if !ok || sm["type"] != "http" || sm["scheme"] != "bearer" || sm["bearerFormat"] != "JWT" {
		t.Errorf("components.securitySchemes.bearerAuth = %v, want an HTTP bearer scheme of format JWT", scheme)
	}
	if d, _ := sm["description"].(string); !strings.Contains(d, "fundsvc token") {
		t.Errorf("bearerAuth's description does not say how to mint a development token (fundsvc token)")
	}
	global, _ := doc["security"].([]any)
	if len(global) != 1 || !jsonEqual(global[0], map[string]any{"bearerAuth": []any{}}) {
		t.Errorf("global security = %v, want [{bearerAuth: []}]", doc["security"])
	}

	for _, o := range openAPIOperations(t, doc) {
		name := o.Method + " " + o.Path
		sec, ok := openAPISecurity(doc, o)
		if !ok {
			t.Errorf("%s: no security requirement applies", name)
			continue
		}
		open, bearer := openAPIRoles(t, name, sec)
		responses, _ := o.Op["responses"].(map[string]any)
		_, has401 := responses["401"]
		_, has403 := responses["403"]
		switch {
		case strings.HasPrefix(o.Path, "/v1/"):
			if open || len(bearer) == 0 {
				t.Errorf("%s: security %v, want bearerAuth and no open alternative", name, sec)
			}
			if !openAPIAllows(bearer, RoleAdmin) {
				t.Errorf("%s: security %v lets no admin token in", name, sec)
			}
			if !has401 {
				t.Errorf("%s: does not declare 401", name)
			}
			if investors := openAPIAllows(bearer, RoleInvestor); investors == has403 {
				t.Errorf("%s: investor tokens allowed = %v, but 403 declared = %v", name, investors, has403)
			}
		case o.Path == "/livez" || o.Path == "/readyz":
			if _, own := o.Op["security"]; !own || len(sec) != 0 {
				t.Errorf("%s: security %v, want its own empty list (no token)", name, o.Op["security"])
			}
			if has401 || has403 {
				t.Errorf("%s: needs no token, yet declares 401 or 403", name)
			}
		case o.Path == "/metrics" || o.Path == "/openapi.json":
			if !open || len(bearer) != 1 || len(bearer[0]) != 0 {
				t.Errorf("%s: security %v, want [{}, {bearerAuth: []}] (public by default, a token of any role when configured)", name, sec)
			}
			if !has401 || has403 {
				t.Errorf("%s: want 401 declared (when not public) and no 403", name)
			}
		default:
			t.Errorf("%s: no rule says who may call this path; add one to this test", name)
		}

		// Every declared error's example is of the status it is declared for.
		for code, r := range responses {
			n, _ := strconv.Atoi(code)
			if n < 400 {
				continue
			}
			rm, err := deref(doc, r)
			if err != nil {
				continue // reported by TestOpenAPIDocumentIsWellFormed
			}
			ex, _ := jsonPointer(rm, "#/content/application~1problem+json/example")
			if exm, ok := ex.(map[string]any); ok {
				if exm["status"] != float64(n) {
					t.Errorf("%s: response %s shows an example of status %v", name, code, exm["status"])
				}
			}
		}
	}

	// The problem types are exactly the codes of the status table, and every
	// example in components.responses agrees with it.
	var want []string
	for code := range statusOf {
		want = append(want, "/problems/"+code)
	}
	sort.Strings(want)
	enum, _ := jsonPointer(doc, "#/components/schemas/Problem/properties/type/enum")
	var have []string
	for _, v := range enum.([]any) {
		have = append(have, v.(string))
	}
	sort.Strings(have)
	if !slices.Equal(have, want) {
		t.Errorf("Problem.type enum = %v\nthe status table's codes = %v", have, want)
	}
	responses, _ := jsonPointer(doc, "#/components/responses")
	for name, r := range responses.(map[string]any) {
		ex, _ := jsonPointer(r, "#/content/application~1problem+json/example")
		exm, ok := ex.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := exm["type"].(string)
		status, ok := statusOf[strings.TrimPrefix(typ, "/problems/")]
		if !ok || exm["status"] != float64(status) || exm["title"] != http.StatusText(status) {
			t.Errorf("components.responses.%s: example %v disagrees with the status table (%s is %d %s)", name, exm, typ, status, http.StatusText(status))
		}
	}

	// PUT declares Idempotency-Key as the code reads it, and its answers.
	for _, o := range openAPIOperations(t, doc) {
		if o.Method != "PUT" {
			continue
		}
		var key map[string]any
		params, _ := o.Op["parameters"].([]any)
		for _, p := range params {
			if pm, err := deref(doc, p); err == nil && pm["in"] == "header" && pm["name"] == "Idempotency-Key" {
				key = pm
			}
		}
		if key == nil {
			t.Errorf("PUT %s: no Idempotency-Key header parameter", o.Path)
			continue
		}
		sch, _ := key["schema"].(map[string]any)
		if sch["maxLength"] != float64(maxIdempotencyKey) || sch["minLength"] != float64(1) {
			t.Errorf("PUT %s: Idempotency-Key length %v to %v, want 1 to %d", o.Path, sch["minLength"], sch["maxLength"], maxIdempotencyKey)
		}
		pattern, _ := sch["pattern"].(string)
		re, err := regexp.Compile(pattern)
		if err != nil {
			t.Errorf("PUT %s: Idempotency-Key pattern %q: %v", o.Path, pattern, err)
		} else {
			for _, k := range []string{"a", "7d1f0c2e-5b8a-4e4f-9c1d-2a3b4c5d6e7f", "!~\"#", strings.Repeat("k", 255), strings.Repeat("k", 256),
				"two words", "tab\there", "caf\u00e9", "\x7f", "nul\x00"} {
				if re.MatchString(k) != validIdempotencyKey(k) {
					t.Errorf("PUT %s: Idempotency-Key %q: the pattern says %v, the code %v", o.Path, k, re.MatchString(k), validIdempotencyKey(k))
				}
			}
		}
		responses, _ := o.Op["responses"].(map[string]any)
		for _, code := range []string{"400", "401", "403", "404", "409", "412", "422"} {
			if _, ok := responses[code]; !ok {
				t.Errorf("PUT %s: does not declare %s", o.Path, code)
			}
		}
		for _, code := range []string{"200", "201"} {
			if h, _ := jsonPointer(responses, "#/"+code+"/headers/Idempotent-Replayed"); h == nil {
				t.Errorf("PUT %s: response %s does not declare the Idempotent-Replayed header", o.Path, code)
			}
		}
	}

	// The document headers carry createdBy.
	if _, ok := jsonPointer(doc, "#/components/schemas/DocumentHeader/properties/createdBy"); !ok {
		t.Errorf("DocumentHeader has no createdBy")
	}
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestOpenAPISecurityMatchesCode sends requests with no token, bad tokens and
// tokens of each role to every operation, and checks that each answer is one
// the operation declares. No request reaches a store.
func TestOpenAPISecurityMatchesCode(t *testing.T) {
	doc := openAPISpec(t)
	ops := openAPIOperations(t, doc)
	challenges, _ := jsonPointer(doc, "#/components/headers/WWW-Authenticate/schema/enum")

	expired, err := MintToken([]byte(internalTestSecret), Principal{Subject: "old", Role: RoleAdmin, Funds: []string{AllFunds}}, "", "", time.Hour, time.Now().Add(-2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := MintToken([]byte("another-secret-0123456789-abcdefghijkl"), Principal{Subject: "x", Role: RoleAdmin, Funds: []string{AllFunds}}, "", "", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	unsigned := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + strings.Split(internalAdminToken(t), ".")[1] + "."
	admin := "Bearer " + internalAdminToken(t)
	investor := "Bearer " + internalToken(t, Principal{Subject: "investor-i1", Role: RoleInvestor, Investor: "I1"})

	// do sends one request; auth "" sends no Authorization header.
	do := func(e *gin.Engine, method, target, auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, nil)
		if method == http.MethodPut {
			req = httptest.NewRequest(method, target, strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	// check fails unless rec is status, as a problem of type typ the
	// operation declares (with its headers).
	check := func(t *testing.T, o openAPIOperation, rec *httptest.ResponseRecorder, status int, typ string) {
		t.Helper()
		name := o.Method + " " + o.Path
		if rec.Code != status {
			t.Errorf("%s: status %d, want %d: %s", name, rec.Code, status, rec.Body)
			return
		}
		responses, _ := o.Op["responses"].(map[string]any)
		declared, ok := responses[strconv.Itoa(status)]
		if !ok {
			t.Errorf("%s answers %d, which the document does not declare", name, status)
			return
		}
		if typ == "" {
			return
		}
		var p Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Type != typ || p.Status != status {
			t.Errorf("%s: want a %s problem of status %d, got %s", name, typ, status, rec.Body)
		}
		if status == http.StatusUnauthorized {
			got := rec.Header().Get("WWW-Authenticate")
			if !slices.Contains(challenges.([]any), any(got)) {
				t.Errorf("%s: WWW-Authenticate %q is not one the document lists (%v)", name, got, challenges)
			}
			rm, err := deref(doc, declared)
			if err != nil {
				t.Error(err)
				return
			}
			if h, _ := jsonPointer(rm, "#/headers/WWW-Authenticate"); h == nil {
				t.Errorf("%s: the declared 401 has no WWW-Authenticate header", name)
			}
		}
	}

	fillBad := strings.NewReplacer("{documentId}", "-bad", "{positionId}", "-bad", "{fundId}", "-bad", "{investorId}", "-bad", "{version}", "1")
	for _, public := range []bool{true, false} {
		e := openAPITestEngineWith(t, public)
		for _, o := range ops {
			target := fillBad.Replace(o.Path)
			sec, _ := openAPISecurity(doc, o)
			open, bearer := openAPIRoles(t, o.Method+" "+o.Path, sec)
			switch {
			case strings.HasPrefix(o.Path, "/v1/"):
				// No token, another scheme, or a token that is not valid: 401,
				// before the invalid IDs in the path are looked at.
				for _, auth := range []string{"", "Basic b3BlbmFwaTp0ZXN0", "Bearer"} {
					rec := do(e, o.Method, target, auth)
					check(t, o, rec, http.StatusUnauthorized, "/problems/unauthorized")
					if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="fundsvc"` {
						t.Errorf("%s %s with Authorization %q: WWW-Authenticate %q", o.Method, target, auth, got)
					}
				}
				for _, tok := range []string{"not-a-jwt", expired, otherKey, unsigned} {
					rec := do(e, o.Method, target, "Bearer "+tok)
					check(t, o, rec, http.StatusUnauthorized, "/problems/unauthorized")
					if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="fundsvc", error="invalid_token"` {
						t.Errorf("%s %s with a bad token: WWW-Authenticate %q", o.Method, target, got)
					}
				}
				// An admin token passes to the handler, which refuses the IDs.
				check(t, o, do(e, o.Method, target, admin), http.StatusBadRequest, "/problems/invalid")
				// An investor token is refused by role, or passes to the handler.
				if openAPIAllows(bearer, RoleInvestor) {
					check(t, o, do(e, o.Method, target, investor), http.StatusBadRequest, "/problems/invalid")
				} else {
					check(t, o, do(e, o.Method, target, investor), http.StatusForbidden, "/problems/forbidden")
				}
			case o.Path == "/readyz":
				// Reads the table; TestHealth covers it against DynamoDB.
			case len(sec) == 0: // /livez: no token, and none is checked
				check(t, o, do(e, o.Method, target, ""), http.StatusOK, "")
				check(t, o, do(e, o.Method, target, "Bearer not-a-jwt"), http.StatusOK, "")
			case !open:
				t.Errorf("%s %s: needs a token, and this test does not know how to call it", o.Method, o.Path)
			default: // /metrics, /openapi.json
				if public {
					check(t, o, do(e, o.Method, target, ""), http.StatusOK, "")
					check(t, o, do(e, o.Method, target, "Bearer not-a-jwt"), http.StatusOK, "") // not checked
				} else {
					check(t, o, do(e, o.Method, target, ""), http.StatusUnauthorized, "/problems/unauthorized")
					check(t, o, do(e, o.Method, target, "Bearer "+expired), http.StatusUnauthorized, "/problems/unauthorized")
					check(t, o, do(e, o.Method, target, admin), http.StatusOK, "")
					check(t, o, do(e, o.Method, target, investor), http.StatusOK, "")
				}
			}
		}
	}
}

// TestOpenAPICursorIsBoundToPrincipal: a cursor continues its query for the
// principal it was issued to and nobody else, as the document says.
func TestOpenAPICursorIsBoundToPrincipal(t *testing.T) {
	s := &server{cursors: cursorCodec{key: []byte("openapi-test-cursor-key-0123456789")}, defaultLimit: 100, maxLimit: 1000}
	request := func(p Principal, cursor string) (*gin.Context, *httptest.ResponseRecorder) {
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		r := httptest.NewRequest(http.MethodGet, "/v1/funds/F1/positions?cursor="+url.QueryEscape(cursor), nil)
		c.Request = r.WithContext(context.WithValue(r.Context(), keyPrincipal, p))
		return c, rec
	}
	const query = "fund-positions:F1"
	owner := Principal{Subject: "admin-1", Role: RoleAdmin, Funds: []string{"F1"}}
	c, _ := request(owner, "")
	next := s.next(c, query, fund.PageKey{"PK": &types.AttributeValueMemberS{Value: "FUND#F1"}})
	if next == "" {
		t.Fatal("no cursor issued")
	}

	// The owner, with this token or a renewed one (same claims), continues.
	c, rec := request(owner, next)
	if _, cur, ok := s.pageRequest(c, query); !ok || cur.Key == nil {
		t.Fatalf("the owner's cursor was refused: %d %s", rec.Code, rec.Body)
	}
	// Anyone else, and the owner on another query, gets 400 naming cursor.
	for _, p := range []Principal{
		{Subject: "admin-2", Role: RoleAdmin, Funds: []string{"F1"}},
		{Subject: "admin-1", Role: RoleAdmin, Funds: []string{"F1", "F2"}},
		{Subject: "admin-1", Role: RoleAdmin, Funds: []string{AllFunds}},
		{Subject: "admin-1", Role: RoleInvestor, Investor: "I1"},
	} {
		c, rec := request(p, next)
		if _, _, ok := s.pageRequest(c, query); ok {
			t.Errorf("%+v continued a cursor issued to %+v", p, owner)
			continue
		}
		var pr Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &pr); err != nil || rec.Code != http.StatusBadRequest || pr.Field != "cursor" {
			t.Errorf("%+v with another principal's cursor: %d %s, want 400 naming cursor", p, rec.Code, rec.Body)
		}
	}
	c, _ = request(owner, next)
	if _, _, ok := s.pageRequest(c, query+"x"); ok {
		t.Errorf("a cursor continued another query")
	}
}
