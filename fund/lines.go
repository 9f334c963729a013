package fund

import (
	"reflect"
	"strings"
	"sync"
)

// Line items: the optional amounts that split a capital call or a
// distribution (ILPA's categories), and the commitment beside an unfunded
// amount. Each is declared once, here, as a field of one of the three
// structs below. Everything else derives from these declarations: the
// request and response fields (the json tag), the stored attribute (the Go
// name), the export column, the OpenAPI schema, and the validation rule
// (the line tag):
//
//   - line:"part": the parts of the amount; when any part is given, the
//     given parts add up to the amount exactly.
//   - line:"portion": a portion of the amount, between 0 and the amount.
//   - line:"bound": at least the amount (the commitment an unfunded amount
//     is measured against).
//   - transaction:"investment": the ILPA transaction type a part's amount
//     counts as when its item states no typed lines (CallTransactions,
//     DistributionTransactions).
//
// A line that is absent is nil, never zero.

// CallLines split a capital call's amount.
type CallLines struct {
	Investment    *Money `json:"investment,omitempty" line:"part" transaction:"investment" doc:"Called for investments."`
	ManagementFee *Money `json:"managementFee,omitempty" line:"part" transaction:"management_fee_inside_commitment" doc:"Called for management fees."`
	FundExpenses  *Money `json:"fundExpenses,omitempty" line:"part" transaction:"partnership_expenses" doc:"Called for partnership (fund) expenses."`
}

// DistributionLines split a gross distribution.
type DistributionLines struct {
	ReturnOfCapital *Money `json:"returnOfCapital,omitempty" line:"part" transaction:"return_of_capital" doc:"Return of capital."`
	RealizedGain    *Money `json:"realizedGain,omitempty" line:"part" transaction:"gain_loss" doc:"Realized gain."`
	Income          *Money `json:"income,omitempty" line:"part" transaction:"income" doc:"Income (dividends, interest)."`
	Recallable      *Money `json:"recallable,omitempty" line:"portion" doc:"The portion the fund may call again."`
	Withholding     *Money `json:"withholding,omitempty" line:"portion" doc:"Tax withheld from the distribution."`
}

// UnfundedLines qualify an unfunded commitment.
type UnfundedLines struct {
	Commitment *Money `json:"commitment,omitempty" line:"bound" doc:"The total commitment the unfunded amount is measured against."`
}

// Line is one declared line item of a lines struct.
type Line struct {
	Name  string // the JSON name: "returnOfCapital"
	Field string // the Go name, also the stored attribute: "ReturnOfCapital"
	Rule  string // "part", "portion" or "bound"
	// Transaction is a part's type when its item states no typed lines.
	Transaction TransactionType
	Doc         string
	index       int
}

// Get returns the line's amount in lines (a pointer to a lines struct).
func (l Line) Get(lines any) *Money {
	return reflect.ValueOf(lines).Elem().Field(l.index).Interface().(*Money)
}

// Set sets the line's amount in lines (a pointer to a lines struct).
func (l Line) Set(lines any, m *Money) {
	reflect.ValueOf(lines).Elem().Field(l.index).Set(reflect.ValueOf(m))
}

var linesOf sync.Map // reflect.Type → []Line

// LinesOf lists the lines of a lines struct type (CallLines,
// DistributionLines or UnfundedLines; a pointer to one works too), in
// declaration order.
func LinesOf(lines any) []Line {
	t := reflect.TypeOf(lines)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v, ok := linesOf.Load(t); ok {
		return v.([]Line)
	}
	var out []Line
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type != reflect.TypeFor[*Money]() || name == "" || f.Tag.Get("line") == "" {
			panic("fund: line item " + t.Name() + "." + f.Name + " needs type *Money and json and line tags")
		}
		out = append(out, Line{Name: name, Field: f.Name, Rule: f.Tag.Get("line"), Transaction: TransactionType(f.Tag.Get("transaction")), Doc: f.Tag.Get("doc"), index: i})
	}
	linesOf.Store(t, out)
	return out
}

// checkLines applies each line's rule against amount; field names the item.
func checkLines(field string, amount Money, lines any) error {
	parts := map[string]*Money{}
	for _, l := range LinesOf(lines) {
		if l.Rule == "part" {
			parts[l.Name] = l.Get(lines)
		}
	}
	if err := checkParts(field, amount, parts); err != nil {
		return err
	}
	for _, l := range LinesOf(lines) {
		m := l.Get(lines)
		switch {
		case m == nil:
		case l.Rule == "portion" && (m.Sign() < 0 || m.Cmp(amount) > 0):
			return Invalid(field+"."+l.Name, "must be between 0 and the amount %s, got %s", amount, m)
		case l.Rule == "bound" && m.Cmp(amount) < 0:
			return Invalid(field+"."+l.Name, "must be at least the unfunded amount %s, got %s", amount, m)
		}
	}
	return nil
}
