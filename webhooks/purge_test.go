package webhooks_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/webhooks"
)

// endpointRig is a table, a fake clock and a deliverer on it, with no
// receiver: each test brings its own.
type endpointRig struct {
	env    *fundtest.Env
	clock  *fakeClock
	sealer *webhooks.Sealer
	d      *webhooks.Deliverer
}

func newEndpointRig(t *testing.T) *endpointRig {
	t.Helper()
	r := &endpointRig{env: fundtest.New(t), clock: &fakeClock{now: time.Now()}, sealer: newSealer(t)}
	r.env.Store.Now = r.clock.Now
	r.d = &webhooks.Deliverer{Queue: r.env.Store, Feed: r.env.Store, Sealer: r.sealer, Policy: webhooks.Policy{AllowLoopback: true},
		Instance: "instance-1", Now: r.clock.Now, Jitter: func() float64 { return 0 }, Timeout: 5 * time.Second, Lease: 30 * time.Second}
	return r
}

// add stores an endpoint of FUND_A delivering to url.
func (r *endpointRig) add(t *testing.T, id, url string) {
	t.Helper()
	created := r.clock.Now().Add(-time.Second).UTC()
	e := fund.WebhookEndpoint{ID: id, URL: url, Funds: []string{"FUND_A"}, Enabled: true, CreatedAt: created, UpdatedAt: created, CreatedBy: "test",
		SealedSecret: r.sealer.Seal(id, webhooks.NewSecret())}
	if err := r.env.Store.PutWebhookEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
}

func (r *endpointRig) write(t *testing.T, d fund.Document) {
	t.Helper()
	if _, err := r.env.Store.Write(ctx, d, nil); err != nil {
		t.Fatalf("write %s: %v", d.ID, err)
	}
}

// roundsUntil runs delivery rounds until done (20 s at most).
func (r *endpointRig) roundsUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := r.d.RunOnce(ctx); err != nil {
			t.Fatalf("delivery round: %v", err)
		}
		if done() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// attemptsOf is the attempts of the delivery of eventID to endpoint id.
func (r *endpointRig) attemptsOf(t *testing.T, id, eventID string) []fund.WebhookAttempt {
	t.Helper()
	d, err := r.env.Store.WebhookDeliveryOf(ctx, id, eventID)
	if fund.ErrorCode(err) == fund.ENOTFOUND {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return d.Attempts
}

// itemsOf lists the keys of every item of the table whose key names the
// endpoint id.
func (r *endpointRig) itemsOf(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	for _, item := range r.env.Dump(t) {
		pk, _ := item["PK"].(*types.AttributeValueMemberS)
		sk, _ := item["SK"].(*types.AttributeValueMemberS)
		if pk != nil && sk != nil && (strings.Contains(pk.Value, id) || strings.Contains(sk.Value, id)) {
			out = append(out, pk.Value+" / "+sk.Value)
		}
	}
	return out
}

// TestADeletedEndpointLeavesNothingInTheTable delivers to an endpoint
// (its delivery log), gives it a pending queue longer than a
// purge's page, deletes it, and purges: its partition is emptied at once;
// what a round that read the endpoint before its deletion writes later is
// emptied too, and once the grace has passed with the partition empty no
// item of the endpoint is left, its purge record included.
func TestADeletedEndpointLeavesNothingInTheTable(t *testing.T) {
	r := newEndpointRig(t)
	var status atomic.Int32
	status.Store(http.StatusNoContent)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) }))
	t.Cleanup(recv.Close)
	id := "wh_purged"
	r.add(t, id, recv.URL)
	r.write(t, call("DOC_P", "FUND_A", "100.00"))
	r.write(t, call("DOC_P", "FUND_A", "200.00"))
	r.roundsUntil(t, "two deliveries", func() bool { return len(r.attemptsOf(t, id, "evt_DOC_P_v2")) > 0 })
	status.Store(http.StatusInternalServerError)
	r.write(t, call("DOC_P", "FUND_A", "300.00"))
	r.roundsUntil(t, "a failed attempt", func() bool { return len(r.attemptsOf(t, id, "evt_DOC_P_v3")) > 0 })
	for i := range 230 {
		doc := fmt.Sprintf("DOC_Q%03d", i)
		if _, err := r.env.Store.EnqueueWebhookDelivery(ctx, fund.WebhookDelivery{EndpointID: id, EventID: "evt_" + doc + "_v1",
			EventType: "document.created", DocumentID: doc, Version: 1}, r.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	before := r.itemsOf(t, id)
	if len(before) < 1+3+1+2*230 { // endpoint, three deliveries, v3 pending, 230 deliveries and their pending entries
		t.Fatalf("before the deletion the table holds %d items of the endpoint, want its log and queue:\n%s", len(before), strings.Join(before, "\n"))
	}
	e, err := r.env.Store.WebhookEndpoint(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.env.Store.DeleteWebhookEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	p := &webhooks.Purger{Purges: r.env.Store, Now: r.clock.Now}
	if err := p.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if left := r.itemsOf(t, id); len(left) != 1 || left[0] != store.WebhooksPK+" / "+store.WebhookPurgeSK(id) {
		t.Fatalf("after a purge the table holds %v, want only the purge's record (its grace runs)", left)
	}
	// A round that read the endpoint before it was deleted queues nothing.
	if queued, err := r.env.Store.EnqueueWebhookDelivery(ctx, fund.WebhookDelivery{EndpointID: id, EventID: "evt_DOC_LATE_v1",
		EventType: "document.created", DocumentID: "DOC_LATE", Version: 1}, r.clock.Now()); err != nil || queued {
		t.Fatalf("a delivery was queued for the deleted endpoint (%v, %v)", queued, err)
	}
	r.clock.Add(webhooks.DefaultPurgeGrace)
	if err := p.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if left := r.itemsOf(t, id); len(left) != 0 {
		t.Fatalf("after the grace the table still holds items of the deleted endpoint: %v", left)
	}
	if _, err := r.env.Store.WebhookEndpoint(ctx, id); err == nil {
		t.Error("the deleted endpoint is still readable")
	}
}
