package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/guregu/dynamo/v2"
)

// TestATakeOverDoesNotRecreateAReleasedFence puts the interleaving that left
// fences behind on purpose: a writer reads a claim that still names another
// holder, whose release deletes its fence before the takeover revokes it. An
// Update would create the fence again, revoked and orphaned; the takeover
// must find it gone and go on.
func TestATakeOverDoesNotRecreateAReleasedFence(t *testing.T) {
	ctx := context.Background()
	s := NewStore(NewDB(dynamotest.Shared().Config()), dynamotest.UniqueName(t, "takeover"))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	gone, live := ClaimFencePK("D1", "c1"), ClaimFencePK("D2", "c2")
	if err := s.table.Put(fenceItem{PK: live, SK: ClaimFenceSK, Type: TypeClaimFence, LeaseUntil: time.Now().Add(time.Hour).UnixMilli()}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	c := &claimItem{PositionID: "P1", Holders: []string{gone}}
	if err := s.takeOver(ctx, c, "me"); err != nil {
		t.Fatalf("a holder whose fence is gone blocked the takeover: %v", err)
	}
	var f fenceItem
	if err := s.table.Get(AttrPK, gone).Range(AttrSK, dynamo.Equal, ClaimFenceSK).Consistent(true).One(ctx, &f); !errors.Is(err, dynamo.ErrNotFound) {
		t.Fatalf("the takeover recreated the released fence: %+v, %v", f, err)
	}
	// A live holder within its lease still holds.
	c.Holders = []string{gone, live}
	if err := s.takeOver(ctx, c, "me"); !errors.Is(err, errClaimHeld) {
		t.Fatalf("a live holder's claim was taken over: %v", err)
	}
}
