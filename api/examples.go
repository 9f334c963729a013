package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// The OpenAPI document's examples are the demo dataset's real answers, never
// written by hand: each response of the route table names the requests
// (demoCall) whose answers are its examples, TestOpenAPIGolden makes them
// against the API on the demo dataset (seeded as `fundsvc seed` does, at the
// golden tests' fixed clock) and generateOpenAPI writes the answers into the
// document, so the golden test fails when an answer changes. The request
// examples of PUT /v1/documents/{documentId} are the demo's own documents
// (fund.DemoVersions), one of each kind, converted to the request shape.

// example is one named example of a media type (an OpenAPI Example Object).
type example struct {
	Name        string `json:"-"`
	Summary     string `json:"summary,omitempty"`
	Description string `json:"description,omitempty"`
	Value       any    `json:"value"`
}

// namedExamples keeps the examples in their declared order (Swagger UI
// lists them in the order of the document).
type namedExamples []example

func (es namedExamples) MarshalJSON() ([]byte, error) {
	return orderedObject(es, func(e example) (string, any) { return e.Name, e })
}

// demoCall names a request whose answer on the demo dataset is an example of
// the response it belongs to.
type demoCall struct {
	// Name is the example's key, unique within its response; "demo" when empty.
	Name string
	// Path is a GET of this path and query, with the demo's IDs.
	Path string
	// Write, instead of Path, is a PUT of one of the demo's documents, made
	// on a throwaway server whose table holds nothing else, so the demo that
	// the GETs read stays as `fundsvc seed` writes it.
	Write demoWrite
	// MetricFamily cuts a Prometheus text answer to this family's lines.
	MetricFamily string
	// ThisDocument: the answer is this OpenAPI document; its example is its
	// own first members, made by the generator rather than by a request.
	ThisDocument bool
}

// demoWrite is a PUT of a demo document.
type demoWrite int

const (
	// demoGet is no write: a GET of the call's Path.
	demoGet demoWrite = iota
	// demoCreation PUTs the capital call notice request example (201).
	demoCreation
	// demoRestatement PUTs the first demo document that the demo restates
	// at its first version, then at its second (200).
	demoRestatement
	// demoVoid PUTs that same document at its first version, then DELETEs
	// it with If-Match "1" (200).
	demoVoid
)

// demoRequest is one request of a demo call.
type demoRequest struct {
	Method, Path string
	Body         []byte // JSON; nil for a GET
	IfMatch      string // the If-Match header; none when empty
}

// demoPlan is what a demo call sends: its requests in order, the last one's
// answer being the example, and whether they go to a throwaway server.
type demoPlan struct {
	Requests    []demoRequest
	Throwaway   bool
	Summary     string // of the example: the request that answered it
	Description string
}

// demoSubject is the subject of the token the demo calls carry (createdBy in
// the answers of writes): the one `fundsvc token` mints by default.
const demoSubject = "dev-admin"

func (c demoCall) name() string {
	if c.Name == "" {
		return "demo"
	}
	return c.Name
}

