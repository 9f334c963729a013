package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/shopspring/decimal"
)

// inputDocument is a valid new document of FUND_A for POSITION_1 and
// POSITION_2, with every kind of item and every line item, so that each bad
// case below breaks exactly one thing.
func inputDocument() map[string]any {
	return map[string]any{
		"fundId": "FUND_A", "kind": "capital_call_notice", "title": "Capital call notice 2025-11",
		"asOf": "2025-11-01", "currency": "USD",
		"capitalActivity": map[string]any{"amount": "100000.00", "status": "pending", "activityDate": "2025-11-01", "description": "November call"},
		"positions": []any{
			map[string]any{"positionId": "POSITION_1", "investorId": "INVESTOR_1",
				"capitalCall": map[string]any{"amount": "60000.00", "status": "pending", "dueDate": "2025-11-30",
					"investment": "55000.00", "managementFee": "4000.00", "fundExpenses": "1000.00",
					"transactions": []any{
						map[string]any{"transactionType": "investment", "amount": "55000.00"},
						map[string]any{"transactionType": "management_fee_outside_commitment", "amount": "4000.00", "unfundedEffect": "none"},
						map[string]any{"transactionType": "partnership_expenses", "amount": "1000.00"}}},
				"distribution": map[string]any{"amount": "10000.00", "status": "completed", "paymentDate": "2025-11-15",
					"returnOfCapital": "6000.00", "realizedGain": "3000.00", "income": "1000.00", "recallable": "2000.00", "withholding": "500.00"},
				"unfundedCommitment": map[string]any{"amount": "1440000.00", "commitment": "2000000.00"}},
			map[string]any{"positionId": "POSITION_2", "investorId": "INVESTOR_2",
				"capitalCall": map[string]any{"amount": "40000.00"},
				// 100,000 + 40,000 − 1,000 + 6,000 = 145,000, and
				// 400,000 − 40,000 = 360,000.
				"capitalAccount": map[string]any{"periodStart": "2025-10-01", "beginningNav": "100000.00", "contributions": "40000.00",
					"managementFeesGross": "-1000.00", "netUnrealizedGainLoss": "6000.00", "endingNav": "145000.00",
					"totalCommitment": "500000.00", "beginningUnfundedCommitment": "400000.00", "lessContributions": "-40000.00",
					"endingUnfundedCommitment": "360000.00"}},
		},
	}
}

// inputStatement returns the capital account of position 1.
func inputStatement(d map[string]any) map[string]any {
	return inputPosition(d, 1)["capitalAccount"].(map[string]any)
}

// inputTransaction returns typed line j of position 0's capital call.
func inputTransaction(d map[string]any, j int) map[string]any {
	return inputItem(d, 0, "capitalCall")["transactions"].([]any)[j].(map[string]any)
}

// inputDocumentWith returns inputDocument changed by change.
func inputDocumentWith(change func(d map[string]any)) map[string]any {
	d := inputDocument()
	change(d)
	return d
}

// inputPosition returns position i of a document built by inputDocument.
func inputPosition(d map[string]any, i int) map[string]any {
	return d["positions"].([]any)[i].(map[string]any)
}

// inputItem returns the item of kind (capitalCall, distribution,
// unfundedCommitment) of position i.
func inputItem(d map[string]any, i int, kind string) map[string]any {
	return inputPosition(d, i)[kind].(map[string]any)
}

func inputJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// manyPositions returns n valid positions with IDs that sort in order.
func manyPositions(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"positionId": fmt.Sprintf("MANY_%05d", i), "investorId": fmt.Sprintf("MANY_INV_%05d", i),
			"unfundedCommitment": map[string]any{"amount": "1"}}
	}
	return out
}

// problemBody is the RFC 9457 body every error answer carries.
type problemBody struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Instance  string `json:"instance"`
	Field     string `json:"field"`
	RequestID string `json:"requestId"`
}

// checkProblem asserts that r is a problem+json answer with the given status
// and type, and returns its body.
func checkProblem(t *testing.T, r response, status int, typ string) problemBody {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d\n%s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p problemBody
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("problem body is not JSON: %v\n%s", err, r.Body)
	}
	if p.Type != typ {
		t.Errorf("problem type = %q, want %q\n%s", p.Type, typ, r.Body)
	}
	if p.Status != r.Status {
		t.Errorf("problem status = %d, but the answer's status is %d", p.Status, r.Status)
	}
	if p.Title == "" || p.Detail == "" {
		t.Errorf("problem has no title or detail: %s", r.Body)
	}
	return p
}

// dumpDifference names the keys whose items differ between two dumps.
func dumpDifference(before, after []map[string]types.AttributeValue) string {
	key := func(it map[string]types.AttributeValue) string {
		pk, _ := it[store.AttrPK].(*types.AttributeValueMemberS)
		sk, _ := it[store.AttrSK].(*types.AttributeValueMemberS)
		if pk == nil || sk == nil {
			return "?"
		}
		return pk.Value + " " + sk.Value
	}
	index := func(items []map[string]types.AttributeValue) map[string]map[string]types.AttributeValue {
		m := map[string]map[string]types.AttributeValue{}
		for _, it := range items {
			m[key(it)] = it
		}
		return m
	}
	b, a := index(before), index(after)
	var diffs []string
	for k, it := range a {
		old, ok := b[k]
		switch {
		case !ok:
			diffs = append(diffs, "added "+k)
		case !reflect.DeepEqual(old, it):
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, "removed "+k)
		}
	}
	return fmt.Sprintf("%d items before, %d after: %s", len(before), len(after), strings.Join(diffs, "; "))
}

