package api

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The OpenAPI document is generated from the route table (operations, in
// spec.go) and the Go types its operations name: each schema is the Go
// type's JSON shape, read by reflection as encoding/json sees it. We write
// this generator ourselves rather than use a library (kin-openapi, huma,
// swaggest/openapi-go) because the wire types must stay plain structs that
// encoding/json writes, the document keeps fund's own rules
// (Money's pattern, the ID pattern, the enums) and long prose, and a few
// hundred lines of reflection do it with no new dependency; the lint of
// the output (redocly, make test) checks what a library would.
// TestOpenAPIGolden writes the result to openapi.json (make openapi).

// schema is a JSON Schema (2020-12, as OpenAPI 3.1 uses it), in the
// members this document needs.
type schema struct {
	Ref                  string     `json:"$ref,omitempty"`
	Type                 string     `json:"type,omitempty"`
	Description          string     `json:"description,omitempty"`
	Format               string     `json:"format,omitempty"`
	Pattern              string     `json:"pattern,omitempty"`
	Const                any        `json:"const,omitempty"`
	Enum                 []string   `json:"enum,omitempty"`
	MinLength            *int       `json:"minLength,omitempty"`
	MaxLength            *int       `json:"maxLength,omitempty"`
	Minimum              *int64     `json:"minimum,omitempty"`
	Maximum              *int64     `json:"maximum,omitempty"`
	ExclusiveMinimum     *int64     `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum     *int64     `json:"exclusiveMaximum,omitempty"`
	Default              any        `json:"default,omitempty"`
	Examples             []any      `json:"examples,omitempty"`
	Items                *schema    `json:"items,omitempty"`
	MinItems             *int       `json:"minItems,omitempty"`
	MaxItems             *int       `json:"maxItems,omitempty"`
	MinProperties        *int       `json:"minProperties,omitempty"`
	Required             []string   `json:"required,omitempty"`
	Properties           properties `json:"properties,omitempty"`
	PropertyNames        *schema    `json:"propertyNames,omitempty"`
	AdditionalProperties any        `json:"additionalProperties,omitempty"` // *schema, or false
	OneOf                []*schema  `json:"oneOf,omitempty"`
	AnyOf                []*schema  `json:"anyOf,omitempty"`
}

// properties keeps an object's members in the order of the Go fields.
type properties []property

type property struct {
	Name   string
	Schema *schema
}

func (ps properties) MarshalJSON() ([]byte, error) {
	return orderedObject(ps, func(p property) (string, any) { return p.Name, p.Schema })
}

// orderedObject is the JSON object of the members of es, in their order:
// member names each one and gives its value.
func orderedObject[E any](es []E, member func(E) (string, any)) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range es {
		name, value := member(e)
		k, _ := json.Marshal(name)
		v, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func ptr[T any](v T) *T { return &v }

// The document's own shapes, in the order OpenAPI 3.1 lists their members.
type (
	openAPIDoc struct {
		OpenAPI    string                `json:"openapi"`
		Info       openAPIInfo           `json:"info"`
		Servers    []openAPIServer       `json:"servers"`
		Security   []map[string][]string `json:"security"`
		Tags       []openAPITag          `json:"tags"`
		Paths      map[string]*pathItem  `json:"paths"`
		Webhooks   map[string]*pathItem  `json:"webhooks,omitempty"`
		Components openAPIComponents     `json:"components"`
	}
	openAPIInfo struct {
		Title       string         `json:"title"`
		Version     string         `json:"version"`
		Summary     string         `json:"summary"`
		Description string         `json:"description"`
		License     openAPILicense `json:"license"`
	}
	openAPILicense struct {
		Name       string `json:"name"`
		Identifier string `json:"identifier,omitempty"`
		URL        string `json:"url,omitempty"`
	}
	openAPIServer struct {
		URL         string `json:"url"`
		Description string `json:"description"`
	}
	openAPITag struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	pathItem struct {
		Parameters []*refOnly    `json:"parameters,omitempty"`
		Get        *operationDoc `json:"get,omitempty"`
		Put        *operationDoc `json:"put,omitempty"`
		Post       *operationDoc `json:"post,omitempty"`
		Delete     *operationDoc `json:"delete,omitempty"`
		Patch      *operationDoc `json:"patch,omitempty"`
	}
	refOnly struct {
		Ref         string `json:"$ref"`
		Description string `json:"description,omitempty"`
	}
	operationDoc struct {
		OperationID string                 `json:"operationId"`
		Tags        []string               `json:"tags"`
		Summary     string                 `json:"summary"`
		Description string                 `json:"description"`
		Security    *[]map[string][]string `json:"security,omitempty"`
		Parameters  []*refOnly             `json:"parameters,omitempty"`
		RequestBody *requestBodyDoc        `json:"requestBody,omitempty"`
		Responses   map[string]any         `json:"responses"`
	}
	requestBodyDoc struct {
		Required    bool                 `json:"required"`
		Description string               `json:"description"`
		Content     map[string]mediaType `json:"content"`
	}
	mediaType struct {
		Schema   *schema       `json:"schema"`
		Example  any           `json:"example,omitempty"`
		Examples namedExamples `json:"examples,omitempty"`
	}
	responseDoc struct {
		Description string               `json:"description"`
		Headers     map[string]*refOnly  `json:"headers,omitempty"`
		Content     map[string]mediaType `json:"content,omitempty"`
	}
	parameterDoc struct {
		Name        string  `json:"name"`
		In          string  `json:"in"`
		Required    bool    `json:"required"`
		Description string  `json:"description"`
		Schema      *schema `json:"schema"`
	}
	headerDoc struct {
		Description string  `json:"description"`
		Schema      *schema `json:"schema"`
	}
	openAPIComponents struct {
		Schemas         map[string]*schema       `json:"schemas"`
		Parameters      map[string]*parameterDoc `json:"parameters"`
		Headers         map[string]*headerDoc    `json:"headers"`
		Responses       map[string]*responseDoc  `json:"responses"`
		SecuritySchemes map[string]any           `json:"securitySchemes"`
	}
)

// generator builds one document; it adds a component the first time
// something refers to it, so the document holds no unused one.
type generator struct {
	doc     *openAPIDoc
	answers demoAnswers
	used    map[string]bool // the apiFields and apiTypes entries the document applied
}

// generateOpenAPI returns the document of ops, indented as openapi.json
// holds it, with the answers of their demo calls as examples (examples.go).
func generateOpenAPI(ops []operation, answers demoAnswers) ([]byte, error) {
	g := &generator{answers: answers, used: map[string]bool{}, doc: &openAPIDoc{
		OpenAPI:  "3.1.0",
		Info:     apiInfo,
		Servers:  apiServers,
		Security: []map[string][]string{{"bearerAuth": {}}},
		Tags:     apiTags,
		Paths:    map[string]*pathItem{},
		Components: openAPIComponents{
			Schemas: map[string]*schema{}, Parameters: map[string]*parameterDoc{}, Headers: map[string]*headerDoc{},
			Responses: map[string]*responseDoc{}, SecuritySchemes: map[string]any{"bearerAuth": bearerAuth},
		},
	}}
	for _, op := range ops {
		if err := g.operation(op); err != nil {
			return nil, fmt.Errorf("%s %s: %w", op.Method, op.Path, err)
		}
	}
	if err := g.webhooks(); err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	// An entry keyed by a schema or member the document does not have
	// (one renamed since) would silently stop applying.
	var unused []string
	for k := range apiFields {
		if !g.used[k] {
			unused = append(unused, "apiFields "+k)
		}
	}
	for k := range apiTypes {
		if !g.used[k] {
			unused = append(unused, "apiTypes "+k)
		}
	}
	if len(unused) > 0 {
		slices.Sort(unused)
		return nil, fmt.Errorf("entries naming no schema or member of the document: %s", strings.Join(unused, ", "))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g.doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// openAPIPath turns gin's "/v1/documents/:documentId" into "/v1/documents/{documentId}".
func openAPIPath(ginPath string) string {
	return ginParam.ReplaceAllString(ginPath, "{$1}")
}

func (g *generator) operation(op operation) error {
	path := openAPIPath(op.Path)
	item := g.doc.Paths[path]
	if item == nil {
		item = &pathItem{}
		for _, m := range ginParam.FindAllStringSubmatch(op.Path, -1) {
			if err := g.parameterRef(m[1], "path"); err != nil {
				return err
			}
			item.Parameters = append(item.Parameters, &refOnly{Ref: "#/components/parameters/" + m[1]})
		}
		if err := g.parameterRef("X-Request-ID", "header"); err != nil {
			return err
		}
		item.Parameters = append(item.Parameters, &refOnly{Ref: "#/components/parameters/X-Request-ID"})
		g.doc.Paths[path] = item
	}
	doc := &operationDoc{OperationID: op.ID, Tags: []string{op.Tag}, Summary: op.Summary, Description: op.Description, Responses: map[string]any{}}
	switch op.Access {
	case accessNone:
		doc.Security = &[]map[string][]string{}
	case accessOptional:
		doc.Security = &[]map[string][]string{{}, {"bearerAuth": {}}}
	case accessOperator:
		doc.Security = &[]map[string][]string{{"bearerAuth": {RoleAdmin}}, {}}
	case accessAdmin:
		doc.Security = &[]map[string][]string{{"bearerAuth": {RoleAdmin}}}
	}
	for _, name := range op.Params {
		if err := g.parameterRef(name, ""); err != nil {
			return err
		}
		doc.Parameters = append(doc.Parameters, &refOnly{Ref: "#/components/parameters/" + name})
	}
	if b := op.Body; b != nil && b.Type == nil {
		doc.RequestBody = &requestBodyDoc{Required: true, Description: b.Doc, Content: map[string]mediaType{}}
		for media, ex := range b.Media {
			doc.RequestBody.Content[media] = mediaType{Schema: &schema{Type: "string"}, Example: ex}
		}
	} else if b != nil {
		mt := mediaType{Schema: g.schemaOf(reflect.TypeOf(b.Type), true)}
		if b.Examples != nil {
			es, err := b.Examples()
			if err != nil {
				return fmt.Errorf("request examples: %w", err)
			}
			mt.Examples = es
		}
		doc.RequestBody = &requestBodyDoc{Required: true, Description: b.Doc, Content: map[string]mediaType{"application/json": mt}}
	}
	api := strings.HasPrefix(op.Path, "/v1/")
	for _, r := range op.Responses {
		rd := &responseDoc{Description: r.Doc, Headers: map[string]*refOnly{}}
		headers := []string{"X-Request-ID"}
		if api {
			headers = append(headers, "Cache-Control")
		}
		for _, h := range append(headers, r.Headers...) {
			if err := g.headerRef(h); err != nil {
				return err
			}
			rd.Headers[h] = &refOnly{Ref: "#/components/headers/" + h}
		}
		media := cmp.Or(r.Media, "application/json")
		var s *schema
		switch body := r.Body.(type) {
		case *schema:
			s = body
		case anyOf:
			s = &schema{}
			for _, t := range body {
				s.AnyOf = append(s.AnyOf, g.schemaOf(reflect.TypeOf(t), false))
			}
		default:
			s = g.schemaOf(reflect.TypeOf(body), false)
		}
		mt := mediaType{Schema: s, Example: r.Example}
		for _, c := range r.Demo {
			e, err := g.demoExample(op, r, media, c)
			if err != nil {
				return fmt.Errorf("the %d example %q: %w", r.Status, c.name(), err)
			}
			mt.Examples = append(mt.Examples, e)
		}
		rd.Content = map[string]mediaType{media: mt}
		for other, ex := range r.OtherMedia {
			rd.Content[other] = mediaType{Schema: s, Example: ex}
		}
		doc.Responses[strconv.Itoa(r.Status)] = rd
	}
	for status, text := range op.errors() {
		name, ok := errorResponseOf[status]
		if !ok {
			return fmt.Errorf("no error response describes status %d", status)
		}
		if err := g.responseRef(name); err != nil {
			return err
		}
		doc.Responses[strconv.Itoa(status)] = &refOnly{Ref: "#/components/responses/" + name, Description: text}
	}
	switch op.Method {
	case http.MethodGet:
		item.Get = doc
	case http.MethodPut:
		item.Put = doc
	case http.MethodPost:
		item.Post = doc
	case http.MethodDelete:
		item.Delete = doc
	case http.MethodPatch:
		item.Patch = doc
	default:
		return fmt.Errorf("method %s is not described", op.Method)
	}
	return nil
}

// demoExample is the example of call c of response r: the answer
// TestOpenAPIGolden got on the demo dataset.
func (g *generator) demoExample(op operation, r response, media string, c demoCall) (example, error) {
	if c.ThisDocument {
		p, err := c.plan()
		if err != nil {
			return example{}, err
		}
		first := struct {
			OpenAPI string `json:"openapi"`
			Info    struct {
				Title   string `json:"title"`
				Version string `json:"version"`
			} `json:"info"`
		}{OpenAPI: g.doc.OpenAPI}
		first.Info.Title, first.Info.Version = g.doc.Info.Title, g.doc.Info.Version
		return example{Name: c.name(), Summary: p.Summary, Description: p.Description, Value: first}, nil
	}
	body, ok := g.answers[demoKey(op, r.Status, c)]
	if !ok {
		return example{}, fmt.Errorf("no answer was made for it (TestOpenAPIGolden makes the demo calls)")
	}
	return demoExample(c, media, body)
}

func (g *generator) parameterRef(name, in string) error {
	if _, ok := g.doc.Components.Parameters[name]; ok {
		return nil
	}
	p, ok := apiParameters[name]
	if !ok {
		return fmt.Errorf("parameter %s is not described in apiParameters", name)
	}
	if in != "" && p.In != in {
		return fmt.Errorf("parameter %s is in %s, not %s", name, p.In, in)
	}
	doc := &parameterDoc{Name: p.name(name), In: p.In, Required: p.In == "path", Description: p.Doc, Schema: p.Schema}
	if p.Type != nil {
		doc.Schema = g.schemaOf(reflect.TypeOf(p.Type), false)
	}
	g.doc.Components.Parameters[name] = doc
	g.refs(doc.Schema)
	return nil
}

func (g *generator) headerRef(name string) error {
	if _, ok := g.doc.Components.Headers[name]; ok {
		return nil
	}
	h, ok := apiHeaders[name]
	if !ok {
		return fmt.Errorf("header %s is not described in apiHeaders", name)
	}
	g.doc.Components.Headers[name] = &headerDoc{Description: h.Doc, Schema: h.Schema}
	return nil
}

func (g *generator) responseRef(name string) error {
	if _, ok := g.doc.Components.Responses[name]; ok {
		return nil
	}
	e := errorResponses[name]
	status := statusOf[e.Code]
	rd := &responseDoc{Description: e.Doc, Headers: map[string]*refOnly{}}
	for _, h := range append([]string{"X-Request-ID", "Cache-Control"}, e.Headers...) {
		if err := g.headerRef(h); err != nil {
			return err
		}
		rd.Headers[h] = &refOnly{Ref: "#/components/headers/" + h}
	}
	example := Problem{Type: "/problems/" + e.Code, Title: http.StatusText(status), Status: status, Detail: e.Detail, Field: e.Field}
	rd.Content = map[string]mediaType{"application/problem+json": {Schema: g.schemaOf(reflect.TypeFor[Problem](), false), Example: example}}
	g.doc.Components.Responses[name] = rd
	return nil
}

// refs adds the components s refers to.
func (g *generator) refs(s *schema) {
	if s == nil {
		return
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		g.named(name)
	}
	g.refs(s.Items)
	for _, p := range s.Properties {
		g.refs(p.Schema)
	}
	for _, x := range slices.Concat(s.OneOf, s.AnyOf) {
		g.refs(x)
	}
}

// named adds one of the named scalar schemas (Id, Money, ...).
func (g *generator) named(name string) {
	if _, ok := g.doc.Components.Schemas[name]; ok {
		return
	}
	if s, ok := scalarSchemas[name]; ok {
		g.doc.Components.Schemas[name] = s
		g.refs(s)
	}
}

// webhooks describes what an endpoint receives (OpenAPI 3.1's webhooks):
// one POST per event type (apiWebhooks, webhooks.go), with the signature
// headers and the feed's Event as the body.
func (g *generator) webhooks() error {
	g.doc.Webhooks = map[string]*pathItem{}
	for _, w := range apiWebhooks() {
		doc := &operationDoc{OperationID: w.ID, Tags: []string{"webhooks"}, Summary: w.Summary, Description: w.Description,
			Security: &[]map[string][]string{}, Responses: map[string]any{}}
		for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			if err := g.parameterRef(name, "header"); err != nil {
				return err
			}
			doc.Parameters = append(doc.Parameters, &refOnly{Ref: "#/components/parameters/" + name})
		}
		doc.RequestBody = &requestBodyDoc{Required: true, Description: "The event, the feed's `Event`: exactly the bytes signed.",
			Content: map[string]mediaType{"application/json": {Schema: g.schemaOf(reflect.TypeOf(w.Body), false), Example: w.Body}}}
		for status, text := range w.Responses {
			doc.Responses[status] = map[string]string{"description": text}
		}
		g.doc.Webhooks[w.Name] = &pathItem{Post: doc}
	}
	return nil
}
