package export

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
)

// TestDecimalEncodingIsExact round-trips the limits and random amounts of
// every scale through the DECIMAL(19,4) encoding.
func TestDecimalEncodingIsExact(t *testing.T) {
	cases := []string{"0", "0.0001", "-0.0001", "1", "-1", "999999999999999.9999", "-999999999999999.9999",
		"922337203685477.5807", "922337203685477.5808", "-922337203685477.5809", "123.45"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		sign := []string{"", "-"}[r.IntN(2)]
		cases = append(cases, fmt.Sprintf("%s%d.%04d", sign, r.Int64N(1_000_000_000_000_000), r.IntN(10_000)))
	}
	for _, c := range cases {
		m := fund.MustMoney(c)
		enc, err := toDecimal(m)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		got := fund.MustMoney(fromDecimal(enc))
		if !got.Equal(m) {
			t.Fatalf("%s: encoded and decoded as %s", c, got)
		}
	}
}

// TestDecimalEncodingRefusesWhatDoesNotFit checks the guard behind the
// encoding: amounts outside DECIMAL(19,4) are an error, never a different
// number. (The API never accepts them; the guard protects against data
// written some other way.)
func TestDecimalEncodingRefusesWhatDoesNotFit(t *testing.T) {
	for _, c := range []string{"10000000000000000", "0.00001"} {
		var m fund.Money
		if err := m.UnmarshalJSON([]byte(`"` + c + `"`)); err == nil {
			t.Fatalf("%s: the API accepts it; pick another case", c)
		}
	}
	big := fund.MustMoney("999999999999999.9999").Add(fund.MustMoney("0.0001"))
	if _, err := toDecimal(big); err == nil {
		t.Errorf("%s encoded without error", big)
	}
	fine := fund.MustMoney("0.0001")
	if _, err := toDecimal(fund.Sum(fine, fine)); err != nil {
		t.Errorf("0.0002: %v", err)
	}
}

// TestEveryLineHasAColumn holds the row types to fund's line declarations:
// every line of a position-level dataset (the line items of fund/lines.go,
// the lines of a capital account statement in fund/capital.go) has its
// column (a field of the line's Go name, a DECIMAL(19,4) named after the
// line's JSON name, optional unless the line is always present), so adding
// a line to fund without its column fails here; and a row converted from
// an item with every line set carries each amount in its column, while an
// item with none set leaves the optional columns NULL, never zero.
func TestEveryLineHasAColumn(t *testing.T) {
	n := 0
	for _, d := range datasets {
		if d.lines == nil {
			continue
		}
		n++
		t.Run(d.name, func(t *testing.T) {
			all := d.lines()
			cols, err := lineColumns(reflect.TypeOf(d.row), all)
			if err != nil {
				t.Fatal(err)
			}
			if len(cols) != len(all) || len(all) == 0 {
				t.Fatalf("%d columns for %d lines", len(cols), len(all))
			}
			schema := Schema(d.name)
			var item, bare store.VersionItem
			for i, l := range all {
				if _, ok := schema.Lookup(snakeCase(l.Name)); !ok {
					t.Errorf("line %s: no column %s in the schema", l.Name, snakeCase(l.Name))
				}
				m := fund.MustMoney(fmt.Sprintf("%d.25", i+1))
				l.Set(&item.PositionItem, &m)
				l.Set(&bare.PositionItem, nil)
			}
			for _, it := range []*store.VersionItem{&item, &bare} {
				it.Kind, it.DocumentID, it.Amount = d.kind, "DOC001", fund.MustMoney("100")
			}
			row, err := d.itemRow(&item)
			if err != nil {
				t.Fatal(err)
			}
			empty, err := d.itemRow(&bare)
			if err != nil {
				t.Fatal(err)
			}
			v, e := reflect.ValueOf(row), reflect.ValueOf(empty)
			for i, l := range all {
				want := fmt.Sprintf("%d.2500", i+1)
				if l.Required {
					if got := v.FieldByName(l.Field).Interface().(decimal19); fromDecimal(got) != want {
						t.Errorf("line %s: column holds %s, want %s", l.Name, fromDecimal(got), want)
					}
					continue
				}
				got, _ := v.FieldByName(l.Field).Interface().(*decimal19)
				if got == nil || fromDecimal(*got) != want {
					t.Errorf("line %s: column holds %v, want %s", l.Name, got, want)
				}
				if got, _ := e.FieldByName(l.Field).Interface().(*decimal19); got != nil {
					t.Errorf("line %s absent: column holds %s, want NULL", l.Name, fromDecimal(*got))
				}
			}
		})
	}
	if n != len(fund.ItemKinds) {
		t.Errorf("%d position-level datasets, want one per item kind (%d)", n, len(fund.ItemKinds))
	}

	// A row type that forgets a line is refused, naming the line.
	type forgetful struct {
		Investment    *decimal19 `parquet:"investment,decimal(4:19),optional"`
		ManagementFee *decimal19 `parquet:"management_fee,decimal(4:19),optional"`
	}
	calls := lineItems(func(p *fund.PositionItem) any { return &p.CallLines })
	if _, err := lineColumns(reflect.TypeFor[forgetful](), calls()); err == nil || !strings.Contains(err.Error(), "FundExpenses") {
		t.Errorf("a row without the FundExpenses column: %v, want an error naming it", err)
	}
	// And so is a statement's row whose ending NAV is optional.
	type optionalEnd struct {
		EndingNAV *decimal19 `parquet:"ending_nav,decimal(4:19),optional"`
	}
	end := slices.IndexFunc(capitalLines(), func(l itemLine) bool { return l.Field == "EndingNAV" })
	if _, err := lineColumns(reflect.TypeFor[optionalEnd](), capitalLines()[end:end+1]); err == nil || !strings.Contains(err.Error(), "must be decimal19") {
		t.Errorf("an optional ending NAV column: %v, want an error", err)
	}
}

