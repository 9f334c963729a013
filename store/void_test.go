package store_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

func TestWriteAnswersWhatTheRestatementChanged(t *testing.T) {
	e := fundtest.New(t)
	v1 := doc("D1", "F1", 100, "POS_1", "POS_2", "POS_3", "POS_5")
	v1.Positions[1].Distribution = &fund.DistributionItem{Amount: fund.MustMoney("50.00")}
	w1, err := e.Store.Write(ctx, v1, nil)
	if err != nil || w1.Document.Version != 1 {
		t.Fatalf("create: %+v %v", w1, err)
	}
	if w1.Changes != nil {
		t.Fatalf("a first version reports changes: %+v", w1.Changes)
	}

	// POS_1 is sent again with the same amount spelled otherwise, POS_2
	// loses its distribution, POS_3 is dropped, POS_5's call changes, POS_4
	// is new.
	v2 := doc("D1", "F1", 0, "POS_1", "POS_2", "POS_4", "POS_5")
	v2.Positions[0].CapitalCall.Amount = fund.MustMoney("100")
	v2.Positions[1].CapitalCall.Amount = fund.MustMoney("101.00")
	v2.Positions[3].CapitalCall.Amount = fund.MustMoney("999.00")
	w2, err := e.Store.Write(ctx, v2, nil)
	if err != nil || w2.Document.Version != 2 || w2.Changes == nil {
		t.Fatalf("restate: %+v %v", w2, err)
	}
	c := w2.Changes
	want := func(what string, got fund.PositionChanges, added, removed, changed string) {
		t.Helper()
		if j := func(s []string) string { return strings.Join(s, ",") }; j(got.Added) != added || j(got.Removed) != removed || j(got.Changed) != changed {
			t.Errorf("%s: added %v removed %v changed %v, want added [%s] removed [%s] changed [%s]", what, got.Added, got.Removed, got.Changed, added, removed, changed)
		}
	}
	if c.Replaced != 1 {
		t.Errorf("compared with version %d, want 1", c.Replaced)
	}
	want("positions", c.Positions, "POS_4", "POS_3", "POS_2,POS_5")
	want("capital calls", c.Of(fund.CapitalCall), "POS_4", "POS_3", "POS_5")
	want("distributions", c.Of(fund.Distribution), "", "POS_2", "")
	want("unfunded commitments", c.Of(fund.UnfundedCommitment), "", "", "")
	want("statements", c.Of(fund.Statement), "", "", "")

	// The same body again is a new version that changed nothing.
	again, err := e.Store.Write(ctx, v2, nil)
	if err != nil || again.Document.Version != 3 || again.Changes == nil || len(again.Changes.Positions.Changed)+len(again.Changes.Positions.Added)+len(again.Changes.Positions.Removed) != 0 {
		t.Fatalf("restating the same content: %+v %v", again, err)
	}
}

func TestVoidLeavesEveryVersionReadableAndTheDocumentOutOfListingsAndFigures(t *testing.T) {
	e := fundtest.New(t)
	v1 := doc("D1", "F1", 100, "POS_1", "POS_2")
	if _, err := e.Store.Restate(ctx, v1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Restate(ctx, doc("D2", "F1", 300, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}

	if _, err := e.Store.Void(ctx, fund.Document{ID: "D1", CreatedBy: "admin"}, 2); fund.ErrorCode(err) != fund.EPRECONDITION {
		t.Fatalf("void at a version the document is not at: %v, want EPRECONDITION", err)
	}
	if _, err := e.Store.Void(ctx, fund.Document{ID: "NOPE"}, store.AnyVersion); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Fatalf("void of an unknown document: %v, want ENOTFOUND", err)
	}
	w, err := e.Store.Void(ctx, fund.Document{ID: "D1", CreatedBy: "admin"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := w.Document
	if d.Version != 2 || !d.Voided || len(d.Positions) != 0 || d.CapitalActivity != nil || d.FundID != "F1" || d.Title != v1.Title || d.CreatedBy != "admin" {
		t.Fatalf("the void's version: %+v", d)
	}
	if w.Changes == nil || strings.Join(w.Changes.Positions.Removed, ",") != "POS_1,POS_2" || strings.Join(w.Changes.Of(fund.CapitalCall).Removed, ",") != "POS_1,POS_2" {
		t.Fatalf("the void's changes: %+v", w.Changes)
	}

	// Voiding again writes nothing and answers the same, whatever If-Match says.
	again, err := e.Store.Void(ctx, fund.Document{ID: "D1", CreatedBy: "other"}, 1)
	if err != nil || again.Document.Version != 2 || again.Document.CommitID != d.CommitID || again.Document.CreatedBy != "admin" || again.Changes == nil || len(again.Changes.Positions.Removed) != 2 {
		t.Fatalf("voiding again: %+v %v", again, err)
	}
	// A restatement of a voided document is refused.
	if _, err := e.Store.Restate(ctx, v1, nil); fund.ErrorCode(err) != fund.ECONFLICT {
		t.Fatalf("restating a voided document: %v, want ECONFLICT", err)
	}

	snap, err := e.Store.As(fund.Operator).Overview(ctx, "D1")
	if err != nil || snap.Document.Version != 2 || !snap.Document.Voided || len(snap.Document.Positions) != 0 {
		t.Fatalf("overview of the voided document: %+v %v", snap.Document, err)
	}
	old, err := e.Store.As(fund.Operator).Version(ctx, "D1", 1)
	if err != nil || old.Voided || strings.Join(positionIDs(old.Positions), ",") != "POS_1,POS_2" {
		t.Fatalf("version 1 after the void: %+v %v", old, err)
	}
	voided, err := e.Store.As(fund.Operator).Version(ctx, "D1", 2)
	if err != nil || !voided.Voided {
		t.Fatalf("version 2: %+v %v", voided, err)
	}
	docs, _, err := e.Store.As(fund.Operator).FundDocuments(ctx, "F1", fund.Date{}, fund.Date{}, "", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range docs {
		ids = append(ids, h.ID)
	}
	if !slices.Equal(ids, []string{"D2"}) {
		t.Fatalf("the fund lists %v, want only D2", ids)
	}
	items, err := e.Store.AllPositionItems(ctx, "POS_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].DocumentID != "D2" {
		t.Fatalf("POS_1's items across documents: %+v, want only D2's", items)
	}
	if _, _, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "D1", "POS_1", ""); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Fatalf("a voided document's position: %v, want ENOTFOUND", err)
	}
}
