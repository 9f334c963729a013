package api

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/gin-gonic/gin"
)

// These tests need no DynamoDB (none of the requests they send reaches a
// handler that touches a store), but for TestOpenAPIGolden, which makes the
// examples' requests on the demo dataset (examples_test.go).

func openAPITestEngine(t *testing.T) *gin.Engine {
	t.Helper()
	return openAPITestEngineWith(t, true) // the configured defaults
}

// openAPITestEngineWith is the API without stores, with /metrics and
// /openapi.json public or not.
func openAPITestEngineWith(t *testing.T, public bool) *gin.Engine {
	t.Helper()
	return openAPITestEngineWithOptions(t, func(o *Options) { o.PublicMetrics, o.PublicOpenAPI = public, public })
}

// openAPITestEngineWithOptions is the API without stores, its options
// changed by tweak.
func openAPITestEngineWithOptions(t *testing.T, tweak func(*Options)) *gin.Engine {
	t.Helper()
	v, err := NewVerifier(AuthConfig{HS256Secret: []byte(internalTestSecret)})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxBodyBytes: 1 << 20, DefaultLimit: 100, MaxLimit: 1000, Verifier: v,
		PublicMetrics: true, PublicOpenAPI: true,
	}
	tweak(&o)
	h := NewServer(o)
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

