package contracttest_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

const (
	roundTripDocument = "ROUND_TRIP"
	roundTripPosition = "RT_POSITION"
)

// roundTripRequest gives every member of a document request a value that
// is not its zero: testRoundTrip checks so against the OpenAPI document's
// DocumentRequest schema, which the Go request types generate, so a field
// added to any request type fails the test until it is set here (and
// then until every layer keeps it). One position holds all four parts;
// each part's lines add up and its capital account rolls forward.
const roundTripRequest = `{
  "fundId": "FUND_RT",
  "kind": "capital_call_notice",
  "title": "Round trip: every field of a document request",
  "asOf": "2025-03-31",
  "currency": "EUR",
  "capitalActivity": {"amount": "-1250.50", "status": "completed", "activityDate": "2025-04-02", "description": "Every field, kept"},
  "positions": [{
    "positionId": "RT_POSITION",
    "investorId": "RT_INVESTOR",
    "capitalCall": {
      "amount": "300.00", "status": "completed", "dueDate": "2025-04-10",
      "investment": "200.00", "managementFee": "60.00", "fundExpenses": "40.00",
      "transactions": [
        {"transactionType": "investment", "amount": "200.00", "unfundedEffect": "reduces"},
        {"transactionType": "management_fee_outside_commitment", "amount": "60.00", "unfundedEffect": "none"},
        {"transactionType": "partnership_expenses", "amount": "40.00", "unfundedEffect": "reduces"}
      ]
    },
    "distribution": {
      "amount": "500.00", "status": "completed", "paymentDate": "2025-04-15",
      "returnOfCapital": "300.00", "realizedGain": "150.00", "income": "50.00", "recallable": "100.00", "withholding": "7.50",
      "transactions": [
        {"transactionType": "recallable_return_of_capital", "amount": "100.00", "unfundedEffect": "increases"},
        {"transactionType": "return_of_capital", "amount": "200.00", "unfundedEffect": "none"},
        {"transactionType": "gain_loss", "amount": "150.00", "unfundedEffect": "none"},
        {"transactionType": "income", "amount": "50.00", "unfundedEffect": "none"}
      ]
    },
    "unfundedCommitment": {"amount": "3745.00", "status": "active", "commitment": "5000.00"},
    "capitalAccount": {
      "periodStart": "2025-01-01",
      "beginningNav": "1000.00", "contributions": "300.00", "distributions": "-200.00",
      "offeringSyndicationCosts": "-1.00", "placementFees": "-2.00", "partnerTransfers": "3.00",
      "managementFeesGross": "-40.00", "managementFeeRebate": "4.00", "feeWaivers": "5.00", "managementFeeOffsets": "6.00",
      "adviserRelatedPersonsExpenses": "-7.00", "partnershipExpenses": "-8.00",
      "investmentIncome": "9.00", "netRealizedGainLoss": "10.00", "netUnrealizedGainLoss": "11.00",
      "endingNav": "1090.00",
      "carriedInterestAccruedEarned": "-12.00", "carriedInterestPaid": "13.00",
      "totalCommitment": "5000.00", "beginningUnfundedCommitment": "4000.00", "lessContributions": "-300.00",
      "plusRecallableDistributions": "50.00", "lessExpiredReleasedCommitments": "-20.00", "otherUnfundedAdjustment": "15.00",
      "endingUnfundedCommitment": "3745.00"
    }
  }]
}`

