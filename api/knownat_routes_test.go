package api_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// notAsKnownAt are the /v1 GET routes that take no knownAt: the event feed
// has its own time axis (its cursor and watermark), webhook endpoints are
// configuration, not history, and the changes routes take a window of two
// instants (from, to) instead (their answers still carry a basis), and an
// import template is derived from the declared types and the demo, not read.
var notAsKnownAt = []string{"/v1/events", "/v1/webhooks", "/v1/webhooks/{webhookId}", "/v1/webhooks/{webhookId}/deliveries",
	"/v1/positions/{positionId}/summary/changes", "/v1/positions/{positionId}/performance/changes", "/v1/imports/templates/{documentKind}"}

// TestEveryReadRouteTakesKnownAtAndEchoesItsBasis walks the OpenAPI
// document (generated from the route table, which TestOpenAPIGolden holds
// to the code): every /v1 GET route but the ones above accepts knownAt, and
// its 200 answer has a basis, so a read route added later without them
// fails here.
func TestEveryReadRouteTakesKnownAtAndEchoesItsBasis(t *testing.T) {
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Parameters map[string]struct{ Name string }
			Schemas    map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var op struct {
		Parameters []struct {
			Ref  string `json:"$ref"`
			Name string
		}
		Responses map[string]struct {
			Content map[string]struct{ Schema json.RawMessage }
		}
	}
	checked := 0
	for path, ops := range doc.Paths {
		get, ok := ops["get"]
		if !ok || !strings.HasPrefix(path, "/v1/") || slices.Contains(notAsKnownAt, path) {
			continue
		}
		checked++
		op.Parameters, op.Responses = nil, nil
		if err := json.Unmarshal(get, &op); err != nil {
			t.Fatal(err)
		}
		takes := false
		for _, p := range op.Parameters {
			name := p.Name
			if p.Ref != "" {
				name = doc.Components.Parameters[p.Ref[strings.LastIndexByte(p.Ref, '/')+1:]].Name
			}
			takes = takes || name == "knownAt"
		}
		if !takes {
			t.Errorf("GET %s takes no knownAt", path)
		}
		schema := op.Responses["200"].Content["application/json"].Schema
		if !hasBasis(schema, doc.Components.Schemas, 0) {
			t.Errorf("GET %s: its 200 answer (%s) has no basis", path, schema)
		}
	}
	if checked < 20 {
		t.Errorf("checked %d read routes: the walk is broken", checked)
	}
}

// hasBasis reports whether a schema (a $ref, an allOf/anyOf/oneOf of
// them, or an object) has a basis property.
func hasBasis(schema json.RawMessage, schemas map[string]json.RawMessage, depth int) bool {
	var s struct {
		Ref        string `json:"$ref"`
		Properties map[string]json.RawMessage
		AllOf      []json.RawMessage
		AnyOf      []json.RawMessage
		OneOf      []json.RawMessage
	}
	if depth > 8 || json.Unmarshal(schema, &s) != nil {
		return false
	}
	if s.Ref != "" {
		return hasBasis(schemas[s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]], schemas, depth+1)
	}
	if _, ok := s.Properties["basis"]; ok {
		return true
	}
	for _, sub := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf) {
		if hasBasis(sub, schemas, depth+1) {
			return true
		}
	}
	return false
}
