package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/webhooktest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/webhooks"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Delivery on DynamoDB Local to a receiver that verifies every request with
// the Standard Webhooks reference library (npm standardwebhooks). The
// deliverers' clock is injected: retries are tested by moving it, never by
// waiting for the schedule.

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

var ctx = context.Background()

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

type rig struct {
	env      *fundtest.Env
	clock    *fakeClock
	recv     *webhooktest.Receiver
	sealer   *webhooks.Sealer
	endpoint fund.WebhookEndpoint
	secret   string
	d        *webhooks.Deliverer
}

func newSealer(t *testing.T) *webhooks.Sealer {
	s, err := webhooks.NewSealer([]byte("deliver-test-sealing-key-32bytes"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newRig is an endpoint of FUND_A on a fresh table, delivering to a fresh
// receiver that verifies with its secret, and a deliverer on a fake clock
// with no jitter; change adjusts the endpoint before it is stored.
func newRig(t *testing.T, change func(*rig, *fund.WebhookEndpoint)) *rig {
	t.Helper()
	r := &rig{env: fundtest.New(t), clock: &fakeClock{now: time.Now()}, sealer: newSealer(t), secret: webhooks.NewSecret()}
	r.env.Store.Now = r.clock.Now // commits are stamped by the same clock
	r.recv = webhooktest.Start(t, r.secret)
	created := r.clock.Now().Add(-time.Second).UTC()
	r.endpoint = fund.WebhookEndpoint{ID: "wh_test", URL: r.recv.URL, Funds: []string{"FUND_A"}, Enabled: true,
		CreatedAt: created, UpdatedAt: created, CreatedBy: "test"}
	r.endpoint.SealedSecret = r.sealer.Seal(r.endpoint.ID, r.secret)
	if change != nil {
		change(r, &r.endpoint)
	}
	if err := r.env.Store.PutWebhookEndpoint(ctx, r.endpoint); err != nil {
		t.Fatal(err)
	}
	r.d = r.deliverer("instance-1")
	return r
}

func (r *rig) deliverer(instance string) *webhooks.Deliverer {
	return &webhooks.Deliverer{Queue: r.env.Store, Feed: r.env.Store, Sealer: r.sealer, Policy: webhooks.Policy{AllowLoopback: true},
		Instance: instance, Now: r.clock.Now, Jitter: func() float64 { return 0 }, Timeout: 5 * time.Second, Lease: 30 * time.Second}
}

// call is a capital call notice of FUND_A (or fundID), its amount telling
// its versions apart.
func call(id, fundID, amount string) fund.Document {
	return fund.Document{ID: id,
		DocumentFields: fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalCallNotice, Title: "Call " + id, AsOf: fund.MustDate("2025-06-30")},
		Positions:      []fund.Position{{ID: "POS_" + fundID, InvestorID: "INV_1", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(amount)}}},
	}
}

func (r *rig) write(t *testing.T, d fund.Document) {
	t.Helper()
	if _, err := r.env.Store.Write(ctx, d, nil); err != nil {
		t.Fatalf("write %s: %v", d.ID, err)
	}
}

func (r *rig) round(t *testing.T, d *webhooks.Deliverer) {
	t.Helper()
	if err := d.RunOnce(ctx); err != nil {
		t.Fatalf("delivery round: %v", err)
	}
}

// until runs rounds until the receiver's log satisfies done (20 s at most).
func (r *rig) until(t *testing.T, what string, done func([]webhooktest.Delivery) bool) []webhooktest.Delivery {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.round(t, r.d)
		log := r.recv.Log(t)
		if done(log) {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s; the receiver got %v", what, ids(log))
		}
		<-time.After(20 * time.Millisecond)
	}
}

func ids(log []webhooktest.Delivery) []string {
	out := make([]string, 0, len(log))
	for _, d := range log {
		out = append(out, d.ID+"("+d.Mode+")")
	}
	return out
}

func count(n int) func([]webhooktest.Delivery) bool {
	return func(l []webhooktest.Delivery) bool { return len(l) >= n }
}

