package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// An overview page groups its items by position and continues after the
// greatest position ID it holds, whatever order the items come in.
func TestOverviewPageGroupsItemsByPosition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids := []string{"P1", "P2", "P10", "A&B", "Zürich"}
	for range 500 {
		items := make([]fund.PositionItem, rng.IntN(13))
		for i := range items {
			items[i] = fund.PositionItem{Kind: fund.ItemKinds[rng.IntN(len(fund.ItemKinds))], PositionID: ids[rng.IntN(len(ids))],
				DocumentID: fmt.Sprint(i), Amount: fund.MustMoney(fmt.Sprint(i))}
			items[i].InvestorID = "I_" + items[i].PositionID
		}
		groups := wire.GroupsOf(items, wire.AllLines)
		want := ""
		for _, it := range items {
			want = max(want, it.PositionID)
			g, ok := groups[it.PositionID]
			if !ok || g.InvestorID != it.InvestorID {
				t.Fatalf("%s: group %+v", it.PositionID, g)
			}
			of := map[fund.ItemKind][]wire.PositionItem{fund.CapitalCall: g.CapitalCalls, fund.Distribution: g.Distributions, fund.UnfundedCommitment: g.UnfundedCommitments,
				fund.Statement: g.CapitalAccounts}[it.Kind]
			if !slices.ContainsFunc(of, func(w wire.PositionItem) bool { return w.DocumentID == it.DocumentID && w.Kind == it.Kind }) {
				t.Fatalf("item %s (%s of %s) is not in its group %+v", it.DocumentID, it.Kind, it.PositionID, g)
			}
		}
		n := 0
		for _, g := range groups {
			n += len(g.CapitalCalls) + len(g.Distributions) + len(g.UnfundedCommitments) + len(g.CapitalAccounts)
			if g.CapitalCalls == nil || g.Distributions == nil || g.UnfundedCommitments == nil || g.CapitalAccounts == nil {
				t.Fatalf("a group holds a null list: %+v", g)
			}
		}
		if n != len(items) || len(groups) > len(items) {
			t.Fatalf("%d items in %d groups, want %d", n, len(groups), len(items))
		}
		if got := lastPosition(items); got != want {
			t.Fatalf("lastPosition = %q, want %q", got, want)
		}
		// The positions are keyed in ID order on the wire.
		b, err := json.Marshal(wire.Overview{Positions: groups})
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Positions json.RawMessage `json:"positions"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(back.Positions))
		var keys []string
		dec.Token() // {
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.IsSorted(keys) {
			t.Fatalf("positions keyed %v, not in ID order", keys)
		}
	}
}
