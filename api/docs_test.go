package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/gin-gonic/gin"
)

// These tests need no DynamoDB: the reference reads only /openapi.json.

// swaggerUIDist is the npm package the Makefile copies the assets from.
const swaggerUIDist = "../tools/node_modules/swagger-ui-dist"

// docsFromPackage names, for each served file copied from swagger-ui-dist,
// its name in the package.
var docsFromPackage = map[string]string{
	"swagger-ui-bundle.js": "swagger-ui-bundle.js",
	"swagger-ui.css":       "swagger-ui.css",
	"swagger-ui-LICENSE":   "LICENSE",
	"swagger-ui-NOTICE":    "NOTICE",
}

func TestDocsServesThePinnedSwaggerUI(t *testing.T) {
	var pins struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, "../tools/package.json", &pins)
	pinned := pins.Dependencies["swagger-ui-dist"]
	if pinned == "" {
		t.Fatal("tools/package.json pins no swagger-ui-dist")
	}
	var installed struct {
		Version string `json:"version"`
	}
	readJSON(t, filepath.Join(swaggerUIDist, "package.json"), &installed)
	if installed.Version != pinned {
		t.Fatalf("tools/node_modules has swagger-ui-dist %s, tools/package.json pins %s: run make tools", installed.Version, pinned)
	}
	if len(docsFromPackage) != len(docsCopied) {
		t.Errorf("the test knows %d copied files, docs.go %d", len(docsFromPackage), len(docsCopied))
	}

	e := openAPITestEngine(t)
	for _, name := range docsCopied {
		t.Run(name+" is the package's file", func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(swaggerUIDist, docsFromPackage[name]))
			if err != nil {
				t.Fatal(err)
			}
			rec := get(e, "/docs/"+name, "")
			if rec.Code != http.StatusOK {
				t.Fatalf("GET /docs/%s: status %d\n%.300s", name, rec.Code, rec.Body)
			}
			if !bytes.Equal(rec.Body.Bytes(), want) {
				t.Errorf("GET /docs/%s: %d bytes that differ from the %d of swagger-ui-dist %s (run make docsui)", name, rec.Body.Len(), len(want), pinned)
			}
		})
	}

	t.Run("the page and every asset carry the CSP and their own type", func(t *testing.T) {
		for path, want := range map[string]string{
			"/docs":                      "text/html; charset=utf-8",
			"/docs/init.js":              "text/javascript; charset=utf-8",
			"/docs/swagger-ui-bundle.js": "text/javascript; charset=utf-8",
			"/docs/swagger-ui.css":       "text/css; charset=utf-8",
		} {
			rec := get(e, path, "")
			if rec.Code != http.StatusOK {
				t.Errorf("GET %s: status %d", path, rec.Code)
				continue
			}
			if got := rec.Header().Get("Content-Type"); got != want {
				t.Errorf("GET %s: Content-Type %q, want %q", path, got, want)
			}
			if got := rec.Header().Get("Content-Security-Policy"); got != docsCSP {
				t.Errorf("GET %s: Content-Security-Policy %q, want %q", path, got, docsCSP)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options %q", path, got)
			}
		}
	})

	t.Run("nothing else of the directory is served", func(t *testing.T) {
		for _, path := range []string{"/docs/index.html", "/docs/swagger-ui-bundle.js.map", "/docs/favicon-32x32.png", "/docs/..%2fopenapi.go"} {
			if rec := get(e, path, ""); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "/problems/no_route") {
				t.Errorf("GET %s: status %d, want a 404 problem\n%.300s", path, rec.Code, rec.Body)
			}
		}
	})

	t.Run("the page loads only its own scripts and styles", func(t *testing.T) {
		page := get(e, "/docs", "").Body.String()
		refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1)
		var got []string
		for _, m := range refs {
			got = append(got, m[1])
		}
		want := []string{"data:,", "docs/swagger-ui.css", "docs/swagger-ui-bundle.js", "docs/init.js"}
		if !slices.Equal(got, want) {
			t.Errorf("the page refers to %q, want %q", got, want)
		}
	})
}