// TestOpenAPIGolden generates the document from the route table, the wire
// types and the answers of the route table's demo calls (made here against
// the API on the demo dataset), and compares it with api/openapi.json, the
// file the binary embeds: an example that is no longer the demo's answer
// fails it. -update (make openapi) rewrites the file.
func TestOpenAPIGolden(t *testing.T) {
	s := &server{metrics: NewMetrics()}
	ops := s.operations()
	got, err := generateOpenAPI(ops, demoExampleAnswers(t, ops))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := splitServers(got); err != nil {
		t.Fatalf("the server could not name itself in the document: %v", err)
	}
	const file = "openapi.json"
	// -update is golden_test.go's flag: both test packages build one binary.
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("api/openapi.json differs from the document the route table, the wire types and the demo's answers generate; run make openapi\n%s", lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 20; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
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

// TestOpenAPIServedAsEmbedded: /openapi.json is the embedded document, but
// for its servers, where the server that answered comes first.
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
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("GET /openapi.json: Cache-Control %q, want no-store (it names the Host the request sent)", cc)
	}
	if len(openAPIDocument) == 0 {
		t.Fatal("the embedded document is empty")
	}
	served, err := splitServers(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := served.with(apiServers); !bytes.Equal(got, openAPIDocument) {
		t.Errorf("GET /openapi.json served %d bytes that, with the document's own servers, differ from the %d embedded bytes\n%s",
			rec.Body.Len(), len(openAPIDocument), lineDiff(string(openAPIDocument), string(got)))
	}
	if embedded := openAPIServed.with(apiServers); !bytes.Equal(embedded, openAPIDocument) {
		t.Errorf("cut around its servers and put together again, the embedded document changes\n%s", lineDiff(string(openAPIDocument), string(embedded)))
	}
}

// servedServers is GET /openapi.json's servers on h, with host as the
// request's Host (httptest's example.com when empty), from peer.
func servedServers(t *testing.T, h http.Handler, host, peer string, header ...string) []openAPIServer {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
	if host != "" {
		req.Host = host
	}
	if peer != "" {
		req.RemoteAddr = peer
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return decodeServers(t, rec.Code, rec.Body.Bytes())
}

func decodeServers(t *testing.T, status int, body []byte) []openAPIServer {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("GET /openapi.json: status %d\n%.300s", status, body)
	}
	var doc struct {
		Servers []openAPIServer `json:"servers"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Servers
}

// serverURLs are the URLs of servers.
func serverURLs(servers []openAPIServer) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.URL)
	}
	return out
}

// TestOpenAPINamesTheServerTheRequestReached: the document a server
// answers names, first, the URL the request reached (its Host, with the
// port the server listens on, and the connection's scheme), then the
// relative entry; a Host that is not a host name or an address with a
// port leaves the relative entry alone.
func TestOpenAPINamesTheServerTheRequestReached(t *testing.T) {
	relative := serverURLs(apiServers)
	if !slices.Equal(relative, []string{"/"}) {
		t.Fatalf("the document's own servers are %v, want the relative /", relative)
	}
	for _, tls := range []bool{false, true} {
		name := "a server on an ephemeral port names its port"
		newServer := httptest.NewServer
		if tls {
			name = "a TLS server on an ephemeral port names https and its port"
			newServer = httptest.NewTLSServer
		}
		t.Run(name, func(t *testing.T) {
			srv := newServer(openAPITestEngine(t))
			defer srv.Close()
			res, err := srv.Client().Get(srv.URL + "/openapi.json")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			got := serverURLs(decodeServers(t, res.StatusCode, body))
			if want := append([]string{srv.URL}, relative...); !slices.Equal(got, want) {
				t.Errorf("servers %v, want %v", got, want)
			}
			if u, _ := url.Parse(srv.URL); u.Port() == "" || u.Port() == "8080" {
				t.Errorf("the test server listens on %s, which proves nothing about the port", srv.URL)
			}
		})
	}

	e := openAPITestEngine(t)
	t.Run("a Host that names a host is the first entry", func(t *testing.T) {
		for host, want := range map[string]string{
			"api.example.com":      "http://api.example.com",
			"API.example.com:8443": "http://API.example.com:8443",
			"127.0.0.1:18080":      "http://127.0.0.1:18080",
			"[::1]:8080":           "http://[::1]:8080",
			"[2001:db8::1]":        "http://[2001:db8::1]",
			"localhost":            "http://localhost",
		} {
			if got := serverURLs(servedServers(t, e, host, "")); !slices.Equal(got, append([]string{want}, relative...)) {
				t.Errorf("Host %q: servers %v, want %s then %v", host, got, want, relative)
			}
		}
	})
	t.Run("a Host that is not a host name or an address leaves the relative entry alone", func(t *testing.T) {
		for _, host := range []string{
			"evil.example/openapi.json", "user@evil.example", "evil.example:0", "evil.example:65536", "evil.example:080",
			"evil.example:+80", "evil.example:", ":8080", "a..b", "-a.example", "a_b.example", "::1", "[::1",
			"[fe80::1%25eth0]:80", "[127.0.0.1]:80", "evil.example#x", "evil.example?x", "ex ample", strings.Repeat("a.", 127) + "aa",
		} {
			if got := serverURLs(servedServers(t, e, host, "")); !slices.Equal(got, relative) {
				t.Errorf("Host %q: servers %v, want %v alone", host, got, relative)
			}
		}
	})
	t.Run("X-Forwarded-Proto counts only from a trusted proxy", func(t *testing.T) {
		proxied := openAPITestEngineWithOptions(t, func(o *Options) { o.TrustedProxies = []string{"192.0.2.0/28", "2001:db8::7"} })
		for _, c := range []struct {
			h           http.Handler
			peer, proto string
			want        string
		}{
			{e, "192.0.2.1:4000", "https", "http://api.example.com"},        // no proxy is trusted
			{proxied, "192.0.2.1:4000", "https", "https://api.example.com"}, // in the trusted CIDR
			{proxied, "[2001:db8::7]:4000", "https", "https://api.example.com"},
			{proxied, "192.0.2.99:4000", "https", "http://api.example.com"}, // outside it
			{proxied, "192.0.2.1:4000", "ftp", "http://api.example.com"},    // not a scheme of this API
			{proxied, "192.0.2.1:4000", "https, http", "http://api.example.com"},
		} {
			got := serverURLs(servedServers(t, c.h, "api.example.com", c.peer, "X-Forwarded-Proto", c.proto))
			if len(got) == 0 || got[0] != c.want {
				t.Errorf("from %s with X-Forwarded-Proto %q: servers %v, want %s first", c.peer, c.proto, got, c.want)
			}
		}
	})
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
		{"GET /v1/positions/{positionId}", "GET", "/v1/positions/P?itemType=Fee", nil, as(investorI1), 400, "itemType"},
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
		{"GET /v1/documents/{documentId}/positions/{positionId}", "GET", "/v1/documents/DOC1/positions/P1?itemType=Call", nil, nil, 400},
		{"GET /v1/documents/{documentId}/capital", "GET", "/v1/documents/-bad/capital", nil, nil, 400},
		{"GET /v1/documents/{documentId}/analysis", "GET", "/v1/documents/-bad/analysis", nil, nil, 400},
		{"GET /v1/funds/{fundId}/documents", "GET", "/v1/funds/F/documents?kind=notice", nil, nil, 400},
		{"GET /v1/funds/{fundId}/documents", "GET", "/v1/funds/F/documents?limit=x", nil, nil, 400},
		{"GET /v1/funds/{fundId}/positions", "GET", "/v1/funds/-bad/positions", nil, nil, 400},
		{"GET /v1/investors/{investorId}/positions", "GET", "/v1/investors/I/positions?cursor=a.b", nil, nil, 400},
		{"GET /v1/positions/{positionId}", "GET", "/v1/positions/P?itemType=Fee", nil, nil, 400},
		{"GET /v1/positions/{positionId}/capital-calls", "GET", "/v1/positions/P/capital-calls?document=-bad", nil, nil, 400},
		{"GET /v1/positions/{positionId}/capital-calls", "GET", "/v1/positions/P/capital-calls?limit=-1", nil, nil, 400},
		// The fan-out routes' pages are smaller (charge.go).
		{"GET /v1/documents/{documentId}/reconciliation", "GET", fmt.Sprintf("/v1/documents/DOC1/reconciliation?limit=%d", MaxFanoutPage+1), nil, nil, 400},
		{"GET /v1/investors/{investorId}/summary", "GET", fmt.Sprintf("/v1/investors/I/summary?limit=%d", MaxFanoutPage+1), nil, nil, 400},
		{"GET /v1/investors/{investorId}/performance", "GET", fmt.Sprintf("/v1/investors/I/performance?limit=%d", MaxFanoutPage+1), nil, nil, 400},
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

// TestOpenAPIPatternsMatchCode: the patterns the document gives IDs,
// amounts and Idempotency-Key accept exactly what the code accepts.
func TestOpenAPIPatternsMatchCode(t *testing.T) {
	doc := openAPISpec(t)
	pattern := func(ptr string) *regexp.Regexp {
		t.Helper()
		v, _ := jsonPointer(doc, ptr)
		s, ok := v.(string)
		if !ok {
			t.Fatalf("%s is not a pattern: %v", ptr, v)
		}
		return regexp.MustCompile(s)
	}
	cases := []struct {
		name    string
		pattern *regexp.Regexp
		code    func(string) bool
		samples []string
	}{
		{"Id", pattern("#/components/schemas/Id/pattern"), fund.ValidID,
			[]string{"DOC001", "a", "A_b.c:d-e", "-bad", "_x", "has#hash", "has/slash", "", strings.Repeat("x", 64), strings.Repeat("x", 65), "caf\u00e9"}},
		{"MoneyInput", pattern("#/components/schemas/MoneyInput/oneOf/0/pattern"), func(s string) bool { _, err := fund.ParseMoney(s); return err == nil },
			[]string{"0", "-0", "1.5", "500000.00", "0.1234", "0.12345", "007", "1e5", "+1", "1,000", "999999999999999.9999", "1000000000000000", ".5", "5."}},
		{"Idempotency-Key", pattern("#/components/parameters/Idempotency-Key/schema/pattern"), validIdempotencyKey,
			[]string{"a", "7d1f0c2e-5b8a-4e4f-9c1d-2a3b4c5d6e7f", "!~\"#", strings.Repeat("k", 255), strings.Repeat("k", 256), "two words", "tab\there", "caf\u00e9", "\x7f", "nul\x00"}},
	}
	for _, c := range cases {
		for _, s := range c.samples {
			if got, want := c.pattern.MatchString(s), c.code(s); got != want {
				t.Errorf("%s %q: the document's pattern says %v, the code %v", c.name, s, got, want)
			}
		}
	}
	// Every amount the server writes matches the response pattern.
	out := pattern("#/components/schemas/Money/pattern")
	for _, s := range []string{"0", "-12.5", "500000", "0.1234", "999999999999999.9999"} {
		b, err := json.Marshal(fund.MustMoney(s))
		if err != nil {
			t.Fatal(err)
		}
		if written := strings.Trim(string(b), `"`); !out.MatchString(written) {
			t.Errorf("amount %s is written %s, which the Money pattern refuses", s, written)
		}
	}
}

