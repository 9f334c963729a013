package main

import (
	"cmp"
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

// slice is one of n equal slices of b (at least one request each).
func (b bounds) slice(n int) bounds {
	return bounds{requests: max(1, b.requests/n), limit: b.limit / time.Duration(n)}
}

// stats summarizes one measurement.
type stats struct {
	n, errors int
	firstErr  error
	p50, p99  time.Duration
	rps       float64 // completed requests per second of wall time
}

// samples are the raw results of one or more measurements of one side.
type samples struct {
	durations []time.Duration // of the successful requests
	errors    int
	firstErr  error
	wall      time.Duration
}

// add pools o into s.
func (s *samples) add(o samples) {
	s.durations = append(s.durations, o.durations...)
	s.errors += o.errors
	if s.firstErr == nil {
		s.firstErr = o.firstErr
	}
	s.wall += o.wall
}

// stats are the percentiles of the pooled requests and their rate over
// the pooled wall time.
func (s samples) stats() stats {
	st := stats{n: len(s.durations), errors: s.errors, firstErr: s.firstErr}
	if s.wall > 0 {
		st.rps = float64(len(s.durations)) / s.wall.Seconds()
	}
	st.p50, st.p99 = percentile(s.durations, 0.50), percentile(s.durations, 0.99)
	return st
}

// measure runs load with conc workers until b is reached.
func measure(ctx context.Context, conc int, b bounds, seed uint64, load workload) samples {
	var (
		mu sync.Mutex
		s  samples
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
			s.errors++
			if s.firstErr == nil {
				s.firstErr = err
			}
		} else {
			s.durations = append(s.durations, d)
		}
	})
	s.wall = time.Since(start)
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

// percentile is the nearest-rank percentile: the smallest sample (a
// duration, or an answer's bytes) that at least a fraction q of the
// samples do not exceed; zero when there are none.
func percentile[T cmp.Ordered](ds []T, q float64) T {
	if len(ds) == 0 {
		var zero T
		return zero
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
