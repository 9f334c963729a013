package main

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// call is one prepared request: everything it needs (target, body) is
// chosen before the clock starts, so only the call itself is timed.
type call func(ctx context.Context) error

// workload prepares the next request of worker w of conc. Each worker has
// its own generator, seeded by the run's seed and the worker's number, so
// the API and its raw baseline are sent the same targets in the same order.
type workload func(w, conc int, rng *rand.Rand) call

// bounds stop a measurement at whichever comes first: a number of
// requests or a time limit. Requests in flight at the limit complete and
// count.
type bounds struct {
	requests int
	limit    time.Duration
}

// stats summarizes one measurement.
type stats struct {
	n, errors int
	firstErr  error
	p50, p99  time.Duration
	rps       float64 // completed requests per second of wall time
}

// measure runs load with conc workers until b is reached and returns
// latency percentiles over the successful requests and their rate.
func measure(ctx context.Context, conc int, b bounds, seed uint64, load workload) stats {
	var (
		mu        sync.Mutex
		durations []time.Duration
		errs      int
		firstErr  error
	)
	start := time.Now()
	runWorkers(ctx, conc, b, seed, func(w int, rng *rand.Rand) {
		c := load(w, conc, rng)
		t0 := time.Now()
		err := c(ctx)
		d := time.Since(t0)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs++
			if firstErr == nil {
				firstErr = err
			}
		} else {
			durations = append(durations, d)
		}
	})
	wall := time.Since(start)
	s := stats{n: len(durations), errors: errs, firstErr: firstErr, rps: float64(len(durations)) / wall.Seconds()}
	s.p50, s.p99 = percentile(durations, 0.50), percentile(durations, 0.99)
	return s
}

// runWorkers runs one request at a time in each of conc workers until b's
// request count or time limit is reached (or ctx ends); worker w draws its
// choices from its own generator, seeded by seed and w.
func runWorkers(ctx context.Context, conc int, b bounds, seed uint64, one func(w int, rng *rand.Rand)) {
	deadline := time.Now().Add(b.limit)
	var issued atomic.Int64
	var wg sync.WaitGroup
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for ctx.Err() == nil && time.Now().Before(deadline) && issued.Add(1) <= int64(b.requests) {
				one(w, rng)
			}
		}()
	}
	wg.Wait()
}

// percentile is the nearest-rank percentile: the smallest duration that at
// least a fraction q of the samples do not exceed.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// owned picks one of the pool's n items that worker w of conc owns (those
// whose index is w modulo conc), so that concurrent workers never write
// the same document.
func owned(rng *rand.Rand, n, conc, w int) int {
	mine := (n - w + conc - 1) / conc
	return w + conc*rng.IntN(mine)
}
