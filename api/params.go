package api

import (
	"mime"
	"slices"
	"strconv"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// params parses a request's parameters (path IDs, query values, the headers
// that qualify a request) with one call per parameter, in the order the
// handler names them. The first invalid one is kept, as the precise error
// that names it (EINVALID with its field, mostly), and later calls return
// zero values; ok answers that error. Every handler reads its input here,
// so a parameter means the same thing, and fails the same way, on every
// route. By the time a /v1 handler runs, declaredQueryOnly (query.go) has
// refused every query parameter its route does not declare, and any given
// twice or empty, so an empty value read here means an absent parameter.
type params struct {
	c   *gin.Context
	s   *server
	err error
}

func (s *server) params(c *gin.Context) *params { return &params{c: c, s: s} }

// ok reports whether every parameter read so far was valid; otherwise it
// answers the first that was not.
func (p *params) ok() bool {
	if p.err != nil {
		writeError(p.c, p.err)
		return false
	}
	return true
}

func (p *params) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// id reads the path parameter name, an ID.
func (p *params) id(name string) string {
	if p.err != nil {
		return ""
	}
	v := p.c.Param(name)
	if err := fund.CheckID(name, v); err != nil {
		p.fail(err)
		return ""
	}
	return v
}

// optionalID reads the query parameter name, an ID when present.
func (p *params) optionalID(name string) string {
	v := p.c.Query(name)
	if p.err != nil || v == "" {
		return ""
	}
	if err := fund.CheckID(name, v); err != nil {
		p.fail(err)
		return ""
	}
	return v
}

// date reads the query parameter name, a date when present (zero otherwise).
func (p *params) date(name string) fund.Date {
	if p.err != nil {
		return fund.Date{}
	}
	d, err := wire.ParseDate(name, p.c.Query(name), false)
	if err != nil {
		p.fail(err)
		return fund.Date{}
	}
	return d
}

// dateRange reads from and to, either open; to must not be before from.
func (p *params) dateRange() (from, to fund.Date) {
	from, to = p.date("from"), p.date("to")
	if p.err == nil && !from.IsZero() && !to.IsZero() && to.Before(from) {
		p.fail(fund.Invalid("to", "must not be before from"))
	}
	return from, to
}

// itemKind reads itemType, the kind of a position item, when present.
func (p *params) itemKind() fund.ItemKind {
	v := p.c.Query("itemType")
	if p.err != nil || v == "" {
		return ""
	}
	k, ok := fund.ParseItemKind(v)
	if !ok {
		p.fail(fund.Invalid("itemType", "must be one of %s, got %q", strings.Join(fund.ItemKindNames(), ", "), v))
	}
	return k
}

// oneOf reads the query parameter name, one of the values its
// declaration (apiParameters) enumerates; its declared default when absent.
// The values a handler compares it with are the declaration's, and it
// answers the declaration's own string rather than the request's copy: a
// value may outlive the request (itemAnswers keeps it in its keys).
func (p *params) oneOf(name string) string {
	decl := apiParameters[name]
	def, _ := decl.Schema.Default.(string)
	v := p.c.Query(decl.name(name))
	if p.err != nil || v == "" {
		return def
	}
	i := slices.Index(decl.Schema.Enum, v)
	if i < 0 {
		p.fail(fund.Invalid(decl.name(name), "must be one of %s, got %q", strings.Join(decl.Schema.Enum, ", "), v))
		return def
	}
	return decl.Schema.Enum[i]
}

// typedLines reads transactions, the typed lines the items answered carry:
// those their documents state (stated, the default) or all.
func (p *params) typedLines() wire.TypedLines { return wire.TypedLines(p.oneOf("transactions")) }

// kindAt reads the path parameter name, a document kind.
func (p *params) kindAt(name string) fund.Kind {
	k := fund.Kind(p.c.Param(name))
	if p.err == nil && !k.Valid() {
		p.fail(fund.Invalid(name, "must be one of %v, got %q", fund.Kinds, k))
		return ""
	}
	return k
}

// documentKind reads kind, the kind of a document, when present.
func (p *params) documentKind() fund.Kind {
	k := fund.Kind(p.c.Query("kind"))
	if p.err != nil || k == "" {
		return ""
	}
	if !k.Valid() {
		p.fail(fund.Invalid("kind", "must be one of %v", fund.Kinds))
		return ""
	}
	return k
}

// version reads the path parameter version: a version number, or latest.
func (p *params) version() (n int, latest bool) {
	v := p.c.Param("version")
	if p.err != nil {
		return 0, false
	}
	if v == "latest" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		p.fail(fund.Invalid("version", "must be a version number from 1, or latest"))
		return 0, false
	}
	return n, false
}