func delivery(t *testing.T, r *rig, eventID string) fund.WebhookDelivery {
	t.Helper()
	d, err := r.env.Store.WebhookDeliveryOf(ctx, r.endpoint.ID, eventID)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// verified fails t unless every request verified with exactly the secrets
// of index want.
func verified(t *testing.T, log []webhooktest.Delivery, want ...int) {
	t.Helper()
	for _, d := range log {
		if !slices.Equal(d.VerifiedWith, want) {
			t.Errorf("%s verified with secrets %v, want %v (errors %v)", d.ID, d.VerifiedWith, want, d.Errors)
		}
	}
}

func TestEveryVersionIsDeliveredSignedAndInVersionOrder(t *testing.T) {
	r := newRig(t, nil)
	r.write(t, call("DOC_A", "FUND_A", "100.00"))
	r.write(t, call("DOC_B", "FUND_B", "100.00")) // a fund the endpoint does not subscribe to
	r.write(t, call("DOC_A", "FUND_A", "200.00"))
	r.write(t, call("DOC_A", "FUND_A", "300.00"))
	log := r.until(t, "three deliveries", count(3))
	r.round(t, r.d)
	log = r.recv.Log(t)
	verified(t, log, 0)
	if got, want := ids(log), []string{"evt_DOC_A_v1(ok)", "evt_DOC_A_v2(ok)", "evt_DOC_A_v3(ok)"}; !slices.Equal(got, want) {
		t.Fatalf("the receiver got %v, want %v (DOC_B is FUND_B's)", got, want)
	}
	for i, d := range log {
		var body struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				DocumentID  string `json:"documentId"`
				Version     int    `json:"version"`
				VersionPath string `json:"versionPath"`
			} `json:"data"`
			Timestamp time.Time `json:"timestamp"`
		}
		if err := json.Unmarshal([]byte(d.Body), &body); err != nil {
			t.Fatal(err)
		}
		wantType := "document.restated"
		if i == 0 {
			wantType = "document.created"
		}
		if body.ID != d.ID || body.Type != wantType || body.Data.Version != i+1 || body.Timestamp.IsZero() ||
			body.Data.VersionPath != fmt.Sprintf("/v1/documents/DOC_A/versions/%d", i+1) {
			t.Errorf("delivery %d: header id %s, body %+v", i, d.ID, body)
		}
	}
	page, _, err := r.env.Store.WebhookDeliveries(ctx, r.endpoint.ID, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 3 {
		t.Fatalf("the delivery log holds %d deliveries, want 3", len(page))
	}
	for _, d := range page {
		if d.Status != fund.DeliveryDelivered || d.AttemptCount != 1 || len(d.Attempts) != 1 || d.Attempts[0].StatusCode != 204 || d.DeliveredAt.IsZero() {
			t.Errorf("log of %s: %+v", d.EventID, d)
		}
	}
}

func TestRetriesFollowTheScheduleHonourRetryAfterAndALaterVersionWaits(t *testing.T) {
	r := newRig(t, nil)
	r.recv.Set(t, nil, "fail", 0)
	r.write(t, call("DOC_R", "FUND_A", "100.00"))
	r.until(t, "the first attempt", count(1))
	r.write(t, call("DOC_R", "FUND_A", "150.00")) // v2 waits for v1

	step := func(d time.Duration, want int, why string) {
		t.Helper()
		r.clock.Add(d)
		r.round(t, r.d)
		r.round(t, r.d)
		if got := r.recv.Log(t); len(got) != want {
			t.Fatalf("%s: the receiver got %v, want %d requests", why, ids(got), want)
		}
	}
	step(4*time.Second, 1, "4s after the first failure (the schedule waits 5s), and v2 waits for v1")
	step(2*time.Second, 2, "6s after it")
	step(4*time.Minute, 2, "4 minutes after the second failure (the schedule waits 5m)")
	r.recv.Set(t, nil, "fail", 3600) // Retry-After one hour, longer than the next wait (30m)
	step(time.Minute+time.Second, 3, "5 minutes after it")
	d := delivery(t, r, "evt_DOC_R_v1")
	if want := r.clock.Now().Add(time.Hour); d.Status != fund.DeliveryPending || d.NextAttemptAt.Sub(want).Abs() > time.Second {
		t.Fatalf("after a Retry-After of an hour: %s next at %s, want %s", d.Status, d.NextAttemptAt, want)
	}
	if d.AttemptCount != 3 || d.Attempts[2].StatusCode != 500 {
		t.Errorf("log: %+v", d)
	}
	r.recv.Set(t, nil, "ok", 0)
	step(59*time.Minute, 3, "59 minutes after the Retry-After")
	log := r.until(t, "v1 then v2 delivered", func(l []webhooktest.Delivery) bool {
		r.clock.Add(2 * time.Minute)
		return len(l) >= 5
	})
	verified(t, log, 0)
	if got, want := ids(log), []string{"evt_DOC_R_v1(fail)", "evt_DOC_R_v1(fail)", "evt_DOC_R_v1(fail)", "evt_DOC_R_v1(ok)", "evt_DOC_R_v2(ok)"}; !slices.Equal(got, want) {
		t.Errorf("the receiver got %v, want %v: retries of v1 with one webhook-id, v2 only after v1", got, want)
	}
}

