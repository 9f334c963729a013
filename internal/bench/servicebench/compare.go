package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// apiPageLimit is the service's default page size (config.DefaultPageLimit),
// which the raw baselines of paginated routes use too.
const apiPageLimit = 100

// comparison is one route measured against its raw baseline.
type comparison struct {
	name     string
	write    bool    // measured in one slice, warmed up a tenth as long
	target   float64 // the most API ÷ raw at p50, at every concurrency; 0 for none
	api, raw workload
	// settle runs, untimed, before each side's measurement of a write
	// (ingest with a webhook endpoint waits for the deliveries of the
	// writes before); its argument says which measurement follows.
	settle func(ctx context.Context, next string) error
	// commits records the API's acknowledged writes of the timed
	// measurements, for the commit-to-delivery latency; nil for none.
	commits *commitLog
	skip    string // why it was not measured
	// note, if set, says in the report's list of targets what the
	// measured comparison shows (the floor's has no target).
	note func(*comparison) string

	results []pair // one per concurrency, in the order measured
}

// pair is the API and its baseline at one concurrency.
type pair struct {
	conc     int
	api, raw stats
}

// positionName names the position read across documents, which the floor
// follows (floor.go).
const positionName = "position across documents"

// summaryName names the position summary, whose route a build of the
// service may not have yet.
const summaryName = "position summary"

// measured reports whether the comparison called name was measured.
func measured(comps []*comparison, name string) bool {
	for _, c := range comps {
		if c.name == name {
			return c.skip == ""
		}
	}
	return false
}

// readComparisons are the read routes and the Query behind each, and the
// floor (floor.go) after the position read whose answers' size it takes.
func readComparisons(svc, floor *service, r *raw, ds dataset) []*comparison {
	doc := func(rng *rand.Rand) string { return ds.doc(rng.IntN(ds.docs)).id }
	pos := func(rng *rand.Rand) string { return ds.positionID(rng.IntN(ds.funds()), rng.IntN(ds.positions)) }
	fnd := func(rng *rand.Rand) string { return fundID(rng.IntN(ds.funds())) }
	get := func(target func(*rand.Rand) string, path string, sizes *answerSizes) workload {
		return func(_, _ int, rng *rand.Rand) call {
			p := strings.Replace(path, "{}", target(rng), 1)
			return func(ctx context.Context) error {
				_, b, err := svc.expect(ctx, http.StatusOK, http.MethodGet, p, nil)
				if sizes != nil {
					sizes.add(len(b))
				}
				return err
			}
		}
	}
	var positionAnswers answerSizes
	positionPage := func(ctx context.Context, p string) ([]map[string]types.AttributeValue, error) {
		return r.positionItems(ctx, p, apiPageLimit, false)
	}
	query := func(target func(*rand.Rand) string, q func(context.Context, string) ([]map[string]types.AttributeValue, error)) workload {
		return func(_, _ int, rng *rand.Rand) call {
			t := target(rng)
			return func(ctx context.Context) error {
				_, err := q(ctx, t)
				return err
			}
		}
	}
	floorComparison := &comparison{name: floorName, raw: query(pos, positionPage),
		api: func(_, _ int, rng *rand.Rand) call {
			p := "/v1/positions/" + pos(rng) + "?bytes=" + strconv.Itoa(positionAnswers.median())
			return func(ctx context.Context) error {
				_, _, err := floor.expect(ctx, http.StatusOK, http.MethodGet, p, nil)
				return err
			}
		}}
	floorComparison.note = func(c *comparison) string {
		var parts []string
		for _, p := range c.results {
			parts = append(parts, fmt.Sprintf("%.2f at concurrency %d", c.ratio(p), p.conc))
		}
		return fmt.Sprintf("the floor of the position read: a bare server that makes its Query and answers %d bytes (the position read's median answer), "+
			"doing nothing else, p50 ÷ raw %s. The position read's ratio above the floor is fundsvc's own work; the floor is the hop between processes and the answer's bytes over loopback, which any service in a process of its own pays",
			positionAnswers.median(), strings.Join(parts, ", "))
	}
	if floor == nil {
		floorComparison.skip = "not measured: no floor server"
	}
	return []*comparison{
		{name: "document overview", target: 1.25,
			api: get(doc, "/v1/documents/{}", nil), raw: query(doc, r.overview)},
		{name: positionName, target: 1.25,
			api: get(pos, "/v1/positions/{}", &positionAnswers), raw: query(pos, positionPage)},
		floorComparison,
		{name: summaryName, target: 1.25,
			api: get(pos, "/v1/positions/{}/summary", nil),
			raw: query(pos, func(ctx context.Context, p string) ([]map[string]types.AttributeValue, error) {
				return r.positionItems(ctx, p, 0, true)
			})},
		{name: "fund documents",
			api: get(fnd, "/v1/funds/{}/documents", nil),
			raw: query(fnd, func(ctx context.Context, f string) ([]map[string]types.AttributeValue, error) {
				return r.fundDocuments(ctx, f, apiPageLimit)
			})},
	}
}

// ingestTarget is the most a version's commit may take, p50, over the
// least the table allows for the same items.
const ingestTarget = 2.0