func TestDocsNeedATokenWhenTheSpecDoes(t *testing.T) {
	e := openAPITestEngineWith(t, false)
	admin := "Bearer " + internalAdminToken(t)
	for _, path := range []string{"/docs", "/docs/swagger-ui-bundle.js", "/openapi.json"} {
		if rec := get(e, path, ""); rec.Code != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: status %d, want 401", path, rec.Code)
		}
		if rec := get(e, path, admin); rec.Code != http.StatusOK {
			t.Errorf("GET %s with a token: status %d, want 200", path, rec.Code)
		}
	}
}

func TestDocsWithoutTheCopiedAssetsSaySo(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	h := docsHandler(fstest.MapFS{
		"index.html": {Data: []byte("<!DOCTYPE html>")},
		"init.js":    {Data: []byte("")},
	})
	r.GET("/docs", h)
	r.GET("/docs/:file", h)
	for _, path := range []string{"/docs", "/docs/init.js"} {
		rec := get(r, path, "")
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("GET %s: status %d, want 503", path, rec.Code)
		}
		var p Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatalf("GET %s: not a problem: %v\n%s", path, err, rec.Body)
		}
		if !strings.Contains(p.Detail, "make build") || !strings.Contains(p.Detail, "swagger-ui-bundle.js") {
			t.Errorf("GET %s: detail %q does not say what is missing and how to build it", path, p.Detail)
		}
	}
}

// TestDocsListEveryRouteInChromium loads /docs in headless Chromium and
// finds every route of the engine (but /docs itself) rendered as an
// operation, no request of the page going anywhere but the API and no
// Content-Security-Policy violation. When the spec needs a token, the page
// works behind a proxy that adds it (the way docs/security.md says to reach it then).
// The page is opened at PUT /v1/documents/{documentId} (Swagger UI's deep
// link), which shows its examples: the request examples, one of each
// document kind, and the demo's answers (renderedExampleErrors); and its
// servers name the server the page was loaded from, with its port.
func TestDocsListEveryRouteInChromium(t *testing.T) {
	chromium := chromiumPath(t)
	for _, public := range []bool{true, false} {
		name := "public reference"
		if !public {
			name = "reference behind a proxy that adds the token"
		}
		t.Run(name, func(t *testing.T) {
			e := openAPITestEngineWith(t, public)
			srv := httptest.NewServer(e)
			defer srv.Close()
			auth := ""
			if !public {
				auth = "Bearer " + internalAdminToken(t)
			}
			proxy := newLoopbackProxy(t, srv.URL, auth)
			ps := httptest.NewServer(proxy)
			defer ps.Close()

			v := visit(t, chromium, ps.URL, srv.URL+"/docs#/documents/putDocument")

			rendered := renderedOperations(v.dom)
			var want []string
			for _, r := range e.Routes() {
				if r.Path == "/docs" || strings.HasPrefix(r.Path, "/docs/") {
					continue // the page is not an operation of the API
				}
				want = append(want, r.Method+" "+openAPIPath(r.Path))
			}
			slices.Sort(want)
			if len(want) == 0 {
				t.Fatal("the engine registers no routes")
			}
			for _, op := range want {
				if !rendered[op] {
					t.Errorf("the rendered reference does not list %s", op)
				}
			}
			spec := openAPISpec(t)
			hooks, _ := spec["webhooks"].(map[string]any)
			for name := range hooks {
				if !rendered["POST "+name] {
					t.Errorf("the rendered reference does not list the webhook %s", name)
				}
			}
			if ops := len(openAPIOperations(t, spec)) + len(hooks); len(rendered) != ops {
				t.Errorf("the reference renders %d operations, the spec has %d (with %d webhooks)", len(rendered), ops, len(hooks))
			}
			for _, e := range renderedExampleErrors(t, v.dom) {
				t.Error(e)
			}
			if servers := renderedServers.FindStringSubmatch(v.dom); servers == nil || !strings.Contains(servers[1], `<option value="`+srv.URL+`">`) {
				t.Errorf("the page's servers do not name %s, where it was loaded from: %q", srv.URL, servers)
			}
			if t.Failed() {
				t.Logf("rendered: %v\nbrowser log:\n%s\nDOM (first 2000 bytes):\n%.2000s", rendered, v.log, v.dom)
			}
			if !t.Failed() {
				// The checks of the examples see what they look for: the
				// page without the selector, or with the created document's
				// ID or its first amount changed, fails them.
				created := rawPointer(t, openAPIDocument, "/paths/~1v1~1documents~1{documentId}/put/responses/201/content/application~1json/examples/demo/value")
				id := string(rawPointer(t, created, "/documentId"))
				amount := regexp.MustCompile(`"[0-9]+\.[0-9]{2}"`).FindString(string(created))
				if amount == "" {
					t.Fatalf("the 201 example holds no amount: %.300s", created)
				}
				for what, dom := range map[string]string{
					"without the request examples' selector": examplesSelect.ReplaceAllString(v.dom, ""),
					"with another amount":                    strings.ReplaceAll(v.dom, amount, strings.TrimSuffix(amount, `"`)+`1"`),
					"with another document ID":               strings.ReplaceAll(v.dom, id, strings.TrimSuffix(id, `"`)+`X"`),
				} {
					if errs := renderedExampleErrors(t, dom); len(errs) == 0 {
						t.Errorf("the page %s passes the checks of the examples", what)
					}
				}
			}

			for _, u := range v.outside(srv.URL) {
				t.Errorf("the page requested %s: nothing may come from elsewhere than the API", u)
			}
			for _, line := range v.cspViolations() {
				t.Errorf("the page breaks its Content-Security-Policy: %s", line)
			}
			// The page, its assets and the spec came through the proxy (with
			// the token when one is needed), as the page's own requests.
			requested := map[string]bool{}
			for _, u := range v.requests {
				requested[u] = true
			}
			for _, path := range []string{"/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js", "/docs/init.js", "/openapi.json"} {
				if !requested[srv.URL+path] {
					t.Errorf("the page did not request %s; it requested %q", path, v.requests)
				}
				if !proxy.forwarded(path) {
					t.Errorf("%s did not come through the proxy", path)
				}
			}
		})
	}
}

