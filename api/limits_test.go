package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/wire"
)

// The per-field limits of docs/limits.md, each at its value and one past
// it. A document's positions are bounded at 4 here (FUNDSVC_MAX_POSITIONS
// moves it; the largest notice at the default 5,000 is
// TestTheLargestNoticeTakesEveryPath's), bodies at 1 MiB
// (testOptions).
const limitsMaxPositions = 4

// limitsDocument is a valid document of fund, one position per ID given
// (each of investor INV_L), with a capital call of two typed lines.
func limitsDocument(fundID string, positionIDs ...string) map[string]any {
	var ps []any
	for _, id := range positionIDs {
		ps = append(ps, map[string]any{"positionId": id, "investorId": "INV_L",
			"capitalCall": map[string]any{"amount": "100.00", "transactions": []any{
				map[string]any{"transactionType": "investment", "amount": "60.00"},
				map[string]any{"transactionType": "partnership_expenses", "amount": "40.00"}}}})
	}
	return map[string]any{"fundId": fundID, "kind": "capital_call_notice", "title": "Limits", "asOf": "2025-06-30",
		"capitalActivity": map[string]any{"amount": "100.00", "description": "Call"}, "positions": ps}
}

// nthID is an ID of n characters, unique to tag: tag, then padding.
func nthID(tag string, n int) string { return tag + strings.Repeat("x", n-len(tag)) }

// typedLines are n typed lines of one cent each, the first taking the rest
// of amount.
func typedLines(amount string, n int) []any {
	rest := fund.MustMoney(amount).Sub(fund.MustMoney(fmt.Sprintf("%d.%02d", (n-1)/100, (n-1)%100)))
	lines := []any{map[string]any{"transactionType": "investment", "amount": rest.String()}}
	for range n - 1 {
		lines = append(lines, map[string]any{"transactionType": "partnership_expenses", "amount": "0.01"})
	}
	return lines
}

// limitCase is one limit: the request at value n, and what a request one
// past the limit gets.
type limitCase struct {
	name  string
	limit int
	// request returns the method, path, body and headers of a request at
	// n; case tags make every document and position its own.
	request func(tag string, n int) (method, path string, body any, headers []string)
	ok      int    // the status at the limit
	status  int    // the status one past it
	typ     string // its problem type
	field   string // its problem's field
}

func putDocument(id string, d map[string]any) (string, string, any, []string) {
	return http.MethodPut, "/v1/documents/" + id, d, nil
}

