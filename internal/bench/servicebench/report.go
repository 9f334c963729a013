package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// format renders the results as Markdown: the command and machine, a table
// of every comparison, the targets, the commit-to-delivery latency of
// webhooks (wr; nil when no endpoint was subscribed) and the sustained
// load.
func format(o options, comps []*comparison, wr *webhookResult, sr *sustainResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Command: `%s` (`go run ./internal/bench/servicebench %s`)\n\n", o.makeCommand, strings.Join(o.args, " "))
	fmt.Fprintf(&b, "Machine: %s/%s, %d CPUs, Go %s; DynamoDB Local (tables in `%s`), fundsvc and the client on the same machine, over loopback.",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), o.dataDir)
	if o.loadBefore != "" {
		fmt.Fprintf(&b, " Load average (1, 5, 15 minutes) before the measurements: %s; after: %s.", o.loadBefore, loadAverage())
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "Dataset: %d documents of %d positions (a capital call, a distribution and an unfunded commitment each) in %d funds of up to %d documents that share their positions; %d documents restated twice. ",
		o.ds.docs, o.ds.positions, o.ds.funds(), docsPerFund, o.ds.restatedCount())
	fmt.Fprintf(&b, "Each measurement: at most %d requests or %s, after %d untimed warm-up requests (writes: %d); documents and positions drawn with seed %d, the same for the API and its baseline. ",
		o.bounds.requests, o.bounds.limit, o.warmup, max(1, o.warmup/10), o.seed)
	slice := o.bounds.slice(o.slices)
	fmt.Fprintf(&b, "A read's measurement is %d slices per side (at most %d requests or %s each), alternating API and raw, pooled per side; a write's is one.\n\n",
		o.slices, slice.requests, slice.limit)

	if wr != nil {
		b.WriteString("Webhooks: the service runs with a webhook secret key, and during these comparisons one endpoint is subscribed to every event type of every fund, at a receiver in the bench (loopback, answering 204 at once). So the API's ingest pays for its deliveries besides the event it commits: the service polls the feed, queues, claims and records each delivery in DynamoDB Local and POSTs it, on the same machine. The baseline, the least the table allows, commits no event, so the service delivers nothing for it. Before each side of an ingest the bench waits (polling) until the receiver has the latest event of every document written so far, so that neither side inherits the other's backlog. The endpoint is deleted before the capacity measurement and the sustained load.\n\n")
	} else {
		b.WriteString("Webhooks: no endpoint subscribed (`-webhook=false`); the service runs with a webhook secret key, so its deliverer polls for endpoints.\n\n")
	}
	for _, n := range o.notes {
		b.WriteString("Note: " + n + "\n\n")
	}
	b.WriteString("| measurement | concurrency | API p50 | raw p50 | API p99 | raw p99 | API req/s | raw req/s | API ÷ raw |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range comps {
		if c.skip != "" {
			fmt.Fprintf(&b, "| %s | – | – | – | – | – | – | – | %s |\n", c.name, c.skip)
			continue
		}
		for _, p := range c.results {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %.1f | %.1f | %s |\n", c.name, p.conc,
				latency(p.api, p.api.p50), latency(p.raw, p.raw.p50), latency(p.api, p.api.p99), latency(p.raw, p.raw.p99),
				p.api.rps, p.raw.rps, c.ratioText(p))
		}
	}
	b.WriteString("\nTargets:\n\n")
	for _, c := range comps {
		if c.target > 0 && c.skip == "" {
			b.WriteString("- " + c.verdict() + "\n")
		}
		if c.note != nil && c.skip == "" {
			b.WriteString("- " + c.note(c) + ".\n")
		}
	}
	if wr != nil {
		b.WriteString("- " + wr.deliveryVerdict() + "\n")
	}
	if errs := errorLines(comps); len(errs) > 0 {
		b.WriteString("\nFailed requests (not in the percentiles):\n\n")
		for _, e := range errs {
			b.WriteString("- " + e + "\n")
		}
	}
	if wr != nil {
		b.WriteString("\n" + wr.format())
	}
	if sr != nil {
		b.WriteString("\n" + sr.format())
	}
	return b.String()
}