// TestDocsBrowserChecksSeeWhatTheyLookFor shows that the checks above can
// fail: a page that loads an image from another host is caught by the
// browser's network log when it has no CSP, and by the console's CSP
// violation when it has the reference's.
func TestDocsBrowserChecksSeeWhatTheyLookFor(t *testing.T) {
	chromium := chromiumPath(t)
	const outside = "http://192.0.2.1/pixel.png" // TEST-NET-1; the proxy refuses it anyway
	page := `<!DOCTYPE html><html><head><title>t</title><link rel="icon" href="data:,"></head>` +
		`<body><img src="` + outside + `" alt=""><style>p{color:red}</style></body></html>`
	for _, withCSP := range []bool{false, true} {
		name := "without a CSP, the network log shows the request"
		if withCSP {
			name = "with the reference's CSP, the console shows the violations"
		}
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if withCSP {
					w.Header().Set("Content-Security-Policy", docsCSP)
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = io.WriteString(w, page)
			}))
			defer srv.Close()
			ps := httptest.NewServer(newLoopbackProxy(t, srv.URL, ""))
			defer ps.Close()

			v := visit(t, chromium, ps.URL, srv.URL+"/")
			out, violations := v.outside(srv.URL), v.cspViolations()
			if withCSP {
				if len(out) != 0 {
					t.Errorf("the CSP let the page request %q", out)
				}
				if len(violations) < 2 { // the image and the inline style
					t.Errorf("the console shows %d CSP violations, want the image's and the style's:\n%s", len(violations), v.log)
				}
			} else {
				if !slices.Equal(out, []string{outside}) {
					t.Errorf("outside requests %q, want [%s]; the page requested %q", out, outside, v.requests)
				}
				if len(violations) != 0 {
					t.Errorf("CSP violations without a CSP: %q", violations)
				}
			}
		})
	}
}