// plan returns what c sends; an error says the demo lacks what c needs.
func (c demoCall) plan() (demoPlan, error) {
	switch c.Write {
	case demoCreation:
		ex, err := documentExamples()
		if err != nil {
			return demoPlan{}, err
		}
		var call documentExample
		for _, e := range ex {
			if e.Doc.Kind == fund.KindCapitalCallNotice {
				call = e
			}
		}
		path := "/v1/documents/" + call.Doc.ID
		return demoPlan{Requests: []demoRequest{{Method: http.MethodPut, Path: path, Body: call.Body}}, Throwaway: true,
			Summary:     "PUT " + path + " with the " + string(call.Doc.Kind) + " request example",
			Description: "The answer on a table that holds no other document: the demo's " + call.Doc.ID + " created as version 1, written by a token whose subject is `" + demoSubject + "` at the demo's clock."}, nil
	case demoRestatement:
		first, next, err := demoRestated()
		if err != nil {
			return demoPlan{}, err
		}
		path := "/v1/documents/" + first.ID
		var reqs []demoRequest
		for _, d := range []fund.Document{first, next} {
			body, err := documentRequestBody(d, false)
			if err != nil {
				return demoPlan{}, err
			}
			reqs = append(reqs, demoRequest{Method: http.MethodPut, Path: path, Body: body})
		}
		return demoPlan{Requests: reqs, Throwaway: true,
			Summary: "PUT " + path + " restating it",
			Description: fmt.Sprintf("The answer when the demo's %s (%s), stored at its version 1, is restated with the demo's version 2 of it, on a table that holds no other document; written by a token whose subject is `%s` at the demo's clock.",
				first.ID, first.Title, demoSubject)}, nil
	case demoVoid:
		first, _, err := demoRestated()
		if err != nil {
			return demoPlan{}, err
		}
		path := "/v1/documents/" + first.ID
		body, err := documentRequestBody(first, false)
		if err != nil {
			return demoPlan{}, err
		}
		return demoPlan{Requests: []demoRequest{{Method: http.MethodPut, Path: path, Body: body}, {Method: http.MethodDelete, Path: path, IfMatch: `"1"`}}, Throwaway: true,
			Summary: "DELETE " + path + ` with If-Match: "1"`,
			Description: fmt.Sprintf("The answer when the demo's %s (%s), stored at its version 1, is voided, on a table that holds no other document; written by a token whose subject is `%s` at the demo's clock.",
				first.ID, first.Title, demoSubject)}, nil
	}
	if c.ThisDocument {
		return demoPlan{Summary: "GET " + c.Path, Description: "The answer's first members; the rest is this document."}, nil
	}
	if !strings.HasPrefix(c.Path, "/") {
		return demoPlan{}, fmt.Errorf("demo call %q: a path or a write is required", c.name())
	}
	p := demoPlan{Requests: []demoRequest{{Method: http.MethodGet, Path: c.Path}}, Summary: "GET " + c.Path + " on the demo dataset"}
	if c.MetricFamily != "" {
		p.Description = "The answer cut to the `" + c.MetricFamily + "` family (the others, such as the latencies, the build and the Go and process figures, differ from run to run): the requests that made this document's other examples, on a server of the demo dataset."
	}
	return p, nil
}

// demoKey names the answer of call c of op's response of status.
func demoKey(op operation, status int, c demoCall) string {
	return op.ID + " " + strconv.Itoa(status) + " " + c.name()
}

// demoAnswers are the bodies of the answers of the demo calls, by demoKey,
// made by TestOpenAPIGolden.
type demoAnswers map[string][]byte

// demoExample is the example the answer body makes for call c of a response
// of media type media.
func demoExample(c demoCall, media string, body []byte) (example, error) {
	p, err := c.plan()
	if err != nil {
		return example{}, err
	}
	e := example{Name: c.name(), Summary: p.Summary, Description: p.Description}
	if media != "application/json" {
		text := string(body)
		if c.MetricFamily != "" {
			text = metricFamily(text, c.MetricFamily)
			if text == "" {
				return e, fmt.Errorf("the answer has no %s lines", c.MetricFamily)
			}
		}
		e.Value = text
		return e, nil
	}
	if !json.Valid(body) {
		return e, fmt.Errorf("the answer is not JSON: %.200s", body)
	}
	// A cursor is sealed with a random nonce, so no two answers carry the
	// same one: the example shows a placeholder where the answer had one.
	e.Value = json.RawMessage(demoCursor.ReplaceAll(body, []byte(`"next":"`+demoCursorPlaceholder+`"`)))
	return e, nil
}

// demoCursor matches a cursor in an answer; demoCursorPlaceholder stands
// for it in the examples.
var demoCursor = regexp.MustCompile(`"next":"[A-Za-z0-9_-]+"`)

const demoCursorPlaceholder = "CURSOR_OF_THE_ANSWER"

