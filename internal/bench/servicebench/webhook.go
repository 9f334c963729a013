package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// receiver is the webhook endpoint the bench subscribes: an HTTP server on
// an ephemeral loopback port that answers 204 at once and remembers when
// each event (webhook-id) first arrived. It does not verify signatures:
// it stands for a receiver that answers at once, and the tests verify
// deliveries (internal/webhooktest).
type receiver struct {
	url string
	srv *http.Server

	mu         sync.Mutex
	arrived    map[string]time.Time // webhook-id → first arrival
	deliveries int                  // every request, duplicates included
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/servicebench", arrived: map[string]time.Time{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now() // the delivery's headers are in
	id := req.Header.Get("webhook-id")
	_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	r.deliveries++
	if _, seen := r.arrived[id]; !seen && id != "" {
		r.arrived[id] = at
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// missing lists the events of ids that have not arrived.
func (r *receiver) missing(ids []string) []string {
	var m []string
	for _, id := range ids {
		if _, ok := r.arrival(id); !ok {
			m = append(m, id)
		}
	}
	return m
}

// arrival is when the event first arrived, if it did.
func (r *receiver) arrival(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.arrived[id]
	return t, ok
}

func (r *receiver) counts() (events, deliveries int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.arrived), r.deliveries
}

func (r *receiver) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// subscribe removes the endpoints earlier runs left behind (the table is
// reused; a dead one would be retried for days) and subscribes url to
// every event type of every fund. It returns the new endpoint's ID.
func subscribe(ctx context.Context, svc *service, url string) (string, error) {
	_, body, err := svc.expect(ctx, http.StatusOK, http.MethodGet, "/v1/webhooks", nil)
	if err != nil {
		return "", err
	}
	var list wire.Page[wire.Webhook]
	if err := json.Unmarshal(body, &list); err != nil {
		return "", fmt.Errorf("GET /v1/webhooks: %w", err)
	}
	for _, e := range list.Items {
		if e.CreatedBy == benchSubject {
			if _, _, err := svc.expect(ctx, http.StatusOK, http.MethodDelete, "/v1/webhooks/"+e.ID, nil); err != nil {
				return "", fmt.Errorf("delete an earlier run's endpoint: %w", err)
			}
		}
	}
	req, err := json.Marshal(wire.WebhookRequest{URL: url})
	if err != nil {
		return "", err
	}
	_, body, err = svc.expect(ctx, http.StatusCreated, http.MethodPost, "/v1/webhooks", req)
	if err != nil {
		return "", err
	}
	var e wire.Webhook
	if err := json.Unmarshal(body, &e); err != nil || e.ID == "" {
		return "", fmt.Errorf("POST /v1/webhooks: no endpoint ID in %s (%v)", truncate(body, 200), err)
	}
	return e.ID, nil
}

// unsubscribe deletes the endpoint, so that nothing more is delivered to
// the receiver and later measurements (capacity) see no deliveries.
func unsubscribe(ctx context.Context, svc *service, id string) error {
	_, _, err := svc.expect(ctx, http.StatusOK, http.MethodDelete, "/v1/webhooks/"+id, nil)
	return err
}

// commit is an acknowledged API write: its event and when its answer
// arrived.
type commit struct {
	event string
	at    time.Time
}

// commitSet is the acknowledged writes of one timed API measurement.
type commitSet struct {
	name      string
	conc      int
	commits   []commit
	noVersion int // answers without a version (no ETag), which cannot be matched
}

// commitLog records the acknowledged API writes of timed measurements
// (not of warm-ups), per measurement. A nil log records nothing.
type commitLog struct {
	mu   sync.Mutex
	cur  *commitSet
	sets []*commitSet
}

func (l *commitLog) begin(name string, conc int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur = &commitSet{name: name, conc: conc}
	l.sets = append(l.sets, l.cur)
}

func (l *commitLog) end() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.cur = nil
	l.mu.Unlock()
}

// record notes that the write of version of doc was answered at at.
func (l *commitLog) record(doc string, version int, at time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.cur == nil:
	case version < 1:
		l.cur.noVersion++
	default:
		l.cur.commits = append(l.cur.commits, commit{event: fund.EventID(doc, version), at: at})
	}
}

// webhookRun is the subscribed endpoint, its receiver and what the
// ingest measurements wrote.
type webhookRun struct {
	recv       *receiver
	endpointID string
	wait       time.Duration // how long settle waits for the receiver
	commits    commitLog
	notes      []string
}

// settle waits until the receiver has the latest event of every document
// of the pool written since the endpoint was subscribed (the pool's
// documents were created before, at version 1, whose event the endpoint
// does not get), so that a measurement does not inherit the deliveries
// of the one before it: a document's events are delivered in version
// order, so its latest one arrives last. It polls until w.wait has
// passed; then it notes what is missing and returns without error.
func (w *webhookRun) settle(ctx context.Context, r *raw, p *pool, before string) error {
	var want []string
	for _, s := range p.specs {
		v, err := r.headVersion(ctx, s.id)
		if err != nil {
			return err
		}
		if v > 1 {
			want = append(want, fund.EventID(s.id, v))
		}
	}
	start := time.Now()
	missing := pollUntil(ctx, w.wait, func() []string { return w.recv.missing(want) })
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(missing) > 0 {
		w.notes = append(w.notes, fmt.Sprintf("%s: the receiver still lacked the latest event of %d of the pool's documents after waiting %s (first: %s).",
			before, len(missing), w.wait, missing[0]))
	} else if d := time.Since(start); d > time.Second {
		fmt.Printf("    waited %s for the webhook deliveries of earlier writes (%s)\n", d.Round(10*time.Millisecond), before)
	}
	return nil
}