// TestTransactionLinesAreTheItemsTypedLines converts calls and
// distributions, with stated lines and with legacy line items, into rows of
// transaction_lines: one row per typed line with its declaration's label
// and net treatment, dated by the item's date or else the document's as-of
// date, and stated only when the administrator stated the lines.
func TestTransactionLinesAreTheItemsTypedLines(t *testing.T) {
	m := fund.MustMoney
	ptr := func(s string) *fund.Money { v := m(s); return &v }
	asOf, due := fund.MustDate("2026-03-31"), fund.MustDate("2026-04-15")
	cases := []struct {
		name string
		item fund.PositionItem
		want []string // type label net effect amount date stated
	}{
		{"a call with stated lines keeps them, dated by its due date",
			fund.PositionItem{Kind: fund.CapitalCall, Amount: m("150"), Date: due, Transactions: []fund.Transaction{
				{Type: "investment", Amount: m("100"), Unfunded: fund.Reduces},
				{Type: "management_fee_outside_commitment", Amount: m("50"), Unfunded: fund.NoEffect}}},
			[]string{"capital_call 1 investment|Capital Call: Investments|paid_in|reduces|100.0000|2026-04-15|true",
				"capital_call 2 management_fee_outside_commitment|Capital Call: Management Fees (Outside Commitment)|paid_in|none|50.0000|2026-04-15|true"}},
		{"a call with line items maps them, dated by the document without a due date",
			fund.PositionItem{Kind: fund.CapitalCall, Amount: m("30"), CallLines: fund.CallLines{Investment: ptr("20"), ManagementFee: ptr("10")}},
			[]string{"capital_call 1 investment|Capital Call: Investments|paid_in|reduces|20.0000|2026-03-31|false",
				"capital_call 2 management_fee_inside_commitment|Capital Call: Management Fees (Inside Commitment)|paid_in|reduces|10.0000|2026-03-31|false"}},
		{"a recallable distribution's recallable part is its own line",
			fund.PositionItem{Kind: fund.Distribution, Amount: m("80"), Date: due, DistributionLines: fund.DistributionLines{
				ReturnOfCapital: ptr("50"), RealizedGain: ptr("30"), Recallable: ptr("20")}},
			[]string{"distribution 1 recallable_return_of_capital|Distribution: Recallable - Return of Capital|distributed|increases|20.0000|2026-04-15|false",
				"distribution 2 return_of_capital|Distribution: Permanent - Return of Capital|distributed|none|30.0000|2026-04-15|false",
				"distribution 3 gain_loss|Distribution: Permanent - Gain / Loss|distributed|none|30.0000|2026-04-15|false"}},
		{"a returned excess call is paid in returned",
			fund.PositionItem{Kind: fund.Distribution, Amount: m("5"), Transactions: []fund.Transaction{
				{Type: "return_of_excess_capital_investments", Amount: m("5"), Unfunded: fund.Increases}}},
			[]string{"distribution 1 return_of_excess_capital_investments|Distribution: Return of Excess Capital Called: Investments|paid_in_returned|increases|5.0000|2026-03-31|true"}},
		{"an item of zero amount has no line",
			fund.PositionItem{Kind: fund.CapitalCall, Amount: m("0")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.item.FundID, c.item.DocumentID, c.item.PositionID, c.item.AsOf = "F", "D", "P", asOf
			r, err := transactionItemRowOf(&store.VersionItem{PositionItem: c.item, CommitID: "C"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range r.Lines {
				got = append(got, fmt.Sprintf("%s %d %s|%s|%s|%s|%s|%s|%t", l.ItemType, l.Line, l.TransactionType, l.ILPALabel,
					l.NetTreatment, l.UnfundedEffect, fromDecimal(l.Amount), time.Unix(int64(l.EffectiveDate)*86400, 0).UTC().Format(time.DateOnly), l.Stated))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
