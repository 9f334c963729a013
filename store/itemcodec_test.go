package store

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
)

// filledItem sets every stored field of an Item to a distinct non-zero
// value, and returns the attribute each must become: strings, dates and
// instants as strings, numbers and money as numbers, flags as booleans.
func filledItem(t *testing.T) (Item, map[string]types.AttributeValue) {
	t.Helper()
	var it Item
	v := reflect.ValueOf(&it).Elem()
	want := map[string]types.AttributeValue{}
	for i, c := range itemCodec.codecs {
		f := v.FieldByIndex(c.index)
		switch x := f.Addr().Interface().(type) {
		case *string:
			*x = "value of " + c.name
			want[c.name] = &types.AttributeValueMemberS{Value: *x}
		case *fund.Kind:
			*x = fund.Kind("value of " + c.name)
			want[c.name] = &types.AttributeValueMemberS{Value: string(*x)}
		case *int:
			*x = 1000 + i
			want[c.name] = &types.AttributeValueMemberN{Value: fmt.Sprint(1000 + i)}
		case *bool:
			*x = true
			want[c.name] = &types.AttributeValueMemberBOOL{Value: true}
		case *fund.Date:
			s := time.Date(2025, 9, 1+i, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
			*x = fund.MustDate(s)
			want[c.name] = &types.AttributeValueMemberS{Value: s}
		case **fund.Money:
			s := fmt.Sprintf("%d.%03d7", 123456789012345-i, 999-i) // no trailing zero: numbers are stored normalized
			m := fund.MustMoney(s)
			*x = &m
			want[c.name] = &types.AttributeValueMemberN{Value: s}
		case *fund.Money:
			s := fmt.Sprintf("-%d.%03d1", 123456789012345-i, 999-i) // either sign: a statement's NAV
			*x = fund.MustMoney(s)
			want[c.name] = &types.AttributeValueMemberN{Value: s}
		case *[]fund.Transaction:
			// Every field of a line is an attribute of its map, named as in
			// JSON; a zero amount is stored, an effect left out is not.
			*x = []fund.Transaction{
				{Type: "investment", Amount: fund.MustMoney("12345678901234.5678"), Unfunded: fund.Reduces},
				{Type: "working_capital", Amount: fund.Money{}},
			}
			want[c.name] = &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
					"transactionType": &types.AttributeValueMemberS{Value: "investment"},
					"amount":          &types.AttributeValueMemberN{Value: "12345678901234.5678"},
					"unfundedEffect":  &types.AttributeValueMemberS{Value: "reduces"},
				}},
				&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
					"transactionType": &types.AttributeValueMemberS{Value: "working_capital"},
					"amount":          &types.AttributeValueMemberN{Value: "0"},
				}},
			}}
		case *[]byte:
			*x = []byte("value of " + c.name)
			want[c.name] = &types.AttributeValueMemberB{Value: *x}
		case *time.Time:
			*x = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
			want[c.name] = &types.AttributeValueMemberS{Value: "2026-01-02T03:04:05.123456789Z"}
		default:
			t.Fatalf("field %s of type %s: teach this test about it", c.name, f.Type())
		}
	}
	return it, want
}

// TestItemCodecStoresEveryField encodes an Item whose every field is set
// and checks each attribute's DynamoDB type and value (the stored shape the
// table has always had), then decodes it back to the same Item. It also
// holds what the store copies between fund's types and Item, field by
// field, to every field: a position item, a document's header and its
// capital activity, each with every field set (fill), are made into Items,
// encoded, decoded and read back, and must come back equal; a field a copy
// leaves out comes back zero.
func TestItemCodecStoresEveryField(t *testing.T) {
	t.Run("an Item, attribute by attribute", func(t *testing.T) {
		it, want := filledItem(t)
		for _, name := range []string{"PK", "GSI2SK", "Type", "AsOf", "Version", "Materialized", "Amount", "Withholding", "Commitment", "CreatedAt",
			"Transactions", "PeriodStart", "BeginningNAV", "EndingNAV", "CarriedInterestPaid", "EndingUnfundedCommitment"} {
			if itemCodec.byName[name] == nil {
				t.Errorf("the codec table has no attribute %s", name)
			}
		}
		av, err := it.MarshalDynamoItem()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(av, want) {
			for name, a := range want {
				if !reflect.DeepEqual(av[name], a) {
					t.Errorf("attribute %s = %#v, want %#v", name, av[name], a)
				}
			}
			t.Fatalf("encoded %d attributes, want %d", len(av), len(want))
		}
		var back Item
		if err := back.UnmarshalDynamoItem(av); err != nil {
			t.Fatal(err)
		}
		// Numbers come back normalized (…16.9970 as …16.997), so the two
		// compare by value, as printed.
		if fmt.Sprintf("%+v", back) != fmt.Sprintf("%+v", it) {
			t.Errorf("decoded:\n%+v\nwant\n%+v", back, it)
		}
	})
	roundTrip := func(t *testing.T, it Item) Item {
		t.Helper()
		av, err := it.MarshalDynamoItem()
		if err != nil {
			t.Fatal(err)
		}
		var back Item
		if err := back.UnmarshalDynamoItem(av); err != nil {
			t.Fatal(err)
		}
		return back
	}
	same := func(t *testing.T, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			g, w := reflect.ValueOf(got), reflect.ValueOf(want)
			for _, f := range reflect.VisibleFields(g.Type()) {
				if !f.Anonymous && !reflect.DeepEqual(g.FieldByIndex(f.Index).Interface(), w.FieldByIndex(f.Index).Interface()) {
					t.Errorf("%s reads back as %+v, want %+v", f.Name, g.FieldByIndex(f.Index).Interface(), w.FieldByIndex(f.Index).Interface())
				}
			}
		}
	}
	t.Run("a position item", func(t *testing.T) {
		// A statement: the one kind whose read keeps every field (a
		// CapitalAccount is read back on statements only).
		var p fund.PositionItem
		fill(t, reflect.ValueOf(&p).Elem(), new(int))
		p.Kind = fund.Statement
		back := roundTrip(t, storedItem(&p))
		same(t, back.PositionItem(), p)
	})
	var d fund.Document
	fill(t, reflect.ValueOf(&d).Elem(), new(int))
	t.Run("a document's header", func(t *testing.T) {
		back := roundTrip(t, documentItem(&d, "pk", "sk"))
		same(t, back.Header(), d.Header())
	})
	t.Run("a capital activity", func(t *testing.T) {
		back := roundTrip(t, activityItem(&d, "pk", "sk"))
		same(t, back.Activity(), fund.ActivityRecord{CapitalActivity: *d.CapitalActivity, Version: d.Version})
	})
}