// TestEachLimitAdmitsItsValueAndRefusesOneMore drives every per-field
// limit of docs/limits.md: a request exactly at the limit is accepted, and
// one past it is refused with the documented problem, its field named,
// and a refused document is not written.
func TestEachLimitAdmitsItsValueAndRefusesOneMore(t *testing.T) {
	env := fundtest.New(t)
	env.Store.MaxPositions = limitsMaxPositions
	s := startAPI(t, env, nil)
	const invalid, tooLarge = "/problems/invalid", "/problems/too_large"
	docWith := func(tag string, change func(d map[string]any)) map[string]any {
		d := limitsDocument("FUND_L", "P_"+tag)
		change(d)
		return d
	}
	position := func(d map[string]any) map[string]any { return d["positions"].([]any)[0].(map[string]any) }
	paddedBody := func(tag string, n int) []byte {
		// A valid document padded with spaces to exactly n bytes.
		b, err := json.Marshal(limitsDocument("FUND_L", "P_"+tag))
		if err != nil {
			t.Fatal(err)
		}
		return append(b[:len(b)-1:len(b)-1], append(bytes.Repeat([]byte(" "), n-len(b)), '}')...)
	}
	cases := []limitCase{
		{name: "document ID length", limit: 64, ok: 201, status: 400, typ: invalid, field: "documentId",
			request: func(tag string, n int) (string, string, any, []string) {
				return putDocument(nthID("D"+tag, n), limitsDocument("FUND_L", "P_"+tag))
			}},
		{name: "fund ID length", limit: 64, ok: 201, status: 400, typ: invalid, field: "fundId",
			request: func(tag string, n int) (string, string, any, []string) {
				return putDocument("D"+tag, limitsDocument(nthID("F"+tag, n), "P_"+tag))
			}},
		{name: "position ID length", limit: 64, ok: 201, status: 400, typ: invalid, field: "positions[0].positionId",
			request: func(tag string, n int) (string, string, any, []string) {
				return putDocument("D"+tag, limitsDocument("FUND_L", nthID("P"+tag, n)))
			}},
		{name: "investor ID length", limit: 64, ok: 201, status: 400, typ: invalid, field: "positions[0].investorId",
			request: func(tag string, n int) (string, string, any, []string) {
				return putDocument("D"+tag, docWith(tag, func(d map[string]any) { position(d)["investorId"] = nthID("I"+tag, n) }))
			}},
		{name: "title bytes", limit: maxLength[fund.DocumentFields]("Title"), ok: 201, status: 400, typ: invalid, field: "title",
			request: func(tag string, n int) (string, string, any, []string) {
				// Two-byte characters: the limit counts bytes.
				return putDocument("D"+tag, docWith(tag, func(d map[string]any) { d["title"] = strings.Repeat("é", n/2) + strings.Repeat("t", n%2) }))
			}},
		{name: "capital activity description bytes", limit: maxLength[fund.ActivityDetails]("Description"), ok: 201, status: 400, typ: invalid, field: "capitalActivity.description",
			request: func(tag string, n int) (string, string, any, []string) {
				return putDocument("D"+tag, docWith(tag, func(d map[string]any) {
					d["capitalActivity"].(map[string]any)["description"] = strings.Repeat("d", n)
				}))
			}},
		{name: "typed lines of an item", limit: fund.MaxTransactions, ok: 201, status: 400, typ: invalid, field: "positions[0].capitalCall.transactions",
			request: func(tag string, n int) (string, string, any, []string) {
				return putDocument("D"+tag, docWith(tag, func(d map[string]any) {
					position(d)["capitalCall"].(map[string]any)["transactions"] = typedLines("100.00", n)
				}))
			}},
		{name: "positions of a document (FUNDSVC_MAX_POSITIONS)", limit: limitsMaxPositions, ok: 201, status: 400, typ: invalid, field: "positions",
			request: func(tag string, n int) (string, string, any, []string) {
				var ids []string
				for i := range n {
					ids = append(ids, fmt.Sprintf("P_%s_%d", tag, i))
				}
				return putDocument("D"+tag, limitsDocument("FUND_L", ids...))
			}},
		{name: "items of a document (twice FUNDSVC_MAX_POSITIONS)", limit: fund.ItemsPerPosition * limitsMaxPositions, ok: 201, status: 400, typ: invalid, field: "positions",
			request: func(tag string, n int) (string, string, any, []string) {
				// The most positions, each a call; then an unfunded
				// commitment, then a distribution, on each in turn.
				var ids []string
				for i := range limitsMaxPositions {
					ids = append(ids, fmt.Sprintf("P_%s_%d", tag, i))
				}
				d := limitsDocument("FUND_L", ids...)
				ps := d["positions"].([]any)
				for i := range n - limitsMaxPositions {
					kind := []string{"unfundedCommitment", "distribution"}[i/limitsMaxPositions]
					ps[i%limitsMaxPositions].(map[string]any)[kind] = map[string]any{"amount": "1.00"}
				}
				return putDocument("D"+tag, d)
			}},
		{name: "request body bytes (FUNDSVC_MAX_BODY_BYTES)", limit: 1 << 20, ok: 201, status: 413, typ: tooLarge, field: "body",
			request: func(tag string, n int) (string, string, any, []string) {
				return http.MethodPut, "/v1/documents/D" + tag, paddedBody(tag, n), nil
			}},
		{name: "digits of an amount before the point", limit: fund.MoneyMaxIntegerDigits, ok: 201, status: 400, typ: invalid, field: "positions[0].capitalCall.amount",
			request: func(tag string, n int) (string, string, any, []string) {
				return putDocument("D"+tag, docWith(tag, func(d map[string]any) {
					call := position(d)["capitalCall"].(map[string]any)
					call["amount"] = strings.Repeat("9", n)
					delete(call, "transactions")
				}))
			}},
		{name: "digits of an amount after the point", limit: fund.MoneyMaxScale, ok: 201, status: 400, typ: invalid, field: "positions[0].capitalCall.amount",
			request: func(tag string, n int) (string, string, any, []string) {
				return putDocument("D"+tag, docWith(tag, func(d map[string]any) {
					call := position(d)["capitalCall"].(map[string]any)
					call["amount"] = "1." + strings.Repeat("5", n)
					delete(call, "transactions")
				}))
			}},
		{name: "Idempotency-Key length", limit: 255, ok: 201, status: 400, typ: invalid, field: "Idempotency-Key",
			request: func(tag string, n int) (string, string, any, []string) {
				m, p, b, _ := putDocument("D"+tag, limitsDocument("FUND_L", "P_"+tag))
				return m, p, b, []string{"Idempotency-Key", nthID("k"+tag, n)}
			}},
		{name: "page size (limit)", limit: 1000, ok: 200, status: 400, typ: invalid, field: "limit",
			request: func(_ string, n int) (string, string, any, []string) {
				return http.MethodGet, fmt.Sprintf("/v1/funds/FUND_L/documents?limit=%d", n), nil, nil
			}},
		{name: "page size of the event feed (limit)", limit: 1000, ok: 200, status: 400, typ: invalid, field: "limit",
			request: func(_ string, n int) (string, string, any, []string) {
				return http.MethodGet, fmt.Sprintf("/v1/events?limit=%d", n), nil, nil
			}},
		{name: "page size of a fan-out route (limit)", limit: api.MaxFanoutPage, ok: 200, status: 400, typ: invalid, field: "limit",
			request: func(_ string, n int) (string, string, any, []string) {
				return http.MethodGet, fmt.Sprintf("/v1/investors/INV_L/summary?limit=%d", n), nil, nil
			}},
		{name: "fund name bytes", limit: maxLength[fund.FundFields]("Name"), ok: 201, status: 400, typ: invalid, field: "name",
			request: func(tag string, n int) (string, string, any, []string) {
				return http.MethodPut, "/v1/funds/F" + tag, map[string]any{"name": strings.Repeat("n", n), "baseCurrency": "USD"}, nil
			}},
		{name: "fund legal name bytes", limit: maxLength[fund.FundFields]("LegalName"), ok: 201, status: 400, typ: invalid, field: "legalName",
			request: func(tag string, n int) (string, string, any, []string) {
				return http.MethodPut, "/v1/funds/F" + tag, map[string]any{"name": "F", "legalName": strings.Repeat("l", n), "baseCurrency": "USD"}, nil
			}},
		{name: "investor display name bytes", limit: maxLength[fund.InvestorFields]("DisplayName"), ok: 201, status: 400, typ: invalid, field: "displayName",
			request: func(tag string, n int) (string, string, any, []string) {
				return http.MethodPut, "/v1/investors/I" + tag, map[string]any{"displayName": strings.Repeat("n", n), "investorType": "pension"}, nil
			}},
		{name: "external IDs of a record", limit: fund.MaxExternalIDs, ok: 201, status: 400, typ: invalid, field: "externalIds",
			request: func(tag string, n int) (string, string, any, []string) {
				ids := map[string]any{}
				for i := range n {
					ids[fmt.Sprintf("sys%02d", i)] = "X"
				}
				return http.MethodPut, "/v1/investors/I" + tag, map[string]any{"displayName": "I", "investorType": "pension", "externalIds": ids}, nil
			}},
		{name: "external ID bytes", limit: maxLength[fund.InvestorFields]("ExternalIDs"), ok: 201, status: 400, typ: invalid, field: "externalIds.crm",
			request: func(tag string, n int) (string, string, any, []string) {
				return http.MethodPut, "/v1/investors/I" + tag, map[string]any{"displayName": "I", "investorType": "pension",
					"externalIds": map[string]any{"crm": strings.Repeat("e", n)}}, nil
			}},
		{name: "external ID system length", limit: 64, ok: 201, status: 400, typ: invalid, field: "externalIds",
			request: func(tag string, n int) (string, string, any, []string) {
				return http.MethodPut, "/v1/investors/I" + tag, map[string]any{"displayName": "I", "investorType": "pension",
					"externalIds": map[string]any{nthID("s"+tag, n): "X"}}, nil
			}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range []int{c.limit, c.limit + 1} {
				tag := fmt.Sprintf("%02d%c", i, 'a'+rune(n-c.limit))
				method, path, body, headers := c.request(tag, n)
				r := s.do(t, method, path, body, headers...)
				if n == c.limit {
					if r.Status != c.ok {
						t.Fatalf("at the limit %d: %s %.60s answered %d, want %d: %.500s", n, method, path, r.Status, c.ok, r.Body)
					}
					continue
				}
				if r.Status != c.status {
					t.Fatalf("one past the limit, %d: %s %.60s answered %d, want %d: %.500s", n, method, path, r.Status, c.status, r.Body)
				}
				var p problemBody
				if err := json.Unmarshal(r.Body, &p); err != nil || p.Type != c.typ || p.Field != c.field || r.Header.Get("Content-Type") != "application/problem+json" {
					t.Fatalf("one past the limit, %d: want a %s problem naming %q, got %s %s", n, c.typ, c.field, r.Header.Get("Content-Type"), r.Body)
				}
				if method == http.MethodPut && c.field != "documentId" { // an ID refused in the path is refused on GET too
					if g := s.do(t, http.MethodGet, path, nil); g.Status != http.StatusNotFound {
						t.Errorf("the refused %s %.60s was written: GET answers %d", method, path, g.Status)
					}
				}
			}
		})
	}
}

