package fund_test

import (
	"bytes"
	"crypto/rand"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
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
		if err := e.Store.FinishIdempotent(ctx, "scope", "big", owner, fund.Replay{Status: 201, Header: map[string]string{"ETag": `"1"`}, Body: body}, now, ttl); err != nil {
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
