package store_test

import (
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestADeliveryLogKeepsTheLastTwentyAttempts drives MaxLoggedAttempts: after
// 20 attempts the log holds all 20, in order; after the 21st it holds the
// last 20 (the first is dropped) while AttemptCount says 21.
func TestADeliveryLogKeepsTheLastTwentyAttempts(t *testing.T) {
	e := fundtest.New(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	ep := fund.WebhookEndpoint{ID: "wh_log", URL: "https://hooks.example.com/x", Funds: []string{"FUND_A"}, Enabled: true,
		SealedSecret: []byte("sealed"), CreatedBy: "test", CreatedAt: now, UpdatedAt: now}
	if err := e.Store.PutWebhookEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Store.EnqueueWebhookDelivery(ctx, fund.WebhookDelivery{EndpointID: ep.ID, EventID: "evt_1", EventType: "document.created", DocumentID: "DOC_1", Version: 1}, now); err != nil || !ok {
		t.Fatalf("enqueue: %v, %v", ok, err)
	}
	attempt := func(t *testing.T, i int) {
		t.Helper()
		at := now.Add(time.Duration(i) * time.Second)
		pending, err := e.Store.PendingWebhookDeliveries(ctx, ep.ID, 10)
		if err != nil || len(pending) != 1 {
			t.Fatalf("attempt %d: pending %v, %v", i, pending, err)
		}
		if ok, err := e.Store.ClaimWebhookDelivery(ctx, pending[0], "instance-1", at, at.Add(time.Minute)); err != nil || !ok {
			t.Fatalf("attempt %d: claim %v, %v", i, ok, err)
		}
		a := fund.WebhookAttempt{At: at, StatusCode: 500 + i, Instance: "instance-1"}
		if err := e.Store.FinishWebhookAttempt(ctx, pending[0], "instance-1", a, fund.DeliveryPending, at.Add(time.Second)); err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	logged := func(t *testing.T, wantCount, first int) {
		t.Helper()
		d, err := e.Store.WebhookDeliveryOf(ctx, ep.ID, "evt_1")
		if err != nil {
			t.Fatal(err)
		}
		if d.AttemptCount != wantCount || len(d.Attempts) != store.MaxLoggedAttempts {
			t.Fatalf("after %d attempts: AttemptCount %d, %d logged; want %d and %d", wantCount, d.AttemptCount, len(d.Attempts), wantCount, store.MaxLoggedAttempts)
		}
		for j, a := range d.Attempts {
			if a.StatusCode != 500+first+j {
				t.Errorf("after %d attempts: logged attempt %d has status %d, want %d (attempts %d to %d, in order)", wantCount, j, a.StatusCode, 500+first+j, first, wantCount)
			}
		}
	}

	if store.MaxLoggedAttempts != 20 {
		t.Fatalf("MaxLoggedAttempts = %d, the documented limit is 20", store.MaxLoggedAttempts)
	}
	for i := 1; i <= 20; i++ {
		attempt(t, i)
	}
	logged(t, 20, 1)
	attempt(t, 21)
	logged(t, 21, 2)
}