func TestGoneDisablesTheEndpointAndNothingIsDropped(t *testing.T) {
	r := newRig(t, nil)
	r.recv.Set(t, nil, "gone", 0)
	r.write(t, call("DOC_G", "FUND_A", "100.00"))
	r.until(t, "the attempt answered 410", count(1))
	e, err := r.env.Store.WebhookEndpoint(ctx, r.endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Enabled || !strings.Contains(e.DisabledReason, "410") {
		t.Fatalf("after a 410 the endpoint is %+v, want disabled saying why", e)
	}
	if d := delivery(t, r, "evt_DOC_G_v1"); d.Status != fund.DeliveryFailed {
		t.Errorf("the 410's delivery is %s, want failed", d.Status)
	}
	r.write(t, call("DOC_G", "FUND_A", "200.00"))
	r.clock.Add(time.Hour)
	r.round(t, r.d)
	if got := r.recv.Log(t); len(got) != 1 {
		t.Fatalf("a disabled endpoint got %v", ids(got))
	}
	// Re-enabled, it gets what was committed meanwhile, and a redelivery.
	r.recv.Set(t, nil, "ok", 0)
	e.Enabled, e.DisabledReason = true, ""
	if _, err := r.env.Store.ReplaceWebhookEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	r.until(t, "v2 after re-enabling", count(2))
	if _, err := r.env.Store.RedeliverWebhook(ctx, r.endpoint.ID, "evt_DOC_G_v1", r.clock.Now()); err != nil {
		t.Fatal(err)
	}
	log := r.until(t, "the redelivery of v1", count(3))
	if got, want := ids(log), []string{"evt_DOC_G_v1(gone)", "evt_DOC_G_v2(ok)", "evt_DOC_G_v1(ok)"}; !slices.Equal(got, want) {
		t.Errorf("the receiver got %v, want %v", got, want)
	}
	verified(t, log, 0)
}

func TestAnEndpointFailingForDaysIsDisabledAndSaysSo(t *testing.T) {
	r := newRig(t, nil)
	r.d.Schedule = []time.Duration{0, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour,
		time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour}
	r.d.DisableAfter = 24 * time.Hour
	r.recv.Set(t, nil, "down", 0)
	r.write(t, call("DOC_F", "FUND_A", "100.00"))
	r.until(t, "the first attempt", count(1))
	for h := 1; h <= 23; h++ {
		r.clock.Add(time.Hour)
		r.round(t, r.d)
	}
	e, _ := r.env.Store.WebhookEndpoint(ctx, r.endpoint.ID)
	if !e.Enabled || e.FailingSince.IsZero() {
		t.Fatalf("after 23 hours of failures: %+v, want enabled and failing", e)
	}
	r.clock.Add(time.Hour)
	r.round(t, r.d)
	e, _ = r.env.Store.WebhookEndpoint(ctx, r.endpoint.ID)
	if e.Enabled || !strings.Contains(e.DisabledReason, "failed every attempt since") {
		t.Fatalf("after 24 hours of failures: %+v, want disabled saying why", e)
	}
	if n := len(r.recv.Log(t)); n != 25 {
		t.Errorf("%d attempts, want 25 (one an hour)", n)
	}
	d := delivery(t, r, "evt_DOC_F_v1")
	if d.Status != fund.DeliveryPending || d.Attempts[len(d.Attempts)-1].Error == "" {
		t.Errorf("the delivery is %s with last attempt %+v: want still pending (kept for when it is re-enabled), failed without an answer", d.Status, d.Attempts[len(d.Attempts)-1])
	}
}

func TestARotatedSecretSignsBesideTheNewOneDuringTheOverlap(t *testing.T) {
	old := webhooks.NewSecret()
	r := newRig(t, func(r *rig, e *fund.WebhookEndpoint) {
		e.SealedPrevious, e.PreviousUntil = r.sealer.Seal(e.ID, old), r.clock.Now().Add(time.Hour)
	})
	r.recv.Set(t, []string{r.secret, old}, "ok", 0)
	r.write(t, call("DOC_S", "FUND_A", "100.00"))
	log := r.until(t, "v1", count(1))
	verified(t, log, 0, 1)
	if n := len(strings.Split(log[0].Signature, " ")); n != 2 {
		t.Errorf("during the overlap: %d signatures, want 2", n)
	}
	r.clock.Add(2 * time.Hour)
	r.write(t, call("DOC_S", "FUND_A", "200.00"))
	log = r.until(t, "v2", count(2))
	verified(t, log[1:], 0)
	if n := len(strings.Split(log[1].Signature, " ")); n != 1 {
		t.Errorf("after the overlap: %d signatures, want 1", n)
	}
}

func TestAClaimedDeliveryIsTriedByOneInstanceAndTakenOverAfterItsLease(t *testing.T) {
	r := newRig(t, nil)
	// A delivery claimed by an instance that died: nobody tries it until
	// its lease ends, then another does, and the dead one cannot record.
	r.write(t, call("DOC_L", "FUND_A", "100.00"))
	queued, err := r.env.Store.EnqueueWebhookDelivery(ctx, fund.WebhookDelivery{EndpointID: r.endpoint.ID, EventID: "evt_DOC_L_v1",
		EventType: "document.created", DocumentID: "DOC_L", Version: 1}, r.clock.Now())
	if err != nil || !queued {
		t.Fatalf("enqueue: %v %v", queued, err)
	}
	pending, err := r.env.Store.PendingWebhookDeliveries(ctx, r.endpoint.ID, 10)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending: %v %v", pending, err)
	}
	if ok, err := r.env.Store.ClaimWebhookDelivery(ctx, pending[0], "dead", r.clock.Now(), r.clock.Now().Add(30*time.Second)); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	r.round(t, r.d)
	r.clock.Add(29 * time.Second)
	r.round(t, r.d)
	if got := r.recv.Log(t); len(got) != 0 {
		t.Fatalf("within the dead instance's lease the receiver got %v", ids(got))
	}
	r.clock.Add(2 * time.Second)
	log := r.until(t, "the takeover", count(1))
	verified(t, log, 0)
	if d := delivery(t, r, "evt_DOC_L_v1"); d.Status != fund.DeliveryDelivered || d.Attempts[0].Instance != "instance-1" {
		t.Errorf("after the takeover: %+v", d)
	}
	err = r.env.Store.FinishWebhookAttempt(ctx, pending[0], "dead", fund.WebhookAttempt{At: r.clock.Now(), StatusCode: 200}, fund.DeliveryDelivered, time.Time{})
	if err != store.ErrWebhookLeaseLost {
		t.Errorf("the dead instance recording its attempt: %v, want ErrWebhookLeaseLost", err)
	}

	// Two instances at once: each event is tried exactly once.
	d2 := r.deliverer("instance-2")
	for i := range 8 {
		r.write(t, call(fmt.Sprintf("DOC_P%d", i), "FUND_A", "100.00"))
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(r.recv.Log(t)) < 9 && time.Now().Before(deadline) {
		var wg sync.WaitGroup
		for _, d := range []*webhooks.Deliverer{r.d, d2} {
			wg.Add(1)
			go func() { defer wg.Done(); _ = d.RunOnce(ctx) }()
		}
		wg.Wait()
	}
	log = r.recv.Log(t)
	seen := map[string]int{}
	for _, d := range log {
		seen[d.ID]++
	}
	if len(log) != 9 || len(seen) != 9 {
		t.Errorf("two instances at once: the receiver got %v, want each of 9 events once", ids(log))
	}
	verified(t, log, 0)
}

func TestAnAttemptThatOutlastsTheTimeoutIsRetried(t *testing.T) {
	r := newRig(t, nil)
	r.d.Timeout = 300 * time.Millisecond
	r.recv.SetDelay(t, nil, "ok", 0, 2*time.Second)
	r.write(t, call("DOC_T", "FUND_A", "100.00"))
	begin := time.Now()
	r.until(t, "the first attempt", count(1))
	if took := time.Since(begin); took > 1500*time.Millisecond {
		t.Errorf("the round waited %s for an answer due after 2s: the timeout (300ms) did not cut it", took)
	}
	d := delivery(t, r, "evt_DOC_T_v1")
	if d.Status != fund.DeliveryPending || len(d.Attempts) != 1 || d.Attempts[0].Error != webhooks.NoAnswer || d.Attempts[0].StatusCode != 0 {
		t.Fatalf("after a timeout: %+v", d)
	}
	r.recv.Set(t, nil, "ok", 0)
	r.clock.Add(6 * time.Second)
	log := r.until(t, "the retry", func(l []webhooktest.Delivery) bool { return len(l) >= 2 })
	if log[0].ID != log[1].ID {
		t.Errorf("the retry's webhook-id %s differs from the first attempt's %s", log[1].ID, log[0].ID)
	}
	verified(t, log, 0)
	if d := delivery(t, r, "evt_DOC_T_v1"); d.Status != fund.DeliveryDelivered || d.AttemptCount != 2 {
		t.Errorf("after the retry: %+v", d)
	}
}

// feedWatch is the deliverer's Feed, telling when a round has read it
// (a round with nothing to deliver reads nothing after it).
type feedWatch struct {
	webhooks.Feed
	read chan struct{}
}

func (w feedWatch) EventsAfter(ctx context.Context, after fund.EventCursor, limit int, f fund.EventFilter) (fund.EventPage, error) {
	p, err := w.Feed.EventsAfter(ctx, after, limit, f)
	select {
	case w.read <- struct{}{}:
	default:
	}
	return p, err
}

// TestAWakeDeliversAtOnceAndADocumentsLaterVersionsFollow runs the
// deliverer with a poll of an hour: after its first round (nothing to
// deliver), three versions of one document are committed and it is woken
// once. All three must arrive, in order, without another poll: the wake
// starts a round, and a round that delivered a version with a later one
// waiting behind it is followed by another at once.
func TestAWakeDeliversAtOnceAndADocumentsLaterVersionsFollow(t *testing.T) {
	r := newRig(t, nil)
	w := feedWatch{Feed: r.env.Store, read: make(chan struct{}, 1)}
	r.d.Feed = w
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.d.Run(rctx, time.Hour) }()
	t.Cleanup(func() { stop(); <-done })
	select {
	case <-w.read: // the first round found nothing
	case <-time.After(20 * time.Second):
		t.Fatal("the deliverer's first round did not read the feed within 20s")
	}
	r.write(t, call("DOC_A", "FUND_A", "100.00"))
	r.write(t, call("DOC_A", "FUND_A", "200.00"))
	r.write(t, call("DOC_A", "FUND_A", "300.00"))
	r.d.Wake()
	deadline := time.Now().Add(20 * time.Second)
	for len(r.recv.Log(t)) < 3 && time.Now().Before(deadline) {
		<-time.After(20 * time.Millisecond)
	}
	log := r.recv.Log(t)
	verified(t, log, 0)
	if got, want := ids(log), []string{"evt_DOC_A_v1(ok)", "evt_DOC_A_v2(ok)", "evt_DOC_A_v3(ok)"}; !slices.Equal(got, want) {
		t.Fatalf("after one wake the receiver got %v, want %v", got, want)
	}
}

