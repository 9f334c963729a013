package wire

import (
	"bytes"
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
		{"an unknown member is refused by name", `"fundExpenses": "1000.00"`, `"fundExpenses": "1000.00", "carry": "1.00"`, "invalid: carry: is not a field of this request"},
		{"a line of another item is unknown", `"investment": "55000.00"`, `"investment": "55000.00", "income": "1.00"`, "invalid: income: is not a field of this request"},
		{"a fixed member of the wrong type names its path", `"dueDate": "2025-11-30"`, `"dueDate": 20251130`, "invalid: positions[0].capitalCall.dueDate: must be a JSON string, not number"},
		{"an item that is not an object names its path", `"capitalCall": {"amount": "60000.00", "dueDate": "2025-11-30", "investment": "55000.00", "managementFee": "4000.00", "fundExpenses": "1000.00"}`, `"capitalCall": 5`, "invalid: positions[0].capitalCall: must be a JSON struct, not number"},
		{"a position that is not an object names its index", `[{"positionId"`, `[5, {"positionId"`, "invalid: positions[0]: must be a JSON struct, not number"},
		{"a null item is absent", `"capitalCall": {"amount": "60000.00", "dueDate": "2025-11-30", "investment": "55000.00", "managementFee": "4000.00", "fundExpenses": "1000.00"}`, `"capitalCall": null`, "Distribution 10000.00 returnOfCapital=6000.00 realizedGain=3000.00 income=1000.00 recallable=2000.00 withholding=500.00; UnfundedCommitment 1440000.00 commitment=2000000.00; "},
		{"a null amount is refused", `"amount": "60000.00"`, `"amount": null`, "invalid: positions[0].capitalCall.amount: is required and may not be null"},
		{"the last of repeated members counts", `"income": "1000.00"`, `"income": "5.00", "income": "1000.00"`, "CapitalCall 60000.00 investment=55000.00 managementFee=4000.00 fundExpenses=1000.00; Distribution 10000.00 returnOfCapital=6000.00 realizedGain=3000.00 income=1000.00 recallable=2000.00 withholding=500.00; UnfundedCommitment 1440000.00 commitment=2000000.00; "},
		{"members match without regard to case, as encoding/json does", `"income": "1000.00"`, `"Income": "1000.00"`, "CapitalCall 60000.00 investment=55000.00 managementFee=4000.00 fundExpenses=1000.00; Distribution 10000.00 returnOfCapital=6000.00 realizedGain=3000.00 income=1000.00 recallable=2000.00 withholding=500.00; UnfundedCommitment 1440000.00 commitment=2000000.00; "},
		{"a null line in another case is refused too", `"income": "1000.00"`, `"INCOME": null`, "invalid: positions[0].distribution.income: may not be null; leave the field out instead"},
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