// testRoundTrip writes roundTripRequest through the API (contract) and
// finds every member it sent, unchanged, in the answer to the PUT, the
// version read back, the overview, the document's position and capital
// routes, the position routes, the fund's document list and the export
// (DuckDB over its Parquet files). A layer that drops or alters a field
// fails it, naming the layer and the member.
func testRoundTrip(t *testing.T, s *stack, put map[string]any) {
	var req map[string]any
	d := json.NewDecoder(strings.NewReader(roundTripRequest))
	d.UseNumber()
	if err := d.Decode(&req); err != nil {
		t.Fatal(err)
	}
	t.Run("the request sets every member of DocumentRequest", func(t *testing.T) {
		var zero []string
		walkSchema(s.spec, schemaRef("DocumentRequest"), req, "", func(path string, v any) {
			if isZero(v) {
				zero = append(zero, path)
			}
		})
		if len(zero) > 0 {
			t.Errorf("roundTripRequest leaves these members of the request's schema zero or out; give each a value: %s", strings.Join(zero, ", "))
		}
	})

	document := map[string]any{}
	for _, k := range []string{"fundId", "kind", "title", "asOf", "currency"} {
		document[k] = req[k]
	}
	activity := req["capitalActivity"].(map[string]any)
	position := req["positions"].([]any)[0].(map[string]any)
	parts := map[string]map[string]any{}
	for name, v := range position {
		if part, ok := v.(map[string]any); ok {
			parts[name] = part
		}
	}
	// Every item carries its position and document.
	identity := map[string]any{"positionId": position["positionId"], "investorId": position["investorId"], "documentId": roundTripDocument,
		"fundId": req["fundId"], "asOf": req["asOf"], "currency": req["currency"]}

	check := func(t *testing.T, layer string, diffs []string) {
		t.Helper()
		for _, d := range diffs {
			t.Errorf("%s: %s", layer, d)
		}
	}
	get := func(t *testing.T, path string) map[string]any {
		t.Helper()
		return s.call(t, http.MethodGet, path, "", http.StatusOK)
	}
	// item checks that an item of a part holds the part's members, flat
	// or under the part's name (a capital account), and its identity.
	item := func(got any, part string) []string {
		m, _ := got.(map[string]any)
		diffs := holds(m, identity, "")
		if nested, ok := m[part].(map[string]any); ok {
			return append(diffs, holds(nested, parts[part], part+".")...)
		}
		return append(diffs, holds(m, parts[part], "")...)
	}

	t.Run("the answer to the PUT and the version read back", func(t *testing.T) {
		check(t, "PUT's answer", holds(put, req, ""))
		check(t, "versions/1", holds(get(t, "/v1/documents/"+roundTripDocument+"/versions/1"), req, ""))
	})

	t.Run("the overview, the document's position and its capital", func(t *testing.T) {
		o := get(t, "/v1/documents/"+roundTripDocument)
		check(t, "overview documents.latest", holds(dig(o, "documents", "latest"), document, ""))
		check(t, "overview capitalActivities.latest", holds(dig(o, "capitalActivities", "latest"), activity, ""))
		group := dig(o, "positions", roundTripPosition)
		for part := range parts {
			list, _ := group[part+"s"].([]any)
			if len(list) != 1 {
				t.Errorf("overview positions.%s.%ss holds %d items, want 1", roundTripPosition, part, len(list))
				continue
			}
			check(t, "overview positions."+roundTripPosition+"."+part+"s[0]", item(list[0], part))
		}
		dp := get(t, "/v1/documents/"+roundTripDocument+"/positions/"+roundTripPosition)
		checkItems(t, "document position", dp, parts, item)
		c := get(t, "/v1/documents/"+roundTripDocument+"/capital")
		check(t, "capital capitalActivities.latest", holds(dig(c, "capitalActivities", "latest"), activity, ""))
		calls, _ := c["capitalCalls"].([]any)
		if len(calls) != 1 {
			t.Errorf("capital capitalCalls holds %d items, want 1", len(calls))
		} else {
			check(t, "capital capitalCalls[0]", item(calls[0], "capitalCall"))
		}
	})

	t.Run("the position routes", func(t *testing.T) {
		checkItems(t, "positions/"+roundTripPosition, get(t, "/v1/positions/"+roundTripPosition), parts, item)
		calls := get(t, "/v1/positions/"+roundTripPosition+"/capital-calls")
		items, _ := calls["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("capital-calls holds %d items, want 1", len(items))
		}
		check(t, "capital-calls items[0]", item(items[0], "capitalCall"))
	})

	t.Run("the fund's documents and the versions", func(t *testing.T) {
		list := get(t, "/v1/funds/FUND_RT/documents")
		items, _ := list["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("the fund's documents: %d, want 1", len(items))
		}
		check(t, "the fund's documents items[0]", holds(items[0].(map[string]any), document, ""))
		check(t, "versions latest", holds(dig(get(t, "/v1/documents/"+roundTripDocument+"/versions"), "latest"), document, ""))
	})

	t.Run("the export", func(t *testing.T) {
		of := func(t *testing.T, dataset string, keep func(map[string]string) bool) []map[string]string {
			t.Helper()
			var rows []map[string]string
			for _, r := range s.rows(t, dataset) {
				if r["document_id"] == roundTripDocument && (keep == nil || keep(r)) {
					rows = append(rows, r)
				}
			}
			return rows
		}
		one := func(t *testing.T, dataset string) map[string]string {
			t.Helper()
			rows := of(t, dataset, nil)
			if len(rows) != 1 {
				t.Fatalf("%s: %d rows of %s, want 1", dataset, len(rows), roundTripDocument)
			}
			return rows[0]
		}
		check(t, "documents", holdsRow(one(t, "documents"), document))
		check(t, "document_versions", holdsRow(one(t, "document_versions"), document))
		check(t, "capital_activities", holdsRow(one(t, "capital_activities"), activity))
		for part, members := range parts {
			dataset := snake(part) + "s"
			row := one(t, dataset)
			check(t, dataset, holdsRow(row, identity))
			check(t, dataset, holdsRow(row, without(members, "transactions")))
			lines, _ := members["transactions"].([]any)
			got := of(t, "transaction_lines", func(r map[string]string) bool { return r["item_type"] == snake(part) })
			slices.SortFunc(got, func(a, b map[string]string) int { return cmp.Compare(atoi(a["line"]), atoi(b["line"])) })
			if len(got) != len(lines) {
				t.Errorf("transaction_lines of the %s: %d rows, want %d", part, len(got), len(lines))
				continue
			}
			for i, l := range lines {
				check(t, fmt.Sprintf("transaction_lines of the %s, line %d", part, i+1), holdsRow(got[i], l.(map[string]any)))
			}
		}
	})

	t.Run("a dropped member fails the comparison", func(t *testing.T) {
		// The comparison the layers pass must fail on an answer that lost
		// one member deep inside, as a layer copying fields by hand would.
		var dropped map[string]any
		b, _ := json.Marshal(put)
		_ = json.Unmarshal(b, &dropped)
		call := dropped["positions"].([]any)[0].(map[string]any)["capitalCall"].(map[string]any)
		delete(call, "fundExpenses")
		diffs := holds(dropped, req, "")
		if len(diffs) != 1 || !strings.Contains(diffs[0], "positions[0].capitalCall.fundExpenses") {
			t.Errorf("the comparison of an answer without positions[0].capitalCall.fundExpenses found %q", diffs)
		}
	})
}

