package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sustainResult is what the sustained mixed load saw and what the check of
// its acknowledged writes found afterwards.
type sustainResult struct {
	conc          int
	writeShare    float64
	elapsed       time.Duration
	requests      int
	counts        map[string]map[string]int // kind of request → status → count
	serverErrors  int                       // 5xx answers
	firstFailures map[string]string         // kind and status of a 5xx or no answer → the first one's problem detail
	acks          int                       // PUTs answered 200 or 201
	staleReads    int                       // overviews older than a version already acknowledged when they were sent
	freshChecked  int
	duplicateAcks int // two acknowledged writes given the same version of a document
	verified      int // acknowledged writes readable at their version, with their content, and the document at that version or later
	lost          []string
	// Latencies of reads and of writes, and how many writes were in
	// flight on average.
	reads, writes  stats
	writesInFlight float64
}

// ack is an acknowledged write: the version its ETag named and the title
// it sent, which that version must hold.
type ack struct {
	k       int
	version int
	title   string
}

// sustainer runs the mixed load: reads of the dataset and of the pool's
// documents while they are restated.
type sustainer struct {
	svc      *service
	ds       dataset
	pool     *pool
	summary  bool // the position summary route exists
	writes   float64
	mu       sync.Mutex
	counts   map[string]map[string]int
	failures map[string]string
	acks     []ack
	acked    []atomic.Int64 // highest version acknowledged per pool document
	stale    atomic.Int64
	checked  atomic.Int64
	requests atomic.Int64
	// durations of successful reads and writes, by s.mu.
	readTimes, writeTimes []time.Duration
}

// sustain runs the mixed load with conc workers until b is reached, then
// checks every acknowledged write.
func sustain(ctx context.Context, svc *service, ds dataset, p *pool, summary bool, conc int, writes float64, b bounds, seed uint64) (sustainResult, error) {
	s := &sustainer{svc: svc, ds: ds, pool: p, summary: summary, writes: writes,
		counts: map[string]map[string]int{}, failures: map[string]string{}, acked: make([]atomic.Int64, len(p.specs))}
	start := time.Now()
	runWorkers(ctx, conc, b, seed, func(_ int, rng *rand.Rand) { s.one(ctx, rng) })
	if err := ctx.Err(); err != nil {
		return sustainResult{}, err
	}
	r := sustainResult{conc: conc, writeShare: writes, elapsed: time.Since(start), requests: int(s.requests.Load()),
		counts: s.counts, firstFailures: s.failures, acks: len(s.acks), staleReads: int(s.stale.Load()), freshChecked: int(s.checked.Load())}
	r.reads = stats{n: len(s.readTimes), p50: percentile(s.readTimes, 0.5), p99: percentile(s.readTimes, 0.99)}
	r.writes = stats{n: len(s.writeTimes), p50: percentile(s.writeTimes, 0.5), p99: percentile(s.writeTimes, 0.99)}
	var busy time.Duration
	for _, d := range s.writeTimes {
		busy += d
	}
	r.writesInFlight = busy.Seconds() / r.elapsed.Seconds()
	for _, byStatus := range s.counts {
		for status, n := range byStatus {
			if strings.HasPrefix(status, "5") {
				r.serverErrors += n
			}
		}
	}
	fmt.Printf("  %d requests in %s; checking %d acknowledged writes\n", r.requests, r.elapsed.Round(time.Second), r.acks)
	s.verify(ctx, conc, &r)
	return r, nil
}

// one sends one request of the mix: a restatement of a pool document, or a
// read of the dataset or of a pool document.
func (s *sustainer) one(ctx context.Context, rng *rand.Rand) {
	if rng.Float64() < s.writes {
		s.write(ctx, rng.IntN(len(s.pool.specs)))
		return
	}
	var kind, path string
	switch x := rng.IntN(100); {
	case x < 25:
		kind, path = "GET overview", "/v1/documents/"+s.ds.doc(rng.IntN(s.ds.docs)).id
	case x < 45:
		s.readWritten(ctx, rng.IntN(len(s.pool.specs)))
		return
	case x < 70:
		kind, path = "GET position", "/v1/positions/"+s.ds.positionID(rng.IntN(s.ds.funds()), rng.IntN(s.ds.positions))
	case x < 85 && s.summary:
		kind, path = "GET position summary", "/v1/positions/"+s.ds.positionID(rng.IntN(s.ds.funds()), rng.IntN(s.ds.positions))+"/summary"
	default:
		kind, path = "GET fund documents", "/v1/funds/"+fundID(rng.IntN(s.ds.funds()))+"/documents"
	}
	start := time.Now()
	status, _, body, err := s.svc.do(ctx, http.MethodGet, path, nil)
	s.count(kind, status, body, err, time.Since(start))
}