// maxLength is the maxLength tag of T's field (0 when it has none): the
// bound fund.CheckTexts enforces.
func maxLength[T any](field string) int {
	f, _ := reflect.TypeFor[T]().FieldByName(field)
	n, _ := strconv.Atoi(f.Tag.Get("maxLength"))
	return n
}

// requestStrings lists the JSON paths of every member of t whose value is
// a string (of any named string type), or a map of strings, as a body of t
// holds them: through embedded structs, pointers, and the first element
// of lists. A PositionList is a list of fund.Position.
func requestStrings(t reflect.Type, at string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[wire.PositionList]() {
		return requestStrings(reflect.TypeFor[fund.Position](), at+"[0]")
	}
	switch t.Kind() {
	case reflect.String:
		return []string{at}
	case reflect.Slice:
		return requestStrings(t.Elem(), at+"[0]")
	case reflect.Map:
		return []string{at + "{}"}
	case reflect.Struct:
		if t == reflect.TypeFor[fund.Money]() || t == reflect.TypeFor[fund.Date]() {
			return nil
		}
		var out []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
			case f.Anonymous && name == "":
				out = append(out, requestStrings(f.Type, at)...)
			case f.IsExported() && name != "":
				p := name
				if at != "" {
					p = at + "." + name
				}
				out = append(out, requestStrings(f.Type, p)...)
			}
		}
		return out
	}
	return nil
}