// TestOpenAPIPutDeclaresIdempotency: PUT declares the answers of the
// idempotency middleware and of the write.
func TestOpenAPIPutDeclaresIdempotency(t *testing.T) {
	doc := openAPISpec(t)
	puts := 0
	for _, o := range openAPIOperations(t, doc) {
		if o.Method != "PUT" {
			continue
		}
		puts++
		responses, _ := o.Op["responses"].(map[string]any)
		for _, code := range []string{"400", "401", "403", "404", "409", "412", "413", "415", "422"} {
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
	if puts == 0 {
		t.Fatal("the document has no PUT")
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

	fillBad := strings.NewReplacer("{documentId}", "-bad", "{positionId}", "-bad", "{fundId}", "-bad", "{investorId}", "-bad", "{version}", "1", "{webhookId}", "-bad", "{eventId}", "-bad")
	for _, public := range []bool{true, false} {
		e := openAPITestEngineWith(t, public)
		for _, o := range ops {
			target := fillBad.Replace(o.Path)
			if strings.HasPrefix(o.Path, "/v1/") && !strings.Contains(o.Path, "{") {
				target += "?limit=0" // a listing without a path ID: a bad limit is what the handler refuses
			}
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
				// An admin token passes to the handler, which refuses the IDs
				// (of every route that has any).
				if strings.Contains(o.Path, "{") {
					check(t, o, do(e, o.Method, target, admin), http.StatusBadRequest, "/problems/invalid")
				}
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
					if openAPIAllows(bearer, RoleInvestor) {
						check(t, o, do(e, o.Method, target, investor), http.StatusOK, "")
					} else { // /metrics: admin tokens of every fund
						check(t, o, do(e, o.Method, target, investor), http.StatusForbidden, "/problems/forbidden")
						fundAdmin := "Bearer " + internalToken(t, Principal{Subject: "admin-f1", Role: RoleAdmin, Funds: []string{"F1"}})
						check(t, o, do(e, o.Method, target, fundAdmin), http.StatusForbidden, "/problems/forbidden")
					}
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
	next := s.params(c).page(query).next(store.PageKey(`{"PK":"FUND#F1"}`))
	if next == "" {
		t.Fatal("no cursor issued")
	}

	// The owner, with this token or a renewed one (same claims), continues.
	c, rec := request(owner, next)
	if in := s.params(c); in.page(query).cursor.Key == nil || !in.ok() {
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
		if in := s.params(c); in.page(query).limit > 0 && in.ok() {
			t.Errorf("%+v continued a cursor issued to %+v", p, owner)
			continue
		}
		var pr Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &pr); err != nil || rec.Code != http.StatusBadRequest || pr.Field != "cursor" {
			t.Errorf("%+v with another principal's cursor: %d %s, want 400 naming cursor", p, rec.Code, rec.Body)
		}
	}
	c, _ = request(owner, next)
	if in := s.params(c); in.page(query+"x").limit > 0 && in.ok() {
		t.Errorf("a cursor continued another query")
	}
}

// TestOpenAPIGoldenAnswersMatchSchemas validates every golden answer of
// golden_test.go against the schema the document gives its operation, so
// a schema read from a Go type that a handler does not write fails here.
func TestOpenAPIGoldenAnswersMatchSchemas(t *testing.T) {
	doc := openAPISpec(t)
	ops := map[string]openAPIOperation{}
	for _, o := range openAPIOperations(t, doc) {
		ops[o.Method+" "+o.Path] = o
	}
	goldens := map[string]string{
		"document_DOC001_overview":                   "/v1/documents/{documentId}",
		"document_DOC002_overview":                   "/v1/documents/{documentId}",
		"document_DOC001_position_POSITION_1":        "/v1/documents/{documentId}/positions/{positionId}",
		"position_POSITION_1":                        "/v1/positions/{positionId}",
		"position_POSITION_1_transactions_all":       "/v1/positions/{positionId}",
		"document_DOC001_analysis":                   "/v1/documents/{documentId}/analysis",
		"document_DOC001_capital":                    "/v1/documents/{documentId}/capital",
		"document_DOC001_versions":                   "/v1/documents/{documentId}/versions",
		"document_DOC001_version_1":                  "/v1/documents/{documentId}/versions/{version}",
		"fund_FUND_A_documents":                      "/v1/funds/{fundId}/documents",
		"investor_INVESTOR_1_positions":              "/v1/investors/{investorId}/positions",
		"position_POSITION_1_summary":                "/v1/positions/{positionId}/summary",
		"position_POSITION_2_summary_2025-09-30":     "/v1/positions/{positionId}/summary",
		"position_POSITION_1_cashflows":              "/v1/positions/{positionId}/cashflows",
		"investor_INVESTOR_1_summary":                "/v1/investors/{investorId}/summary",
		"document_DOC007_overview":                   "/v1/documents/{documentId}",
		"document_DOC007_version_1":                  "/v1/documents/{documentId}/versions/{version}",
		"document_DOC007_reconciliation":             "/v1/documents/{documentId}/reconciliation",
		"fund_FUND_A_performance_2025-12-31":         "/v1/funds/{fundId}/performance",
		"investor_INVESTOR_1_performance_2025-12-31": "/v1/investors/{investorId}/performance",
		"position_POSITION_1_capital_accounts":       "/v1/positions/{positionId}",
		"position_POSITION_1_performance_2025-11-15": "/v1/positions/{positionId}/performance",
		"position_POSITION_1_performance_2025-12-31": "/v1/positions/{positionId}/performance",
		"position_POSITION_2_performance_2025-08-31": "/v1/positions/{positionId}/performance",
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".golden.json")
		path, ok := goldens[name]
		if !ok {
			t.Errorf("%s: no operation named for it here", file)
			continue
		}
		t.Run(name+" is a "+path+" answer", func(t *testing.T) {
			sch, ok := jsonPointer(ops["GET "+path].Op, "#/responses/200/content/application~1json/schema")
			if !ok {
				t.Fatalf("GET %s has no JSON 200 schema", path)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			for _, e := range schemaErrors(doc, sch, v, "$") {
				t.Error(e)
			}
		})
	}
	// The validator itself refuses what it should.
	item, _ := jsonPointer(doc, "#/components/schemas/PositionItem")
	for _, bad := range []string{`{"type":"CapitalCall"}`, `{"type":"Fee","documentId":"D","documentVersion":1,"fundId":"F","investorId":"I","positionId":"P","asOf":"2025-01-01","currency":"USD","amount":"1.00","status":"pending"}`} {
		var v any
		_ = json.Unmarshal([]byte(bad), &v)
		if len(schemaErrors(doc, item, v, "$")) == 0 {
			t.Errorf("the PositionItem schema accepts %s", bad)
		}
	}
}

// TestOpenAPIEverySuccessHasAnExampleOfItsSchema: every success answer of
// the document has an example, and every named example of a JSON one (the
// demo's answers) holds to the answer's schema.
func TestOpenAPIEverySuccessHasAnExampleOfItsSchema(t *testing.T) {
	doc := openAPISpec(t)
	checked := 0
	for _, o := range openAPIOperations(t, doc) {
		responses, _ := o.Op["responses"].(map[string]any)
		for status, r := range responses {
			if !strings.HasPrefix(status, "2") {
				continue
			}
			for media, c := range asObject(asObject(r)["content"]) {
				if _, single := asObject(c)["example"]; !single && len(asObject(asObject(c)["examples"])) == 0 {
					t.Errorf("%s %s: the %s answer (%s) has no example", o.Method, o.Path, status, media)
				}
			}
			sch, ok := jsonPointer(r, "#/content/application~1json/schema")
			if !ok {
				continue
			}
			examples, _ := jsonPointer(r, "#/content/application~1json/examples")
			for name, e := range asObject(examples) {
				checked++
				value, _ := jsonPointer(e, "#/value")
				for _, err := range schemaErrors(doc, sch, value, "$") {
					t.Errorf("%s %s: the %s example %q: %s", o.Method, o.Path, status, name, err)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("the document has no named examples of JSON answers")
	}
}

// schemaErrors checks v against the members of JSON Schema the document
// uses: $ref, type, const, enum, pattern, required, properties,
// additionalProperties, items, oneOf and anyOf.
func schemaErrors(doc map[string]any, s any, v any, at string) []string {
	m, err := deref(doc, s)
	if err != nil {
		return []string{at + ": " + err.Error()}
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts, ok := m[key].([]any); ok {
			matched := 0
			for _, alt := range alts {
				if len(schemaErrors(doc, alt, v, at)) == 0 {
					matched++
				}
			}
			if matched == 0 || (key == "oneOf" && matched > 1) {
				fail("%s: %d alternatives match %v", key, matched, v)
			}
		}
	}
	if typ, ok := m["type"].(string); ok {
		okType := false
		switch x := v.(type) {
		case nil:
			okType = typ == "null"
		case bool:
			okType = typ == "boolean"
		case float64:
			okType = typ == "number" || (typ == "integer" && x == float64(int64(x)))
		case string:
			okType = typ == "string"
		case []any:
			okType = typ == "array"
		case map[string]any:
			okType = typ == "object"
		}
		if !okType {
			fail("%v is not of type %s", v, typ)
			return errs
		}
	}
	if c, ok := m["const"]; ok && !jsonEqual(c, v) {
		fail("%v is not %v", v, c)
	}
	if enum, ok := m["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return jsonEqual(e, v) }) {
		fail("%v is not one of %v", v, enum)
	}
	if p, ok := m["pattern"].(string); ok {
		if s, isString := v.(string); isString && !regexp.MustCompile(p).MatchString(s) {
			fail("%q does not match %s", s, p)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range asSlice(m["required"]) {
			if _, ok := x[r.(string)]; !ok {
				fail("required member %v is missing", r)
			}
		}
		props, _ := m["properties"].(map[string]any)
		for k, member := range x {
			if ps, ok := props[k]; ok {
				errs = append(errs, schemaErrors(doc, ps, member, at+"."+k)...)
				continue
			}
			switch ap := m["additionalProperties"].(type) {
			case map[string]any:
				errs = append(errs, schemaErrors(doc, ap, member, at+"."+k)...)
			default:
				if props != nil || ap == false {
					fail("member %s is not in the schema", k)
				}
			}
		}
	case []any:
		if items, ok := m["items"]; ok {
			for i, e := range x {
				errs = append(errs, schemaErrors(doc, items, e, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// TestEveryPropertyHasADescription holds the document to its declarations:
// every property of every schema has a description, and each is the doc
// tag of the Go field it comes from (the generator reads nothing else), so
// a field declared without one fails here.
func TestEveryPropertyHasADescription(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, s := range doc.Components.Schemas {
		for prop, p := range s.Properties {
			n++
			if strings.TrimSpace(p.Description) == "" {
				t.Errorf("%s.%s has no description: give its Go field a doc tag", name, prop)
			}
		}
	}
	if n < 200 {
		t.Errorf("only %d properties walked", n)
	}
}