// write restates pool document k without If-Match; concurrent writers of
// one document are the service's to serialize.
func (s *sustainer) write(ctx context.Context, k int) {
	d := s.pool.next(k)
	body, err := requestBody(d)
	if err != nil {
		s.count("PUT document", 0, nil, err, 0)
		return
	}
	start := time.Now()
	status, version, answer, err := s.svc.do(ctx, http.MethodPut, "/v1/documents/"+d.ID, body)
	s.count("PUT document", status, answer, err, time.Since(start))
	if err == nil && (status == http.StatusOK || status == http.StatusCreated) {
		s.mu.Lock()
		s.acks = append(s.acks, ack{k: k, version: version, title: d.Title})
		s.mu.Unlock()
		for a := &s.acked[k]; ; {
			cur := a.Load()
			if int64(version) <= cur || a.CompareAndSwap(cur, int64(version)) {
				break
			}
		}
	}
}

// readWritten reads the overview of a pool document and checks that it is
// no older than any version acknowledged before the read was sent: the
// overview reads strongly consistently, so it must be.
func (s *sustainer) readWritten(ctx context.Context, k int) {
	floor := s.acked[k].Load()
	start := time.Now()
	status, version, body, err := s.svc.do(ctx, http.MethodGet, "/v1/documents/"+s.pool.specs[k].id, nil)
	s.count("GET overview (documents being written)", status, body, err, time.Since(start))
	if err == nil && status == http.StatusOK {
		s.checked.Add(1)
		if int64(version) < floor {
			s.stale.Add(1)
		}
	}
}

// count records an answer by kind and status, and how long it took if it
// succeeded, and keeps the first of each kind of failure (a 5xx, or no
// answer) to report.
func (s *sustainer) count(kind string, status int, body []byte, err error, took time.Duration) {
	s.requests.Add(1)
	key := strconv.Itoa(status)
	if err != nil {
		key, body = "no answer", []byte(err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts[kind] == nil {
		s.counts[kind] = map[string]int{}
	}
	s.counts[kind][key]++
	if err == nil && status < 300 {
		if strings.HasPrefix(kind, "PUT") {
			s.writeTimes = append(s.writeTimes, took)
		} else {
			s.readTimes = append(s.readTimes, took)
		}
	}
	if first := kind + " " + key; (err != nil || status >= 500) && s.failures[first] == "" {
		s.failures[first] = truncate(body, 300)
	}
}

// verify checks every acknowledged write: its version holds the title it
// sent (GET /versions/{n}), no other acknowledged write got the same
// version, and the document now reads at that version or later.
func (s *sustainer) verify(ctx context.Context, conc int, r *sustainResult) {
	seen := map[[2]int]int{}
	for _, a := range s.acks {
		seen[[2]int{a.k, a.version}]++
	}
	// Of writes acknowledged with the same version, at most one can find
	// its content there; the others are reported lost below too.
	for _, n := range seen {
		r.duplicateAcks += n - 1
	}
	latest := make([]int, len(s.pool.specs))
	for k, spec := range s.pool.specs {
		v, _, err := s.svc.expect(ctx, http.StatusOK, http.MethodGet, "/v1/documents/"+spec.id, nil)
		if err != nil {
			r.lost = append(r.lost, err.Error())
			continue
		}
		latest[k] = v
	}

	var mu sync.Mutex
	fail := func(msg string) {
		mu.Lock()
		r.lost = append(r.lost, msg)
		mu.Unlock()
	}
	var next atomic.Int64
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(s.acks) && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				a := s.acks[i]
				id := s.pool.specs[a.k].id
				if latest[a.k] < a.version {
					fail(fmt.Sprintf("%s reads at version %d after version %d was acknowledged", id, latest[a.k], a.version))
					continue
				}
				_, body, err := s.svc.expect(ctx, http.StatusOK, http.MethodGet, fmt.Sprintf("/v1/documents/%s/versions/%d", id, a.version), nil)
				if err != nil {
					fail(err.Error())
					continue
				}
				if title, err := titleOf(body); err != nil || title != a.title {
					fail(fmt.Sprintf("%s version %d holds title %q, but the write acknowledged with it sent %q", id, a.version, title, a.title))
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	r.verified = int(ok.Load())
	sort.Strings(r.lost)
}
