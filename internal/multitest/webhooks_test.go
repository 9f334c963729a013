package multitest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/harness"
	"github.com/fundsvc/fundsvc/internal/webhooktest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
)

const webhookFund = "FUND_W"

// TestWebhooksAreDeliveredAtLeastOnceAcrossInstances runs three instances
// with writers on each, and two endpoints (every event type; restatements
// only) at a receiver that verifies every request with the Standard
// Webhooks reference library. The receiver is down while the first
// versions are written, then answers 500s, then answers slowly while one
// instance is killed with SIGKILL in the middle of deliveries, then
// answers at once. Afterwards: every committed version reached every
// endpoint it matches at least once, every request verified with its
// endpoint's secret, every repeat of an event carried its webhook-id, each
// document's versions were first delivered in version order, a refused
// write produced no event, and the feed holds exactly the committed
// versions.
func TestWebhooksAreDeliveredAtLeastOnceAcrossInstances(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	recv := webhooktest.Start(t)
	recv.Set(t, nil, "down", 0)
	key := make([]byte, 32)
	copy(key, harness.RandomHex(16))
	c := Start(t, Options{Instances: 3, Env: map[string]string{
		"FUNDSVC_WEBHOOK_SECRET_KEY":     base64.StdEncoding.EncodeToString(key),
		"FUNDSVC_WEBHOOK_ALLOW_LOOPBACK": "true",
		"FUNDSVC_WEBHOOK_RETRY_SCHEDULE": "0s,100ms,200ms,400ms" + strings.Repeat(",500ms", 200),
		"FUNDSVC_WEBHOOK_POLL":           "100ms",
		"FUNDSVC_WEBHOOK_TIMEOUT":        "2s",
		"FUNDSVC_WEBHOOK_LEASE":          "3s",
	}})
	admin := c.Client(c.AdminToken(t, webhookFund))

	// Two endpoints, each with its own secret, told apart by path.
	var secrets, endpoints []string
	for i, types := range [][]string{nil, {"document.restated"}} {
		resp, err := admin.Do(ctx, http.MethodPost, "/v1/webhooks",
			wire.WebhookRequest{URL: fmt.Sprintf("%s%d", recv.URL, i), EventTypes: types, Funds: []string{webhookFund}}, nil)
		if err != nil || resp.Status != http.StatusCreated {
			t.Fatalf("create endpoint %d: %v %s", i, err, resp)
		}
		var w wire.Webhook
		if err := json.Unmarshal(resp.Body, &w); err != nil || !strings.HasPrefix(w.Secret, "whsec_") {
			t.Fatalf("endpoint %d: %v %s", i, err, resp.Body)
		}
		secrets, endpoints = append(secrets, w.Secret), append(endpoints, w.ID)
	}
	recv.Set(t, secrets, "down", 0)

	var mu sync.Mutex
	committed := map[string]int{} // document → its latest acknowledged version
	var p problems
	write := func(doc string, instance, version int) {
		d := document(webhookFund, fmt.Sprintf("%s v%d", doc, version), "2025-06-30",
			fund.Position{ID: "WP_" + doc, InvestorID: "WINV_1", CapitalCall: callOf(100 + version)})
		resp, err := admin.On(instance).PutDocument(ctx, doc, d)
		if err != nil || !acknowledged(resp.Status) {
			p.add("write refused", "PUT %s on %d: %v %s", doc, instance, err, resp)
			return
		}
		mu.Lock()
		committed[doc] = max(committed[doc], resp.Version())
		mu.Unlock()
	}
	// writers writes versions from..to of six documents, two on each live
	// instance (of the first n).
	writers := func(n, from, to int) {
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for v := from; v <= to; v++ {
					write(fmt.Sprintf("WD%d", i), i%n, v)
				}
			}()
		}
		wg.Wait()
	}
	receivedAtLeast := func(n int, mode string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := 0
			for _, d := range recv.Log(t) {
				if d.Mode == mode {
					got++
				}
			}
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d requests answered %s within 30s", n, mode)
			}
			<-time.After(50 * time.Millisecond)
		}
	}

	writers(3, 1, 2)           // the receiver is down
	receivedAtLeast(6, "down") // attempts failed without an answer
	// A refused write: If-Match names a version that is not the current one.
	refused, err := admin.Do(ctx, http.MethodPut, "/v1/documents/WD0", RequestOf(document(webhookFund, "refused", "2025-06-30",
		fund.Position{ID: "WP_WD0", InvestorID: "WINV_1", CapitalCall: callOf(999)})), http.Header{"If-Match": {`"9"`}})
	if err != nil || refused.Status != http.StatusPreconditionFailed {
		t.Fatalf("the refused write: %v %s", err, refused)
	}
	recv.Set(t, secrets, "fail", 0)
	writers(3, 3, 3)
	receivedAtLeast(10, "fail")
	// Slow answers, so that deliveries are in flight when instance 2 dies.
	recv.SetDelay(t, secrets, "ok", 0, 700*time.Millisecond)
	// Kill instance 2 while it holds a delivery's lease, before the
	// receiver's answer can reach it.
	victim := leasedBy(ctx, t, c, endpoints, c.Pid(2))
	harness.SignalGroup(c.Pid(2), true)
	writers(2, 4, 5) // on the two live instances
	recv.Set(t, secrets, "ok", 0)

	// Every committed version reaches every endpoint it matches.
	type key2 struct{ endpoint, event string }
	want := map[key2]bool{}
	mu.Lock()
	for doc, last := range committed {
		for v := 1; v <= last; v++ {
			want[key2{"0", fund.EventID(doc, v)}] = true
			if v > 1 {
				want[key2{"1", fund.EventID(doc, v)}] = true
			}
		}
	}
	mu.Unlock()
	var log []webhooktest.Delivery
	deadline := time.Now().Add(60 * time.Second)
	for {
		log = recv.Log(t)
		missing := 0
		ok := map[key2]bool{}
		for _, d := range log {
			if d.Mode == "ok" {
				ok[key2{d.Path[len(d.Path)-1:], d.ID}] = true
			}
		}
		for k := range want {
			if !ok[k] {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s %d of %d deliveries have not arrived", missing, len(want))
		}
		<-time.After(100 * time.Millisecond)
	}

	// Every request verified with its endpoint's secret, carried its
	// event's ID, and matched its endpoint.
	firstOK := map[key2]int{} // → index in the log
	repeats := 0
	for i, d := range log {
		ep := d.Path[len(d.Path)-1:]
		var body struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				DocumentID string `json:"documentId"`
				Version    int    `json:"version"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(d.Body), &body); err != nil {
			p.add("body not JSON", "%s: %v", d.ID, err)
			continue
		}
		if len(d.VerifiedWith) != 1 || fmt.Sprint(d.VerifiedWith[0]) != ep {
			p.add("not verified with its endpoint's secret", "endpoint %s %s: verified with %v: %v", ep, d.ID, d.VerifiedWith, d.Errors)
		}
		if body.ID != d.ID || d.ID != fund.EventID(body.Data.DocumentID, body.Data.Version) {
			p.add("webhook-id is not the event's", "header %s, body %s", d.ID, body.ID)
		}
		if ep == "1" && body.Type != "document.restated" {
			p.add("a type the endpoint does not subscribe to", "%s %s", d.ID, body.Type)
		}
		if body.Data.DocumentID == "" || strings.Contains(d.Body, "refused") {
			p.add("an event of a refused write", "%s", d.Body)
		}
		k := key2{ep, d.ID}
		if _, seen := firstOK[k]; seen {
			repeats++
		} else if d.Mode == "ok" {
			firstOK[k] = i
		}
	}
	// Each document's versions were first delivered in version order.
	for k, i := range firstOK {
		doc, v, _ := fund.ParseEventID(k.event)
		prev := key2{k.endpoint, fund.EventID(doc, v-1)}
		if j, ok := firstOK[prev]; ok && j > i {
			p.add("a version delivered before the one it follows", "endpoint %s: %s before %s", k.endpoint, k.event, prev.event)
		}
	}
	for k := range firstOK {
		if !want[k] {
			p.add("a delivery of no committed version", "endpoint %s: %s", k.endpoint, k.event)
		}
	}

	// The feed holds exactly the committed versions.
	page, err := c.Store.EventsAfter(ctx, fund.EventCursor{}, store.MaxEventPage, fund.EventFilter{Until: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	feed := map[string]bool{}
	for _, ev := range page.Events {
		feed[ev.ID] = true
	}
	for doc, last := range committed {
		for v := 1; v <= last+1; v++ {
			if got := feed[fund.EventID(doc, v)]; got != (v <= last) {
				p.add("the feed differs from the committed versions", "%s v%d: in the feed %v, committed up to v%d", doc, v, got, last)
			}
		}
	}
	// The killed instance's delivery was taken over after its lease and
	// completed by another instance.
	taken, err := c.Store.WebhookDeliveryOf(ctx, victim.EndpointID, victim.EventID)
	if err != nil {
		t.Fatal(err)
	}
	if last := taken.Attempts[len(taken.Attempts)-1]; taken.Status != fund.DeliveryDelivered || strings.HasSuffix(last.Instance, fmt.Sprintf("/%d", c.Pid(2))) {
		t.Errorf("the delivery instance 2 held when it was killed: %s, last attempt %+v: want delivered by another instance", taken.Status, last)
	}

	// Failures and deliveries are counted by the live instances: which of
	// them made a failed attempt is up to their leases, so the metrics of
	// both are read (instance 2 was killed).
	var metrics []byte
	for _, i := range []int{0, 1} {
		req, err := http.NewRequest(http.MethodGet, c.BaseURL(i)+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+c.AdminToken(t, "*")) // /metrics is for admins of every fund
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		metrics = append(metrics, body...)
	}
	for _, m := range []string{`fundsvc_webhook_attempts_total{outcome="delivered"}`, `fundsvc_webhook_attempts_total{outcome="failed"}`, "fundsvc_webhook_delivery_lag_seconds_count"} {
		if !strings.Contains(string(metrics), m) {
			p.add("metric missing", "%s", m)
		}
	}
	p.report(t, "webhook delivery across instances")
	t.Logf("%d requests for %d deliveries (%d repeats), %d documents, %d events in the feed", len(log), len(want), repeats, len(committed), len(feed))
}

// leasedBy waits (15 s at most) until the instance of process pid holds the
// lease of a pending delivery of one of endpoints, and returns it.
func leasedBy(ctx context.Context, t *testing.T, c *Cluster, endpoints []string, pid int) fund.WebhookPending {
	t.Helper()
	mark := fmt.Sprintf("/%d/", pid)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, ep := range endpoints {
			pending, err := c.Store.PendingWebhookDeliveries(ctx, ep, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pending {
				if strings.Contains(p.LeaseOwner, mark) && p.LeaseUntil > time.Now().UnixMilli() {
					return p
				}
			}
		}
		<-time.After(5 * time.Millisecond)
	}
	t.Fatalf("instance %d held no delivery's lease within 15s", pid)
	return fund.WebhookPending{}
}
