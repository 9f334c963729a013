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
	"sync"
	"sync/atomic"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// Feed is the event feed across every fund; *store.Store satisfies it
// (store/events.go).
type Feed interface {
	EventsAfter(ctx context.Context, after store.EventCursor, limit int, f store.EventFilter) (store.EventPage, error)
	Event(ctx context.Context, doc string, version int) (fund.Event, error)
}

// Store is what delivery keeps in the table; *store.Store satisfies it.
type Store interface {
	WebhookEndpoints(ctx context.Context) ([]store.WebhookEndpoint, error)
	MarkWebhookEndpoint(ctx context.Context, id string, failingSince time.Time, disableReason string, now time.Time) error
	WebhookCursor(ctx context.Context, id string) (string, error)
	AdvanceWebhookCursor(ctx context.Context, id, from, to string) (bool, error)
	EnqueueWebhookDelivery(ctx context.Context, d store.WebhookDelivery, now time.Time) (bool, error)
	PendingWebhookDeliveries(ctx context.Context, endpointID string, limit int) ([]store.WebhookPending, error)
	ClaimWebhookDelivery(ctx context.Context, p store.WebhookPending, owner string, now, until time.Time) (bool, error)
	WebhookDeliveryOf(ctx context.Context, endpointID, eventID string) (store.WebhookDelivery, error)
	FinishWebhookAttempt(ctx context.Context, p store.WebhookPending, owner string, a store.WebhookAttempt, status string, next time.Time) error
}

// Deliverer runs delivery on one instance; several instances share the work
// through the table's leases.
type Deliverer struct {
	Store  Store
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
	// Parallel bounds the attempts in flight on this instance (8).
	Parallel int
	// Client sends the requests (Policy.Client(Timeout) when nil).
	Client *http.Client

	once     sync.Once
	metrics  *Metrics
	enqueued *lru.Cache[string, struct{}] // endpoint and event IDs this process queued: not read again
	wake     chan struct{}                // Wake's signal to Run: a round is due now
}

// DefaultTimeout bounds one delivery attempt.
const DefaultTimeout = 15 * time.Second

// DefaultDisableAfter is how long an endpoint may fail before it is disabled.
const DefaultDisableAfter = 5 * 24 * time.Hour

// Metrics are delivery's Prometheus collectors.
type Metrics struct {
	Attempts *prometheus.CounterVec
	Lag      prometheus.Histogram
	Disabled prometheus.Counter
	Late     prometheus.Counter
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
	}
}

