package webhooks

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// Feed is the event feed across every fund; *store.Store satisfies it
// (store/events.go).
type Feed interface {
	EventsAfter(ctx context.Context, after fund.EventCursor, limit int, f fund.EventFilter) (fund.EventPage, error)
	Event(ctx context.Context, doc string, version int) (fund.Event, error)
}

// Queue is what delivery keeps in the table (endpoints' queues and work
// markers, the fill cursor, delivery logs); *store.Store satisfies it.
type Queue interface {
	WebhookRound(ctx context.Context) (fund.WebhookState, error)
	MarkWebhookEndpoint(ctx context.Context, id string, failingSince time.Time, disableReason string, now time.Time) error
	AdvanceWebhookFill(ctx context.Context, from, to string) (bool, error)
	SettleWebhookWork(ctx context.Context, id string, seq int, dueAt int64) error
	DropWebhookWork(ctx context.Context, id string, seq int) error
	EnqueueWebhookDelivery(ctx context.Context, d fund.WebhookDelivery, now time.Time) (bool, error)
	PendingWebhookDeliveries(ctx context.Context, endpointID string, limit int) ([]fund.WebhookPending, error)
	ClaimWebhookDelivery(ctx context.Context, p fund.WebhookPending, owner string, now, until time.Time) (bool, error)
	WebhookDeliveryOf(ctx context.Context, endpointID, eventID string) (fund.WebhookDelivery, error)
	ReleaseWebhookDelivery(ctx context.Context, p fund.WebhookPending, owner string) error
	FinishWebhookAttempt(ctx context.Context, p fund.WebhookPending, owner string, a fund.WebhookAttempt, status string, next time.Time) error
}

// Deliverer runs delivery on one instance; several instances share the work
// through the table's leases.
type Deliverer struct {
	Queue  Queue
	Feed   Feed
	Sealer *Sealer
	Policy Policy
	Log    *slog.Logger
	// Instance names this process in the delivery log.
	Instance string
	// Now is the clock (time.Now when nil); Jitter draws from [0,1) for the
	// retry schedule's jitter.
	Now    func() time.Time
	Jitter func() float64
	// Schedule is the wait before each retry (DefaultSchedule when nil);
	// Timeout bounds one attempt (15 s); Lease how long a claimed delivery
	// is this instance's (Timeout + 15 s); DisableAfter how long an
	// endpoint may fail before it is disabled (5 days).
	Schedule     []time.Duration
	Timeout      time.Duration
	Lease        time.Duration
	DisableAfter time.Duration
	// Parallel bounds the attempts in flight on this instance (8): its
	// attempt slots. TenantParallel is one tenant's share, the endpoints of
	// one set of funds (tenantOf): a quarter of Parallel, at least 1 (2 of
	// 8). Beyond its share a tenant takes a slot only while more than
	// TenantParallel others stay free, so one tenant holds at most
	// Parallel - TenantParallel slots (6 of 8) and another always finds one.
	Parallel       int
	TenantParallel int
	// Client sends the requests (Policy.Client(Timeout) when nil).
	Client *http.Client

	once     sync.Once
	metrics  *Metrics
	enqueued *lru.Cache[string, struct{}] // endpoint and event IDs this process queued: not read again
	wake     chan struct{}                // Wake's signal to Run: a round is due now
	attempts sync.WaitGroup               // the attempts in flight

	mu       sync.Mutex     // guards what follows
	inflight map[string]int // attempts in flight by tenant; their sum is at most Parallel
	starved  bool           // a round left a due delivery for want of a slot: a freed slot wakes Run
	turn     int            // rotates which tenant a round serves first
}

// DefaultTimeout bounds one delivery attempt.
const DefaultTimeout = 15 * time.Second

// DefaultDisableAfter is how long an endpoint may fail before it is disabled.
const DefaultDisableAfter = 5 * 24 * time.Hour

// Metrics are delivery's Prometheus collectors.
type Metrics struct {
	Attempts  *prometheus.CounterVec
	Lag       prometheus.Histogram
	Disabled  prometheus.Counter
	Late      prometheus.Counter
	SlotWaits prometheus.Counter
}

