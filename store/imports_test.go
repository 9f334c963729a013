package store_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestWriteUnlessUnchanged holds the import's write (issue 26) to its doc
// comment: the content of the latest version is answered unchanged with
// nothing written, other content is a new version, a fund the viewer does
// not cover is absent before anything is written, a voided document is
// refused as a restatement of it is, and a head whose writer died before
// materializing is finished without a new version. "Nothing written" is
// counted twice: the write operations let through to DynamoDB
// (dynamotest.FaultInjector.Writes) and a dump of the whole table.
func TestWriteUnlessUnchanged(t *testing.T) {
	e := fundtest.New(t)
	all := e.Store.As(fund.Latest(fund.Viewer{AllFunds: true}))
	// nothingWritten runs write and fails t if it let a write operation
	// through or changed any item of the table.
	nothingWritten := func(t *testing.T, write func()) {
		t.Helper()
		before, writes := e.Dump(t), e.Faults.Writes()
		write()
		if n := e.Faults.Writes() - writes; n != 0 {
			t.Errorf("%d write operations, want none", n)
		}
		if after := e.Dump(t); !reflect.DeepEqual(before, after) {
			t.Errorf("the table changed: %d items before, %d after", len(before), len(after))
		}
	}
	versions := func(t *testing.T, id string) int {
		t.Helper()
		h, err := e.Store.As(fund.Operator).LatestDocument(ctx, id)
		if err != nil {
			t.Fatalf("latest %s: %v", id, err)
		}
		return h.Version
	}

	first := doc("D1", "F1", 100, "POS_1", "POS_2", "POS_3")
	created, unchanged, err := all.WriteUnlessUnchanged(ctx, first)
	if err != nil || unchanged || created.Document.Version != 1 {
		t.Fatalf("a new document: version %d, unchanged %v, %v; want version 1 written", created.Document.Version, unchanged, err)
	}

	t.Run("the same content, positions in another order, is unchanged: no version and no write", func(t *testing.T) {
		same := first
		same.Positions = slices.Clone(first.Positions)
		slices.Reverse(same.Positions)
		nothingWritten(t, func() {
			w, unchanged, err := all.WriteUnlessUnchanged(ctx, same)
			if err != nil || !unchanged {
				t.Fatalf("unchanged %v, %v; want unchanged", unchanged, err)
			}
			if w.Document.Version != 1 || w.Document.CommitID != created.Document.CommitID || !w.Document.CreatedAt.Equal(created.Document.CreatedAt) {
				t.Errorf("answered version %d commit %s, want the latest version 1 commit %s", w.Document.Version, w.Document.CommitID, created.Document.CommitID)
			}
			if ids := positionIDs(w.Document.Positions); !slices.Equal(ids, []string{"POS_1", "POS_2", "POS_3"}) {
				t.Errorf("answered positions %v, want the document's, sorted as stored", ids)
			}
		})
		if v := versions(t, "D1"); v != 1 {
			t.Errorf("D1 is at version %d, want 1", v)
		}
	})

	t.Run("a document of a fund the viewer does not cover is not found, whatever its content, and nothing is written", func(t *testing.T) {
		other := e.Store.As(fund.Latest(fund.Viewer{Funds: []string{"F2"}}))
		for _, d := range []fund.Document{first, doc("D1", "F1", 500, "POS_1", "POS_2", "POS_3")} {
			nothingWritten(t, func() {
				if _, _, err := other.WriteUnlessUnchanged(ctx, d); fund.ErrorCode(err) != fund.ENOTFOUND {
					t.Errorf("the admin of F2 writing F1's D1: %v, want ENOTFOUND", err)
				}
			})
		}
	})

	t.Run("changed content is written as a new version", func(t *testing.T) {
		w, unchanged, err := all.WriteUnlessUnchanged(ctx, doc("D1", "F1", 200, "POS_1", "POS_2", "POS_3"))
		if err != nil || unchanged || w.Document.Version != 2 {
			t.Fatalf("version %d, unchanged %v, %v; want version 2 written", w.Document.Version, unchanged, err)
		}
		if v := versions(t, "D1"); v != 2 {
			t.Errorf("D1 is at version %d, want 2", v)
		}
		// The first content again is a change from version 2: version 3.
		if w, unchanged, err := all.WriteUnlessUnchanged(ctx, first); err != nil || unchanged || w.Document.Version != 3 {
			t.Errorf("the first content again: version %d, unchanged %v, %v; want version 3", w.Document.Version, unchanged, err)
		}
	})

	t.Run("a voided document is refused as a conflict, as its restatement is, and nothing is written", func(t *testing.T) {
		d := doc("D2", "F1", 300, "POS_20")
		if _, err := e.Store.Restate(ctx, d, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.Void(ctx, fund.Document{ID: "D2"}, store.AnyVersion); err != nil {
			t.Fatal(err)
		}
		nothingWritten(t, func() {
			if _, _, err := all.WriteUnlessUnchanged(ctx, d); fund.ErrorCode(err) != fund.ECONFLICT {
				t.Errorf("the voided document's content again: %v, want ECONFLICT", err)
			}
		})
		if v := versions(t, "D2"); v != 2 {
			t.Errorf("D2 is at version %d, want its void, 2", v)
		}
	})

	t.Run("a head whose writer died before materializing is finished without a new version", func(t *testing.T) {
		if _, err := e.Store.Restate(ctx, doc("D3", "F1", 400, "POS_30"), nil); err != nil {
			t.Fatal(err)
		}
		restated := doc("D3", "F1", 900, "POS_30", "POS_31")
		// Kill the restatement after ever more writes until its commit
		// flipped and the latest view is left mid-rewrite.
		var snap store.Snapshot
		for k := 0; k < 30 && !snap.FromVersion; k++ {
			e.Faults.FailAfterWrites(k)
			_, err := e.Store.Restate(ctx, restated, nil)
			e.Faults.Disarm()
			if err == nil {
				t.Fatalf("failing after %d writes did not fail the write", k)
			}
			if snap, err = e.Store.As(fund.Operator).Overview(ctx, "D3"); err != nil {
				t.Fatal(err)
			}
		}
		if !snap.FromVersion || snap.Document.Version != 2 {
			t.Fatalf("could not leave the latest view mid-rewrite (version %d)", snap.Document.Version)
		}
		w, unchanged, err := all.WriteUnlessUnchanged(ctx, restated)
		if err != nil || w.Document.Version != 2 || w.Document.CommitID != snap.Document.CommitID {
			t.Fatalf("version %d commit %s, %v; want the dead writer's version 2, commit %s", w.Document.Version, w.Document.CommitID, err, snap.Document.CommitID)
		}
		if unchanged {
			t.Errorf("answered unchanged, but the head was not materialized: the write finishes it")
		}
		snap, err = e.Store.As(fund.Operator).Overview(ctx, "D3")
		if err != nil || snap.FromVersion || snap.Document.Version != 2 {
			t.Fatalf("after: version %d, read from the version partition %v, %v; want version 2 from the latest view", snap.Document.Version, snap.FromVersion, err)
		}
		// Now materialized, the same content is unchanged.
		nothingWritten(t, func() {
			if w, unchanged, err := all.WriteUnlessUnchanged(ctx, restated); err != nil || !unchanged || w.Document.Version != 2 {
				t.Errorf("once finished: version %d, unchanged %v, %v; want unchanged at 2", w.Document.Version, unchanged, err)
			}
		})
	})
}