// ingestComparison is PUT of a restatement (or, first, of version 1 of a
// new document of new positions) against the least the table allows for
// it (raw.least). With a webhook endpoint subscribed (w not nil), each
// side first waits for the deliveries of the pool's writes before it, and
// the API's writes are recorded for the commit-to-delivery latency.
func ingestComparison(name string, svc *service, r *raw, p *pool, w *webhookRun, first bool) *comparison {
	next, status := p.next, http.StatusOK
	if first {
		next, status = p.fresh, http.StatusCreated
	}
	c := &comparison{name: name, write: true, target: ingestTarget, raw: rawIngest(r, next, len(p.specs))}
	if w == nil {
		c.api = apiIngest(svc, next, len(p.specs), status, nil)
		return c
	}
	c.commits = &w.commits
	c.api = apiIngest(svc, next, len(p.specs), status, c.commits)
	c.settle = func(ctx context.Context, next string) error { return w.settle(ctx, r, p, next) }
	return c
}

// probe checks that a route exists in this build of the service: the
// position summary may not yet.
func probe(ctx context.Context, svc *service, path string) string {
	status, _, body, err := svc.do(ctx, http.MethodGet, path, nil)
	switch {
	case err != nil:
		return err.Error()
	case status == http.StatusOK:
		return ""
	case status == http.StatusNotFound && strings.Contains(string(body), "no such route"):
		return "not measured: this build of fundsvc has no such route"
	default:
		return fmt.Sprintf("not measured: %s answered %d: %s", path, status, truncate(body, 200))
	}
}

// run measures the comparison at each concurrency, after an untimed
// warm-up of each side. A read is measured in slices: the API and raw
// alternate, a slice of the bounds each, which goes first swapping from
// slice to slice, and each side's requests are pooled, so a change in the
// machine's load during the measurement falls on both sides alike. A write
// is measured in one slice (its raw baseline must first re-read what the
// API wrote).
func (c *comparison) run(ctx context.Context, concs []int, b bounds, slices, warmup int, seed uint64) error {
	seed ^= hash(c.name)
	if err := c.warmUp(ctx, b.limit, warmup, seed+1); err != nil {
		return err
	}
	if c.write {
		slices = 1
	}
	slice := b.slice(slices)
	for i, conc := range concs {
		var api, raw samples
		for k := range slices {
			s := seed + uint64(k)*7919 // the same targets for both sides of a slice
			if (i+k)%2 == 0 {
				api.add(c.measureAPI(ctx, conc, slice, s))
				raw.add(c.measureRaw(ctx, conc, slice, s))
			} else {
				raw.add(c.measureRaw(ctx, conc, slice, s))
				api.add(c.measureAPI(ctx, conc, slice, s))
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p := pair{conc: conc, api: api.stats(), raw: raw.stats()}
		c.results = append(c.results, p)
		c.print(p)
	}
	return nil
}

// warmUp sends untimed requests to both sides, a tenth as many for writes;
// any failure there stops the run.
func (c *comparison) warmUp(ctx context.Context, limit time.Duration, n int, seed uint64) error {
	b := bounds{requests: n, limit: limit}
	if c.write {
		b.requests = max(1, n/10)
	}
	if s := measure(ctx, 1, b, seed, c.api); s.firstErr != nil {
		return fmt.Errorf("%s: API warm-up: %w", c.name, s.firstErr)
	}
	if s := c.measureRaw(ctx, 1, b, seed); s.firstErr != nil {
		return fmt.Errorf("%s: raw warm-up: %w", c.name, s.firstErr)
	}
	return nil
}

// measureAPI measures the API side, its acknowledged writes recorded.
func (c *comparison) measureAPI(ctx context.Context, conc int, b bounds, seed uint64) samples {
	if c.settle != nil {
		if err := c.settle(ctx, fmt.Sprintf("before %s, API, concurrency %d", c.name, conc)); err != nil {
			return samples{errors: 1, firstErr: err}
		}
	}
	c.commits.begin(c.name, conc)
	defer c.commits.end()
	return measure(ctx, conc, b, seed, c.api)
}

func (c *comparison) measureRaw(ctx context.Context, conc int, b bounds, seed uint64) samples {
	if c.settle != nil {
		if err := c.settle(ctx, fmt.Sprintf("before %s, raw, concurrency %d", c.name, conc)); err != nil {
			return samples{errors: 1, firstErr: err}
		}
	}
	return measure(ctx, conc, b, seed, c.raw)
}

// print shows one pair as it is measured.
func (c *comparison) print(p pair) {
	fmt.Printf("  %-26s c=%-2d API p50 %8s p99 %8s %7.1f req/s (%d, %d errors) | raw p50 %8s p99 %8s %7.1f req/s (%d, %d errors)\n",
		c.name, p.conc, ms(p.api.p50), ms(p.api.p99), p.api.rps, p.api.n, p.api.errors,
		ms(p.raw.p50), ms(p.raw.p99), p.raw.rps, p.raw.n, p.raw.errors)
	for _, e := range []error{p.api.firstErr, p.raw.firstErr} {
		if e != nil {
			fmt.Printf("    first error: %v\n", e)
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
