package store

import (
	"bytes"
	"maps"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func contentOf(t *testing.T, av map[string]types.AttributeValue) []byte {
	t.Helper()
	b, ok := StoredItem{av}.AppendContent([]byte("prefix"))
	if !ok || !bytes.HasPrefix(b, []byte("prefix")) {
		t.Fatalf("content of %v: ok %v, %q", av, ok, b)
	}
	return b
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

// TestStoredItemContentIsEqualExactlyWhenTheAttributesAre: the content of
// an item whose every field is set is the same for a copy of its
// attributes (a map of another order), and differs when any one attribute
// differs, a member of a typed line included, or is missing; the parts are
// delimited, so moving bytes between a name and its value, or between
// two elements, is a difference too. An attribute of an unknown type is
// not keyed. The item decodes as the Item decoder decodes it, and its
// owner is the decoded fund and investor.
func TestStoredItemContentIsEqualExactlyWhenTheAttributesAre(t *testing.T) {
	_, av := filledItem(t)
	base := contentOf(t, av)
	if !bytes.Equal(contentOf(t, maps.Clone(av)), base) {
		t.Fatal("a copy of the attributes has another content")
	}
	for name, v := range av {
		other := maps.Clone(av)
		other[name] = changed(t, v)
		if bytes.Equal(contentOf(t, other), base) {
			t.Errorf("changing %s leaves the content as it was", name)
		}
		delete(other, name)
		if bytes.Equal(contentOf(t, other), base) {
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
	} {
		if bytes.Equal(contentOf(t, pair[0]), contentOf(t, pair[1])) {
			t.Errorf("%v and %v have one content", pair[0], pair[1])
		}
	}
	unknown := maps.Clone(av)
	unknown["Other"] = &types.UnknownUnionMember{Tag: "X"}
	if b, ok := (StoredItem{unknown}).AppendContent([]byte("prefix")); ok || string(b) != "prefix" {
		t.Errorf("an attribute of an unknown type: ok %v, appended %q", ok, b[len("prefix"):])
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