// checkItems checks a page of position items (items, or a document
// position's items): one item of each part, holding it.
func checkItems(t *testing.T, layer string, page map[string]any, parts map[string]map[string]any, item func(any, string) []string) {
	t.Helper()
	items, _ := page["items"].([]any)
	seen := map[string]bool{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		itemType, _ := m["itemType"].(string)
		for part := range parts {
			if snake(part) == itemType {
				seen[part] = true
				for _, d := range item(m, part) {
					t.Errorf("%s %s: %s", layer, itemType, d)
				}
			}
		}
	}
	for part := range parts {
		if !seen[part] {
			t.Errorf("%s: no item of type %s", layer, snake(part))
		}
	}
}

// holds lists how got fails to hold each member of want, at the same
// path: objects member by member (got may hold more), arrays element by
// element, amounts as decimals, everything else as JSON text.
func holds(got, want map[string]any, path string) []string {
	var diffs []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		diffs = append(diffs, holdsValue(got[k], want[k], path+k)...)
	}
	return diffs
}

func holdsValue(got, want any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s is %s, want an object", path, show(got))}
		}
		return holds(g, w, path+".")
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s is %s, want %d elements", path, show(got), len(w))}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, holdsValue(g[i], w[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return diffs
	}
	if !sameScalar(got, want) {
		return []string{fmt.Sprintf("%s is %s, want %s", path, show(got), show(want))}
	}
	return nil
}

// holdsRow lists how an export row fails to hold want's members, each in
// the column of its name in snake_case.
func holdsRow(row map[string]string, want map[string]any) []string {
	var diffs []string
	for k, w := range want {
		col := snake(k)
		g, ok := row[col]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("no column %s (for %s)", col, k))
			continue
		}
		if !sameScalar(g, w) {
			diffs = append(diffs, fmt.Sprintf("%s is %q, want %s", col, g, show(w)))
		}
	}
	slices.Sort(diffs)
	return diffs
}

// sameScalar compares two scalars: numbers and amounts by value, so that
// "300.00" holds DuckDB's "300.0000", everything else as text.
func sameScalar(got, want any) bool {
	g, w := fmt.Sprint(got), fmt.Sprint(want)
	if got == nil || want == nil {
		return got == want
	}
	if gd, err := decimal.NewFromString(g); err == nil {
		if wd, err := decimal.NewFromString(w); err == nil {
			return gd.Equal(wd)
		}
	}
	return g == w
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// isZero reports whether a request's value is its type's zero: absent,
// null, empty text, a zero amount or number, false, an empty list.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		if x == "" {
			return true
		}
		d, err := decimal.NewFromString(x)
		return err == nil && d.IsZero()
	case json.Number:
		d, err := decimal.NewFromString(x.String())
		return err == nil && d.IsZero()
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// walkSchema calls visit with each member schema declares, at its path in
// v (nil when v lacks it), recursing into objects and into each element
// of arrays.
func walkSchema(spec map[string]any, schema map[string]any, v any, path string, visit func(path string, v any)) {
	schema = resolve(spec, schema)
	props, _ := schema["properties"].(map[string]any)
	if items, ok := schema["items"].(map[string]any); ok {
		list, _ := v.([]any)
		for i, e := range list {
			walkSchema(spec, items, e, fmt.Sprintf("%s[%d]", path, i), visit)
		}
		return
	}
	obj, _ := v.(map[string]any)
	for name, p := range props {
		member := name
		if path != "" {
			member = path + "." + name
		}
		pv := obj[name]
		visit(member, pv)
		walkSchema(spec, p.(map[string]any), pv, member, visit)
	}
}

func schemaRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// resolve follows a schema's $ref within spec.
func resolve(spec map[string]any, schema map[string]any) map[string]any {
	for {
		ref, ok := schema["$ref"].(string)
		if !ok {
			return schema
		}
		schema = dig(spec, strings.Split(strings.TrimPrefix(ref, "#/"), "/")...)
	}
}

// dig returns the object at path in v, or nil.
func dig(v map[string]any, path ...string) map[string]any {
	for _, p := range path {
		v, _ = v[p].(map[string]any)
	}
	return v
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// snake is the export's column name of a JSON member: camelCase to
// snake_case ("beginningNav" is "beginning_nav").
func snake(camel string) string {
	var b strings.Builder
	for i, r := range camel {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
