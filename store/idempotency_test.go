package store_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

func TestIdempotencyRecords(t *testing.T) {
	e := fundtest.New(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const lease, ttl = time.Minute, 24 * time.Hour

	t.Run("a response larger than an item is stored in chunks and replayed exactly", func(t *testing.T) {
		body := make([]byte, 1<<20) // random, so compression cannot shrink it under one item
		_, _ = rand.Read(body)
		owner, replay, err := e.Store.BeginIdempotent(ctx, "scope", "big", "h1", now, lease, ttl)
		if err != nil || replay != nil || owner == "" {
			t.Fatalf("claim: %q %v %v", owner, replay, err)
		}
		if err := e.Store.FinishIdempotent(ctx, "scope", "big", owner, store.Replay{Status: 201, Header: map[string]string{"ETag": `"1"`}, Body: body}, now, ttl); err != nil {
			t.Fatal(err)
		}
		_, replay, err = e.Store.BeginIdempotent(ctx, "scope", "big", "h1", now.Add(time.Second), lease, ttl)
		if err != nil || replay == nil || replay.Status != 201 || replay.Header["ETag"] != `"1"` || !bytes.Equal(replay.Body, body) {
			t.Fatalf("replay: %v (status %v)", err, replay)
		}
	})
	t.Run("a key held by a live request is a conflict, by another request a reuse", func(t *testing.T) {
		if _, _, err := e.Store.BeginIdempotent(ctx, "scope", "k", "h1", now, lease, ttl); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Store.BeginIdempotent(ctx, "scope", "k", "h1", now.Add(lease/2), lease, ttl); fund.ErrorCode(err) != fund.ECONFLICT {
			t.Fatalf("same request within the lease: %v", err)
		}
		if _, _, err := e.Store.BeginIdempotent(ctx, "scope", "k", "h2", now.Add(lease/2), lease, ttl); fund.ErrorCode(err) != fund.EIDEMPOTENCY {
			t.Fatalf("other request: %v", err)
		}
		if _, _, err := e.Store.BeginIdempotent(ctx, "other scope", "k", "h2", now, lease, ttl); err != nil {
			t.Fatalf("another principal's key: %v", err)
		}
	})
	t.Run("after its lease, a dead request's key is taken over by the same request only", func(t *testing.T) {
		later := now.Add(lease + time.Second)
		if _, _, err := e.Store.BeginIdempotent(ctx, "scope", "k", "h2", later, lease, ttl); fund.ErrorCode(err) != fund.EIDEMPOTENCY {
			t.Fatalf("other request after the lease: %v", err)
		}
		owner, replay, err := e.Store.BeginIdempotent(ctx, "scope", "k", "h1", later, lease, ttl)
		if err != nil || replay != nil || owner == "" {
			t.Fatalf("same request after the lease: %q %v %v", owner, replay, err)
		}
	})
	t.Run("an abandoned key can be claimed again at once; an expired record is forgotten", func(t *testing.T) {
		owner, _, err := e.Store.BeginIdempotent(ctx, "scope", "a", "h1", now, lease, ttl)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Store.AbandonIdempotent(ctx, "scope", "a", owner); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Store.BeginIdempotent(ctx, "scope", "a", "h2", now, lease, ttl); err != nil {
			t.Fatalf("after abandoning: %v", err)
		}
		if _, _, err := e.Store.BeginIdempotent(ctx, "scope", "a", "h3", now.Add(ttl+time.Second), lease, ttl); err != nil {
			t.Fatalf("after expiry: %v", err)
		}
	})
}

// TestAStaleOwnerNeverMixesItsAnswerIntoTheReplay: request A claims a key
// and stalls past its lease; a repeat B takes the key over and completes.
// Whenever A's answer then arrives (after B completed, with its chunks
// before B took over, or between B's chunks and B's record), the key
// replays exactly B's answer, whichever of the two has more chunks, and A's
// chunks are gone.
func TestAStaleOwnerNeverMixesItsAnswerIntoTheReplay(t *testing.T) {
	e := fundtest.New(t)
	raw := store.NewDB(dynamotest.Shared().Config()).Table(e.Table)
	hookA, hookB := &dynamotest.WriteHook{}, &dynamotest.WriteHook{}
	storeA, storeB := hookedStore(e, hookA), hookedStore(e, hookB)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const lease, ttl = time.Minute, 24 * time.Hour
	later := now.Add(lease + time.Second) // A's lease is over

	big := make([]byte, 800<<10) // random, so it stays three chunks once compressed
	_, _ = rand.Read(big)
	small := store.Replay{Status: 201, Header: map[string]string{"ETag": `"1"`, "Content-Type": "application/json"}, Body: []byte(`{"version":1}`)}
	large := store.Replay{Status: 200, Header: map[string]string{"ETag": `"3"`}, Body: big}

	type outcome struct {
		ownerB     string
		errA, errB error
	}
	orders := []struct {
		name string
		run  func(key string, a, b store.Replay) outcome
	}{
		{"A stores its answer after B completed", func(key string, a, b store.Replay) (o outcome) {
			ownerA, _, err := storeA.BeginIdempotent(ctx, "scope", key, "h", now, lease, ttl)
			if err != nil {
				return outcome{errA: err}
			}
			if o.ownerB, _, o.errB = storeB.BeginIdempotent(ctx, "scope", key, "h", later, lease, ttl); o.errB == nil {
				o.errB = storeB.FinishIdempotent(ctx, "scope", key, o.ownerB, b, later, ttl)
			}
			o.errA = storeA.FinishIdempotent(ctx, "scope", key, ownerA, a, later, ttl)
			return o
		}},
		{"A writes its chunks before B takes over, its record after B completed", func(key string, a, b store.Replay) (o outcome) {
			ownerA, _, err := storeA.BeginIdempotent(ctx, "scope", key, "h", now, lease, ttl)
			if err != nil {
				return outcome{errA: err}
			}
			hookA.OnWriteOp("UpdateItem", 1, func() {
				if o.ownerB, _, o.errB = storeB.BeginIdempotent(ctx, "scope", key, "h", later, lease, ttl); o.errB == nil {
					o.errB = storeB.FinishIdempotent(ctx, "scope", key, o.ownerB, b, later, ttl)
				}
			})
			o.errA = storeA.FinishIdempotent(ctx, "scope", key, ownerA, a, later, ttl)
			if !hookA.Fired() {
				o.errA = errors.New("A's record update never happened")
			}
			return o
		}},
		{"A writes its chunks and record between B's chunks and B's record", func(key string, a, b store.Replay) (o outcome) {
			ownerA, _, err := storeA.BeginIdempotent(ctx, "scope", key, "h", now, lease, ttl)
			if err != nil {
				return outcome{errA: err}
			}
			if o.ownerB, _, o.errB = storeB.BeginIdempotent(ctx, "scope", key, "h", later, lease, ttl); o.errB != nil {
				return o
			}
			hookB.OnWriteOp("UpdateItem", 1, func() { o.errA = storeA.FinishIdempotent(ctx, "scope", key, ownerA, a, later, ttl) })
			o.errB = storeB.FinishIdempotent(ctx, "scope", key, o.ownerB, b, later, ttl)
			if !hookB.Fired() {
				o.errB = errors.New("B's record update never happened")
			}
			return o
		}},
	}
	sizes := []struct {
		name    string
		a, b    store.Replay
		chunksB int // of B's answer, as stored
	}{
		{"the stale answer has more chunks", large, small, 1},
		{"the stale answer has fewer chunks", small, large, 3},
	}
	n := 0
	for _, order := range orders {
		for _, size := range sizes {
			t.Run(order.name+", "+size.name, func(t *testing.T) {
				n++
				key := fmt.Sprintf("takeover-%d", n)
				o := order.run(key, size.a, size.b)
				if o.errB != nil {
					t.Fatalf("the repeat B: %v", o.errB)
				}
				if fund.ErrorCode(o.errA) != fund.ECONFLICT {
					t.Fatalf("the stale owner A storing its answer: %v, want a conflict", o.errA)
				}
				for i := 0; i < 2; i++ {
					_, replay, err := e.Store.BeginIdempotent(ctx, "scope", key, "h", later.Add(time.Second), lease, ttl)
					if err != nil || replay == nil {
						t.Fatalf("replay: %v %v", replay, err)
					}
					if replay.Status != size.b.Status || !reflect.DeepEqual(replay.Header, size.b.Header) || !bytes.Equal(replay.Body, size.b.Body) {
						t.Fatalf("replay %d: status %d, header %v, %d bytes; want B's %d, %v, %d bytes",
							i, replay.Status, replay.Header, len(replay.Body), size.b.Status, size.b.Header, len(size.b.Body))
					}
				}
				var items []struct {
					SK        string
					BodyOwner string
				}
				if err := raw.Get(store.AttrPK, store.IdempotencyPK("scope", key)).Consistent(true).All(ctx, &items); err != nil {
					t.Fatal(err)
				}
				var sks []string
				for _, it := range items {
					sks = append(sks, it.SK)
					if it.SK == store.IdempotencyRecordSK && it.BodyOwner != o.ownerB {
						t.Errorf("the record names %q as the owner of its body, want B's %q", it.BodyOwner, o.ownerB)
					}
				}
				var want []string
				for i := range size.chunksB {
					want = append(want, store.IdempotencyBodySK(o.ownerB, i))
				}
				want = append(want, store.IdempotencyRecordSK)
				if !reflect.DeepEqual(sks, want) {
					t.Errorf("the key's items are %v, want B's chunks and the record %v (A's chunks deleted)", sks, want)
				}
			})
		}
	}
}

// hookedStore is a store on e's table through its own client, whose writes
// hook holds: another instance of the service.
func hookedStore(e *fundtest.Env, hook *dynamotest.WriteHook) *store.Store {
	return store.NewStore(store.NewDB(dynamotest.Shared().Config(dynamotest.WithAPIOptions(hook.APIOption()))), e.Table)
}
