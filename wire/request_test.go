package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

// A request body with one of each item and every line item; the cases
// below change it in one place each.
const requestBody = `{"fundId": "FUND_A", "kind": "capital_call_notice", "title": "T", "asOf": "2025-11-01",
	"positions": [{"positionId": "P1", "investorId": "I1",
		"capitalCall": {"amount": "60000.00", "dueDate": "2025-11-30", "investment": "55000.00", "managementFee": "4000.00", "fundExpenses": "1000.00"},
		"distribution": {"amount": "10000.00", "returnOfCapital": "6000.00", "realizedGain": "3000.00", "income": "1000.00", "recallable": "2000.00", "withholding": "500.00"},
		"unfundedCommitment": {"amount": "1440000.00", "commitment": "2000000.00"}}]}`

func decodeRequest(body string) (string, error) {
	var req DocumentRequest
	if err := DecodeStrict(strings.NewReader(body), &req); err != nil {
		return "", err
	}
	d, err := req.ToDocument("DOC1")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	for _, p := range d.Positions {
		for _, it := range d.AppendItems(&p, nil) {
			b.WriteString(it.Kind.Type() + " " + it.Amount.String())
			for _, lines := range []any{&it.CallLines, &it.DistributionLines, &it.UnfundedLines} {
				for _, l := range fund.LinesOf(lines) {
					if m := l.Get(lines); m != nil {
						b.WriteString(" " + l.Name + "=" + m.String())
					}
				}
			}
			b.WriteString("; ")
		}
	}
	return b.String(), nil
}