// setAt sets the member at path (requestStrings') of body to v, creating
// the objects and lists on the way; a map member ("{}") gets v as the
// value of key "nul".
func setAt(body map[string]any, path string, v string) {
	parts := strings.Split(path, ".")
	var cur any = body
	for i, p := range parts {
		last := i == len(parts)-1
		name, list := strings.CutSuffix(p, "[0]")
		name, isMap := strings.CutSuffix(name, "{}")
		obj := cur.(map[string]any)
		switch {
		case last && isMap:
			obj[name] = map[string]any{"nul": v}
		case last && list:
			obj[name] = []any{v}
		case last:
			obj[name] = v
		case list:
			l, _ := obj[name].([]any)
			if len(l) == 0 {
				l = []any{map[string]any{}}
				obj[name] = l
			}
			cur = l[0]
		default:
			m, _ := obj[name].(map[string]any)
			if m == nil {
				m = map[string]any{}
				obj[name] = m
			}
			cur = m
		}
	}
}

// TestEveryRequestStringIsBounded holds every string member of every JSON
// request body (found by reflection over the request types, so a member
// added later is covered) to a bound that the OpenAPI document declares and
// the server enforces:
//
//   - 100 KB of NUL bytes is refused with 400 naming the member, or the
//     list or map that holds it; a member this refuses for another reason
//     (it comes after a required one that is missing, say) still may not be
//     accepted;
//   - the document bounds the member's schema: a maxLength, an enum, or a
//     pattern without unbounded repetition;
//   - at a maxLength of n, n+1 bytes are refused naming the member, and n
//     bytes are accepted or refused otherwise than n+1 are (digits aside):
//     the server's bound is the document's.
func TestEveryRequestStringIsBounded(t *testing.T) {
	s := newServer(t, false)
	doc := openAPIFile(t)
	hook := s.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/nul"})
	if hook.Status != http.StatusCreated {
		t.Fatalf("POST /v1/webhooks: %d %.300s", hook.Status, hook.Body)
	}
	nul := strings.Repeat("\x00", 100<<10)
	bodies := []struct {
		method, path string
		typ          reflect.Type
		schema       string
		base         func(tag string) map[string]any
	}{
		{http.MethodPut, "/v1/documents/DOC_NUL", reflect.TypeFor[wire.DocumentRequest](), "DocumentRequest", func(tag string) map[string]any {
			d := limitsDocument("FUND_NUL"+tag, "P_NUL"+tag)
			p := d["positions"].([]any)[0].(map[string]any)
			p["distribution"] = map[string]any{"amount": "10.00", "transactions": []any{map[string]any{"transactionType": "income", "amount": "10.00"}}}
			p["unfundedCommitment"] = map[string]any{"amount": "10.00"}
			return d
		}},
		{http.MethodPut, "/v1/funds/FUND_NUL", reflect.TypeFor[wire.FundRequest](), "FundRequest", func(string) map[string]any {
			return map[string]any{"name": "F", "baseCurrency": "USD"}
		}},
		{http.MethodPut, "/v1/investors/INV_NUL", reflect.TypeFor[wire.InvestorRequest](), "InvestorRequest", func(string) map[string]any {
			return map[string]any{"displayName": "I", "investorType": "pension"}
		}},
		{http.MethodPost, "/v1/webhooks", reflect.TypeFor[wire.WebhookRequest](), "WebhookRequest", func(string) map[string]any {
			return map[string]any{"url": "https://hooks.example.com/nul"}
		}},
		{http.MethodPatch, hook.Header.Get("Location"), reflect.TypeFor[wire.WebhookPatch](), "WebhookPatchInput", func(string) map[string]any {
			return map[string]any{}
		}},
	}
	// A value of n bytes of member: its prefix, then a letter.
	prefix := map[string]string{"url": "https://hooks.example.com/"}
	valueOf := func(member string, n int) string { return prefix[member] + strings.Repeat("a", n-len(prefix[member])) }
	put := func(t *testing.T, method, path string, base map[string]any, member, v string) (response, problemBody, bool) {
		body := base
		setAt(body, member, v)
		r := s.do(t, method, path, body)
		var p problemBody
		_ = json.Unmarshal(r.Body, &p)
		want := strings.ReplaceAll(member, "{}", "")
		named := p.Field == want || p.Field == want+".nul" || p.Field == strings.TrimSuffix(want, "[0]")
		return r, p, r.Status == http.StatusBadRequest && named
	}
	digits := strings.NewReplacer("0", "", "1", "", "2", "", "3", "", "4", "", "5", "", "6", "", "7", "", "8", "", "9", "")
	covered := map[string]bool{}
	for _, b := range bodies {
		covered[b.schema] = true
	}
	for _, schema := range jsonRequestSchemas(doc) {
		if !covered[schema] {
			t.Errorf("the OpenAPI document's request body %s is not among the bodies this test sends", schema)
		}
	}
	for _, b := range bodies {
		for i, member := range requestStrings(b.typ, "") {
			// Each member its own resources: what one member's values write
			// never refuses another's.
			tag, path := fmt.Sprint(i), b.path
			if b.method == http.MethodPut {
				path += tag
			}
			t.Run(b.schema+"."+member, func(t *testing.T) {
				if r, p, named := put(t, b.method, path, b.base(tag), member, nul); r.Status != http.StatusBadRequest {
					t.Errorf("100 KB of NUL in %s: answered %d, want 400: %.300s", member, r.Status, r.Body)
				} else if !named {
					t.Errorf("100 KB of NUL in %s: refused naming %q: %s", member, p.Field, url.QueryEscape(p.Detail[:min(len(p.Detail), 200)]))
				}
				sch, err := schemaAt(doc, b.schema, member)
				if err != nil {
					t.Fatalf("the OpenAPI document: %v", err)
				}
				if !stringBounded(sch) {
					t.Fatalf("the OpenAPI document declares no bound of %s.%s (a maxLength, an enum or a bounded pattern): give its Go field a maxLength tag", b.schema, member)
				}
				n, ok := sch["maxLength"].(float64)
				if !ok {
					return
				}
				// The generator states the bound from the tag; a doc tag
				// that states it too goes stale when the tag moves.
				if d, ok := sch["description"].(string); ok && strings.Count(d, fmt.Sprint(int(n))) != 1 {
					t.Errorf("the description of %s.%s states its bound %d other than once (its doc tag should not state it): %q", b.schema, member, int(n), d)
				}
				over, po, named := put(t, b.method, path, b.base(tag), member, valueOf(member, int(n)+1))
				if !named {
					t.Fatalf("%d bytes in %s, one past the document's maxLength: answered %d naming %q, want 400 naming it: %.300s", int(n)+1, member, over.Status, po.Field, over.Body)
				}
				at, pa, named := put(t, b.method, path, b.base(tag), member, valueOf(member, int(n)))
				if named && digits.Replace(pa.Detail) == digits.Replace(po.Detail) {
					t.Errorf("%d bytes in %s, the document's maxLength, are refused as %d are: %d %s", int(n), member, int(n)+1, at.Status, pa.Detail)
				}
			})
		}
	}
}

