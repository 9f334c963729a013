package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
)

var itemAnswerSeries = regexp.MustCompile(`(?m)^fundsvc_position_item_answers_total\{source="(memo|encoded)"\} (\S+)$`)

// itemAnswersOn reads the position read's answers to items on /metrics, by
// source.
func itemAnswersOn(t *testing.T, s *testServer) map[string]int {
	t.Helper()
	r := s.do(t, http.MethodGet, "/metrics", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics: status %d", r.Status)
	}
	out := map[string]int{}
	for _, m := range itemAnswerSeries.FindAllStringSubmatch(string(r.Body), -1) {
		n, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		out[m[1]] = int(n)
	}
	return out
}

// TestThePositionReadAnswersItsItemsAsTheyDecode: the position read across
// documents answers its items from a memo keyed by their stored content
// (itemanswers.go). On every form of the read (every item or one kind, the
// stated typed lines or all), twice, the answer's items are byte for byte
// json.Marshal of the items the store decodes, and the second read takes
// every item from the memo (/metrics counts them). Then a capital call's
// amount is changed in the table in place, its version kept (what no
// write of fundsvc does, and a memo keyed by the item's key and version
// would not see): every read answers the new amount. With the memo off
// (FUNDSVC_ITEM_MEMO_BYTES=0), a server answers the same items, none from
// a memo.
func TestThePositionReadAnswersItsItemsAsTheyDecode(t *testing.T) {
	s := newServer(t, true)
	noMemo := startAPI(t, s.Env, func(o *api.Options) { o.ItemMemoBytes = -1 })
	const pos = "POSITION_1"
	reads := []struct {
		path  string
		kind  fund.ItemKind
		lines wire.TypedLines
	}{
		{"/v1/positions/" + pos, "", wire.StatedLines},
		{"/v1/positions/" + pos + "?transactions=all", "", wire.AllLines},
		{"/v1/positions/" + pos + "?itemType=capital_call", fund.CapitalCall, wire.StatedLines},
		{"/v1/positions/" + pos + "/capital-calls?transactions=all", fund.CapitalCall, wire.AllLines},
	}
	readAll := func(when string) map[string][]byte {
		out := map[string][]byte{}
		for _, r := range reads {
			items, _, err := s.Env.Positions.Items(context.Background(), fund.Operator, pos, r.kind, 100, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(wire.ItemsOf(items, r.lines))
			if err != nil {
				t.Fatal(err)
			}
			before := itemAnswersOn(t, s)
			for range 2 {
				if got := itemsOf(t, s.do(t, http.MethodGet, r.path, nil)); !bytes.Equal(got, want) {
					t.Fatalf("%s %s: items\n%s\nwant, as decoded and encoded,\n%s", when, r.path, got, want)
				}
			}
			after := itemAnswersOn(t, s)
			memo, encoded := after["memo"]-before["memo"], after["encoded"]-before["encoded"]
			if memo < len(items) || memo+encoded != 2*len(items) || len(items) == 0 {
				t.Fatalf("%s %s: two reads of %d items answered %d from the memo, %d encoded", when, r.path, len(items), memo, encoded)
			}
			if got := itemsOf(t, noMemo.do(t, http.MethodGet, r.path, nil)); !bytes.Equal(got, want) {
				t.Fatalf("%s %s with no memo: items\n%s\nwant\n%s", when, r.path, got, want)
			}
			out[r.path] = want
		}
		return out
	}
	before := readAll("before the update")

	var call map[string]types.AttributeValue
	for _, av := range s.Env.Dump(t) {
		if gsi, _ := av[store.AttrGSI2PK].(*types.AttributeValueMemberS); gsi != nil && gsi.Value == store.PositionGSI2PK(pos) {
			if typ, _ := av["Type"].(*types.AttributeValueMemberS); typ != nil && typ.Value == fund.TypeCapitalCall {
				call = av
				break
			}
		}
	}
	if call == nil {
		t.Fatalf("the demo has no capital call of %s in the pivot", pos)
	}
	amount := fund.MustMoney(call["Amount"].(*types.AttributeValueMemberN).Value)
	call["Amount"] = &types.AttributeValueMemberN{Value: amount.Add(fund.MustMoney("0.01")).String()}
	s.Env.PutAttrs(t, call)

	after := readAll("after the update")
	for _, r := range reads {
		if bytes.Equal(before[r.path], after[r.path]) {
			t.Errorf("%s answers as it did before the capital call's amount changed", r.path)
		}
	}
	if n := itemAnswersOn(t, noMemo)["memo"]; n != 0 {
		t.Errorf("with no memo, %d items were answered from it", n)
	}
}

// itemsOf is the raw items array of a page answered 200.
func itemsOf(t *testing.T, r response) json.RawMessage {
	t.Helper()
	var page struct {
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(r.Body, &page); r.Status != http.StatusOK || err != nil {
		t.Fatalf("status %d, %v: %s", r.Status, err, r.Body)
	}
	return page.Items
}