// jsonBody checks that the request's Content-Type is JSON.
func (p *params) jsonBody() {
	if p.err != nil {
		return
	}
	if mt, _, err := mime.ParseMediaType(p.c.GetHeader("Content-Type")); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		p.fail(&fund.Error{Code: codeUnsupported, Field: "Content-Type", Message: "send the document as application/json"})
	}
}

// ifMatch reads If-Match as a version number ("3" or 3), nil when absent.
// "*" asks only that the document exist (RFC 9110), whatever its version
// when the write commits. If-Match compares strongly (RFC 9110 13.1.1): a
// weak tag (W/"3") never matches, so it is 412.
func (p *params) ifMatch() *int {
	v := strings.TrimSpace(p.c.GetHeader("If-Match"))
	if p.err != nil || v == "" {
		return nil
	}
	if v == "*" {
		anyVersion := store.AnyVersion
		return &anyVersion
	}
	if strings.HasPrefix(v, "W/") {
		p.fail(fund.Errorf(fund.EPRECONDITION, "If-Match compares entity tags strongly; a weak tag never matches"))
		return nil
	}
	n, err := strconv.Atoi(strings.Trim(v, `"`))
	if err != nil || n < 0 {
		p.fail(fund.Invalid("If-Match", "must be a version such as \"3\" taken from an ETag, or *"))
		return nil
	}
	return &n
}

// requiredIfMatch is ifMatch for a write that must be conditional: a
// missing If-Match is 428 (RFC 6585), so a void never acts on a version its
// caller did not see.
func (p *params) requiredIfMatch() int {
	if p.err == nil && strings.TrimSpace(p.c.GetHeader("If-Match")) == "" {
		p.fail(&fund.Error{Code: fund.EPRECONDITIONREQUIRED, Field: "If-Match", Message: "send If-Match with the version to void, as its ETag (or *)"})
		return 0
	}
	if v := p.ifMatch(); v != nil {
		return *v
	}
	return 0
}

// page is a paginated read's limit and cursor, and what issues the cursor
// of the page after it.
type page struct {
	limit  int
	cursor cursor
	query  string // the read the cursor continues, bound to the principal
	codec  cursorCodec
	basis  *pinnedBasis // the basis the next page's cursor pins (pin)
}

// page reads limit and cursor; query names the read the cursor must
// continue, and is bound to the principal, so a cursor issued to one token
// is refused to every other.
func (p *params) page(query string) page { return p.pageAt("cursor", query) }

// pageAt is page with the cursor read from the query parameter param.
func (p *params) pageAt(param, query string) page {
	return p.pageOf(param, query, p.s.defaultLimit, p.s.maxLimit)
}

// pageOf is pageAt with a page size of def when limit is absent, and at
// most most (fan-out routes hold fewer positions a page: charge.go).
func (p *params) pageOf(param, query string, def, most int) page {
	pg := page{limit: def, query: principal(p.c).scope() + "\x1e" + query, codec: p.s.cursors}
	if p.err != nil {
		return pg
	}
	if v := p.c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > most {
			p.fail(fund.Invalid("limit", "must be a whole number from 1 to %d", most))
			return pg
		}
		pg.limit = n
	}
	if v := p.c.Query(param); v != "" {
		cur, err := pg.codec.decode(v, pg.query)
		if err != nil {
			p.fail(fund.Invalid(param, "is not a cursor this query issued; start again without one"))
			return pg
		}
		pg.cursor = cur
	}
	return pg
}

// next is the cursor of the page that resumes at key, "" at the end.
func (pg page) next(key store.PageKey) string {
	if key == nil {
		return ""
	}
	return pg.codec.encode(cursor{Query: pg.query, Key: key, Basis: pg.basis})
}

// viewer is the principal as the store sees it: reads through
// s.docs.As(latest(c)) answer what it may not see as absent.
func viewer(c *gin.Context) fund.Viewer {
	switch p := principal(c); p.Role {
	case RoleAdmin:
		return fund.Viewer{AllFunds: slices.Contains(p.Funds, AllFunds), Funds: p.Funds}
	case RoleInvestor:
		return fund.Viewer{Investor: p.Investor}
	}
	return fund.Viewer{}
}

// read is how the request's principal reads on basis b: as known at
// b.knownAt when b is past, otherwise the latest versions.
func read(c *gin.Context, b basis) fund.Read {
	if b.past {
		return fund.KnownAt(viewer(c), b.knownAt)
	}
	return latest(c)
}

// latest is the request's principal reading the latest versions.
func latest(c *gin.Context) fund.Read { return fund.Latest(viewer(c)) }

func setETag(c *gin.Context, version int) {
	c.Header("ETag", `"`+strconv.Itoa(version)+`"`)
}
