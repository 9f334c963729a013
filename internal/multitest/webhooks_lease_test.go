package multitest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/harness"
	"github.com/fundsvc/fundsvc/internal/webhooktest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
)

// TestAnAttemptHeldPastItsLeaseIsNotSentAfterAnotherInstanceDeliveredTheNextVersion
// forces, between two processes, the interleaving the lease check before
// an attempt guards against. Instance 0 claims version 1 of a document
// for an endpoint and is then held, at the proxy in front of its DynamoDB
// Local, at the last request its attempt makes before that check (which
// compares the lease's end with the clock and reads nothing): the read of
// the event the body is built from. Instance 1's claims wait at its proxy
// until then, and instance 0's later claims from then until it is let go,
// so what is delivered meanwhile is instance 1's doing. The lease (2 s)
// passes; instance 1 delivers version 1 and then version 2. Instance 0 is
// let go: its lease has ended, so it sends nothing and gives the delivery
// up. The receiver gets v1 then v2, every attempt instance 1's, and never
// v1 after v2.
func TestAnAttemptHeldPastItsLeaseIsNotSentAfterAnotherInstanceDeliveredTheNextVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const fundID, docID = "FUND_WL", "WL_DOC"
	recv := webhooktest.Start(t)

	var hold Hold
	held := hold.Arm(func(instance int, op string, body []byte) bool {
		return instance == 0 && op == "GetItem" &&
			bytes.Contains(body, []byte(`"`+store.EventPK(docID)+`"`)) && bytes.Contains(body, []byte(`"`+store.EventSK(1)+`"`))
	})
	resumed := make(chan struct{}) // instance 0 let go
	ended := make(chan struct{})   // the test is over: nothing waits any more
	waitFor := func(c <-chan struct{}) {
		select {
		case <-c:
		case <-ended:
		}
	}
	intercept := func(instance int, op string, body []byte) {
		// A claim is the one UpdateItem that names the lease's owner (in
		// its update expression; the store's other writes of it are
		// transactions).
		if op == "UpdateItem" && bytes.Contains(body, []byte("LeaseOwner")) {
			switch instance {
			case 1:
				waitFor(held)
			case 0:
				select {
				case <-held:
					waitFor(resumed)
				default:
				}
			}
		}
		hold.Intercept(instance, op, body)
	}
	key := make([]byte, 32)
	copy(key, harness.RandomHex(16))
	c := Start(t, Options{Instances: 2, Intercept: intercept, Env: map[string]string{
		"FUNDSVC_WEBHOOK_SECRET_KEY":     base64.StdEncoding.EncodeToString(key),
		"FUNDSVC_WEBHOOK_ALLOW_LOOPBACK": "true",
		"FUNDSVC_WEBHOOK_RETRY_SCHEDULE": "0s,100ms,200ms",
		"FUNDSVC_WEBHOOK_POLL":           "100ms",
		"FUNDSVC_WEBHOOK_TIMEOUT":        "1s",
		"FUNDSVC_WEBHOOK_LEASE":          "2s",
	}})
	t.Cleanup(func() { close(ended); hold.Release() }) // before the proxies close, which wait for what they hold
	admin := c.Client(c.AdminToken(t, fundID))

	resp, err := admin.On(1).Do(ctx, http.MethodPost, "/v1/webhooks", wire.WebhookRequest{URL: recv.URL, Funds: []string{fundID}}, nil)
	if err != nil || resp.Status != http.StatusCreated {
		t.Fatalf("create the endpoint: %v %s", err, resp)
	}
	var w wire.Webhook
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		t.Fatal(err)
	}
	recv.Set(t, []string{w.Secret}, "ok", 0)
	write := func(instance, v int) {
		t.Helper()
		d := document(fundID, fmt.Sprintf("v%d", v), "2025-06-30", fund.Position{ID: "WL_P", InvestorID: "WL_INV", CapitalCall: callOf(100 * v)})
		if resp, err := admin.On(instance).PutDocument(ctx, docID, d); err != nil || !acknowledged(resp.Status) || resp.Version() != v {
			t.Fatalf("PUT v%d on instance %d: %v %s", v, instance, err, resp)
		}
	}

	start := time.Now()
	write(0, 1) // instance 0's commit wakes its deliverer
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("instance 0 did not claim v1 and read its event within 20s")
	}
	claimed, err := c.Store.PendingWebhookDeliveries(ctx, w.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 1 || claimed[0].EventID != fund.EventID(docID, 1) || !strings.Contains(claimed[0].LeaseOwner, fmt.Sprintf("/%d/", c.Pid(0))) {
		t.Fatalf("while instance 0 is held, the queue holds %+v: want v1, leased by instance 0 (pid %d)", claimed, c.Pid(0))
	}
	write(1, 2)

	// Instance 1 delivers both once the lease has passed.
	v1, v2 := fund.EventID(docID, 1), fund.EventID(docID, 2)
	deadline := time.Now().Add(20 * time.Second)
	for got := ids(recv.Log(t)); !slices.Contains(got, v2+"(ok)"); got = ids(recv.Log(t)) {
		if time.Now().After(deadline) {
			t.Fatalf("instance 1 did not deliver v1 and v2 within 20s of instance 0's hold: the receiver got %v", got)
		}
		<-time.After(20 * time.Millisecond)
	}
	t.Logf("instance 1 delivered both %s after v1 was written", time.Since(start).Round(time.Millisecond))

	// Instance 0 goes on, and says what it did with its attempt.
	close(resumed)
	hold.Release()
	outcome := ""
	deadline = time.Now().Add(20 * time.Second)
	for outcome == "" {
		out := c.instances[0].out.String()
		for _, s := range []string{"webhook attempt not sent", "webhook delivery taken over by another instance"} {
			if strings.Contains(out, s) {
				outcome = s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance 0 logged no outcome of its held attempt within 20s of its release")
		}
		<-time.After(20 * time.Millisecond)
	}
	t.Logf("instance 0, let go: %q, %s after v1 was written", outcome, time.Since(start).Round(time.Millisecond))

	// Instance 1 may have tried a version more than once (an answer slower
	// than the webhook timeout), but v1 never reached the receiver after v2.
	got := ids(recv.Log(t))
	firstV2 := slices.Index(got, v2+"(ok)")
	if i := slices.Index(got, v1+"(ok)"); i < 0 || i > firstV2 || slices.Contains(got[firstV2:], v1+"(ok)") {
		t.Fatalf("the receiver got %v: want v1, then v2, and never v1 after v2", got)
	}
	for _, ev := range []string{v1, v2} {
		d, err := c.Store.WebhookDeliveryOf(ctx, w.ID, ev)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != fund.DeliveryDelivered {
			t.Errorf("%s: %s, want delivered", ev, d.Status)
		}
		for _, a := range d.Attempts {
			if !strings.HasSuffix(a.Instance, fmt.Sprintf("/%d", c.Pid(1))) {
				t.Errorf("%s: an attempt by %s, want every attempt by instance 1 (pid %d): %+v", ev, a.Instance, c.Pid(1), d.Attempts)
			}
		}
	}
	t.Logf("the receiver got %v", got)
}

// ids are the webhook-ids of a receiver's log, each with how it was
// answered.
func ids(log []webhooktest.Delivery) []string {
	out := make([]string, 0, len(log))
	for _, d := range log {
		out = append(out, d.ID+"("+d.Mode+")")
	}
	return out
}