// chromiumPath is FUNDSVC_TEST_CHROMIUM or Debian's chromium; the test fails
// without one (make test installs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FUNDSVC_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "chromium"} {
		if found, err := exec.LookPath(p); err == nil {
			return found
		}
	}
	t.Fatal("no chromium: install Debian's chromium (`make chromium` does) or set FUNDSVC_TEST_CHROMIUM to a Chromium binary")
	return ""
}

// browserVisit is what headless Chromium made of a page.
type browserVisit struct {
	origin   string   // the page's
	dom      string   // once the page rendered
	log      string   // the browser's, with console messages such as CSP violations
	requests []string // the URLs the page itself requested (its initiator was the page)
}

// outside are the page's requests that went elsewhere than api.
func (v browserVisit) outside(api string) []string {
	var out []string
	for _, u := range v.requests {
		if u != api && !strings.HasPrefix(u, api+"/") {
			out = append(out, u)
		}
	}
	return out
}

// cspViolations are the console's messages about a blocked load.
func (v browserVisit) cspViolations() []string {
	var out []string
	for _, line := range strings.Split(v.log, "\n") {
		if strings.Contains(line, "CONSOLE") && strings.Contains(line, "Content Security Policy") {
			out = append(out, line)
		}
	}
	return out
}

// visit loads page in headless Chromium with every request, loopback too,
// sent through proxy. Chromium's virtual time runs until the page's network
// and timers are idle (or the budget is spent), then it prints the DOM and
// exits; its network log says which requests the page made, as distinct
// from the browser's own (time, accounts), which have no initiator.
func visit(t *testing.T, chromium, proxy, page string) browserVisit {
	t.Helper()
	u, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	origin := u.Scheme + "://" + u.Host
	dir := t.TempDir()
	netlog := filepath.Join(dir, "netlog.json")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		// <-loopback> removes Chromium's implicit bypass of loopback hosts.
		"--proxy-server="+proxy, "--proxy-bypass-list=<-loopback>",
		"--log-net-log="+netlog, "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=30000", "--dump-dom", page)
	// Chromium starts helper processes; on timeout, end them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", chromium, err, stderr.String())
	}
	v := browserVisit{origin: origin, dom: stdout.String(), log: stderr.String()}

	// The log's events name their type by number; constants map the names.
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Params struct {
				URL       string `json:"url"`
				Initiator string `json:"initiator"`
			} `json:"params"`
		} `json:"events"`
	}
	readJSON(t, netlog, &log)
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatalf("%s has no URL_REQUEST_START_JOB event type", netlog)
	}
	for _, e := range log.Events {
		if e.Type == start && e.Params.Initiator == origin {
			v.requests = append(v.requests, e.Params.URL)
		}
	}
	return v
}

// Swagger UI's selector of a media type's named examples, the servers'
// selector, and any tag.
var (
	examplesSelect  = regexp.MustCompile(`(?s)<select class="examples-select-element">(.*?)</select>`)
	renderedOption  = regexp.MustCompile(`(?s)<option value="([^"]*)"[^>]*>(.*?)</option>`)
	renderedServers = regexp.MustCompile(`(?s)<select id="servers">(.*?)</select>`)
	htmlTag         = regexp.MustCompile(`<[^>]*>`)
)