// pollUntil calls missing every 20 ms until it returns nothing, limit
// has passed or ctx ends, and returns its last answer.
func pollUntil(ctx context.Context, limit time.Duration, missing func() []string) []string {
	deadline := time.Now().Add(limit)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		m := missing()
		if len(m) == 0 || !time.Now().Before(deadline) {
			return m
		}
		select {
		case <-ctx.Done():
			return m
		case <-t.C:
		}
	}
}

// awaitCommits waits (up to w.wait) until every recorded write's event
// has arrived: the stragglers of the last measurement.
func (w *webhookRun) awaitCommits(ctx context.Context) {
	w.commits.mu.Lock()
	var all []string
	for _, s := range w.commits.sets {
		for _, c := range s.commits {
			all = append(all, c.event)
		}
	}
	w.commits.mu.Unlock()
	start := time.Now()
	missing := pollUntil(ctx, w.wait, func() []string { return w.recv.missing(all) })
	fmt.Printf("  webhook deliveries: waited %s for the last; %d of %d acknowledged writes' events not delivered\n",
		time.Since(start).Round(10*time.Millisecond), len(missing), len(all))
}

// deliveryRow is commit-to-delivery latency of one measurement's writes
// (or of all of them).
type deliveryRow struct {
	name      string
	conc      int
	latencies []time.Duration // answer to first arrival, of the matched writes
	unmatched int             // acknowledged writes whose event never arrived (or had no version)
}

// webhookResult is what the receiver saw of the measured writes.
type webhookResult struct {
	rows               []deliveryRow
	total              deliveryRow
	events, deliveries int // distinct events and requests the receiver got, raw writes' and warm-ups' included
	wait               time.Duration
	notes              []string
	endpointNotDeleted error
}

// result matches each recorded write with its event's arrival.
func (w *webhookRun) result() *webhookResult {
	res := &webhookResult{wait: w.wait, notes: w.notes, total: deliveryRow{name: "all"}}
	res.events, res.deliveries = w.recv.counts()
	w.commits.mu.Lock()
	defer w.commits.mu.Unlock()
	for _, s := range w.commits.sets {
		row := deliveryRow{name: s.name, conc: s.conc, unmatched: s.noVersion}
		for _, c := range s.commits {
			if t, ok := w.recv.arrival(c.event); ok {
				row.latencies = append(row.latencies, t.Sub(c.at))
			} else {
				row.unmatched++
			}
		}
		res.rows = append(res.rows, row)
		res.total.latencies = append(res.total.latencies, row.latencies...)
		res.total.unmatched += row.unmatched
	}
	return res
}

// deliveryTarget is the largest p50 from a commit's answer to its
// delivery that meets the target.
const deliveryTarget = time.Second

// deliveryVerdict is the latency target over every measured write: met
// when the p50 is under deliveryTarget and every write's event arrived.
func (res *webhookResult) deliveryVerdict() string {
	t := res.total
	if len(t.latencies) == 0 && t.unmatched == 0 {
		return "commit to delivery p50 under 1 s: no API write measured"
	}
	p50, p99 := percentile(t.latencies, 0.5), percentile(t.latencies, 0.99)
	met := "**met**"
	switch {
	case len(t.latencies) == 0 || p50 >= deliveryTarget:
		met = "**not met**"
	case t.unmatched > 0:
		met = fmt.Sprintf("**not met**: %d writes' events never arrived", t.unmatched)
	}
	return fmt.Sprintf("commit to delivery p50 under 1 s: p50 %s, p99 %s over %d acknowledged API writes, %d unmatched: %s",
		latencyOf(t.latencies, p50), latencyOf(t.latencies, p99), len(t.latencies)+t.unmatched, t.unmatched, met)
}

func latencyOf(ds []time.Duration, d time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	return ms(d)
}

// format renders the commit-to-delivery table.
func (res *webhookResult) format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Commit to delivery: from the instant the bench read a timed API write's answer to the instant the receiver got the request with that version's `webhook-id` (`evt_<document>_v<version>`, from the answer's ETag); the first arrival counts. After the last measurement the bench waited up to %s for stragglers (polling). A delivery can precede the answer (the event is committed before the latest view is written), which shows as a negative latency. The receiver got %d requests for %d distinct events (the raw writes' and warm-ups' included).\n\n",
		res.wait, res.deliveries, res.events)
	b.WriteString("| measurement | concurrency | writes | delivered | not delivered | p50 | p99 |\n|---|---:|---:|---:|---:|---:|---:|\n")
	rows := append(append([]deliveryRow(nil), res.rows...), res.total)
	for _, r := range rows {
		conc := fmt.Sprint(r.conc)
		if r.name == "all" {
			conc = "–"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %s |\n", r.name, conc, len(r.latencies)+r.unmatched, len(r.latencies), r.unmatched,
			latencyOf(r.latencies, percentile(r.latencies, 0.5)), latencyOf(r.latencies, percentile(r.latencies, 0.99)))
	}
	for _, n := range res.notes {
		b.WriteString("\nNote: " + n + "\n")
	}
	if res.endpointNotDeleted != nil {
		fmt.Fprintf(&b, "\nNote: the endpoint could not be deleted afterwards: %v\n", res.endpointNotDeleted)
	}
	return b.String()
}
