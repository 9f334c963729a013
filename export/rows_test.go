package export

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

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
// every line of a position-level dataset's lines struct has its column (a
// field of the line's Go name, an optional DECIMAL(19,4) named after the
// line's JSON name), so adding a line to fund/lines.go without its column
// fails here; and a row converted from an item with every line set carries
// each amount in its column.
func TestEveryLineHasAColumn(t *testing.T) {
	n := 0
	for _, d := range datasets {
		if d.lines == nil {
			continue
		}
		n++
		t.Run(d.name, func(t *testing.T) {
			var item store.VersionItem
			lines := d.lines(&item.PositionItem)
			cols, err := lineColumns(reflect.TypeOf(d.row), lines)
			if err != nil {
				t.Fatal(err)
			}
			all := fund.LinesOf(lines)
			if len(cols) != len(all) || len(all) == 0 {
				t.Fatalf("%d columns for %d lines", len(cols), len(all))
			}
			schema := Schema(d.name)
			for i, l := range all {
				if _, ok := schema.Lookup(snakeCase(l.Name)); !ok {
					t.Errorf("line %s: no column %s in the schema", l.Name, snakeCase(l.Name))
				}
				m := fund.MustMoney(fmt.Sprintf("%d.25", i+1))
				l.Set(lines, &m)
			}
			item.Kind, item.DocumentID, item.Amount = d.kind, "DOC001", fund.MustMoney("100")
			row, err := d.itemRow(&item)
			if err != nil {
				t.Fatal(err)
			}
			v := reflect.ValueOf(row)
			for i, l := range all {
				got, _ := v.FieldByName(l.Field).Interface().(*decimal19)
				if want := fmt.Sprintf("%d.2500", i+1); got == nil || fromDecimal(*got) != want {
					t.Errorf("line %s: column holds %v, want %s", l.Name, got, want)
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
	if _, err := lineColumns(reflect.TypeFor[forgetful](), &fund.CallLines{}); err == nil || !strings.Contains(err.Error(), "FundExpenses") {
		t.Errorf("a row without the FundExpenses column: %v, want an error naming it", err)
	}
}