// TestAnEventThatShowsBehindTheCursorIsQueuedBeforeItsNextVersion: a
// version whose event shows in the feed only after the endpoint's cursor
// passed its commit instant (here its writer's clock is behind; a commit
// slower than the settle margin does the same) is in no later read of the
// feed. When its document's next version comes, it is queued and
// delivered before it, and the events after them are delivered too:
// before, the endpoint's queue stopped at the next version for good,
// waiting for its predecessor.
func TestAnEventThatShowsBehindTheCursorIsQueuedBeforeItsNextVersion(t *testing.T) {
	r := newRig(t, nil)
	start := r.clock.Now()
	r.write(t, call("DOC_A", "FUND_A", "100.00"))
	r.until(t, "DOC_A's first version", count(1))
	r.clock.Add(10 * time.Minute) // the watermark passes start + 5 min
	r.round(t, r.d)
	st, err := r.env.Store.WebhookRound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored := st.Fill
	if cur, err := fund.ParseEventCursor(stored); err != nil || !cur.At.After(start.Add(time.Minute)) {
		t.Fatalf("the cursor is %q (%v): not past start + 1 min", stored, err)
	}

	r.clock.Add(-9 * time.Minute) // a writer whose clock is behind the cursor
	r.write(t, call("DOC_C", "FUND_A", "100.00"))
	r.clock.Add(9*time.Minute + time.Second)
	r.round(t, r.d)
	if got := ids(r.recv.Log(t)); len(got) != 1 {
		t.Fatalf("DOC_C's first version, behind the cursor, was delivered from the feed (%v): the test shows nothing", got)
	}
	r.write(t, call("DOC_C", "FUND_A", "200.00"))
	r.write(t, call("DOC_D", "FUND_A", "100.00"))
	log := r.until(t, "DOC_C's two versions and DOC_D's", count(4))
	got := ids(log)
	if !slices.Contains(got, "evt_DOC_D_v1(ok)") || slices.Index(got, "evt_DOC_C_v1(ok)") < 0 ||
		slices.Index(got, "evt_DOC_C_v1(ok)") > slices.Index(got, "evt_DOC_C_v2(ok)") {
		t.Fatalf("the receiver got %v: want DOC_C's first version before its second, and DOC_D's", got)
	}
	var late dto.Metric
	if err := r.d.Metrics().Late.Write(&late); err != nil || late.GetCounter().GetValue() != 1 {
		t.Errorf("fundsvc_webhook_events_late_total is %v (%v), want 1", late.GetCounter().GetValue(), err)
	}
}