// Collectors lists the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Attempts, m.Lag, m.Disabled, m.Late}
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
		d.Parallel = cmp.Or(d.Parallel, 8)
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
// (Wake), and again straight after a round that delivered an event whose
// document had a later version waiting behind it.
func (d *Deliverer) Run(ctx context.Context, poll time.Duration) {
	d.init()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		again, err := d.round(ctx)
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("webhook delivery round failed", "error", err.Error())
		}
		if again && ctx.Err() == nil {
			continue
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

// RunOnce is one round: for every enabled endpoint, queue the feed's new
// events it subscribes to, then try every delivery that is due and first
// in its document's line, each claimed with a lease first.
func (d *Deliverer) RunOnce(ctx context.Context) error {
	_, err := d.round(ctx)
	return err
}

// round is RunOnce; again says whether a later version waits behind an
// event the round delivered, so the next round is due at once.
func (d *Deliverer) round(ctx context.Context) (again bool, err error) {
	d.init()
	endpoints, err := d.Store.WebhookEndpoints(ctx)
	if err != nil {
		return false, err
	}
	var waiting, delivered atomic.Bool // a version waited behind its document's earlier one; an attempt delivered
	sem := make(chan struct{}, d.Parallel)
	var wg sync.WaitGroup
	var (
		mu   sync.Mutex // guards errs, which the attempts' goroutines add to
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for _, e := range endpoints {
		if !e.Enabled {
			continue
		}
		if err := d.fill(ctx, e); err != nil {
			fail(err)
			continue
		}
		pending, err := d.Store.PendingWebhookDeliveries(ctx, e.ID, pendingPage)
		if err != nil {
			fail(err)
			continue
		}
		now := d.Now()
		seen := map[string]bool{}
		for _, p := range pending {
			if seen[p.OrderKey] {
				waiting.Store(true)
				continue // a later version waits for the document's earlier one
			}
			seen[p.OrderKey] = true
			if p.NextAttemptAt > now.UnixMilli() || p.LeaseUntil >= now.UnixMilli() {
				continue
			}
			owner := d.Instance + "/" + randomToken()
			ok, err := d.Store.ClaimWebhookDelivery(ctx, p, owner, now, now.Add(d.Lease))
			if err != nil {
				fail(err)
				continue
			}
			if !ok {
				continue // another instance holds it
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				ok, err := d.attempt(ctx, e, p, owner)
				if err != nil {
					fail(err)
				}
				if ok {
					delivered.Store(true)
				}
			}()
		}
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return waiting.Load() && delivered.Load(), errors.Join(errs...)
}

// feedPage is how many events one read of the feed asks for.
const feedPage = 200

// fill queues the events after the endpoint's cursor that it subscribes
// to, up to now, then moves the cursor, but never past the feed's
// watermark: an event committed later may still appear before it, so the
// unsettled tail is read again each round (queueing an event twice changes
// nothing: the delivery's log entry is put only if absent). Two instances
// may fill at once; only one moves the cursor. A version whose earlier
// version the endpoint should get but has not queued yet (an index that
// lags) stops the round, so a document's versions are queued, and so
// delivered, in order.
func (d *Deliverer) fill(ctx context.Context, e store.WebhookEndpoint) error {
	stored, err := d.Store.WebhookCursor(ctx, e.ID)
	if err != nil {
		return err
	}
	from, err := store.ParseEventCursor(stored)
	if err != nil {
		return err
	}
	if from.IsZero() {
		// A new endpoint gets what is committed from its creation on.
		from = store.EventCursor{At: e.CreatedAt.Add(-time.Millisecond)}
	}
	// Up to the present by the wall clock, which stamps commits (d.Now may
	// be a test's clock).
	filter := store.EventFilter{Types: eventTypes(e.EventTypes), Funds: e.Funds, Until: later(d.Now(), time.Now())}
	after, settled := from, from
	for {
		page, err := d.Feed.EventsAfter(ctx, after, feedPage, filter)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			if ev.Timestamp.Before(e.CreatedAt) {
				continue
			}
			if !d.enqueued.Contains(e.ID + "\x00" + ev.ID) {
				ready, err := d.predecessorQueued(ctx, e, ev, from)
				if err != nil {
					return err
				}
				if !ready {
					return d.advance(ctx, e.ID, stored, from, settled)
				}
				if err := d.enqueue(ctx, e, ev); err != nil {
					return err
				}
			}
			if !ev.Timestamp.After(page.Watermark) {
				settled = store.EventCursor{At: ev.Timestamp, DocumentID: ev.Data.DocumentID, Version: ev.Data.Version}
			}
		}
		if !page.Next.At.After(page.Watermark) {
			settled = page.Next
		} else if page.Watermark.After(settled.At) && !page.More {
			settled = store.EventCursor{At: page.Watermark}
		}
		if !page.More {
			break
		}
		after = page.Next
	}
	return d.advance(ctx, e.ID, stored, from, settled)
}

// advance persists the endpoint's settled cursor when it moved.
func (d *Deliverer) advance(ctx context.Context, id, stored string, from, settled store.EventCursor) error {
	if settled == from || !settled.At.After(from.At) && settled.String() == stored {
		return nil
	}
	_, err := d.Store.AdvanceWebhookCursor(ctx, id, stored, settled.String())
	return err // not moved: another instance moved it first, and fills from there
}

// enqueue queues ev for endpoint e.
func (d *Deliverer) enqueue(ctx context.Context, e store.WebhookEndpoint, ev fund.Event) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if _, err := d.Store.EnqueueWebhookDelivery(ctx, store.WebhookDelivery{
		EndpointID: e.ID, EventID: ev.ID, EventType: string(ev.Type), DocumentID: ev.Data.DocumentID,
		Version: ev.Data.Version, Payload: body, CommittedAt: ev.Timestamp,
	}, d.Now()); err != nil {
		return err
	}
	d.enqueued.Add(e.ID+"\x00"+ev.ID, struct{}{})
	return nil
}

// predecessorQueued reports whether the endpoint may queue ev: its
// document's previous version is queued for it already, or it is not one
// the endpoint gets (committed before the endpoint, or of a type it does
// not subscribe to).
//
// A previous version the endpoint gets but has not queued is waited for
// while it may still come in the feed after from, the cursor the round
// read from (an index that lags). At or before from, no read of the feed
// will return it again: it showed in the feed later than the settle
// margin allows (FUNDSVC_FEED_SETTLE; a writer whose clock is behind, a
// commit slower than the margin). It is queued now, after its own
// predecessor, so the document's versions still go in order and nothing
// behind it waits forever; the log says so, and
// fundsvc_webhook_events_late_total counts it.
func (d *Deliverer) predecessorQueued(ctx context.Context, e store.WebhookEndpoint, ev fund.Event, from store.EventCursor) (bool, error) {
	v := ev.Data.Version
	if v <= 1 {
		return true, nil
	}
	prevID := fund.EventID(ev.Data.DocumentID, v-1)
	if d.enqueued.Contains(e.ID + "\x00" + prevID) {
		return true, nil
	}
	_, err := d.Store.WebhookDeliveryOf(ctx, e.ID, prevID)
	if err == nil {
		return true, nil
	}
	if fund.ErrorCode(err) != fund.ENOTFOUND {
		return false, err
	}
	prev, err := d.Feed.Event(ctx, ev.Data.DocumentID, v-1)
	if err != nil {
		return false, err
	}
	if !Matches(e, prev) {
		return true, nil
	}
	if !from.Passed(&prev) {
		return false, nil // still to come in the feed
	}
	if ready, err := d.predecessorQueued(ctx, e, prev, from); !ready || err != nil {
		return false, err
	}
	if err := d.enqueue(ctx, e, prev); err != nil {
		return false, err
	}
	d.metrics.Late.Inc()
	d.Log.Warn("webhook event queued late: it showed in the feed after the endpoint had read past its commit instant (see FUNDSVC_FEED_SETTLE)",
		"endpoint", e.ID, "event", prev.ID, "committed_at", prev.Timestamp, "cursor", from.String())
	return true, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func eventTypes(names []string) []fund.EventType {
	out := make([]fund.EventType, 0, len(names))
	for _, n := range names {
		out = append(out, fund.EventType(n))
	}
	return out
}

// Matches reports whether endpoint e subscribes to ev: its types (all when
// none is named), its funds (all when none is named), and only events
// committed since it was created.
func Matches(e store.WebhookEndpoint, ev fund.Event) bool {
	if len(e.EventTypes) > 0 && !slices.Contains(e.EventTypes, string(ev.Type)) {
		return false
	}
	if len(e.Funds) > 0 && !slices.Contains(e.Funds, ev.Data.FundID) {
		return false
	}
	return !ev.Timestamp.Before(e.CreatedAt)
}

// Secrets opens the secrets a delivery at now is signed with: the current
// one, and the previous one during a rotation's overlap.
func (d *Deliverer) Secrets(e store.WebhookEndpoint, now time.Time) ([]string, error) {
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
func (d *Deliverer) attempt(ctx context.Context, e store.WebhookEndpoint, p store.WebhookPending, owner string) (delivered bool, err error) {
	del, err := d.Store.WebhookDeliveryOf(ctx, e.ID, p.EventID)
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
	sig, err := Signature(secrets, p.EventID, sent, del.Payload)
	if err != nil {
		return false, err
	}
	a := store.WebhookAttempt{At: start.UTC(), Instance: d.Instance}
	rctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, e.URL, bytes.NewReader(del.Payload))
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
		if err := d.Store.FinishWebhookAttempt(ctx, p, owner, a, store.DeliveryDelivered, time.Time{}); err != nil {
			return false, d.leaseLost(err, e, p)
		}
		d.metrics.Attempts.WithLabelValues("delivered").Inc()
		if !del.CommittedAt.IsZero() {
			d.metrics.Lag.Observe(now.Sub(del.CommittedAt).Seconds())
		}
		if !e.FailingSince.IsZero() {
			return true, d.Store.MarkWebhookEndpoint(ctx, e.ID, time.Time{}, "", now)
		}
		return true, nil
	case err == nil && resp.StatusCode == http.StatusGone:
		if err := d.Store.FinishWebhookAttempt(ctx, p, owner, a, store.DeliveryFailed, time.Time{}); err != nil {
			return false, d.leaseLost(err, e, p)
		}
		d.metrics.Attempts.WithLabelValues("gone").Inc()
		d.metrics.Disabled.Inc()
		d.Log.Warn("webhook endpoint disabled: it answered 410 Gone", "webhook", e.ID, "event", p.EventID)
		return false, d.Store.MarkWebhookEndpoint(ctx, e.ID, e.FailingSince, "the endpoint answered 410 Gone on "+now.UTC().Format(time.RFC3339), now)
	}
	delay, more := nextDelay(d.Schedule, p.Attempts+1, wait, d.Jitter)
	status := store.DeliveryPending
	if !more {
		status = store.DeliveryFailed
	}
	if err := d.Store.FinishWebhookAttempt(ctx, p, owner, a, status, now.Add(delay)); err != nil {
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
		return false, d.Store.MarkWebhookEndpoint(ctx, e.ID, since, reason, now)
	}
	return false, nil
}

// leaseLost logs a delivery another instance took over: it may deliver the
// event again (at least once), with the same webhook-id.
func (d *Deliverer) leaseLost(err error, e store.WebhookEndpoint, p store.WebhookPending) error {
	if errors.Is(err, store.ErrWebhookLeaseLost) {
		d.Log.Warn("webhook delivery taken over by another instance after its lease", "webhook", e.ID, "event", p.EventID)
		return nil
	}
	return err
}