func TestRequestLineItems(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           string // the items, or the error
	}{
		{"every line is accepted", "", "", "CapitalCall 60000.00 investment=55000.00 managementFee=4000.00 fundExpenses=1000.00; Distribution 10000.00 returnOfCapital=6000.00 realizedGain=3000.00 income=1000.00 recallable=2000.00 withholding=500.00; UnfundedCommitment 1440000.00 commitment=2000000.00; "},
		{"a line may be a JSON number", `"income": "1000.00"`, `"income": 1000`, "CapitalCall 60000.00 investment=55000.00 managementFee=4000.00 fundExpenses=1000.00; Distribution 10000.00 returnOfCapital=6000.00 realizedGain=3000.00 income=1000.00 recallable=2000.00 withholding=500.00; UnfundedCommitment 1440000.00 commitment=2000000.00; "},
		{"an absent line is nil", `, "commitment": "2000000.00"`, ``, "CapitalCall 60000.00 investment=55000.00 managementFee=4000.00 fundExpenses=1000.00; Distribution 10000.00 returnOfCapital=6000.00 realizedGain=3000.00 income=1000.00 recallable=2000.00 withholding=500.00; UnfundedCommitment 1440000.00; "},
		{"a null line is refused", `"income": "1000.00"`, `"income": null`, "invalid: positions[0].distribution.income: may not be null; leave the field out instead"},
		{"a null commitment is refused", `"commitment": "2000000.00"`, `"commitment": null`, "invalid: positions[0].unfundedCommitment.commitment: may not be null; leave the field out instead"},
		{"a malformed line names its field", `"income": "1000.00"`, `"income": "1e3"`, `invalid: positions[0].distribution.income: "1e3" is not a valid amount: an amount is a decimal with at most 15 digits before the point and 4 after it, written without exponent or separators`},
		{"a line of the wrong JSON type names its field", `"managementFee": "4000.00"`, `"managementFee": true`, "invalid: positions[0].capitalCall.managementFee: an amount must be a string or a number"},
		{"an unknown member is refused by name", `"fundExpenses": "1000.00"`, `"fundExpenses": "1000.00", "carry": "1.00"`, "invalid: positions[0].capitalCall.carry: is not a field of this request"},
		{"a line of another item is unknown", `"investment": "55000.00"`, `"investment": "55000.00", "income": "1.00"`, "invalid: positions[0].capitalCall.income: is not a field of this request"},
		{"a fixed member of the wrong type names its path", `"dueDate": "2025-11-30"`, `"dueDate": 20251130`, "invalid: positions[0].capitalCall.dueDate: must be a JSON string holding a date (YYYY-MM-DD), not a number"},
		{"an item that is not an object names its path", `"capitalCall": {"amount": "60000.00", "dueDate": "2025-11-30", "investment": "55000.00", "managementFee": "4000.00", "fundExpenses": "1000.00"}`, `"capitalCall": 5`, "invalid: positions[0].capitalCall: must be a JSON object, not a number"},
		{"a position that is not an object names its index", `[{"positionId"`, `[5, {"positionId"`, "invalid: positions[0]: must be a JSON object, not a number"},
		{"a null item is refused: an absent item is left out", `"capitalCall": {"amount": "60000.00", "dueDate": "2025-11-30", "investment": "55000.00", "managementFee": "4000.00", "fundExpenses": "1000.00"}`, `"capitalCall": null`, "invalid: positions[0].capitalCall: may not be null; leave the field out instead"},
		{"a null amount is refused", `"amount": "60000.00"`, `"amount": null`, "invalid: positions[0].capitalCall.amount: is required and may not be null"},
		{"a repeated member is refused", `"income": "1000.00"`, `"income": "5.00", "income": "1000.00"`, "invalid: positions[0].distribution.income: is given twice; give it once"},
		{"a member in another case is refused, with its spelling", `"income": "1000.00"`, `"Income": "1000.00"`, "invalid: positions[0].distribution.Income: is not a field of this request; did you mean income?"},
		{"a member in another case is refused even when null", `"income": "1000.00"`, `"INCOME": null`, "invalid: positions[0].distribution.INCOME: is not a field of this request; did you mean income?"},
		{"an empty date is refused", `"dueDate": "2025-11-30"`, `"dueDate": ""`, "invalid: positions[0].capitalCall.dueDate: is empty; give a date (YYYY-MM-DD) or leave the field out"},
		{"a required member that is missing is named", `"investorId": "I1",`, ``, "invalid: positions[0].investorId: is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := requestBody
			if tc.from != "" || tc.to != "" {
				if !strings.Contains(body, tc.from) {
					t.Fatalf("the body holds no %s", tc.from)
				}
				body = strings.Replace(body, tc.from, tc.to, 1)
			}
			got, err := decodeRequest(body)
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestEveryDeclaredLineIsAcceptedAndAnswered walks fund's declarations, so
// a line added there is covered with no edit here: each line is accepted,
// validated, converted and answered under its JSON name, and null is
// refused naming it.
func TestEveryDeclaredLineIsAcceptedAndAnswered(t *testing.T) {
	for _, item := range []struct {
		member string
		lines  any
		get    func(fund.Position) any
	}{
		{"capitalCall", &fund.CallLines{}, func(p fund.Position) any { return &p.CapitalCall.CallLines }},
		{"distribution", &fund.DistributionLines{}, func(p fund.Position) any { return &p.Distribution.DistributionLines }},
		{"unfundedCommitment", &fund.UnfundedLines{}, func(p fund.Position) any { return &p.UnfundedCommitment.UnfundedLines }},
	} {
		for _, l := range fund.LinesOf(item.lines) {
			body := func(value string) string {
				return `{"fundId": "F", "kind": "capital_call_notice", "title": "T", "asOf": "2025-11-01", "positions": [{"positionId": "P1", "investorId": "I1", "` +
					item.member + `": {"amount": "1.00", "` + l.Name + `": ` + value + `}}]}`
			}
			t.Run(item.member+"."+l.Name+" is accepted and answered", func(t *testing.T) {
				var req DocumentRequest
				if err := DecodeStrict(strings.NewReader(body(`"1.00"`)), &req); err != nil {
					t.Fatal(err)
				}
				d, err := req.ToDocument("DOC1")
				if err != nil {
					t.Fatal(err)
				}
				d.Normalize()
				if err := d.Validate(fund.DefaultMaxPositions); err != nil {
					t.Fatal(err)
				}
				if m := l.Get(item.get(d.Positions[0])); m == nil || !m.Equal(fund.MustMoney("1")) {
					t.Fatalf("the document's %s is %v, want 1.00", l.Field, m)
				}
				answer, err := json.Marshal(VersionOf(d))
				if err != nil {
					t.Fatal(err)
				}
				if want := `"` + l.Name + `":"1.00"`; !strings.Contains(string(answer), want) {
					t.Fatalf("the answer %s holds no %s", answer, want)
				}
				items, err := json.Marshal(ItemsOf(d.Items(), AllLines))
				if err != nil {
					t.Fatal(err)
				}
				if want := `"` + l.Name + `":"1.00"`; strings.Count(string(items), want) != 1 {
					t.Fatalf("the position items %s hold %s not once", items, want)
				}
			})
			t.Run(item.member+"."+l.Name+" may not be null", func(t *testing.T) {
				var req DocumentRequest
				err := DecodeStrict(strings.NewReader(body("null")), &req)
				if err == nil {
					_, err = req.ToDocument("DOC1")
				}
				want := "invalid: positions[0]." + item.member + "." + l.Name + ": may not be null; leave the field out instead"
				if err == nil || err.Error() != want {
					t.Fatalf("got %v, want %s", err, want)
				}
			})
		}
	}
}

// A request a client builds in Go encodes as the body it means.
func TestBuiltRequestEncodes(t *testing.T) {
	income := fund.MustMoney("4.00")
	d := fund.Document{DocumentFields: fund.DocumentFields{FundID: "F", Kind: fund.KindDistributionNotice, Title: "T", AsOf: fund.MustDate("2025-11-01")},
		Positions: []fund.Position{{ID: "P1", InvestorID: "I1",
			Distribution: &fund.DistributionItem{Amount: fund.MustMoney("4"), DistributionDetails: fund.DistributionDetails{DistributionLines: fund.DistributionLines{Income: &income}}}}}}
	req := RequestOf(d)
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"fundId":"F","kind":"distribution_notice","title":"T","asOf":"2025-11-01","positions":[{"positionId":"P1","investorId":"I1","distribution":{"amount":"4.00","income":"4.00"}}]}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back DocumentRequest
	if err := DecodeStrict(bytes.NewReader(b), &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.ToDocument("DOC1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(RequestOf(got))
	if err != nil || string(again) != want || got.ID != "DOC1" {
		t.Fatalf("read back as %s (%v), want %s", again, err, want)
	}
}

// A client that decodes a version it read finds the line items in the
// embedded lines, as the server answered them.
func TestDecodedResponseHoldsItsLines(t *testing.T) {
	var v DocumentVersion
	body := `{"documentId":"D","fundId":"F","kind":"capital_call_notice","title":"T","asOf":"2025-11-01","currency":"USD","version":2,"positionCount":1,"createdAt":"2025-11-01T00:00:00Z",
		"positions":[{"positionId":"P1","investorId":"I1","capitalCall":{"amount":"5.00","status":"pending","investment":"4.00","fundExpenses":"1.00"}}]}`
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	c := v.Positions[0].CapitalCall
	if c.Amount.String() != "5.00" || c.Investment == nil || c.Investment.String() != "4.00" || c.FundExpenses == nil || c.FundExpenses.String() != "1.00" || c.ManagementFee != nil {
		t.Fatalf("decoded %+v", c)
	}
	again, err := json.Marshal(v.Positions[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"positionId":"P1","investorId":"I1","capitalCall":{"amount":"5.00","status":"pending","investment":"4.00","fundExpenses":"1.00"}}`; string(again) != want {
		t.Fatalf("encoded again as %s, want %s", again, want)
	}
}
