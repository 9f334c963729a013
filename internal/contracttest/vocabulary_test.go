package contracttest_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/export"
)

// enumValue is the one casing of an enum's values: lower snake_case.
var enumValue = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// genericWords say that a member is a date or a type without saying
// which; a member so named reads as one concept in one answer and another
// elsewhere (a call's dueDate was once "date" in the answers).
var genericWords = []string{"date", "type"}

// standardSchema is a schema whose member names a standard fixes: RFC
// 9457's problem details (type, title, status, detail, instance).
const standardSchema = "Problem"

// webhookSchema is the other: the event, which is Standard Webhooks 1.0's
// payload (type, timestamp, data). Its type is the one member besides the
// problem's named by a generic word, and the feed's query parameter that
// filters on it bears its name; its values are the standard's dotted
// <resource>.<action> names, each part lower snake_case, which the
// eventTypes an endpoint subscribes to list too.
const webhookSchema = "Event"

// eventType is the one casing of the event's type values.
var eventType = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*(\.[a-z][a-z0-9]*(_[a-z0-9]+)*)+$`)

// testVocabulary holds the contract to one vocabulary: every JSON member
// of the OpenAPI document, every query parameter and every Parquet column
// (as its camelCase) spelled one way, each column the name of a member,
// no member named by a generic word alone, and every enum value lower
// snake_case, in the document and in the exported files.
func testVocabulary(t *testing.T, s *stack) {
	members := map[string][]string{} // member name → the schemas that have it
	enums := map[string]map[string]bool{}
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if props, ok := x["properties"].(map[string]any); ok {
				for name := range props {
					members[name] = append(members[name], where)
				}
			}
			for k, c := range x {
				next := where
				if k != "properties" {
					next = where + "/" + k
				}
				if props, ok := x["properties"].(map[string]any); ok && k == "properties" {
					for name, p := range props {
						walk(where+"."+name, p)
					}
					continue
				}
				walk(next, c)
			}
		case []any:
			for _, c := range x {
				walk(where, c)
			}
		}
	}
	schemas := dig(s.spec, "components", "schemas")
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		walk(name, schemas[name])
	}
	params := dig(s.spec, "components", "parameters")
	paramNames := map[string]bool{}
	for _, p := range params {
		pm := p.(map[string]any)
		paramNames[pm["name"].(string)] = true
	}

	// Every enum of the document, by the member (or parameter) it types.
	collectEnums := func(name string, schema map[string]any) {
		schema = resolve(s.spec, schema)
		if e, ok := schema["enum"].([]any); ok {
			if enums[name] == nil {
				enums[name] = map[string]bool{}
			}
			for _, v := range e {
				enums[name][fmt.Sprint(v)] = true
			}
		}
	}
	for _, sname := range slices.Sorted(maps.Keys(schemas)) {
		sc, _ := schemas[sname].(map[string]any)
		props, _ := sc["properties"].(map[string]any)
		for name, p := range props {
			if sname == standardSchema {
				continue
			}
			pm, _ := p.(map[string]any)
			collectEnums(name, pm)
			if items, ok := pm["items"].(map[string]any); ok {
				collectEnums(name, items)
			}
		}
	}
	for _, p := range params {
		pm := p.(map[string]any)
		if sc, ok := pm["schema"].(map[string]any); ok {
			collectEnums(pm["name"].(string), sc)
		}
	}

	columns := map[string][]string{} // camelCase of a column → its datasets
	for _, ds := range export.Datasets {
		for _, f := range export.Schema(ds).Fields() {
			columns[camel(f.Name())] = append(columns[camel(f.Name())], ds)
		}
	}

	t.Run("every Parquet column is a member of the document", func(t *testing.T) {
		for _, c := range slices.Sorted(maps.Keys(columns)) {
			if len(members[c]) == 0 {
				t.Errorf("column %s (%s) is no JSON member of the OpenAPI document: name it as the API does (camelCase %s ↔ snake_case)", snake(c), strings.Join(columns[c], ", "), c)
			}
		}
	})

	t.Run("no concept spelled two ways", func(t *testing.T) {
		spellings := map[string]map[string][]string{}
		add := func(name, where string) {
			k := strings.ToLower(strings.ReplaceAll(name, "_", ""))
			if spellings[k] == nil {
				spellings[k] = map[string][]string{}
			}
			spellings[k][name] = append(spellings[k][name], where)
		}
		for name, where := range members {
			add(name, where[0])
		}
		for name := range paramNames {
			add(name, "query parameter")
		}
		for c, ds := range columns {
			add(c, "Parquet column "+snake(c)+" of "+ds[0])
		}
		for _, k := range slices.Sorted(maps.Keys(spellings)) {
			if len(spellings[k]) > 1 {
				var ways []string
				for name, where := range spellings[k] {
					ways = append(ways, fmt.Sprintf("%s (%s)", name, where[0]))
				}
				slices.Sort(ways)
				t.Errorf("one concept, spelled %d ways: %s", len(ways), strings.Join(ways, ", "))
			}
		}
	})

	t.Run("no member named by a generic word alone", func(t *testing.T) {
		for _, w := range genericWords {
			for _, where := range members[w] {
				if s := strings.SplitN(where, ".", 2)[0]; s == standardSchema || (s == webhookSchema && w == "type") {
					continue
				}
				t.Errorf("%s.%s: say which %s (dueDate, effectiveDate; itemType, transactionType)", where, w, w)
			}
			if ds, ok := columns[w]; ok {
				t.Errorf("column %s of %s: say which %s", w, strings.Join(ds, ", "), w)
			}
			if paramNames[w] && !(w == "type" && slices.Contains(members[w], webhookSchema)) {
				t.Errorf("query parameter %s: say which %s", w, w)
			}
		}
	})

	t.Run("every enum value of the document is lower snake_case", func(t *testing.T) {
		if len(enums) == 0 {
			t.Fatal("the document declares no enum")
		}
		for _, name := range slices.Sorted(maps.Keys(enums)) {
			for _, v := range slices.Sorted(maps.Keys(enums[name])) {
				if name == "type" && slices.Contains(members[name], webhookSchema) || name == "eventTypes" {
					if !eventType.MatchString(v) {
						t.Errorf("%s: event type %q is not <resource>.<action>, each part lower snake_case", name, v)
					}
					continue
				}
				if !enumValue.MatchString(v) {
					t.Errorf("%s: enum value %q is not lower snake_case", name, v)
				}
			}
		}
	})

	t.Run("every exported enum value is one of the document's", func(t *testing.T) {
		checked := 0
		for _, ds := range export.Datasets {
			for _, f := range export.Schema(ds).Fields() {
				allowed := enums[camel(f.Name())]
				if allowed == nil {
					continue
				}
				for _, r := range s.rows(t, ds) {
					v, ok := r[f.Name()]
					if !ok || v == null {
						continue
					}
					checked++
					if !allowed[v] {
						t.Errorf("%s.%s holds %q, which the OpenAPI document's %s does not allow (%s)", ds, f.Name(), v, camel(f.Name()), strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
					}
				}
			}
		}
		if checked == 0 {
			t.Fatal("no exported value was checked: the export holds no enum column")
		}
		t.Logf("%d exported enum values checked", checked)
	})
}

// camel is a Parquet column's JSON name: snake_case to camelCase.
func camel(snakeCase string) string {
	parts := strings.Split(snakeCase, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