// NewMetrics returns delivery's collectors, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		Attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fundsvc_webhook_attempts_total",
			Help: "Webhook delivery attempts by outcome: delivered, failed (will retry), gave_up (the schedule ran out), gone (410).",
		}, []string{"outcome"}),
		Lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "fundsvc_webhook_delivery_lag_seconds",
			Help:    "From an event's commit to its successful delivery.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 20),
		}),
		Disabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fundsvc_webhook_endpoints_disabled_total",
			Help: "Endpoints this instance disabled (410 Gone, or failing for longer than FUNDSVC_WEBHOOK_DISABLE_AFTER).",
		}),
		Late: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fundsvc_webhook_events_late_total",
			Help: "Events this instance queued when their document's next version came, because they showed in the feed after an endpoint had read past their commit instant (a commit slower than FUNDSVC_FEED_SETTLE, or a writer's clock behind).",
		}),
		SlotWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fundsvc_webhook_slot_waits_total",
			Help: "Due deliveries a round of this instance left unclaimed because its attempt slots, or their tenant's, were all taken; a later round claims them.",
		}),
	}
}

// Collectors lists the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Attempts, m.Lag, m.Disabled, m.Late, m.SlotWaits}
}

// Metrics returns the Deliverer's collectors.
func (d *Deliverer) Metrics() *Metrics { d.init(); return d.metrics }

func (d *Deliverer) init() {
	d.once.Do(func() {
		d.Log = cmp.Or(d.Log, slog.Default())
		if d.Now == nil {
			d.Now = time.Now
		}
		if d.Jitter == nil {
			d.Jitter = defaultJitter
		}
		if len(d.Schedule) == 0 {
			d.Schedule = DefaultSchedule
		}
		d.Timeout = cmp.Or(d.Timeout, DefaultTimeout)
		d.Lease = cmp.Or(d.Lease, d.Timeout+15*time.Second)
		d.DisableAfter = cmp.Or(d.DisableAfter, DefaultDisableAfter)
		d.Parallel = max(cmp.Or(d.Parallel, 8), 1)
		d.TenantParallel = min(cmp.Or(d.TenantParallel, max(d.Parallel/4, 1)), d.Parallel)
		d.inflight = map[string]int{}
		if d.Client == nil {
			d.Client = d.Policy.Client(d.Timeout)
		}
		if d.Instance == "" {
			d.Instance = randomToken()
		}
		if d.metrics == nil {
			d.metrics = NewMetrics()
		}
		d.enqueued, _ = lru.New[string, struct{}](100_000)
		d.wake = make(chan struct{}, 1)
	})
}

