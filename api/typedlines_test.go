package api_test

import (
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// TestItemsCarryTheirStatedLinesAndTheMappedOnesOnRequest reads the demo's
// items on every route that answers position items, without and with
// transactions=all. By default a call or distribution carries the typed
// lines its document states (DOC005's call: stated true) and no member
// otherwise; with all, every call and distribution carries its lines,
// stated or mapped (stated false), adding up to its amount; every other
// member of every item is the same either way.
func TestItemsCarryTheirStatedLinesAndTheMappedOnesOnRequest(t *testing.T) {
	s := newServer(t, true)
	knownAt := fundtest.Clock.Format(time.RFC3339Nano) // the store's clock: every demo version is known
	// Every route is read on a document whose items state no lines (DOC004,
	// DOC006), and on DOC005, whose call states them.
	routes := []string{
		"/v1/positions/POSITION_1",
		"/v1/positions/POSITION_1?knownAt=" + knownAt,
		"/v1/positions/POSITION_1/capital-calls",
		"/v1/positions/POSITION_1/capital-calls?document=DOC004",
		"/v1/positions/POSITION_1/capital-calls?document=DOC005",
		"/v1/positions/POSITION_1/capital-calls?document=DOC004&knownAt=" + knownAt,
		"/v1/documents/DOC004",
		"/v1/documents/DOC006?knownAt=" + knownAt,
		"/v1/documents/DOC005",
		"/v1/documents/DOC006/positions/POSITION_1",
		"/v1/documents/DOC004/positions/POSITION_1?knownAt=" + knownAt,
		"/v1/documents/DOC004/positions/POSITION_1?itemType=capital_call",
		"/v1/documents/DOC005/positions/POSITION_1?itemType=capital_call",
		"/v1/documents/DOC004/capital",
		"/v1/documents/DOC004/capital?knownAt=" + knownAt,
		"/v1/documents/DOC005/capital",
	}
	statedSeen, mappedSeen := 0, 0
	for _, route := range routes {
		mappedBefore := mappedSeen
		sep := "?"
		if strings.Contains(route, "?") {
			sep = "&"
		}
		byDefault := itemsIn(t, s.do(t, http.MethodGet, route, nil))
		stated := itemsIn(t, s.do(t, http.MethodGet, route+sep+"transactions=stated", nil))
		all := itemsIn(t, s.do(t, http.MethodGet, route+sep+"transactions=all", nil))
		if len(byDefault) == 0 || len(all) != len(byDefault) || !reflect.DeepEqual(stated, byDefault) {
			t.Fatalf("%s: %d items by default, %d with transactions=stated (equal: %v), %d with all", route, len(byDefault), len(stated), reflect.DeepEqual(stated, byDefault), len(all))
		}
		for i, it := range byDefault {
			kind, doc := it["itemType"], it["documentId"]
			lines, has := it["transactions"].([]any)
			allLines, _ := all[i]["transactions"].([]any)
			statesLines := doc == "DOC005" && kind == fund.CapitalCall.Name()
			if has != statesLines {
				t.Fatalf("%s: the %s of %s carries typed lines by default: %v, want %v (%v)", route, kind, doc, has, statesLines, lines)
			}
			if kind != fund.CapitalCall.Name() && kind != fund.Distribution.Name() {
				if all[i]["transactions"] != nil {
					t.Fatalf("%s: the %s of %s carries typed lines with all", route, kind, doc)
				}
				continue
			}
			if len(allLines) == 0 {
				t.Fatalf("%s: the %s of %s carries no typed lines with all", route, kind, doc)
			}
			if has && !reflect.DeepEqual(lines, allLines) {
				t.Fatalf("%s: the stated lines of %s differ with all: %v against %v", route, doc, lines, allLines)
			}
			var sum fund.Money
			for _, l := range allLines {
				l := l.(map[string]any)
				if l["stated"] != statesLines {
					t.Fatalf("%s: a line of the %s of %s says stated %v, want %v", route, kind, doc, l["stated"], statesLines)
				}
				sum = sum.Add(fund.MustMoney(l["amount"].(string)))
			}
			if !sum.Equal(fund.MustMoney(it["amount"].(string))) {
				t.Fatalf("%s: the lines of the %s of %s add up to %s, not its amount %s", route, kind, doc, sum, it["amount"])
			}
			if statesLines {
				statedSeen++
			} else {
				mappedSeen++
			}
			delete(all[i], "transactions")
			delete(it, "transactions")
			if !reflect.DeepEqual(it, all[i]) {
				t.Fatalf("%s: the %s of %s differs with all beyond its lines:\n%v\n%v", route, kind, doc, it, all[i])
			}
		}
		if !strings.Contains(route, "DOC005") && mappedSeen == mappedBefore {
			t.Fatalf("%s: no call or distribution without stated lines; the route's transactions=all is not tested", route)
		}
	}
	if statedSeen == 0 || mappedSeen == 0 {
		t.Fatalf("the routes answered %d items with stated lines and %d with mapped ones; the test needs both", statedSeen, mappedSeen)
	}
}

// itemsIn is every position item (an object with an itemType) of a 200
// answer, in the order the answer holds them (an overview's groups by
// position ID).
func itemsIn(t *testing.T, r response) []map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var out []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["itemType"].(string); ok {
				out = append(out, v)
				return
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(r.JSON(t))
	return out
}
