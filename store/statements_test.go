package store_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

func money(s string) *fund.Money {
	m := fund.MustMoney(s)
	return &m
}

// statement is a capital account statement whose NAV grows from begin by
// contributions of 250.00 and an unrealized loss of 50.25, with its
// commitment reconciliation (A.2).
func statement(begin string) *fund.CapitalAccount {
	b := fund.MustMoney(begin)
	return &fund.CapitalAccount{
		PeriodStart:                  fund.MustDate("2025-04-01"),
		BeginningNAV:                 b,
		Contributions:                money("250.00"),
		NetUnrealizedGainLoss:        money("-50.25"),
		EndingNAV:                    b.Add(fund.MustMoney("199.75")),
		CarriedInterestAccruedEarned: money("-12.5"),
		BeginningUnfundedCommitment:  money("900.00"),
		LessContributions:            money("-250.00"),
		EndingUnfundedCommitment:     money("650.00"),
	}
}

// statementDoc holds every shape a position item can take: POS_1 a full
// statement and a call split into typed lines, POS_2 a statement whose NAV
// is zero and holds no other line and a distribution with line items only,
// POS_3 a call with line items only and an unfunded commitment.
func statementDoc(begin string) fund.Document {
	return fund.Document{ID: "S1",
		Positions: []fund.Position{
			{ID: "POS_1", InvestorID: "INV_1", CapitalAccount: statement(begin),
				CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("250.00"), Transactions: []fund.Transaction{
					{Type: "investment", Amount: fund.MustMoney("200.00")},
					{Type: "management_fee_outside_commitment", Amount: fund.MustMoney("50.00")},
				}}},
			{ID: "POS_2", InvestorID: "INV_2", CapitalAccount: &fund.CapitalAccount{PeriodStart: fund.MustDate("2025-04-01")},
				Distribution: &fund.DistributionItem{Amount: fund.MustMoney("80.00"), DistributionDetails: fund.DistributionDetails{DistributionLines: fund.DistributionLines{
					ReturnOfCapital: money("60.00"), RealizedGain: money("20.00"), Recallable: money("10.00")}}}},
			{ID: "POS_3", InvestorID: "INV_3",
				CapitalCall:        &fund.CapitalCallItem{Amount: fund.MustMoney("30.00"), CallDetails: fund.CallDetails{CallLines: fund.CallLines{Investment: money("30.00")}}},
				UnfundedCommitment: &fund.UnfundedCommitmentItem{Amount: fund.MustMoney("70.00")}},
		}, DocumentFields:

		// asJSON prints what the API would: absent lines absent, present ones
		// (zero included) with their amounts.
		fund.DocumentFields{FundID: "F1", Kind: fund.KindCapitalAccountStatement, Title: "Q2 statement", AsOf: fund.MustDate("2025-06-30")},
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// statementsOf pages through a document's statements, limit at a time, and
// returns "position endingNav" for each.
func statementsOf(t *testing.T, s *store.Store, doc string, limit int) []string {
	t.Helper()
	var out []string
	var start store.PageKey
	for pages := 0; ; pages++ {
		items, next, err := s.DocumentStatements(ctx, doc, limit, start)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) > limit || pages > 10 {
			t.Fatalf("page %d holds %d statements, limit %d", pages, len(items), limit)
		}
		for _, it := range items {
			if it.Kind != fund.Statement || it.CapitalAccount == nil || it.DocumentID != doc {
				t.Fatalf("DocumentStatements returned %+v", it)
			}
			out = append(out, it.PositionID+" "+it.CapitalAccount.EndingNAV.String())
		}
		if start = next; start == nil {
			return out
		}
	}
}

