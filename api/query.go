package api

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/gin-gonic/gin"
)

// A query string is held to the rules of a body: what a route does not
// declare is refused, not ignored, so that a misspelt ?asof=2025-12-31
// cannot silently answer today's figures instead of the year end's.

// checksQuery reports whether op refuses the query parameters it does not
// declare: every /v1 route does. The ops routes (/livez, /readyz, /metrics,
// /openapi.json, and /docs, which routes registers beside the table) take
// no parameter, so none can be misread into a wrong answer, and their
// callers are not ours to correct: a Prometheus scrape job may add its
// configured params, a load balancer's probe or a browser a cache-buster,
// and the /docs page's assets may be fetched with a version query.
func (op operation) checksQuery() bool { return strings.HasPrefix(op.Path, "/v1/") }

// queryRuleDoc is what every operation that checksQuery adds to its 400
// description (operation.errors).
const queryRuleDoc = "A query parameter the route does not declare (`field` names it, and the detail suggests the declared one it resembles: `did you mean asOf?`), one given twice, one given empty (leave it out instead), or a malformed query string is 400 too, checked before anything is read."

// withQueryRule adds queryRuleDoc to a 400 description.
func withQueryRule(doc string) string {
	if doc == "" {
		return queryRuleDoc
	}
	return doc + " " + queryRuleDoc
}

// declaredQueryOnly refuses, before the handlers run, a request to op whose
// query string holds a parameter op.Params does not declare as a query
// parameter, one given more than once or given empty, or that is not
// well-formed. It runs after authentication and the role check, so a 401
// or 403 comes first, and before any handler, so a refusal reads nothing.
func declaredQueryOnly(op operation) gin.HandlerFunc {
	var declared []string
	for _, name := range op.Params {
		if p := apiParameters[name]; p.In == "query" {
			declared = append(declared, p.name(name))
		}
	}
	return func(c *gin.Context) {
		if err := checkQuery(c.Request.URL.RawQuery, declared); err != nil {
			writeError(c, err)
			return
		}
		c.Next()
	}
}

// checkQuery returns EINVALID for the first parameter of raw (in the order
// sent) that is not one of declared, is given more than once or empty, or
// for a malformed raw.
func checkQuery(raw string, declared []string) error {
	var names []string // in the order first sent
	given := map[string]int{}
	empty := map[string]bool{}
	// url.ParseQuery, which gin's c.Query reads through, skips a pair it
	// cannot decode and drops the rest silently; the walk below refuses
	// them, so a handler reads exactly what was checked.
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue // "?a=1&" or "?": no parameter
		}
		if strings.Contains(pair, ";") {
			return fund.Invalid("", "the query string separates parameters with ;, which is not accepted: separate them with &")
		}
		key, value, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			return fund.Invalid("", "the query string holds %s, which is not a valid percent-encoding", quoteParam(key))
		}
		if name == "" {
			return fund.Invalid("", "the query string holds a value without a parameter name (%s)", quoteParam(pair))
		}
		if _, err := url.QueryUnescape(value); err != nil {
			return fund.Invalid(name, "holds %s, which is not a valid percent-encoding", quoteParam(value))
		}
		if given[name] == 0 {
			names = append(names, name)
		}
		given[name]++
		if value == "" {
			empty[name] = true
		}
	}
	for _, name := range names {
		switch {
		case !slices.Contains(declared, name):
			return fund.Invalid(name, "%s is not a parameter of this route%s", quoteParam(name), suggestParameter(name, declared))
		case given[name] > 1:
			return fund.Invalid(name, "is given %d times; give it once", given[name])
		case empty[name]:
			return fund.Invalid(name, "is empty; give a value or leave the parameter out")
		}
	}
	return nil
}

// suggestParameter is the end of the message that refuses name: the
// declared parameter it most resembles (the same but for case, or a small
// edit away), else the parameters the route takes.
func suggestParameter(name string, declared []string) string {
	best, bestDistance := "", 0
	for _, d := range declared {
		// Short names are a small edit away from many others: "to" is two
		// edits from "id", so they get one edit only.
		limit := 2
		if len(d) <= 4 {
			limit = 1
		}
		if dist := editDistance(strings.ToLower(name), strings.ToLower(d)); dist <= limit && (best == "" || dist < bestDistance) {
			best, bestDistance = d, dist
		}
	}
	switch {
	case best != "":
		return "; did you mean " + best + "?"
	case len(declared) == 0:
		return ", which takes no query parameter"
	case len(declared) == 1:
		return ", which takes only " + declared[0]
	}
	return ", which takes " + strings.Join(declared[:len(declared)-1], ", ") + " and " + declared[len(declared)-1]
}

// editDistance is the optimal string alignment distance between a and b,
// by byte: insertions, deletions, substitutions and transpositions of
// adjacent bytes each cost one ("form" is one edit from "from"). Twenty
// lines of our own, rather than a dependency, for names of a few letters.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b)) // no parameter name is that long; spare the quadratic work
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// quoteParam quotes what a caller sent for a message, cut to 64 bytes
// without splitting a character.
func quoteParam(s string) string {
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}