// openAPIFile is api/openapi.json, decoded (TestOpenAPIGolden holds it to
// what the route table and the wire types generate).
func openAPIFile(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// jsonRequestSchemas names the schemas of the document's JSON request
// bodies.
func jsonRequestSchemas(doc map[string]any) []string {
	var out []string
	for _, item := range doc["paths"].(map[string]any) {
		for _, op := range item.(map[string]any) {
			op, _ := op.(map[string]any) // or a path item's parameters
			body, _ := op["requestBody"].(map[string]any)
			content, _ := body["content"].(map[string]any)
			media, _ := content["application/json"].(map[string]any)
			if schema, ok := media["schema"].(map[string]any); ok {
				ref, _ := schema["$ref"].(string)
				out = append(out, strings.TrimPrefix(ref, "#/components/schemas/"))
			}
		}
	}
	return out
}

// schemaAt is the schema, its references followed, of the member at path
// (requestStrings') of the component schema named root.
func schemaAt(doc map[string]any, root, path string) (map[string]any, error) {
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	resolve := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		for m != nil && m["$ref"] != nil {
			m, _ = schemas[strings.TrimPrefix(m["$ref"].(string), "#/components/schemas/")].(map[string]any)
		}
		return m
	}
	cur := resolve(schemas[root])
	for _, part := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(part, "[0]")
		name, isMap := strings.CutSuffix(name, "{}")
		props, _ := cur["properties"].(map[string]any)
		cur = resolve(props[name])
		switch {
		case cur == nil:
		case list:
			cur = resolve(cur["items"])
		case isMap:
			cur = resolve(cur["additionalProperties"])
		}
		if cur == nil {
			return nil, fmt.Errorf("%s has no schema of %s", root, path)
		}
	}
	return cur, nil
}

// unboundedRepetition finds a quantifier without an upper bound.
var unboundedRepetition = regexp.MustCompile(`[*+]|\{[0-9]+,\}`)

// stringBounded says whether a string schema bounds its values' length.
func stringBounded(s map[string]any) bool {
	pattern, _ := s["pattern"].(string)
	anchored := strings.HasPrefix(pattern, "^") && strings.HasSuffix(pattern, "$") && !unboundedRepetition.MatchString(pattern)
	return s["maxLength"] != nil || s["enum"] != nil || anchored
}
