package store

import (
	"bytes"
	"maps"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// seeds are the tests' seeds of HashContent.
var seeds = NewContentSeeds()

func contentOf(t *testing.T, av map[string]types.AttributeValue) ContentHash {
	t.Helper()
	h, ok := StoredItem{av}.HashContent(seeds)
	if !ok {
		t.Fatalf("content of %v: ok %v, %x", av, ok, h)
	}
	return h
}

// changed is av's value with one difference a decoder would see.
func changed(t *testing.T, av types.AttributeValue) types.AttributeValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value + "0"}
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value + "1"}
	case *types.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: append(bytes.Clone(v.Value), 0)}
	case *types.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: !v.Value}
	case *types.AttributeValueMemberL:
		// The first element's first member (a typed line's), changed.
		l := append([]types.AttributeValue(nil), v.Value...)
		m := maps.Clone(l[0].(*types.AttributeValueMemberM).Value)
		m["amount"] = changed(t, m["amount"])
		l[0] = &types.AttributeValueMemberM{Value: m}
		return &types.AttributeValueMemberL{Value: l}
	}
	t.Fatalf("teach this test to change a %T", av)
	return nil
}

// TestStoredItemContentIsEqualExactlyWhenTheAttributesAre: the hash of the
// content of an item whose every field is set is the same for a copy of
// its attributes (a map of another order), and for the same content under
// other seeds is another; it differs when any one attribute differs, a
// member of a typed line included, or is missing; the parts are delimited,
// so moving bytes between a name and its value, or between two elements,
// or a member between two maps, is a difference too. An attribute of an
// unknown type is not keyed. The item decodes as the Item decoder decodes it, and its
// owner is the decoded fund and investor.
func TestStoredItemContentIsEqualExactlyWhenTheAttributesAre(t *testing.T) {
	_, av := filledItem(t)
	base := contentOf(t, av)
	if contentOf(t, maps.Clone(av)) != base {
		t.Fatal("a copy of the attributes has another content")
	}
	if h, _ := (StoredItem{av}).HashContent(NewContentSeeds()); h == base {
		t.Fatal("other seeds hash the content alike")
	}
	for name, v := range av {
		other := maps.Clone(av)
		other[name] = changed(t, v)
		if contentOf(t, other) == base {
			t.Errorf("changing %s leaves the content as it was", name)
		}
		delete(other, name)
		if contentOf(t, other) == base {
			t.Errorf("leaving %s out leaves the content as it was", name)
		}
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	for _, pair := range [][2]map[string]types.AttributeValue{
		{{"ab": s("c")}, {"a": s("bc")}},
		{{"a": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("ab"), s("c")}}}, {"a": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), s("bc")}}}},
		{{"a": &types.AttributeValueMemberSS{Value: []string{"ab", "c"}}}, {"a": &types.AttributeValueMemberSS{Value: []string{"a", "bc"}}}},
		{{"a": s("1")}, {"a": &types.AttributeValueMemberN{Value: "1"}}},
		{{"a": s("")}, {}},
		{{"a": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"b": s("c")}}}, {"a": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"bc": s("")}}}},
		{{"a": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": s("1")}}, "b": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}},
			{"a": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}, "b": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": s("1")}}}},
	} {
		if contentOf(t, pair[0]) == contentOf(t, pair[1]) {
			t.Errorf("%v and %v have one content", pair[0], pair[1])
		}
	}
	unknown := maps.Clone(av)
	unknown["Other"] = &types.UnknownUnionMember{Tag: "X"}
	if h, ok := (StoredItem{unknown}).HashContent(seeds); ok {
		t.Errorf("an attribute of an unknown type: ok, hash %x", h)
	}

	var it Item
	if err := it.UnmarshalDynamoItem(av); err != nil {
		t.Fatal(err)
	}
	got, err := StoredItem{av}.PositionItem()
	if err != nil || !reflect.DeepEqual(got, it.PositionItem()) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, it.PositionItem())
	}
	if f, i := (StoredItem{av}).Owner(); f != it.FundID || i != it.InvestorID || f == "" || i == "" {
		t.Errorf("owner %q, %q; want %q, %q", f, i, it.FundID, it.InvestorID)
	}
}