// Wake asks Run for a round now rather than at its next poll; it never
// blocks, and wakes arriving during a round make one round after it. The
// service calls it when this instance commits a version
// (store.Store.OnCommit), so its own commits are delivered without
// waiting for the poll, which still finds every other instance's.
func (d *Deliverer) Wake() {
	d.init()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func randomToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Run delivers until ctx ends: a round every poll, at once when woken
// (Wake), when an attempt delivered an event whose document has a later
// version waiting, and when a slot frees after a round left a due
// delivery for want of one. A round does not wait for the attempts it
// starts; Run waits for them before it returns.
func (d *Deliverer) Run(ctx context.Context, poll time.Duration) {
	d.init()
	defer d.attempts.Wait()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := d.round(ctx); err != nil && ctx.Err() == nil {
			d.Log.Warn("webhook delivery round failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.wake:
		}
	}
}

// pendingPage is how much of an endpoint's queue one round reads.
const pendingPage = 200

// RunOnce is one round (for every enabled endpoint, queue the feed's new
// events it subscribes to, then start an attempt of every delivery that is
// due and first in its document's line, as slots allow), and waits for
// every attempt in flight.
func (d *Deliverer) RunOnce(ctx context.Context) error {
	d.init()
	err := d.round(ctx)
	d.attempts.Wait()
	return err
}

// due is a delivery a round found due: the first of its document's line.
type due struct {
	e       fund.WebhookEndpoint
	p       fund.WebhookPending
	tenant  string
	waiting bool // a later version of the document waits behind it
}

// round fills the endpoints' queues from the feed, then reads the queue
// of each enabled endpoint whose work marker is due (or that the fill
// queued for) and starts the attempts that are due, as slots allow
// (dispatch). Its reads: one Query of the endpoints and their markers,
// the feed's (once for every endpoint), and one Query per endpoint with
// work due; an idle endpoint costs nothing.
func (d *Deliverer) round(ctx context.Context) error {
	st, err := d.Queue.WebhookRound(ctx)
	if err != nil {
		return err
	}
	var errs []error
	filled, err := d.fill(ctx, st)
	if err != nil {
		errs = append(errs, err)
	}
	now := d.Now()
	var found []due
	known := make(map[string]bool, len(st.Endpoints))
	for _, e := range st.Endpoints {
		known[e.ID] = true
		w, marked := st.Work[e.ID]
		if !e.Enabled || !filled[e.ID] && (!marked || w.DueAt > now.UnixMilli()) {
			continue
		}
		pending, err := d.Queue.PendingWebhookDeliveries(ctx, e.ID, pendingPage)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		found = append(found, heads(e, pending, now)...)
		if at := dueAt(pending, now); marked && at != w.DueAt {
			if err := d.Queue.SettleWebhookWork(ctx, e.ID, w.Seq, at); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for id, w := range st.Work {
		if !known[id] { // a deleted endpoint's
			if err := d.Queue.DropWebhookWork(ctx, id, w.Seq); err != nil {
				errs = append(errs, err)
			}
		}
	}
	d.dispatch(ctx, found)
	return errors.Join(errs...)
}

// dueAt is when a round must read an endpoint's queue again, pending as
// read at now: the earliest next attempt of a line's first delivery, or
// the end of its lease (its holder may die), WebhookNeverDue for an empty
// queue; at once when the page was full (more lies beyond it).
func dueAt(pending []fund.WebhookPending, now time.Time) int64 {
	if len(pending) >= pendingPage {
		return 0
	}
	at := int64(fund.WebhookNeverDue)
	for i, p := range pending {
		if i > 0 && pending[i-1].OrderKey == p.OrderKey {
			continue
		}
		t := p.NextAttemptAt
		if p.LeaseUntil >= now.UnixMilli() {
			t = max(t, p.LeaseUntil+1)
		}
		at = min(at, t)
	}
	return at
}

// heads are the deliveries of pending (one endpoint's queue, by document
// then version) that are due at now, unleased, and first in their
// document's line.
func heads(e fund.WebhookEndpoint, pending []fund.WebhookPending, now time.Time) []due {
	var out []due
	for i, p := range pending {
		if i > 0 && pending[i-1].OrderKey == p.OrderKey {
			if len(out) > 0 && out[len(out)-1].p.OrderKey == p.OrderKey {
				out[len(out)-1].waiting = true
			}
			continue // a later version waits for the document's earlier one
		}
		if p.NextAttemptAt > now.UnixMilli() || p.LeaseUntil >= now.UnixMilli() {
			continue
		}
		out = append(out, due{e: e, p: p, tenant: tenantOf(e)})
	}
	return out
}

// tenantOf is whose share of the attempt slots an endpoint's deliveries
// take (Deliverer.TenantParallel): its set of funds ("*" for every fund).
func tenantOf(e fund.WebhookEndpoint) string {
	if len(e.Funds) == 0 {
		return "*"
	}
	return strings.Join(slices.Compact(slices.Sorted(slices.Values(e.Funds))), ",")
}

// dispatch starts an attempt of each due delivery that gets a slot:
// tenants are served in turn, one delivery each, those with the fewest
// attempts in flight first; a tenant beyond its share (TenantParallel)
// only while more than TenantParallel slots stay free. A delivery is
// claimed only once it has its slot, with a lease timed from then; one
// left without a slot stays unclaimed for a later round (a freed slot
// wakes Run for it).
func (d *Deliverer) dispatch(ctx context.Context, found []due) {
	byTenant := map[string][]due{}
	var tenants []string
	for _, f := range found {
		if byTenant[f.tenant] == nil {
			tenants = append(tenants, f.tenant)
		}
		byTenant[f.tenant] = append(byTenant[f.tenant], f)
	}
	d.mu.Lock()
	d.turn++
	if len(tenants) > 0 {
		k := d.turn % len(tenants)
		tenants = append(tenants[k:], tenants[:k]...)
	}
	slices.SortStableFunc(tenants, func(a, b string) int { return d.inflight[a] - d.inflight[b] })
	d.mu.Unlock()
	tried := 0
	defer func() { d.metrics.SlotWaits.Add(float64(len(found) - tried)) }()
	for len(tenants) > 0 {
		var next []string
		for _, t := range tenants {
			f := byTenant[t][0]
			byTenant[t] = byTenant[t][1:]
			switch d.start(ctx, f) {
			case startedAll:
				return
			case startedTenantFull:
				continue
			}
			tried++
			if len(byTenant[t]) > 0 {
				next = append(next, t)
			}
		}
		tenants = next
	}
}

// What start did.
const (
	started           = iota // the attempt runs, or another instance holds the delivery
	startedTenantFull        // the tenant has no slot left: the rest of its deliveries wait
	startedAll               // the instance has no slot left: every delivery left waits
)

// start takes a slot for f and claims it, timing the lease from now, and
// runs the attempt in its own goroutine.
func (d *Deliverer) start(ctx context.Context, f due) int {
	d.mu.Lock()
	total := 0
	for _, n := range d.inflight {
		total += n
	}
	switch {
	case total >= d.Parallel:
		d.starved = true
		d.mu.Unlock()
		return startedAll
	case d.inflight[f.tenant] >= d.TenantParallel && d.Parallel-total <= d.TenantParallel:
		d.starved = true
		d.mu.Unlock()
		return startedTenantFull
	}
	d.inflight[f.tenant]++
	d.mu.Unlock()
	d.attempts.Add(1)
	release := func() {
		d.mu.Lock()
		if d.inflight[f.tenant]--; d.inflight[f.tenant] == 0 {
			delete(d.inflight, f.tenant)
		}
		wake := d.starved
		d.starved = false
		d.mu.Unlock()
		d.attempts.Done()
		if wake {
			d.Wake()
		}
	}
	owner := d.Instance + "/" + randomToken()
	now := d.Now()
	until := now.Add(d.Lease)
	ok, err := d.Queue.ClaimWebhookDelivery(ctx, f.p, owner, now, until)
	if err != nil || !ok {
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("webhook delivery claim failed", "webhook", f.e.ID, "event", f.p.EventID, "error", err.Error())
		}
		release()
		return started // not claimed: another instance holds or delivered it
	}
	go func() {
		defer release()
		delivered, err := d.attempt(ctx, f.e, f.p, owner, until)
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("webhook delivery attempt failed", "webhook", f.e.ID, "event", f.p.EventID, "error", err.Error())
		}
		if delivered && f.waiting {
			d.Wake() // the document's next version is due now
		}
	}()
	return started
}

// Secrets opens the secrets a delivery at now is signed with: the current
// one, and the previous one during a rotation's overlap.
func (d *Deliverer) Secrets(e fund.WebhookEndpoint, now time.Time) ([]string, error) {
	cur, err := d.Sealer.Open(e.ID, e.SealedSecret)
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if len(e.SealedPrevious) > 0 && now.Before(e.PreviousUntil) {
		prev, err := d.Sealer.Open(e.ID, e.SealedPrevious)
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
}

// attempt tries one claimed delivery and records the outcome; delivered
// says the endpoint took it (2xx) and this instance recorded so.
//
// It sends nothing unless the lease (until) still covers the attempt's
// whole timeout and half the lease's slack beyond it: reading the
// delivery and its event may have taken long (a stalled process, a slow
// table), and another instance may take the delivery over once the lease
// ends. Then it gives the delivery up (ReleaseWebhookDelivery) for a later
// round, counting no attempt.
func (d *Deliverer) attempt(ctx context.Context, e fund.WebhookEndpoint, p fund.WebhookPending, owner string, until time.Time) (delivered bool, err error) {
	del, err := d.Queue.WebhookDeliveryOf(ctx, e.ID, p.EventID)
	if err != nil {
		return false, err
	}
	body, err := d.body(ctx, del)
	if err != nil {
		return false, err
	}
	secrets, err := d.Secrets(e, d.Now())
	if err != nil {
		return false, err
	}
	// The header's timestamp is the wall clock's, which receivers check
	// against theirs; the schedule runs on d.Now, which tests move.
	start, sent := d.Now(), time.Now()
	if left := until.Sub(start); left < d.Timeout+(d.Lease-d.Timeout)/2 {
		d.Log.Warn("webhook attempt not sent: its lease would end too soon; a later round tries it", "webhook", e.ID, "event", p.EventID, "lease_left", left)
		return false, d.Queue.ReleaseWebhookDelivery(ctx, p, owner)
	}
	sig, err := Signature(secrets, p.EventID, sent, body)
	if err != nil {
		return false, err
	}
	a := fund.WebhookAttempt{At: start.UTC(), Instance: d.Instance}
	rctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "fundsvc-webhooks/1")
	req.Header.Set(HeaderID, p.EventID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(sent.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	resp, err := d.Client.Do(req)
	a.LatencyMS = time.Since(sent).Milliseconds()
	var wait time.Duration
	if err != nil {
		d.noAnswer(&a, e.ID, p.EventID, err)
	} else {
		drain(resp.Body)
		resp.Body.Close()
		a.StatusCode = resp.StatusCode
		wait = retryAfter(resp.Header, d.Now())
	}
	now := d.Now()
	switch {
	case err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300:
		if err := d.Queue.FinishWebhookAttempt(ctx, p, owner, a, fund.DeliveryDelivered, time.Time{}); err != nil {
			return false, d.leaseLost(err, e, p)
		}
		d.metrics.Attempts.WithLabelValues("delivered").Inc()
		if !del.CommittedAt.IsZero() {
			d.metrics.Lag.Observe(now.Sub(del.CommittedAt).Seconds())
		}
		if !e.FailingSince.IsZero() {
			return true, d.Queue.MarkWebhookEndpoint(ctx, e.ID, time.Time{}, "", now)
		}
		return true, nil
	case err == nil && resp.StatusCode == http.StatusGone:
		if err := d.Queue.FinishWebhookAttempt(ctx, p, owner, a, fund.DeliveryFailed, time.Time{}); err != nil {
			return false, d.leaseLost(err, e, p)
		}
		d.metrics.Attempts.WithLabelValues("gone").Inc()
		d.metrics.Disabled.Inc()
		d.Log.Warn("webhook endpoint disabled: it answered 410 Gone", "webhook", e.ID, "event", p.EventID)
		return false, d.Queue.MarkWebhookEndpoint(ctx, e.ID, e.FailingSince, "the endpoint answered 410 Gone on "+now.UTC().Format(time.RFC3339), now)
	}
	delay, more := nextDelay(d.Schedule, p.Attempts+1, wait, d.Jitter)
	status := fund.DeliveryPending
	if !more {
		status = fund.DeliveryFailed
	}
	if err := d.Queue.FinishWebhookAttempt(ctx, p, owner, a, status, now.Add(delay)); err != nil {
		return false, d.leaseLost(err, e, p)
	}
	if more {
		d.metrics.Attempts.WithLabelValues("failed").Inc()
	} else {
		d.metrics.Attempts.WithLabelValues("gave_up").Inc()
		d.Log.Warn("webhook delivery given up: the retry schedule ran out", "webhook", e.ID, "event", p.EventID, "attempts", p.Attempts+1)
	}
	since := cmp.Or(e.FailingSince, start)
	reason := ""
	if now.Sub(since) >= d.DisableAfter {
		reason = "the endpoint has failed every attempt since " + since.UTC().Format(time.RFC3339)
		d.metrics.Disabled.Inc()
		d.Log.Warn("webhook endpoint disabled: failing for too long", "webhook", e.ID, "since", since)
	}
	if e.FailingSince.IsZero() || reason != "" {
		return false, d.Queue.MarkWebhookEndpoint(ctx, e.ID, since, reason, now)
	}
	return false, nil
}

// body is the request body of delivery del: its event as the feed holds
// it (one GetItem of the event item). The event is immutable, so every
// attempt sends the same bytes; the body is built here rather than stored
// with the delivery, so no size of event (5,000 positions with 64-character
// IDs make about 1 MB of JSON) bears on the queue's items.
func (d *Deliverer) body(ctx context.Context, del fund.WebhookDelivery) ([]byte, error) {
	ev, err := d.Feed.Event(ctx, del.DocumentID, del.Version)
	if err != nil {
		return nil, err
	}
	return json.Marshal(ev)
}

// leaseLost logs a delivery another instance took over: it may deliver the
// event again (at least once), with the same webhook-id.
func (d *Deliverer) leaseLost(err error, e fund.WebhookEndpoint, p fund.WebhookPending) error {
	if errors.Is(err, store.ErrWebhookLeaseLost) {
		d.Log.Warn("webhook delivery taken over by another instance after its lease", "webhook", e.ID, "event", p.EventID)
		return nil
	}
	return err
}