// TestStatementsAndTypedLinesRoundTrip writes a document with statements,
// typed transaction lines and line items, and reads it back on every path:
// overview, version, one position, one item, the position pivot (GSI2, with
// the CapitalAccount type filter), the document's statements, the capital
// read and the export's stream.
func TestStatementsAndTypedLinesRoundTrip(t *testing.T) {
	if n := len(store.CommitHead{}.Items); n != len(fund.ItemKinds) {
		t.Fatalf("a commit head counts %d item kinds, there are %d", n, len(fund.ItemKinds))
	}
	e := fundtest.New(t)
	saved, err := e.Store.Restate(ctx, statementDoc("1000.50"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := asJSON(t, saved.Positions)
	if !strings.Contains(want, `"unfundedEffect":"reduces"`) || !strings.Contains(want, `"beginningNav":"0.00"`) {
		t.Fatalf("the document written is not the one this test means: %s", want)
	}

	t.Run("the overview reads the document as written", func(t *testing.T) {
		snap, err := e.Store.As(fund.Operator).Overview(ctx, "S1")
		if err != nil || snap.FromVersion {
			t.Fatalf("overview: from version %v, %v", snap.FromVersion, err)
		}
		if got := asJSON(t, snap.Document.Positions); got != want {
			t.Fatalf("overview positions:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("the version reads the document as written", func(t *testing.T) {
		v, err := e.Store.As(fund.Operator).Version(ctx, "S1", 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := asJSON(t, v.Positions); got != want {
			t.Fatalf("version 1 positions:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("a zero NAV reads back as zero, and absent lines as absent", func(t *testing.T) {
		_, items, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "S1", "POS_2", "")
		if err != nil || len(items) != 2 || items[0].Kind != fund.Statement {
			t.Fatalf("position POS_2: %+v %v", items, err)
		}
		c := items[0].CapitalAccount
		if c == nil || !c.BeginningNAV.Equal(fund.Money{}) || !c.EndingNAV.Equal(fund.Money{}) || c.PeriodStart.String() != "2025-04-01" {
			t.Fatalf("statement of POS_2: %+v", c)
		}
		for _, l := range fund.CapitalLines() {
			if m := l.Get(c); m != nil && l.Role != "beginning" && l.Role != "ending" {
				t.Errorf("line %s reads back as %s, want absent", l.Name, m)
			}
		}
		if items[1].CapitalAccount != nil || items[1].Transactions != nil || items[1].Recallable == nil {
			t.Fatalf("distribution of POS_2: %+v", items[1])
		}
	})
	t.Run("one item by its key", func(t *testing.T) {
		byKey := func(k fund.ItemKind) (fund.PositionItem, error) {
			_, items, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "S1", "POS_1", k)
			if err != nil || len(items) != 1 {
				return fund.PositionItem{}, fmt.Errorf("%d items, %w", len(items), err)
			}
			return items[0], nil
		}
		it, err := byKey(fund.Statement)
		if err != nil || asJSON(t, it.CapitalAccount) != asJSON(t, saved.Positions[0].CapitalAccount) || !it.Amount.Equal(it.CapitalAccount.EndingNAV) {
			t.Fatalf("statement of POS_1: %+v %v", it, err)
		}
		it, err = byKey(fund.CapitalCall)
		if err != nil || asJSON(t, it.Transactions) != asJSON(t, saved.Positions[0].CapitalCall.Transactions) || it.CapitalAccount != nil {
			t.Fatalf("call of POS_1: %+v %v", it, err)
		}
	})
	t.Run("the position pivot keeps the CapitalAccount type", func(t *testing.T) {
		kind, ok := fund.ParseItemKind("capital_account")
		if !ok {
			t.Fatal("capital_account is not an item type")
		}
		items, _, err := e.Store.PositionItems(ctx, "POS_1", kind, 10, nil)
		if err != nil || len(items) != 1 || items[0].Kind != fund.Statement ||
			asJSON(t, items[0].CapitalAccount) != asJSON(t, saved.Positions[0].CapitalAccount) {
			t.Fatalf("statements of POS_1: %+v %v", items, err)
		}
		all, err := e.Store.AllPositionItems(ctx, "POS_1")
		if err != nil || len(all) != 2 || all[0].Kind != fund.Statement || all[1].Kind != fund.CapitalCall ||
			asJSON(t, all[1].Transactions) != asJSON(t, saved.Positions[0].CapitalCall.Transactions) {
			t.Fatalf("items of POS_1: %+v %v", all, err)
		}
		items, _, err = e.Store.PositionItems(ctx, "POS_3", kind, 10, nil)
		if err != nil || len(items) != 0 {
			t.Fatalf("statements of POS_3, which has none: %+v %v", items, err)
		}
	})
	t.Run("the document's statements, by position, a page at a time", func(t *testing.T) {
		for _, limit := range []int{1, 2, 10} {
			if got, w := statementsOf(t, e.Store, "S1", limit), []string{"POS_1 1200.25", "POS_2 0.00"}; !slices.Equal(got, w) {
				t.Fatalf("limit %d: statements %v, want %v", limit, got, w)
			}
		}
		e.Counter.Reset()
		if _, _, err := e.Store.DocumentStatements(ctx, "S1", 10, nil); err != nil || e.Counter.Count("Query") != 1 || len(e.Counter.Ops()) != 1 {
			t.Fatalf("one page made %v (%v), want one Query", e.Counter.Ops(), err)
		}
		if got := statementsOf(t, e.Store, "UNKNOWN", 10); len(got) != 0 {
			t.Fatalf("an unknown document has statements %v", got)
		}
	})
	t.Run("the capital read returns calls, not statements", func(t *testing.T) {
		c, _, err := e.Store.As(fund.Operator).Capital(ctx, "S1", 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		var calls []string
		for _, it := range c.Calls {
			calls = append(calls, fmt.Sprint(it.Kind, " ", it.PositionID))
		}
		if w := []string{"CAPITAL_CALL POS_1", "CAPITAL_CALL POS_3"}; !slices.Equal(calls, w) {
			t.Fatalf("capital calls %v, want %v", calls, w)
		}
	})
	t.Run("the stream yields every item of the version with its lines", func(t *testing.T) {
		got := streamAll(t, e.Store, store.ScanOptions{Segments: 2, PageItems: 3})
		h := got.heads["S1"]
		if !h.Whole || !h.Complete(fund.Statement, 2) || h.Complete(fund.Statement, 1) || !h.Complete(fund.CapitalCall, 2) {
			t.Fatalf("head %+v does not vouch for exactly its 2 statements and 2 calls", h)
		}
		var items []fund.PositionItem
		for _, it := range got.items {
			if it.CommitID == saved.CommitID {
				items = append(items, it.PositionItem)
			}
		}
		if g := asJSON(t, fund.GroupPositions(items)); g != want {
			t.Fatalf("streamed positions:\n%s\nwant\n%s", g, want)
		}
		reread, err := e.Store.CommitItems(ctx, h.DocumentID, h.CommitID, fund.Statement)
		if err != nil || len(reread) != 2 || reread[0].CapitalAccount == nil {
			t.Fatalf("statements re-read from the version partition: %+v %v", reread, err)
		}
	})
}

// TestARestatementReplacesAndWithdrawsStatements restates a document with
// one position's statement changed and another's dropped: the latest view
// holds the new statement and not the dropped one, on every read, while
// the first version keeps both as they were.
func TestARestatementReplacesAndWithdrawsStatements(t *testing.T) {
	e := fundtest.New(t)
	v1, err := e.Store.Restate(ctx, statementDoc("1000.50"), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := statementDoc("2000.00")
	d.Positions[1].CapitalAccount = nil // POS_2 keeps its distribution
	v2, err := e.Store.Restate(ctx, d, nil)
	if err != nil || v2.Version != 2 {
		t.Fatalf("restate: %+v %v", v2, err)
	}

	snap, err := e.Store.As(fund.Operator).Overview(ctx, "S1")
	if err != nil || snap.FromVersion {
		t.Fatalf("overview: %v (from version %v)", err, snap.FromVersion)
	}
	if g, w := asJSON(t, snap.Document.Positions), asJSON(t, v2.Positions); g != w {
		t.Fatalf("latest view:\n%s\nwant\n%s", g, w)
	}
	if got := snap.Document.Positions[0].CapitalAccount; got == nil || got.EndingNAV.String() != "2199.75" {
		t.Fatalf("POS_1's statement in the latest view: %+v", got)
	}
	if got := statementsOf(t, e.Store, "S1", 1); !slices.Equal(got, []string{"POS_1 2199.75"}) {
		t.Fatalf("statements of the latest view %v, want POS_1's new one only", got)
	}
	if _, _, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "S1", "POS_2", fund.Statement); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Fatalf("the withdrawn statement: %v, want ENOTFOUND", err)
	}
	if items, _, err := e.Store.PositionItems(ctx, "POS_2", fund.Statement, 10, nil); err != nil || len(items) != 0 {
		t.Fatalf("the withdrawn statement across documents: %+v %v", items, err)
	}
	if _, items, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "S1", "POS_2", ""); err != nil || len(items) != 1 || items[0].Kind != fund.Distribution {
		t.Fatalf("POS_2 in the latest view: %+v %v", items, err)
	}

	old, err := e.Store.As(fund.Operator).Version(ctx, "S1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := asJSON(t, old.Positions), asJSON(t, v1.Positions); g != w {
		t.Fatalf("version 1:\n%s\nwant\n%s", g, w)
	}

	got := streamAll(t, e.Store, store.ScanOptions{Segments: 1})
	if h := got.heads["S1"]; !h.Whole || h.Version != 2 || !h.Complete(fund.Statement, 1) {
		t.Fatalf("head %+v does not vouch for version 2's one statement", h)
	}

	// A third version without the statement deletes its tombstone; one that
	// states it again brings it back.
	if _, err := e.Store.Restate(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	for _, it := range e.Dump(t) {
		pk, _ := it[store.AttrPK].(*types.AttributeValueMemberS)
		sk, _ := it[store.AttrSK].(*types.AttributeValueMemberS)
		if pk.Value == store.DocPK("S1") && sk.Value == store.PositionItemSK(fund.Statement, "POS_2") {
			t.Fatalf("the latest view still holds %v", it)
		}
	}
	if _, err := e.Store.Restate(ctx, statementDoc("5.00"), nil); err != nil {
		t.Fatal(err)
	}
	if got := statementsOf(t, e.Store, "S1", 10); !slices.Equal(got, []string{"POS_1 204.75", "POS_2 0.00"}) {
		t.Fatalf("statements after they were stated again: %v", got)
	}
}