// metricFamily keeps the lines of text (Prometheus exposition) that are of
// family: its HELP, its TYPE and its samples.
func metricFamily(text, family string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "# HELP "+family+" ") || strings.HasPrefix(line, "# TYPE "+family+" ") ||
			strings.HasPrefix(line, family+"{") || strings.HasPrefix(line, family+" ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// documentExample is a request example of PUT /v1/documents/{documentId}:
// a demo document as a client sends it.
type documentExample struct {
	Doc  fund.Document
	Body json.RawMessage
}

// kindItem is, for each document kind, the position item that makes an
// example of it worth reading.
var kindItem = map[fund.Kind]struct {
	member string
	has    func(fund.Position) bool
}{
	fund.KindCapitalCallNotice:       {"capitalCall", func(p fund.Position) bool { return p.CapitalCall != nil }},
	fund.KindDistributionNotice:      {"distribution", func(p fund.Position) bool { return p.Distribution != nil }},
	fund.KindCapitalAccountStatement: {"capitalAccount", func(p fund.Position) bool { return p.CapitalAccount != nil }},
}

// documentExamples are the request examples of PUT
// /v1/documents/{documentId}, one of each kind in the order of fund.Kinds:
// the first document of that kind in fund.DemoVersions that reports the
// kind's item. A capital call notice's calls carry typed transaction lines:
// their own, or those their line items map to (fund.CallTransactions).
func documentExamples() ([]documentExample, error) {
	demo := fund.DemoVersions()
	var out []documentExample
	for _, kind := range fund.Kinds {
		item, ok := kindItem[kind]
		if !ok {
			return nil, fmt.Errorf("no example item is named for document kind %s", kind)
		}
		found := false
		for _, d := range demo {
			if d.Kind != kind || !hasPosition(d, item.has) {
				continue
			}
			body, err := documentRequestBody(d, kind == fund.KindCapitalCallNotice)
			if err != nil {
				return nil, err
			}
			out = append(out, documentExample{Doc: d, Body: body})
			found = true
			break
		}
		if !found {
			return nil, fmt.Errorf("the demo dataset (fund.DemoVersions) holds no %s whose positions report a %s, so PUT /v1/documents/{documentId} has no example of that kind", kind, item.member)
		}
	}
	return out, nil
}

func hasPosition(d fund.Document, has func(fund.Position) bool) bool {
	for _, p := range d.Positions {
		if has(p) {
			return true
		}
	}
	return false
}

// documentRequestExamples are documentExamples as the request body's
// named examples, keyed by kind.
func documentRequestExamples() ([]example, error) {
	docs, err := documentExamples()
	if err != nil {
		return nil, err
	}
	var out []example
	for _, ex := range docs {
		d := ex.Doc
		desc := fmt.Sprintf("The demo's %s (`fundsvc seed`), as a client sends it", d.ID)
		switch d.Kind {
		case fund.KindCapitalCallNotice:
			desc += "; each call's typed `transactions` are its own or, where it states none, the ones its line items map to"
		case fund.KindCapitalAccountStatement:
			desc += ": each position's `capitalAccount` holds the ILPA Reporting Template's A.1 (NAV) and A.2 (commitment) lines the statement reports"
		}
		out = append(out, example{Name: string(d.Kind), Summary: string(d.Kind) + ": " + d.Title, Description: desc + ".", Value: ex.Body})
	}
	return out, nil
}

// demoRestated returns the first document of fund.DemoVersions that the
// demo writes twice, at its first and second version.
func demoRestated() (first, next fund.Document, err error) {
	seen := map[string]fund.Document{}
	for _, d := range fund.DemoVersions() {
		if f, ok := seen[d.ID]; ok {
			return f, d, nil
		}
		seen[d.ID] = d
	}
	return first, next, fmt.Errorf("the demo dataset (fund.DemoVersions) restates no document, so PUT /v1/documents/{documentId} has no example of a restatement")
}

// documentRequestBody is d as the JSON body of its PUT, built with wire's
// conversions from fund; with typedCalls, each capital call carries typed
// transaction lines, derived from its line items when it states none.
// Members that would be null (a document without capital activity) are
// left out, as a client leaves them out.
func documentRequestBody(d fund.Document, typedCalls bool) (json.RawMessage, error) {
	if typedCalls {
		d.Positions = append([]fund.Position(nil), d.Positions...)
		for i := range d.Positions {
			if c := d.Positions[i].CapitalCall; c != nil {
				call := *c
				call.Transactions = fund.CallTransactions(c.Amount, c.Transactions, c.CallLines)
				d.Positions[i].CapitalCall = &call
			}
		}
	}
	req := wire.RequestOf(d)
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return withoutNullMembers(b)
}

// withoutNullMembers is the JSON object b without its null members.
func withoutNullMembers(b []byte) (json.RawMessage, error) {
	type member struct {
		name  string
		value json.RawMessage
	}
	var members []member
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %.100s", b)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if string(v) != "null" {
			members = append(members, member{t.(string), v})
		}
	}
	return orderedObject(members, func(m member) (string, any) { return m.name, m.value })
}