// TestANoticeOfEveryPositionTheLimitsAllowIsDeliveredAndSoIsTheNext: a
// capital call notice of 5,000 positions (FUNDSVC_MAX_POSITIONS) whose
// position and investor IDs have 64 characters, the longest an ID may
// have, makes a body of about 1 MB, beyond what one DynamoDB item holds.
// It is delivered, verified by the reference library, and so is the next
// document of its fund: the queue holds no body, so nothing of the
// event's size stops the endpoint's line. The notice is written by its
// plan's commit transaction alone (store.Store.WritePlan), which puts its
// event: one request rather than a write of 5,000 positions.
func TestANoticeOfEveryPositionTheLimitsAllowIsDeliveredAndSoIsTheNext(t *testing.T) {
	r := newRig(t, nil)
	big := call("DOC_BIG", "FUND_A", "1.00")
	big.Positions = make([]fund.Position, fund.DefaultMaxPositions)
	for i := range big.Positions {
		big.Positions[i] = fund.Position{ID: fmt.Sprintf("P%063d", i), InvestorID: fmt.Sprintf("I%063d", i),
			CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("1.00")}}
	}
	plan, err := r.env.Store.WritePlan(big, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamodb.NewFromConfig(dynamotest.Shared().Config()).TransactWriteItems(ctx, plan.Commit); err != nil {
		t.Fatalf("commit the notice: %v", err)
	}
	r.write(t, call("DOC_NEXT", "FUND_A", "100.00"))
	log := r.until(t, "the big notice and the next document", count(2))
	verified(t, log, 0)
	got := ids(log)
	slices.Sort(got) // two documents: delivered independently
	if want := []string{"evt_DOC_BIG_v1(ok)", "evt_DOC_NEXT_v1(ok)"}; !slices.Equal(got, want) {
		t.Fatalf("the receiver got %v, want %v", got, want)
	}
	if log[0].ID != "evt_DOC_BIG_v1" {
		log[0], log[1] = log[1], log[0]
	}
	var body struct {
		Data struct {
			Positions []fund.EventPosition `json:"positions"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(log[0].Body), &body); err != nil {
		t.Fatal(err)
	}
	if n := len(body.Data.Positions); n != fund.DefaultMaxPositions || len(log[0].Body) < 400<<10 {
		t.Fatalf("the notice's body is %d bytes with %d positions, want %d positions and more than one item's 400 KB", len(log[0].Body), n, fund.DefaultMaxPositions)
	}
}

// blocker is a receiver whose first request gets no answer until the
// test releases it (or ends); every later one is answered 204 at once.
type blocker struct {
	URL     string
	arrived chan struct{} // closed when the first request arrives
	release chan struct{}
	once    sync.Once
}

func startBlocker(t *testing.T) *blocker {
	t.Helper()
	b := &blocker{arrived: make(chan struct{}), release: make(chan struct{})}
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		first := false
		once.Do(func() { first = true; close(b.arrived) })
		if first {
			select {
			case <-b.release:
			case <-req.Context().Done():
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.URL = srv.URL + "/hook"
	t.Cleanup(func() { b.Release(); srv.Close() })
	return b
}

func (b *blocker) Release() { b.once.Do(func() { close(b.release) }) }

func waitFor(t *testing.T, what string, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: not within 20s", what)
	}
}

// TestADeliveryIsClaimedOnlyOnceASlotIsFree is the review's scenario: an
// instance with one attempt slot has it taken by an endpoint that does
// not answer, while a document's first version waits for another
// endpoint. The lease time passes; another instance delivers versions 1
// and 2. When the slot frees, the first instance must not send version 1
// again: it claims a delivery only once it has a slot (and here it finds
// it delivered), so the receiver never sees v1, v2, v1.
func TestADeliveryIsClaimedOnlyOnceASlotIsFree(t *testing.T) {
	r := newRig(t, nil)
	slow := startBlocker(t)
	x := r.endpoint
	x.ID, x.URL = "wh_a_slow", slow.URL // before wh_test: its deliveries are found first
	x.SealedSecret = r.sealer.Seal(x.ID, r.secret)
	if err := r.env.Store.PutWebhookEndpoint(ctx, x); err != nil {
		t.Fatal(err)
	}
	r.write(t, call("DOC_X", "FUND_A", "100.00"))
	r.write(t, call("DOC_X", "FUND_A", "200.00"))
	r.d.Parallel = 1
	w := &claimWatch{Queue: r.env.Store, event: "evt_DOC_X_v1", endpoint: r.endpoint.ID}
	r.d.Queue = w
	first := make(chan error, 1)
	go func() { first <- r.d.RunOnce(ctx) }()
	waitFor(t, "the first instance's attempt at the endpoint that does not answer", slow.arrived)
	// The first instance has dealt with v1 for wh_test: claimed it (to
	// wait for a slot), or left it for want of one.
	deadline := time.Now().Add(20 * time.Second)
	for !w.Claimed() && counter(t, r.d.Metrics().SlotWaits) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first instance neither claimed v1 nor left it waiting for a slot within 20s")
		}
		<-time.After(5 * time.Millisecond)
	}

	r.clock.Add(31 * time.Second) // past any lease the first instance took (30s)
	d2 := r.deliverer("instance-2")
	deadline = time.Now().Add(20 * time.Second)
	for len(r.recv.Log(t)) < 2 {
		r.round(t, d2)
		if time.Now().After(deadline) {
			t.Fatalf("the second instance did not deliver both versions within 20s: the receiver got %v", ids(r.recv.Log(t)))
		}
	}
	slow.Release()
	select {
	case err := <-first:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the first instance's round did not end within 20s of the release")
	}
	log := r.recv.Log(t)
	verified(t, log, 0)
	if got, want := ids(log), []string{"evt_DOC_X_v1(ok)", "evt_DOC_X_v2(ok)"}; !slices.Equal(got, want) {
		t.Fatalf("the receiver got %v, want %v: an instance sent a version after another delivered the next", got, want)
	}
}

// claimWatch is the deliverer's Queue, telling when it has claimed one
// event for one endpoint.
type claimWatch struct {
	webhooks.Queue
	event, endpoint string
	claimed         atomic.Bool
}

func (w *claimWatch) ClaimWebhookDelivery(ctx context.Context, p fund.WebhookPending, owner string, now, until time.Time) (bool, error) {
	ok, err := w.Queue.ClaimWebhookDelivery(ctx, p, owner, now, until)
	if ok && p.EventID == w.event && p.EndpointID == w.endpoint {
		w.claimed.Store(true)
	}
	return ok, err
}

func (w *claimWatch) Claimed() bool { return w.claimed.Load() }

func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// stall is the deliverer's Queue, holding the first attempt at one event
// between its claim and its request: stalled runs then (the process is
// paused, the table slow), once.
type stall struct {
	webhooks.Queue
	event   string
	stalled func()
	mu      sync.Mutex
	claimed bool
}

func (s *stall) ClaimWebhookDelivery(ctx context.Context, p fund.WebhookPending, owner string, now, until time.Time) (bool, error) {
	ok, err := s.Queue.ClaimWebhookDelivery(ctx, p, owner, now, until)
	if ok && p.EventID == s.event {
		s.mu.Lock()
		s.claimed = true
		s.mu.Unlock()
	}
	return ok, err
}

func (s *stall) WebhookDeliveryOf(ctx context.Context, endpointID, eventID string) (fund.WebhookDelivery, error) {
	s.mu.Lock()
	run := s.claimed && eventID == s.event && s.stalled != nil
	f := s.stalled
	if run {
		s.stalled = nil
	}
	s.mu.Unlock()
	if run {
		f()
	}
	return s.Queue.WebhookDeliveryOf(ctx, endpointID, eventID)
}

// TestAnAttemptIsNotSentWhenItsLeaseWouldEndFirst: an instance claims
// version 1 and then stalls before sending it, past its lease; another
// instance delivers versions 1 and 2 meanwhile. The first instance checks
// its lease right before sending and sends nothing: the receiver never
// sees v1 after v2.
func TestAnAttemptIsNotSentWhenItsLeaseWouldEndFirst(t *testing.T) {
	r := newRig(t, nil)
	r.write(t, call("DOC_S", "FUND_A", "100.00"))
	r.write(t, call("DOC_S", "FUND_A", "200.00"))
	d2 := r.deliverer("instance-2")
	r.d.Queue = &stall{Queue: r.env.Store, event: "evt_DOC_S_v1", stalled: func() {
		r.clock.Add(31 * time.Second) // the lease (30s) ended
		deadline := time.Now().Add(20 * time.Second)
		for len(r.recv.Log(t)) < 2 && time.Now().Before(deadline) {
			if err := d2.RunOnce(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	}}
	r.round(t, r.d)
	log := r.recv.Log(t)
	verified(t, log, 0)
	if got, want := ids(log), []string{"evt_DOC_S_v1(ok)", "evt_DOC_S_v2(ok)"}; !slices.Equal(got, want) {
		t.Fatalf("the receiver got %v, want %v: an attempt was sent after its lease ended", got, want)
	}
	if d := delivery(t, r, "evt_DOC_S_v1"); d.AttemptCount != 1 || d.Attempts[0].Instance != "instance-2" {
		t.Errorf("v1's log: %+v, want one attempt, the second instance's", d)
	}
}

// endpointsOf stores n more endpoints of fund at url, named prefix_00 on.
func (r *rig) endpointsOf(t *testing.T, n int, prefix, fundID, url string) {
	t.Helper()
	for i := range n {
		e := r.endpoint
		e.ID, e.URL, e.Funds, e.CreatedAt = fmt.Sprintf("%s_%02d", prefix, i), url, []string{fundID}, r.clock.Now()
		e.SealedSecret = r.sealer.Seal(e.ID, r.secret)
		if err := r.env.Store.PutWebhookEndpoint(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAnIdleRoundCostsTheSameWhateverTheEndpoints counts the DynamoDB
// requests of a round with nothing to deliver, at 1 endpoint and at 100
// (10 of them with a delivery done, so with a work marker; 90 that never
// had one): the same, and what docs/webhooks.md says (a Query of the
// endpoints and their work markers, a Query of the feed of their fund).
func TestAnIdleRoundCostsTheSameWhateverTheEndpoints(t *testing.T) {
	r := newRig(t, nil)
	r.env.Store.MaxWebhookEndpoints = 100 // all on one fund; FUNDSVC_WEBHOOK_MAX_ENDPOINTS admits up to 1,000
	idle := func(what string) []string {
		t.Helper()
		for range 2 { // the first settles the markers of the deliveries just made
			r.round(t, r.d)
		}
		r.env.Counter.Reset()
		r.round(t, r.d)
		ops := r.env.Counter.Ops()
		t.Logf("an idle round at %s: %v", what, ops)
		return ops
	}
	r.write(t, call("DOC_I", "FUND_A", "100.00"))
	r.until(t, "the first endpoint's delivery", count(1))
	one := idle("1 endpoint")
	// The feed of one fund is one Query per UTC month its last minutes
	// cover: two in the minutes after a month's turn.
	if n := len(one); n < 2 || n > 3 || slices.ContainsFunc(one, func(op string) bool { return op != "Query" }) {
		t.Errorf("an idle round at 1 endpoint made %v, want a Query of the endpoints and one of the feed", one)
	}

	r.clock.Add(time.Second) // the endpoints to come get what is committed after this
	r.endpointsOf(t, 9, "wh_done", "FUND_A", r.recv.URL)
	r.clock.Add(time.Second)
	r.write(t, call("DOC_J", "FUND_A", "100.00"))
	r.until(t, "DOC_J at 10 endpoints", count(11))
	r.clock.Add(time.Second)
	r.endpointsOf(t, 90, "wh_new", "FUND_A", r.recv.URL)
	if hundred := idle("100 endpoints"); !slices.Equal(hundred, one) {
		t.Errorf("an idle round at 100 endpoints made %d requests %v, at 1 endpoint %d", len(hundred), hundred, len(one))
	}
}

// blackhole is a receiver that answers no request until the test ends.
type blackhole struct {
	URL     string
	arrived atomic.Int64
}

func startBlackhole(t *testing.T) *blackhole {
	t.Helper()
	b := &blackhole{}
	end := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b.arrived.Add(1)
		select {
		case <-end:
		case <-req.Context().Done():
		}
	}))
	b.URL = srv.URL + "/hook"
	t.Cleanup(func() { close(end); srv.Close() })
	return b
}

// TestOneTenantsDeadEndpointsDoNotDelayAnothers: fund A has ten endpoints
// that never answer (their attempts time out after 30s); fund B has one
// that answers at once. Once A's attempts hold every slot A may take
// (Parallel - TenantParallel: 6 of 8), B commits a document: its delivery
// starts in the next round, while A's attempts still hang, not after
// they time out.
func TestOneTenantsDeadEndpointsDoNotDelayAnothers(t *testing.T) {
	r := newRig(t, func(_ *rig, e *fund.WebhookEndpoint) { e.Funds = []string{"FUND_B"} })
	dead := startBlackhole(t)
	r.endpointsOf(t, 10, "wh_a", "FUND_A", dead.URL)
	// Long enough that none of A's attempts times out while the test runs,
	// even on a loaded machine; the test ends long before when it passes.
	r.d.Timeout, r.d.Lease = 30*time.Second, 45*time.Second
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.d.Run(rctx, 100*time.Millisecond) }()
	t.Cleanup(func() { stop(); <-done })

	r.write(t, call("DOC_A", "FUND_A", "100.00"))
	r.d.Wake()
	deadline := time.Now().Add(r.d.Timeout)
	for dead.arrived.Load() < 6 {
		if time.Now().After(deadline) {
			t.Fatalf("fund A's dead endpoints got %d attempts within %s, want 6", dead.arrived.Load(), r.d.Timeout)
		}
		<-time.After(20 * time.Millisecond)
	}
	begin := time.Now()
	r.write(t, call("DOC_B", "FUND_B", "100.00"))
	r.d.Wake()
	for len(r.recv.Log(t)) < 1 {
		if time.Since(begin) > r.d.Timeout {
			t.Fatalf("fund B's delivery did not arrive within %s, the attempt timeout of fund A's dead endpoints", r.d.Timeout)
		}
		<-time.After(20 * time.Millisecond)
	}
	took := time.Since(begin)
	log := r.recv.Log(t)
	verified(t, log, 0)
	if got := ids(log); !slices.Equal(got, []string{"evt_DOC_B_v1(ok)"}) {
		t.Errorf("fund B's endpoint got %v", got)
	}
	if n := dead.arrived.Load(); n != 6 {
		t.Errorf("fund A's dead endpoints got %d attempts, want 6: Parallel (8) - TenantParallel (2)", n)
	}
	t.Logf("fund B's delivery arrived %s after its commit, fund A's endpoints holding 6 of 8 slots", took)
}
