package api

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/gin-gonic/gin"
)

// docsUI holds the interactive API reference served at /docs: our own page
// and initializer (committed) and Swagger UI's bundle and stylesheet, which
// `make docsui` (a step of make build, run and test) copies from the
// swagger-ui-dist version pinned in tools/package.json. The copies are
// git-ignored, so the directory compiles without them; the binary then
// answers /docs with a 503 that says how to build it whole.
//
//go:embed docsui
var docsUI embed.FS

// docsPage is the page at /docs; docsAssets are the files under /docs/,
// with their Content-Type. Nothing else of the directory is served.
const docsPage = "index.html"

var docsAssets = map[string]string{
	"init.js":              "text/javascript; charset=utf-8",
	"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
	"swagger-ui.css":       "text/css; charset=utf-8",
	"swagger-ui-LICENSE":   "text/plain; charset=utf-8", // Apache-2.0 asks
	"swagger-ui-NOTICE":    "text/plain; charset=utf-8", // for both with the copy
}

// docsCopied are the assets that come from the npm package, not from this
// repository: without them the page cannot work.
var docsCopied = []string{"swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-LICENSE", "swagger-ui-NOTICE"}

// docsCSP lets the page load scripts, styles and data only from this
// server. Swagger UI's stylesheet draws its icons with data: URIs; it needs
// no inline script or style of ours (a test loads the page in Chromium and
// finds no violation).
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsHandler serves the page at /docs and its assets at /docs/:file from
// assets (the docsui directory's files, at its root).
func docsHandler(assets fs.FS) gin.HandlerFunc {
	missing := ""
	for _, name := range docsCopied {
		if _, err := fs.Stat(assets, name); err != nil {
			missing = name
			break
		}
	}
	return func(c *gin.Context) {
		if missing != "" {
			writeError(c, &fund.Error{Code: fund.EUNAVAILABLE, Message: "the API reference is not in this binary (" +
				missing + " is missing): build it with `make build`, which copies Swagger UI from tools/node_modules " +
				"(`make tools`); the contract itself is at /openapi.json"})
			return
		}
		name, contentType := docsPage, "text/html; charset=utf-8"
		if file := c.Param("file"); file != "" {
			var ok bool
			if contentType, ok = docsAssets[file]; !ok {
				writeError(c, &fund.Error{Code: codeNoRoute, Message: "no such file of the API reference"})
				return
			}
			name = file
		}
		body, err := fs.ReadFile(assets, name)
		if err != nil {
			writeError(c, err)
			return
		}
		c.Header("Content-Security-Policy", docsCSP)
		c.Header("X-Content-Type-Options", "nosniff")
		c.Header("Referrer-Policy", "no-referrer")
		c.Data(http.StatusOK, contentType, body)
	}
}

// apiReference is docsHandler over the embedded directory.
func apiReference() gin.HandlerFunc {
	assets, err := fs.Sub(docsUI, "docsui")
	if err != nil {
		panic(err) // docsui is a literal directory of this package
	}
	return docsHandler(assets)
}