// renderedExampleErrors checks the page Swagger UI rendered with PUT
// /v1/documents/{documentId} open against api/openapi.json: a selector
// lists the request examples, one per document kind in the order of
// fund.Kinds, each under its summary; and the page shows, as Swagger UI
// writes them (indented by two), the first request example's value and the
// first example of each success response, the demo's real answers.
func renderedExampleErrors(t *testing.T, dom string) []string {
	t.Helper()
	const put = "/paths/~1v1~1documents~1{documentId}/put"
	var errs []string
	var want []string
	for _, k := range fund.Kinds {
		var summary string
		if err := json.Unmarshal(rawPointer(t, openAPIDocument, put+"/requestBody/content/application~1json/examples/"+string(k)+"/summary"), &summary); err != nil {
			t.Fatal(err)
		}
		want = append(want, string(k)+" "+summary)
	}
	listed := false
	for _, sel := range examplesSelect.FindAllStringSubmatch(dom, -1) {
		var got []string
		for _, o := range renderedOption.FindAllStringSubmatch(sel[1], -1) {
			got = append(got, html.UnescapeString(o[1])+" "+html.UnescapeString(o[2]))
		}
		listed = listed || slices.Equal(got, want)
	}
	if !listed {
		errs = append(errs, fmt.Sprintf("no examples selector lists the request examples %q", want))
	}
	text := html.UnescapeString(htmlTag.ReplaceAllString(dom, ""))
	for _, ptr := range []string{
		"/requestBody/content/application~1json/examples/" + string(fund.Kinds[0]) + "/value",
		"/responses/200/content/application~1json/examples/demo/value",
		"/responses/201/content/application~1json/examples/demo/value",
	} {
		var shown bytes.Buffer
		if err := json.Indent(&shown, rawPointer(t, openAPIDocument, put+ptr), "", "  "); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, shown.String()) {
			errs = append(errs, fmt.Sprintf("the page does not show the example %s:\n%.300s", ptr, shown.String()))
		}
	}
	return errs
}

// rawPointer is the member of the JSON document doc at the JSON pointer
// ptr, as written there (members in their order).
func rawPointer(t *testing.T, doc []byte, ptr string) json.RawMessage {
	t.Helper()
	cur := json.RawMessage(doc)
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var members map[string]json.RawMessage
		if err := json.Unmarshal(cur, &members); err != nil {
			t.Fatalf("%s: %v", ptr, err)
		}
		next, ok := members[tok]
		if !ok {
			t.Fatalf("%s: no member %q", ptr, tok)
		}
		cur = next
	}
	return cur
}

// renderedOperation finds Swagger UI's summary line of an operation: its
// method, then its path template.
var renderedOperation = regexp.MustCompile(`(?s)class="opblock-summary-method">([A-Z]+)</span>.*?class="opblock-summary-path" data-path="([^"]*)"`)

// renderedOperations are the "METHOD /path/{param}" the page lists.
func renderedOperations(dom string) map[string]bool {
	ops := map[string]bool{}
	for _, m := range renderedOperation.FindAllStringSubmatch(dom, -1) {
		ops[m[1]+" "+html.UnescapeString(m[2])] = true
	}
	return ops
}

// loopbackProxy is the browser's HTTP proxy: it forwards the requests for
// the API, adding auth when set, and refuses the rest (HTTPS tunnels
// included), so that nothing of a test's browser leaves the machine.
type loopbackProxy struct {
	api *url.URL
	fwd *httputil.ReverseProxy

	mu    sync.Mutex
	paths map[string]bool // forwarded
}

func newLoopbackProxy(t *testing.T, api, auth string) *loopbackProxy {
	t.Helper()
	u, err := url.Parse(api)
	if err != nil {
		t.Fatal(err)
	}
	p := &loopbackProxy{api: u, paths: map[string]bool{}}
	p.fwd = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		if auth != "" {
			r.Out.Header.Set("Authorization", auth)
		}
	}}
	return p
}

func (p *loopbackProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect || r.URL.Host != p.api.Host {
		http.Error(w, "this proxy reaches the API only", http.StatusBadGateway)
		return
	}
	p.mu.Lock()
	p.paths[r.URL.Path] = true
	p.mu.Unlock()
	p.fwd.ServeHTTP(w, r)
}

func (p *loopbackProxy) forwarded(path string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paths[path]
}

func get(h http.Handler, path, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