// latency shows one of a measurement's percentiles, or a dash if no
// request succeeded.
func latency(s stats, d time.Duration) string {
	if s.n == 0 {
		return "–"
	}
	return ms(d)
}

// ratio is API ÷ raw at p50. It is NaN when either side has no
// successful request to compare.
func (c *comparison) ratio(p pair) float64 {
	if p.raw.n == 0 || p.api.n == 0 {
		return math.NaN()
	}
	return float64(p.api.p50) / float64(p.raw.p50)
}

func (c *comparison) ratioText(p pair) string {
	if math.IsNaN(c.ratio(p)) {
		return "–"
	}
	return fmt.Sprintf("%.2f (p50)", c.ratio(p))
}

// verdict says whether the target was met at every concurrency measured.
func (c *comparison) verdict() string {
	var parts, missed []string
	for _, p := range c.results {
		r := c.ratio(p)
		parts = append(parts, fmt.Sprintf("%.2f at concurrency %d", r, p.conc))
		if math.IsNaN(r) || r > c.target {
			missed = append(missed, fmt.Sprintf("concurrency %d", p.conc))
		}
	}
	met := "**met**"
	if len(missed) > 0 {
		met = "**not met** at " + strings.Join(missed, " and ")
	}
	return fmt.Sprintf("%s: p50 API ÷ raw %s (target: at most %.2f): %s", c.name, strings.Join(parts, ", "), c.target, met)
}

func errorLines(comps []*comparison) []string {
	var out []string
	for _, c := range comps {
		for _, p := range c.results {
			for _, side := range []struct {
				name string
				s    stats
			}{{"API", p.api}, {"raw", p.raw}} {
				if side.s.errors > 0 {
					out = append(out, fmt.Sprintf("%s, %s, concurrency %d: %d failed; first: %v", c.name, side.name, p.conc, side.s.errors, side.s.firstErr))
				}
			}
		}
	}
	return out
}

func (r *sustainResult) format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Sustained mixed load: %s with %d workers, %.0f%% writes: %d requests (%.1f req/s).\n\n",
		r.elapsed.Round(time.Second), r.conc, r.writeShare*100, r.requests, float64(r.requests)/r.elapsed.Seconds())
	fmt.Fprintf(&b, "Successful reads: p50 %s, p99 %s. Successful writes: p50 %s, p99 %s; %.1f writes in flight on average.\n\n",
		latency(r.reads, r.reads.p50), latency(r.reads, r.reads.p99), latency(r.writes, r.writes.p50), latency(r.writes, r.writes.p99), r.writesInFlight)
	b.WriteString("| request | answers |\n|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(r.counts)) {
		var statuses []string
		for s, n := range r.counts[k] {
			statuses = append(statuses, fmt.Sprintf("%s: %d", s, n))
		}
		sort.Strings(statuses)
		fmt.Fprintf(&b, "| %s | %s |\n", k, strings.Join(statuses, ", "))
	}
	fmt.Fprintf(&b, "\n- 5xx answers: %d.\n", r.serverErrors)
	for _, k := range slices.Sorted(maps.Keys(r.firstFailures)) {
		fmt.Fprintf(&b, "- First %s: `%s`\n", k, r.firstFailures[k])
	}
	fmt.Fprintf(&b, "- Acknowledged writes (200/201): %d; afterwards readable at their version with the content they sent, their document at that version or later: %d; lost: %d; versions acknowledged to two writes: %d.\n",
		r.acks, r.verified, r.acks-r.verified, r.duplicateAcks)
	fmt.Fprintf(&b, "- Overviews of documents being written that showed a version older than one already acknowledged: %d of %d.\n", r.staleReads, r.freshChecked)
	for i, l := range r.lost {
		if i == 10 {
			fmt.Fprintf(&b, "- … and %d more.\n", len(r.lost)-10)
			break
		}
		fmt.Fprintf(&b, "- Lost: %s\n", strings.ReplaceAll(l, "\n", " "))
	}
	return b.String()
}

// loadAverage is the system's load average from /proc/loadavg, or "" where
// there is none: other work on the machine shows in every figure.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], ", ")
}