// TestBadInputChangesNothing sends requests that must be refused and checks
// each answer's status, problem type and blamed field, and that the table is
// byte for byte what it was. The last case is a valid request, which proves
// that the comparison of the table can fail.
func TestBadInputChangesNothing(t *testing.T) {
	s := newServer(t, true)
	valid := inputJSON(t, inputDocument())
	// sizedBody is a document of exactly n bytes, its title padded.
	sizedBody := func(n int) string {
		base := inputJSON(t, inputDocumentWith(func(d map[string]any) { d["title"] = "" }))
		body := inputJSON(t, inputDocumentWith(func(d map[string]any) { d["title"] = strings.Repeat("x", n-len(base)) }))
		if len(body) != n {
			t.Fatalf("sized body of %d bytes, want %d", len(body), n)
		}
		return body
	}

	type badInput struct {
		name    string
		method  string // PUT when empty
		path    string // newDoc when empty
		body    any
		headers []string
		setup   func(t *testing.T)
		status  int
		typ     string
		field   string
		// fieldSuffix accepts any field that ends in field (the decoder may
		// or may not spell the path to a nested field).
		fieldSuffix bool
		// detail, when set, must be part of the problem's detail.
		detail string
		// changes marks the positive control.
		changes bool
	}
	const (
		invalid      = "/problems/invalid"
		conflict     = "/problems/conflict"
		precondition = "/problems/precondition_failed"
	)
	cases := []badInput{
		// The body as a whole.
		{name: "malformed JSON is refused", body: `{"fundId": "FUND_A",`, status: 400, typ: invalid, field: "body"},
		{name: "JSON with a syntax error in the middle is refused", body: `{"fundId": "FUND_A" "kind": 1}`, status: 400, typ: invalid, field: "body"},
		{name: "an empty body is refused", body: "", status: 400, typ: invalid, field: "body"},
		{name: "an unknown top-level field is refused", body: inputDocumentWith(func(d map[string]any) { d["colour"] = "blue" }), status: 400, typ: invalid, field: "colour"},
		{name: "an unknown field inside a capital call is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["carry"] = "1.00" }),
			status: 400, typ: invalid, field: "carry", fieldSuffix: true},
		{name: "a second JSON object after the document is refused", body: valid + " {}", status: 400, typ: invalid, field: "body"},
		{name: "garbage after the document is refused", body: valid + " x", status: 400, typ: invalid, field: "body"},
		{name: "a JSON array instead of an object is refused", body: "[" + valid + "]", status: 400, typ: invalid, field: "body"},
		{name: "a string where an object is expected is refused", body: `"document"`, status: 400, typ: invalid, field: "body"},
		{name: "a number where the title is expected is refused", body: inputDocumentWith(func(d map[string]any) { d["title"] = 7 }), status: 400, typ: invalid, field: "title"},
		{name: "the server-owned field version is refused", body: inputDocumentWith(func(d map[string]any) { d["version"] = 7 }), status: 400, typ: invalid, field: "version"},
		{name: "the server-owned field createdAt is refused", body: inputDocumentWith(func(d map[string]any) { d["createdAt"] = "2020-01-01T00:00:00Z" }), status: 400, typ: invalid, field: "createdAt"},
		{name: "a document without positions is refused", body: inputDocumentWith(func(d map[string]any) { delete(d, "positions") }), status: 400, typ: invalid, field: "positions"},
		{name: "a document with null positions is refused", body: inputDocumentWith(func(d map[string]any) { d["positions"] = nil }), status: 400, typ: invalid, field: "positions"},

		// Amounts.
		{name: "a capital call without an amount is refused", body: inputDocumentWith(func(d map[string]any) { delete(inputItem(d, 1, "capitalCall"), "amount") }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "a null amount is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["amount"] = nil }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.amount"},
		{name: "a null line item is refused even when the others add up", body: inputDocumentWith(func(d map[string]any) {
			call := inputItem(d, 0, "capitalCall")
			call["investment"], call["amount"] = nil, "5000.00"
		}), status: 400, typ: invalid, field: "positions[0].capitalCall.investment"},
		{name: "a null withholding is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "distribution")["withholding"] = nil }),
			status: 400, typ: invalid, field: "positions[0].distribution.withholding"},
		{name: "a null commitment is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "unfundedCommitment")["commitment"] = nil }),
			status: 400, typ: invalid, field: "positions[0].unfundedCommitment.commitment"},
		{name: "a null capital activity amount is refused", body: inputDocumentWith(func(d map[string]any) { d["capitalActivity"].(map[string]any)["amount"] = nil }),
			status: 400, typ: invalid, field: "capitalActivity.amount"},
		{name: "a boolean amount is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["amount"] = true }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.amount"},
		{name: "an object amount is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "distribution")["amount"] = map[string]any{"value": 1} }),
			status: 400, typ: invalid, field: "positions[0].distribution.amount"},
		{name: "an amount with five decimal places is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["amount"] = "60000.00001" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.amount"},
		{name: "a JSON number amount with five decimal places is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = json.Number("40000.00001") }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "a JSON number amount with an exponent is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = json.Number("1e3") }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "a string amount with an exponent is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = "4E4" }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "an amount with sixteen integer digits is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = "1000000000000000.00" }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "a JSON number amount with sixteen integer digits is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = json.Number("1000000000000000") }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "an amount with a leading plus sign is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = "+40000.00" }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "a JSON number with a leading plus sign is not JSON", body: strings.Replace(valid, `"amount":"40000.00"`, `"amount":+40000.00`, 1),
			status: 400, typ: invalid, field: "body"},
		{name: "an amount with a thousands separator is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = "40,000.00" }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "an amount with a leading zero is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = "040000.00" }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "an empty string amount is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = "" }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "a malformed line item is blamed by name", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "distribution")["income"] = "1,000" }),
			status: 400, typ: invalid, field: "positions[0].distribution.income"},
		{name: "a malformed capital activity amount is blamed by name", body: inputDocumentWith(func(d map[string]any) { d["capitalActivity"].(map[string]any)["amount"] = "lots" }),
			status: 400, typ: invalid, field: "capitalActivity.amount"},
		{name: "a negative capital call is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 1, "capitalCall")["amount"] = "-40000.00" }),
			status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "a negative distribution is refused", body: inputDocumentWith(func(d map[string]any) {
			delete(inputPosition(d, 0), "distribution")
			inputPosition(d, 1)["distribution"] = map[string]any{"amount": "-5.00"}
		}), status: 400, typ: invalid, field: "positions[1].distribution.amount"},
		{name: "a negative unfunded commitment is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "unfundedCommitment")["amount"] = "-1.00" }),
			status: 400, typ: invalid, field: "positions[0].unfundedCommitment.amount"},
		{name: "capital call line items that do not add up are refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["managementFee"] = "4000.01" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall"},
		{name: "distribution line items that do not add up are refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "distribution")["income"] = "999.99" }),
			status: 400, typ: invalid, field: "positions[0].distribution"},
		{name: "a recallable portion above the distribution is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "distribution")["recallable"] = "10000.01" }),
			status: 400, typ: invalid, field: "positions[0].distribution.recallable"},
		{name: "a negative withholding is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "distribution")["withholding"] = "-0.01" }),
			status: 400, typ: invalid, field: "positions[0].distribution.withholding"},
		{name: "a commitment below the unfunded amount is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "unfundedCommitment")["commitment"] = "1439999.99" }),
			status: 400, typ: invalid, field: "positions[0].unfundedCommitment.commitment"},

		// Dates.
		{name: "an asOf of 30 February is refused", body: inputDocumentWith(func(d map[string]any) { d["asOf"] = "2025-02-30" }), status: 400, typ: invalid, field: "asOf"},
		{name: "an asOf with slashes is refused", body: inputDocumentWith(func(d map[string]any) { d["asOf"] = "2025/01/01" }), status: 400, typ: invalid, field: "asOf"},
		{name: "an empty asOf is refused", body: inputDocumentWith(func(d map[string]any) { d["asOf"] = "" }), status: 400, typ: invalid, field: "asOf"},
		{name: "an asOf with a time is refused", body: inputDocumentWith(func(d map[string]any) { d["asOf"] = "2025-11-01T00:00:00Z" }), status: 400, typ: invalid, field: "asOf"},
		{name: "a due date of 31 November is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["dueDate"] = "2025-11-31" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.dueDate"},
		{name: "a distribution date in words is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "distribution")["paymentDate"] = "tomorrow" }),
			status: 400, typ: invalid, field: "positions[0].distribution.paymentDate"},
		{name: "a capital activity date without zero padding is refused", body: inputDocumentWith(func(d map[string]any) { d["capitalActivity"].(map[string]any)["activityDate"] = "2025-1-1" }),
			status: 400, typ: invalid, field: "capitalActivity.activityDate"},

		// IDs in the path.
		{name: "a document ID with # in the path is refused", path: "/v1/documents/DOC%23003", body: valid, status: 400, typ: invalid, field: "documentId"},
		{name: "a document ID with a space in the path is refused", path: "/v1/documents/DOC%20003", body: valid, status: 400, typ: invalid, field: "documentId"},
		{name: "a document ID of 65 characters in the path is refused", path: "/v1/documents/" + strings.Repeat("D", 65), body: valid, status: 400, typ: invalid, field: "documentId"},
		{name: "a document ID starting with - in the path is refused", path: "/v1/documents/-DOC003", body: valid, status: 400, typ: invalid, field: "documentId"},

		// IDs and fields in the body.
		{name: "a missing fundId is refused", body: inputDocumentWith(func(d map[string]any) { delete(d, "fundId") }), status: 400, typ: invalid, field: "fundId"},
		{name: "a fundId with # is refused", body: inputDocumentWith(func(d map[string]any) { d["fundId"] = "FUND#A" }), status: 400, typ: invalid, field: "fundId"},
		{name: "a fundId of 65 characters is refused", body: inputDocumentWith(func(d map[string]any) { d["fundId"] = strings.Repeat("F", 65) }), status: 400, typ: invalid, field: "fundId"},
		{name: "a fundId starting with - is refused", body: inputDocumentWith(func(d map[string]any) { d["fundId"] = "-FUND_A" }), status: 400, typ: invalid, field: "fundId"},
		{name: "a positionId with # is refused", body: inputDocumentWith(func(d map[string]any) { inputPosition(d, 0)["positionId"] = "POSITION#1" }),
			status: 400, typ: invalid, field: "positions[0].positionId"},
		{name: "a missing positionId is refused", body: inputDocumentWith(func(d map[string]any) { delete(inputPosition(d, 0), "positionId") }),
			status: 400, typ: invalid, field: "positions[0].positionId"},
		{name: "a positionId that is a number is refused", body: inputDocumentWith(func(d map[string]any) { inputPosition(d, 0)["positionId"] = 1 }),
			status: 400, typ: invalid, field: "positionId", fieldSuffix: true},
		{name: "an investorId with a space is refused", body: inputDocumentWith(func(d map[string]any) { inputPosition(d, 1)["investorId"] = "INVESTOR 2" }),
			status: 400, typ: invalid, field: "positions[1].investorId"},
		{name: "an investorId of 65 characters is refused", body: inputDocumentWith(func(d map[string]any) { inputPosition(d, 1)["investorId"] = strings.Repeat("I", 65) }),
			status: 400, typ: invalid, field: "positions[1].investorId"},
		{name: "an investorId starting with - is refused", body: inputDocumentWith(func(d map[string]any) { inputPosition(d, 1)["investorId"] = "-INVESTOR_2" }),
			status: 400, typ: invalid, field: "positions[1].investorId"},
		{name: "an unknown kind is refused", body: inputDocumentWith(func(d map[string]any) { d["kind"] = "memo" }), status: 400, typ: invalid, field: "kind"},
		{name: "an empty title is refused", body: inputDocumentWith(func(d map[string]any) { d["title"] = "" }), status: 400, typ: invalid, field: "title"},
		{name: "a title of 201 bytes is refused", body: inputDocumentWith(func(d map[string]any) { d["title"] = strings.Repeat("t", 201) }), status: 400, typ: invalid, field: "title"},
		{name: "a title of 101 two-byte characters is refused", body: inputDocumentWith(func(d map[string]any) { d["title"] = strings.Repeat("é", 101) }), status: 400, typ: invalid, field: "title"},
		{name: "a lower-case currency is refused", body: inputDocumentWith(func(d map[string]any) { d["currency"] = "usd" }), status: 400, typ: invalid, field: "currency"},
		{name: "a four-letter currency is refused", body: inputDocumentWith(func(d map[string]any) { d["currency"] = "USDT" }), status: 400, typ: invalid, field: "currency"},
		{name: "a capital call status of Active is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["status"] = "Active" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.status"},
		{name: "a distribution status capitalised is refused: enumerations are lower case", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "distribution")["status"] = "Completed" }),
			status: 400, typ: invalid, field: "positions[0].distribution.status"},
		{name: "an unfunded commitment status of Pending is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "unfundedCommitment")["status"] = "pending" }),
			status: 400, typ: invalid, field: "positions[0].unfundedCommitment.status"},
		{name: "a capital activity status of Done is refused", body: inputDocumentWith(func(d map[string]any) { d["capitalActivity"].(map[string]any)["status"] = "Done" }),
			status: 400, typ: invalid, field: "capitalActivity.status"},
		{name: "a capital activity description over 200 bytes is refused", body: inputDocumentWith(func(d map[string]any) {
			d["capitalActivity"].(map[string]any)["description"] = strings.Repeat("d", 201)
		}),
			status: 400, typ: invalid, field: "capitalActivity.description"},

		// Positions.
		{name: "a position that appears twice is refused", body: inputDocumentWith(func(d map[string]any) {
			inputPosition(d, 1)["positionId"] = "POSITION_1"
			inputPosition(d, 1)["investorId"] = "INVESTOR_1"
		}),
			status: 400, typ: invalid, field: "positions[1].positionId"},
		{name: "a position with no items is refused", body: inputDocumentWith(func(d map[string]any) {
			p := inputPosition(d, 1)
			delete(p, "capitalCall")
			delete(p, "capitalAccount")
		}),
			status: 400, typ: invalid, field: "positions[1]"},
		{name: "a bad position is blamed by its index in the request, not in sorted order", body: inputDocumentWith(func(d map[string]any) {
			// POSITION_0 sorts before POSITION_1, but it is the second in the request.
			inputPosition(d, 1)["positionId"] = "POSITION_0"
			inputPosition(d, 1)["investorId"] = "INVESTOR_0"
			inputItem(d, 1, "capitalCall")["amount"] = "-1.00"
		}), status: 400, typ: invalid, field: "positions[1].capitalCall.amount"},
		{name: "more positions than the store's limit are refused", setup: func(t *testing.T) {
			s.Store.MaxPositions = 3
			t.Cleanup(func() { s.Store.MaxPositions = fund.DefaultMaxPositions })
		}, body: inputDocumentWith(func(d map[string]any) { d["positions"] = manyPositions(4) }), status: 400, typ: invalid, field: "positions"},
		{name: "more positions than the default limit of 5000 are refused", body: inputDocumentWith(func(d map[string]any) { d["positions"] = manyPositions(fund.DefaultMaxPositions + 1) }),
			status: 400, typ: invalid, field: "positions"},

		// Capital account statements and typed lines.
		{name: "a statement whose A.1 does not roll forward is refused", body: inputDocumentWith(func(d map[string]any) { inputStatement(d)["endingNav"] = "145000.01" }),
			status: 400, typ: invalid, field: "positions[1].capitalAccount.endingNav", detail: "A.1 does not roll forward"},
		{name: "a statement whose A.2 does not roll forward is refused", body: inputDocumentWith(func(d map[string]any) { inputStatement(d)["endingUnfundedCommitment"] = "350000.00" }),
			status: 400, typ: invalid, field: "positions[1].capitalAccount.endingUnfundedCommitment", detail: "difference 10000"},
		{name: "negative contributions, which ILPA enters positive, are refused", body: inputDocumentWith(func(d map[string]any) {
			st := inputStatement(d) // still rolling forward
			st["contributions"], st["netUnrealizedGainLoss"] = "-40000.00", "86000.00"
		}), status: 400, typ: invalid, field: "positions[1].capitalAccount.contributions"},
		{name: "a statement period that ends before it starts is refused", body: inputDocumentWith(func(d map[string]any) { inputStatement(d)["periodStart"] = "2025-11-02" }),
			status: 400, typ: invalid, field: "positions[1].capitalAccount.periodStart"},
		{name: "a statement without its beginning NAV is refused", body: inputDocumentWith(func(d map[string]any) { delete(inputStatement(d), "beginningNav") }),
			status: 400, typ: invalid, field: "positions[1].capitalAccount.beginningNav"},
		{name: "a null statement line is refused", body: inputDocumentWith(func(d map[string]any) { inputStatement(d)["placementFees"] = nil }),
			status: 400, typ: invalid, field: "positions[1].capitalAccount.placementFees"},
		{name: "an unknown statement line is refused", body: inputDocumentWith(func(d map[string]any) { inputStatement(d)["nav"] = "1.00" }),
			status: 400, typ: invalid, field: "positions[1].capitalAccount.nav"},
		{name: "an A.2 line without the beginning unfunded commitment is refused", body: inputDocumentWith(func(d map[string]any) { delete(inputStatement(d), "beginningUnfundedCommitment") }),
			status: 400, typ: invalid, field: "positions[1].capitalAccount.beginningUnfundedCommitment"},
		{name: "an unknown transaction type is refused", body: inputDocumentWith(func(d map[string]any) { inputTransaction(d, 0)["type"] = "dividend" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.transactions[0].type"},
		{name: "a distribution's type on a call is refused", body: inputDocumentWith(func(d map[string]any) { inputTransaction(d, 2)["type"] = "income" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.transactions[2].type"},
		{name: "typed lines that do not add up to the amount are refused", body: inputDocumentWith(func(d map[string]any) { inputTransaction(d, 0)["amount"] = "54999.99" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.transactions", detail: "difference -0.01"},
		{name: "a call line that increases unfunded commitment is refused", body: inputDocumentWith(func(d map[string]any) { inputTransaction(d, 0)["unfundedEffect"] = "increases" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.transactions[0].unfundedEffect"},
		{name: "a typed line in exponent notation is refused", body: inputDocumentWith(func(d map[string]any) { inputTransaction(d, 0)["amount"] = "5.5e4" }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.transactions[0].amount"},
		{name: "an empty list of typed lines is refused", body: inputDocumentWith(func(d map[string]any) { inputItem(d, 0, "capitalCall")["transactions"] = []any{} }),
			status: 400, typ: invalid, field: "positions[0].capitalCall.transactions"},
		{name: "a performance date of February 30 is refused", method: "GET", path: "/v1/positions/POSITION_1/performance?asOf=2025-02-30", status: 400, typ: invalid, field: "asOf", detail: "is not a calendar date: February 2025 has 28 days"},
		{name: "a fund performance date that is not a date is refused", method: "GET", path: "/v1/funds/FUND_A/performance?asOf=today", status: 400, typ: invalid, field: "asOf", detail: "is not a valid date: want YYYY-MM-DD"},
		{name: "a reconciliation cursor that is not one is refused", method: "GET", path: "/v1/documents/DOC007/reconciliation?cursor=garbage", status: 400, typ: invalid, field: "cursor"},

		// Transport.
		{name: "a body of 1 MiB and one byte is refused as too large", body: sizedBody(1<<20 + 1), status: 413, typ: "/problems/too_large", field: "body"},
		{name: "a body of 2 MiB is refused as too large", body: sizedBody(2 << 20), status: 413, typ: "/problems/too_large", field: "body"},
		{name: "a body of exactly 1 MiB is read whole and its long title refused", body: sizedBody(1 << 20), status: 400, typ: invalid, field: "title"},
		{name: "a text/plain body is refused as unsupported", body: valid, headers: []string{"Content-Type", "text/plain"}, status: 415, typ: "/problems/unsupported_media_type", field: "Content-Type"},
		{name: "a form body is refused as unsupported", body: "fundId=FUND_A", headers: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415, typ: "/problems/unsupported_media_type", field: "Content-Type"},
		{name: "a body without a content type is refused as unsupported", body: valid, headers: []string{"Content-Type", ""}, status: 415, typ: "/problems/unsupported_media_type", field: "Content-Type"},

		// Conflicts and preconditions.
		{name: "moving DOC001 to another fund is a conflict", path: "/v1/documents/DOC001", body: inputDocumentWith(func(d map[string]any) { d["fundId"] = "FUND_B" }),
			status: 409, typ: conflict, field: "fundId"},
		{name: "a negative line item is refused", body: inputDocumentWith(func(d map[string]any) {
			call := inputItem(d, 0, "capitalCall") // still adding up to the amount
			call["investment"], call["managementFee"] = "-1000.00", "60000.00"
		}), status: 400, typ: invalid, field: "positions[0].capitalCall.investment"},
		{name: "a control character in the title is refused", body: inputDocumentWith(func(d map[string]any) { d["title"] = "Call\nSigned: the GP" }),
			status: 400, typ: invalid, field: "title"},
		{name: "an escape sequence in the title is refused", body: inputDocumentWith(func(d map[string]any) { d["title"] = "Call \u001b[31m" }),
			status: 400, typ: invalid, field: "title"},
		{name: "re-using POSITION_1 with another investor is a conflict", body: inputDocumentWith(func(d map[string]any) { inputPosition(d, 0)["investorId"] = "INVESTOR_2" }),
			status: 409, typ: conflict, field: "positions[0].positionId"},
		{name: "a new position beside one re-used with another investor is a conflict", body: inputDocumentWith(func(d map[string]any) {
			inputPosition(d, 0)["positionId"] = "POSITION_9"
			inputPosition(d, 1)["investorId"] = "INVESTOR_9"
		}), status: 409, typ: conflict, field: "positions[1].positionId"},
		{name: "reporting POSITION_1, held in USD, in EUR is a conflict", body: inputDocumentWith(func(d map[string]any) { d["currency"] = "EUR" }),
			status: 409, typ: conflict, field: "currency"},
		{name: "a stale If-Match is a failed precondition", path: "/v1/documents/DOC001", body: valid, headers: []string{"If-Match", `"1"`}, status: 412, typ: precondition},
		{name: "If-Match 0 on an existing document is a failed precondition", path: "/v1/documents/DOC001", body: valid, headers: []string{"If-Match", `"0"`}, status: 412, typ: precondition},
		{name: "If-Match on a document that does not exist is a failed precondition", body: valid, headers: []string{"If-Match", `"1"`}, status: 412, typ: precondition},
		{name: "If-Match * on a document that does not exist is a failed precondition", body: valid, headers: []string{"If-Match", "*"}, status: 412, typ: precondition},
		{name: "a garbage If-Match is refused", path: "/v1/documents/DOC001", body: valid, headers: []string{"If-Match", "yesterday"}, status: 400, typ: invalid, field: "If-Match"},
		{name: "a negative If-Match is refused", path: "/v1/documents/DOC001", body: valid, headers: []string{"If-Match", `"-1"`}, status: 400, typ: invalid, field: "If-Match"},

		// Bad parameters of reads.
		{name: "a limit that is not a number is refused", method: "GET", path: "/v1/funds/FUND_A/documents?limit=abc", status: 400, typ: invalid, field: "limit"},
		{name: "a from date of month 13 is refused", method: "GET", path: "/v1/funds/FUND_A/documents?from=2025-13-01", status: 400, typ: invalid, field: "from", detail: "is not a calendar date: there is no month 13"},
		{name: "a to date before from is refused", method: "GET", path: "/v1/funds/FUND_A/documents?from=2025-10-01&to=2025-09-01", status: 400, typ: invalid, field: "to"},
		{name: "an unknown document kind filter is refused", method: "GET", path: "/v1/funds/FUND_A/documents?kind=memo", status: 400, typ: invalid, field: "kind"},
		{name: "an unknown item type filter is refused", method: "GET", path: "/v1/positions/POSITION_1?itemType=Dividend", status: 400, typ: invalid, field: "itemType"},
		{name: "version 0 is refused", method: "GET", path: "/v1/documents/DOC001/versions/0", status: 400, typ: invalid, field: "version"},
		{name: "a versions range with a bad date is refused", method: "GET", path: "/v1/documents/DOC001/versions?to=2025-09-31", status: 400, typ: invalid, field: "to", detail: "September 2025 has 30 days"},
		{name: "a document ID with # in a read is refused", method: "GET", path: "/v1/documents/DOC%23001", status: 400, typ: invalid, field: "documentId"},
		{name: "a document filter with # is refused", method: "GET", path: "/v1/positions/POSITION_1/capital-calls?document=DOC%23001", status: 400, typ: invalid, field: "document"},
		{name: "a summary date of February 30 is refused", method: "GET", path: "/v1/positions/POSITION_1/summary?asOf=2025-02-30", status: 400, typ: invalid, field: "asOf", detail: "is not a calendar date"},
		{name: "a cash flow date that is not a date is refused", method: "GET", path: "/v1/positions/POSITION_1/cashflows?asOf=yesterday", status: 400, typ: invalid, field: "asOf", detail: "want YYYY-MM-DD"},
		{name: "an investor summary date with a time is refused", method: "GET", path: "/v1/investors/INVESTOR_1/summary?asOf=2025-09-01T00:00:00Z", status: 400, typ: invalid, field: "asOf"},
		{name: "a position ID with # in a summary is refused", method: "GET", path: "/v1/positions/POSITION%231/summary", status: 400, typ: invalid, field: "positionId"},
		{name: "a cursor that is not one is refused", method: "GET", path: "/v1/funds/FUND_A/positions?cursor=garbage", status: 400, typ: invalid, field: "cursor"},

		// The positive control: a valid write changes the table.
		{name: "a valid new document is created and changes the table", path: "/v1/documents/DOC008", body: valid, status: 201, changes: true},
		{name: "a valid restatement of DOC001 at its current version changes the table", path: "/v1/documents/DOC001", body: inputDocumentWith(func(d map[string]any) {
			d["kind"], d["asOf"] = "capital_account_statement", "2025-09-01"
			inputStatement(d)["periodStart"] = "2025-07-01"
		}), headers: []string{"If-Match", `"2"`}, status: 200, changes: true},
	}
	if n := len(cases); n < 35 {
		t.Fatalf("only %d cases", n)
	}

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			}
			method, path := tc.method, tc.path
			if method == "" {
				method = http.MethodPut
			}
			if path == "" {
				// A document of its own, so that a bad request wrongly
				// accepted cannot change what the next cases see.
				path = fmt.Sprintf("/v1/documents/BAD_%03d", i)
			}
			before := s.Dump(t)
			r := s.do(t, method, path, tc.body, tc.headers...)
			after := s.Dump(t)

			if tc.changes {
				if r.Status != tc.status {
					t.Fatalf("status = %d, want %d\n%s", r.Status, tc.status, r.Body)
				}
				if reflect.DeepEqual(before, after) {
					t.Fatal("a valid write left the table unchanged")
				}
				return
			}
			if !reflect.DeepEqual(before, after) {
				t.Errorf("the table changed: %s", dumpDifference(before, after))
			}
			p := checkProblem(t, r, tc.status, tc.typ)
			switch {
			case tc.fieldSuffix && !strings.HasSuffix(p.Field, tc.field):
				t.Errorf("field = %q, want one ending in %q\n%s", p.Field, tc.field, r.Body)
			case !tc.fieldSuffix && p.Field != tc.field:
				t.Errorf("field = %q, want %q\n%s", p.Field, tc.field, r.Body)
			}
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail = %q, want it to say %q", p.Detail, tc.detail)
			}
			if p.RequestID != r.Header.Get("X-Request-ID") {
				t.Errorf("problem requestId %q is not the answer's X-Request-ID %q", p.RequestID, r.Header.Get("X-Request-ID"))
			}
		})
	}
}

// TestAmountsRoundTripExactly writes amounts at the edges of the accepted
// range and scale and reads them back through every route that shows them.
func TestAmountsRoundTripExactly(t *testing.T) {
	s := newServer(t, false)
	body := `{
	"fundId": "FUND_RT", "kind": "capital_account_statement", "title": "Edges", "asOf": "2025-12-31",
	"capitalActivity": {"amount": 12.25},
	"positions": [
		{"positionId": "RT_MAX", "investorId": "INV_MAX", "capitalCall": {"amount": "999999999999999.9999"},
		 "unfundedCommitment": {"amount": "0.0001", "commitment": "999999999999999.9999"}},
		{"positionId": "RT_NEG", "investorId": "INV_NEG", "distribution": {"amount": "999999999999999.9999",
		 "returnOfCapital": "999999999999999.9998", "realizedGain": "0.0001", "income": "0",
		 "recallable": "0.0001", "withholding": "0"}},
		{"positionId": "RT_NUM", "investorId": "INV_NUM", "capitalCall": {"amount": 500000.5, "investment": 500000, "managementFee": 0.5},
		 "distribution": {"amount": 12.3456, "returnOfCapital": 12.3456, "income": 0}},
		{"positionId": "RT_ZERO", "investorId": "INV_ZERO", "capitalCall": {"amount": "0.00"},
		 "unfundedCommitment": {"amount": "1.2300"}}
	]}`
	put := s.do(t, http.MethodPut, "/v1/documents/DOC_RT", body)
	if put.Status != http.StatusCreated {
		t.Fatalf("PUT: status %d, want 201\n%s", put.Status, put.Body)
	}
	version := s.do(t, http.MethodGet, "/v1/documents/DOC_RT/versions/1", nil)
	overview := s.do(t, http.MethodGet, "/v1/documents/DOC_RT", nil)
	if version.Status != http.StatusOK || overview.Status != http.StatusOK {
		t.Fatalf("GET: status %d and %d, want 200\n%s\n%s", version.Status, overview.Status, version.Body, overview.Body)
	}

	// positionAmount finds an amount in a version body (PUT or GET /versions/n).
	positionAmount := func(t *testing.T, r response, pos, kind, name string) any {
		t.Helper()
		for _, p := range r.JSON(t)["positions"].([]any) {
			if p := p.(map[string]any); p["positionId"] == pos {
				item, ok := p[kind].(map[string]any)
				if !ok {
					t.Fatalf("position %s has no %s in %s", pos, kind, r.Body)
				}
				return item[name]
			}
		}
		t.Fatalf("no position %s in %s", pos, r.Body)
		return nil
	}
	// overviewAmount finds an amount in the overview.
	overviewAmount := func(t *testing.T, pos, kind, name string) any {
		t.Helper()
		group := map[string]string{"capitalCall": "capitalCalls", "distribution": "distributions", "unfundedCommitment": "unfundedCommitments"}[kind]
		items, _ := overview.JSON(t)["positions"].(map[string]any)[pos].(map[string]any)[group].([]any)
		if len(items) != 1 {
			t.Fatalf("overview position %s has %d %s", pos, len(items), group)
		}
		return items[0].(map[string]any)[name]
	}

	for _, tc := range []struct {
		name                string
		position, kind, key string
		want                string
	}{
		{"the largest amount reads back whole", "RT_MAX", "capitalCall", "amount", "999999999999999.9999"},
		{"the largest commitment reads back whole", "RT_MAX", "unfundedCommitment", "commitment", "999999999999999.9999"},
		{"the smallest positive amount reads back whole", "RT_MAX", "unfundedCommitment", "amount", "0.0001"},
		{"the smallest line item reads back whole", "RT_NEG", "distribution", "realizedGain", "0.0001"},
		{"a line item just under the largest amount reads back whole", "RT_NEG", "distribution", "returnOfCapital", "999999999999999.9998"},
		{"a line item of zero reads back as 0.00", "RT_NEG", "distribution", "income", "0.00"},
		{"a JSON number with one decimal reads back as a string with two", "RT_NUM", "capitalCall", "amount", "500000.50"},
		{"a whole JSON number reads back with two decimals", "RT_NUM", "capitalCall", "investment", "500000.00"},
		{"a JSON number below one reads back exactly", "RT_NUM", "capitalCall", "managementFee", "0.50"},
		{"a JSON number with four decimals reads back exactly", "RT_NUM", "distribution", "returnOfCapital", "12.3456"},
		{"a JSON number zero reads back as 0.00", "RT_NUM", "distribution", "income", "0.00"},
		{"a zero string reads back as 0.00", "RT_ZERO", "capitalCall", "amount", "0.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, got := range []struct {
				route string
				value any
			}{
				{"PUT", positionAmount(t, put, tc.position, tc.kind, tc.key)},
				{"GET /versions/1", positionAmount(t, version, tc.position, tc.kind, tc.key)},
				{"GET overview", overviewAmount(t, tc.position, tc.kind, tc.key)},
			} {
				if got.value != tc.want {
					t.Errorf("%s: %s.%s = %#v, want %q", got.route, tc.kind, tc.key, got.value, tc.want)
				}
			}
		})
	}

	t.Run("the capital activity sent as a JSON number reads back as a string", func(t *testing.T) {
		latest := overview.JSON(t)["capitalActivities"].(map[string]any)["latest"].(map[string]any)
		if latest["amount"] != "12.25" {
			t.Errorf("capital activity amount = %#v, want \"12.25\"", latest["amount"])
		}
	})

	t.Run("an amount with trailing zeros reads back as the write acknowledged it", func(t *testing.T) {
		acknowledged := positionAmount(t, put, "RT_ZERO", "unfundedCommitment", "amount")
		stored := positionAmount(t, version, "RT_ZERO", "unfundedCommitment", "amount")
		for _, v := range []any{acknowledged, stored} {
			if d, err := decimal.NewFromString(fmt.Sprint(v)); err != nil || !d.Equal(decimal.RequireFromString("1.23")) {
				t.Errorf("amount %#v is not 1.23", v)
			}
		}
		if acknowledged != stored {
			t.Errorf("PUT acknowledged %#v but GET /versions/1 of the same version shows %#v", acknowledged, stored)
		}
	})

	t.Run("the analysis adds the extremes exactly", func(t *testing.T) {
		r := s.do(t, http.MethodGet, "/v1/documents/DOC_RT/analysis", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("status %d\n%s", r.Status, r.Body)
		}
		for _, p := range r.JSON(t)["positions"].([]any) {
			p := p.(map[string]any)
			if p["positionId"] == "RT_MAX" && (p["called"] != "999999999999999.9999" || p["unfunded"] != "0.0001") {
				t.Errorf("RT_MAX analysis = %v", p)
			}
		}
	})
}