// fill sets every field of v (a settable struct), through embedded structs,
// pointers and the first element of lists, to a value that is not zero and
// that the store keeps exactly; *n numbers the values, so no two are equal.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch x := v.Addr().Interface().(type) {
	case *time.Time:
		*x = time.Date(2026, 1, 2, 3, 4, 5, *n, time.UTC)
		return
	case *fund.Date:
		*x = fund.MustDate(time.Date(2025, 1, *n, 0, 0, 0, 0, time.UTC).Format(time.DateOnly))
		return
	case *fund.Money:
		*x = fund.MustMoney(fmt.Sprintf("%d.%03d7", 1000+*n, *n)) // no trailing zero: numbers are stored normalized
		return
	case *fund.Status:
		*x = fund.Status(fmt.Sprintf("status %d", *n)) // lower case, the one casing
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("value %d", *n))
	case reflect.Int:
		v.SetInt(int64(1000 + *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), n)
			}
		}
	default:
		t.Fatalf("fill: teach this test about %s", v.Type())
	}
}

// TestItemCodecStoresEveryCapitalLine checks that each line of a capital
// account statement is an attribute of its own.
func TestItemCodecStoresEveryCapitalLine(t *testing.T) {
	for _, l := range fund.CapitalLines() {
		if c := itemCodec.byName[l.Field]; c == nil || len(c.index) != 2 {
			t.Errorf("capital account line %s is not stored as an attribute of its own", l.Field)
		}
	}
}

func TestItemCodecLeavesZeroFieldsOut(t *testing.T) {
	av, err := Item{PK: "p", SK: "s", Transactions: []fund.Transaction{}}.MarshalDynamoItem()
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is stored when zero (a statement's NAV, an empty list of
	// lines included), and an empty string never is.
	want := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "s"},
	}
	if !reflect.DeepEqual(av, want) {
		t.Fatalf("got %#v", av)
	}
}

func TestItemDecoderErrors(t *testing.T) {
	t.Run("an attribute of the wrong type is an error naming it", func(t *testing.T) {
		bad, _ := Item{PK: "p", SK: "s"}.MarshalDynamoItem()
		bad["Version"] = bad["PK"]
		var it Item
		if err := it.UnmarshalDynamoItem(bad); err == nil || !strings.Contains(err.Error(), "Version") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("money must be a number", func(t *testing.T) {
		var it Item
		err := it.UnmarshalDynamoItem(map[string]types.AttributeValue{"Amount": &types.AttributeValueMemberS{Value: "1"}})
		if err == nil || !strings.Contains(err.Error(), "Amount") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("decoding resets every field", func(t *testing.T) {
		it, _ := filledItem(t)
		small, _ := Item{PK: "p", SK: "s"}.MarshalDynamoItem()
		if err := it.UnmarshalDynamoItem(small); err != nil || !reflect.DeepEqual(it, Item{PK: "p", SK: "s"}) {
			t.Fatalf("got %+v, %v", it, err)
		}
	})
	t.Run("a transaction line must be a map", func(t *testing.T) {
		var it Item
		err := it.UnmarshalDynamoItem(map[string]types.AttributeValue{"Transactions": &types.AttributeValueMemberL{
			Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "investment"}}}})
		if err == nil || !strings.Contains(err.Error(), "Transactions") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a transaction line's amount must be a number", func(t *testing.T) {
		var it Item
		err := it.UnmarshalDynamoItem(map[string]types.AttributeValue{"Transactions": &types.AttributeValueMemberL{
			Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"amount": &types.AttributeValueMemberS{Value: "1"}}}}}})
		if err == nil || !strings.Contains(err.Error(), "amount") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("unknown attributes are ignored", func(t *testing.T) {
		var it Item
		if err := it.UnmarshalDynamoItem(map[string]types.AttributeValue{"Later": &types.AttributeValueMemberS{Value: "x"}}); err != nil {
			t.Fatal(err)
		}
	})
}
