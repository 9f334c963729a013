package export

import (
	"fmt"
	"math/big"
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

// TestEveryDatasetHasItsPlan makes the plan of every dataset whose rows
// are filled by name: a field fund declares without its column, or a
// column without the field it takes its value from, is an error naming
// both, which every export returns at its start (checkPlans) rather than
// a panic.
func TestEveryDatasetHasItsPlan(t *testing.T) {
	n := 0
	for _, d := range datasets {
		if d.plan == nil {
			continue
		}
		n++
		if _, err := d.plan(); err != nil {
			t.Errorf("dataset %s: %v", d.name, err)
		}
	}
	if n < 13 {
		t.Errorf("only %d datasets have a plan", n)
	}
}

// TestEveryDeclaredFieldHasAColumn holds the row types to fund's
// declarations: every field of the structs a position-level dataset
// exports (an item with its details: fund/document.go, the line items of
// fund/lines.go; a statement's lines, fund/capital.go) has its column,
// named after the field's JSON name in snake_case, so a field added to fund
// without its column fails here; and a row converted from an item with
// every declared field set carries each value in its column, while an item
// with none of its optional fields set leaves their columns NULL, never
// zero.
func TestEveryDeclaredFieldHasAColumn(t *testing.T) {
	n := 0
	for _, d := range datasets {
		if d.declares == nil {
			continue
		}
		n++
		t.Run(d.name, func(t *testing.T) {
			schema := Schema(d.name)
			var item, bare store.VersionItem
			item.Kind, item.DocumentID, item.AsOf = d.kind, "DOC001", fund.MustDate("2025-06-30")
			bare.Kind, bare.DocumentID, bare.AsOf = d.kind, "DOC001", fund.MustDate("2025-06-30")
			if d.kind == fund.Statement {
				item.CapitalAccount, bare.CapitalAccount = &fund.CapitalAccount{}, &fund.CapitalAccount{PeriodStart: fund.MustDate("2025-04-01")}
			}
			set := func(it *store.VersionItem, name string) reflect.Value {
				if v := reflect.ValueOf(it).Elem().FieldByName(name); v.IsValid() {
					return v
				}
				return reflect.ValueOf(it.CapitalAccount).Elem().FieldByName(name)
			}
			want := map[string]string{}
			fields := declaredFields(reflect.TypeOf(d.declares[0]))
			if len(fields) == 0 {
				t.Fatal("no declared fields")
			}
			for i, f := range fields {
				if _, ok := schema.Lookup(snakeCase(f.jsonName)); !ok {
					t.Errorf("field %s: no column %s in the schema", f.goName, snakeCase(f.jsonName))
				}
				v := set(&item, f.goName)
				switch v.Interface().(type) {
				case fund.Money:
					v.Set(reflect.ValueOf(fund.MustMoney(fmt.Sprintf("%d.25", i+1))))
					want[f.goName] = fmt.Sprintf("%d.2500", i+1)
				case *fund.Money:
					m := fund.MustMoney(fmt.Sprintf("%d.25", i+1))
					v.Set(reflect.ValueOf(&m))
					want[f.goName] = fmt.Sprintf("%d.2500", i+1)
				case fund.Date:
					date := fund.MustDate(fmt.Sprintf("2025-01-%02d", i+1))
					v.Set(reflect.ValueOf(date))
					want[f.goName] = fmt.Sprint(days(date))
				case fund.Status:
					v.SetString(string(fund.StatusCompleted))
					want[f.goName] = string(fund.StatusCompleted)
				case string:
					v.SetString(fmt.Sprintf("text %d", i+1))
					want[f.goName] = fmt.Sprintf("text %d", i+1)
				default:
					t.Fatalf("field %s of type %s: teach this test about it", f.goName, v.Type())
				}
			}
			row, err := d.itemRow(&item)
			if err != nil {
				t.Fatal(err)
			}
			empty, err := d.itemRow(&bare)
			if err != nil && d.kind != fund.Statement && d.kind != fund.UnfundedCommitment {
				t.Fatal(err)
			}
			v, e := reflect.ValueOf(row), reflect.ValueOf(empty)
			for _, f := range fields {
				var got string
				switch c := v.FieldByName(f.goName).Interface().(type) {
				case decimal19:
					got = fromDecimal(c)
				case *decimal19:
					if c != nil {
						got = fromDecimal(*c)
					}
				case int32:
					got = fmt.Sprint(c)
				case *int32:
					if c != nil {
						got = fmt.Sprint(*c)
					}
				case string:
					got = c
				case *string:
					if c != nil {
						got = *c
					}
				}
				if got != want[f.goName] {
					t.Errorf("%s: column holds %q, want %q", f.goName, got, want[f.goName])
				}
				switch c := e.FieldByName(f.goName).Interface().(type) {
				case *decimal19:
					if c != nil {
						t.Errorf("%s absent: column holds %s, want NULL", f.goName, fromDecimal(*c))
					}
				case *int32:
					if c != nil {
						t.Errorf("%s absent: column holds %d, want NULL", f.goName, *c)
					}
				case *string:
					if c != nil {
						t.Errorf("%s absent: column holds %q, want NULL", f.goName, *c)
					}
				}
			}
		})
	}
	if n != len(fund.ItemKinds) {
		t.Errorf("%d position-level datasets, want one per item kind (%d)", n, len(fund.ItemKinds))
	}

	// A row type that forgets a field (capitalCallRow without its
	// FundExpenses column) is refused, naming it.
	var kept []reflect.StructField
	for _, f := range rowFields(reflect.TypeFor[capitalCallRow]()) {
		if f.Name != "FundExpenses" {
			kept = append(kept, f)
		}
	}
	forgetful := reflect.StructOf(kept)
	sources := []reflect.Type{reflect.TypeFor[*store.VersionItem]()}
	declares := []reflect.Type{reflect.TypeFor[fund.CapitalCallItem]()}
	if _, err := planOf(forgetful, sources, declares); err == nil || !strings.Contains(err.Error(), "FundExpenses") {
		t.Errorf("a row without the FundExpenses column: %v, want an error naming it", err)
	}
	if _, err := planOf(reflect.TypeFor[capitalCallRow](), sources, declares); err != nil {
		t.Errorf("capitalCallRow itself: %v", err)
	}
	// And so is one whose column is named other than its field's JSON name.
	type misnamed struct {
		Amount  decimal19 `parquet:"amount,decimal(4:19)"`
		Status  string    `parquet:"status"`
		DueDate *int32    `parquet:"date,date,optional"`
	}
	if _, err := planOf(reflect.TypeFor[misnamed](), sources, []reflect.Type{reflect.TypeFor[fund.CapitalCallItem]()}); err == nil || !strings.Contains(err.Error(), "due_date") {
		t.Errorf("a due date column named date: %v, want an error naming due_date", err)
	}
	// And one with a column that has no source.
	type sourceless struct {
		Carry *decimal19 `parquet:"carry,decimal(4:19),optional"`
	}
	if _, err := planOf(reflect.TypeFor[sourceless](), sources, nil); err == nil || !strings.Contains(err.Error(), "Carry") {
		t.Errorf("a column without a source: %v, want an error naming it", err)
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
			fund.PositionItem{Kind: fund.CapitalCall, Amount: m("150"), Transactions: []fund.Transaction{
				{Type: "investment", Amount: m("100"), Unfunded: fund.Reduces},
				{Type: "management_fee_outside_commitment", Amount: m("50"), Unfunded: fund.NoEffect}}, CallDetails: fund.CallDetails{DueDate: due},
			},
			[]string{"capital_call 1 investment|Capital Call: Investments|paid_in|reduces|100.0000|2026-04-15|true",
				"capital_call 2 management_fee_outside_commitment|Capital Call: Management Fees (Outside Commitment)|paid_in|none|50.0000|2026-04-15|true"}},
		{"a call with line items maps them, dated by the document without a due date",
			fund.PositionItem{Kind: fund.CapitalCall, Amount: m("30"), CallDetails: fund.CallDetails{CallLines: fund.CallLines{Investment: ptr("20"), ManagementFee: ptr("10")}}},
			[]string{"capital_call 1 investment|Capital Call: Investments|paid_in|reduces|20.0000|2026-03-31|false",
				"capital_call 2 management_fee_inside_commitment|Capital Call: Management Fees (Inside Commitment)|paid_in|reduces|10.0000|2026-03-31|false"}},
		{"a recallable distribution's recallable part is its own line",
			fund.PositionItem{Kind: fund.Distribution, Amount: m("80"), DistributionDetails: fund.DistributionDetails{PaymentDate: due, DistributionLines: fund.DistributionLines{
				ReturnOfCapital: ptr("50"), RealizedGain: ptr("30"), Recallable: ptr("20")}}},
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

// TestEveryRecordFieldHasAColumn fills a funds row and an investors row
// from records with every field set, and finds each field in its column;
// and a fund or an investor without a record leaves every record column
// null (zero).
func TestEveryRecordFieldHasAColumn(t *testing.T) {
	size := fund.MustMoney("250000000.1234")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := fund.Fund{ID: "FUND_A", Record: &fund.FundRecord{FundFields: fund.FundFields{Name: "Fund A", LegalName: "Fund A, L.P.", BaseCurrency: "USD",
		VintageYear: 2025, TargetSize: &size, InceptionDate: fund.MustDate("2025-02-03"), ExternalIDs: fund.ExternalIDs{"z": "2", "a": "1"}},
		Version: 3, UpdatedAt: at, UpdatedBy: "alice"}}
	for i := range reflect.TypeFor[fund.FundFields]().NumField() {
		if reflect.ValueOf(f.Record.FundFields).Field(i).IsZero() {
			t.Fatalf("field %s is zero: the test would prove nothing of it", reflect.TypeFor[fund.FundFields]().Field(i).Name)
		}
	}
	var err error
	var r fundRow
	fundPlan.fill(&r, []any{&f, f.Record}, &err)
	if err != nil {
		t.Fatal(err)
	}
	want := fundRow{FundID: "FUND_A", Name: "Fund A", LegalName: "Fund A, L.P.", BaseCurrency: "USD", VintageYear: 2025,
		TargetSize: optDecimal(&size, &err), InceptionDate: optDays(fund.MustDate("2025-02-03")), ExternalIDs: `{"a":"1","z":"2"}`,
		Version: 3, UpdatedAt: at, UpdatedBy: "alice"}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("row %+v\nwant %+v", r, want)
	}
	var bare fundRow
	fundPlan.fill(&bare, []any{&fund.Fund{ID: "FUND_D"}, (*fund.FundRecord)(nil)}, &err)
	if err != nil || !reflect.DeepEqual(bare, fundRow{FundID: "FUND_D"}) {
		t.Errorf("a fund without a record: %+v %v", bare, err)
	}

	i := fund.Investor{ID: "INVESTOR_1", Record: &fund.InvestorRecord{InvestorFields: fund.InvestorFields{DisplayName: "Northwind",
		InvestorType: fund.InvestorSovereignWealth, ExternalIDs: fund.ExternalIDs{"crm": "7"}}, Version: 1, UpdatedAt: at, UpdatedBy: "bob"}}
	var ir investorRow
	investorPlan.fill(&ir, []any{&i, i.Record}, &err)
	if w := (investorRow{InvestorID: "INVESTOR_1", DisplayName: "Northwind", InvestorType: "sovereign_wealth", ExternalIDs: `{"crm":"7"}`,
		Version: 1, UpdatedAt: at, UpdatedBy: "bob"}); err != nil || !reflect.DeepEqual(ir, w) {
		t.Errorf("row %+v %v\nwant %+v", ir, err, w)
	}
}

// fromDecimal decodes a DECIMAL(19,4) value.
func fromDecimal(b decimal19) string {
	u := new(big.Int).SetBytes(b[:])
	if b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), 72))
	}
	q, r := new(big.Int).QuoRem(u, big.NewInt(10_000), new(big.Int))
	sign := ""
	if u.Sign() < 0 {
		sign = "-"
		q.Abs(q)
		r.Abs(r)
	}
	return fmt.Sprintf("%s%s.%04d", sign, q, r.Int64())
}
