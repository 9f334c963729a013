package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

// These tests need no DynamoDB: none of the requests they send reaches a
// handler that touches a store.

func openAPITestEngine(t *testing.T) *gin.Engine {
	t.Helper()
	v, err := NewVerifier(AuthConfig{HS256Secret: []byte(internalTestSecret)})
	if err != nil {
		t.Fatal(err)
	}
	h := NewServer(Options{
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxBodyBytes: 1 << 20, DefaultLimit: 100, MaxLimit: 1000, Verifier: v,
		PublicMetrics: true, PublicOpenAPI: true, // the configured defaults
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
	for _, c := range cases {
		o, ok := ops[c.op]
		if !ok {
			t.Errorf("%s: not in the document", c.op)
			continue
		}
		rec := send(t, c.method, c.target, c.body, c.headers...)
		if rec.Code != c.want {
			t.Errorf("%s %s: status %d, want %d: %s", c.method, c.target, rec.Code, c.want, rec.Body)
		}
		responses, _ := o.Op["responses"].(map[string]any)
		if _, ok := responses[strconv.Itoa(rec.Code)]; !ok {
			t.Errorf("%s %s answers %d, which the document does not declare for %s", c.method, c.target, rec.Code, c.op)
		}
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
	tok, err := MintToken([]byte(internalTestSecret), Principal{Subject: "openapi-test", Role: RoleAdmin, Funds: []string{AllFunds}}, "", "", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
