package fund

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guregu/dynamo/v2"
)

// reflectedItem is Item without its hand-written decoder, so guregu decodes
// it by reflection.
type reflectedItem Item

// TestItemDecoderMatchesReflection fills every field of an Item, stores it
// as guregu encodes it, and decodes it both by hand and by reflection: a
// field the hand-written decoder misses, or decodes differently, fails here.
func TestItemDecoderMatchesReflection(t *testing.T) {
	var want Item
	v := reflect.ValueOf(&want).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch x := f.Addr().Interface().(type) {
		case *string:
			*x = "value of " + name
		case *int:
			*x = 1000 + i
		case *bool:
			*x = true
		case *Date:
			*x = Date{t: time.Date(2025, 9, 1+i, 0, 0, 0, 0, time.UTC)}
		case **Money:
			m := MustMoney(fmt.Sprintf("%d.%04d", 123456789012345-i, 9999-i))
			*x = &m
		case *time.Time:
			*x = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
		default:
			t.Fatalf("field %s of type %s: teach this test (and UnmarshalDynamoItem) about it", name, f.Type())
		}
	}
	av, err := dynamo.MarshalItem(reflectedItem(want))
	if err != nil {
		t.Fatal(err)
	}
	if len(av) != v.NumField() {
		t.Fatalf("encoded %d attributes of %d fields", len(av), v.NumField())
	}

	var byHand Item
	if err := byHand.UnmarshalDynamoItem(av); err != nil {
		t.Fatal(err)
	}
	var byReflection reflectedItem
	if err := dynamo.UnmarshalItem(av, &byReflection); err != nil {
		t.Fatal(err)
	}
	// Numbers come back normalized (…16.9970 as …16.997), so the two compare
	// by value, as printed.
	if fmt.Sprintf("%+v", byHand) != fmt.Sprintf("%+v", want) {
		t.Errorf("decoded by hand:\n%+v\nwant\n%+v", byHand, want)
	}
	if !reflect.DeepEqual(Item(byReflection), byHand) {
		t.Errorf("by reflection:\n%+v\nby hand:\n%+v", byReflection, byHand)
	}

	t.Run("an attribute of the wrong type is an error naming it", func(t *testing.T) {
		bad, _ := dynamo.MarshalItem(reflectedItem{PK: "p", SK: "s"})
		bad["Version"] = bad["PK"]
		var it Item
		if err := it.UnmarshalDynamoItem(bad); err == nil || !strings.Contains(err.Error(), "Version") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("decoding resets every field", func(t *testing.T) {
		it := want
		small, _ := dynamo.MarshalItem(reflectedItem{PK: "p", SK: "s"})
		if err := it.UnmarshalDynamoItem(small); err != nil || !reflect.DeepEqual(it, Item{PK: "p", SK: "s"}) {
			t.Fatalf("got %+v, %v", it, err)
		}
	})
}
