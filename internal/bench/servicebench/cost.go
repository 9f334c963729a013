package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/bench/rules"
	"github.com/fundsvc/fundsvc/store"
)

// Minimums follow DynamoDB's capacity rules (package rules).

// costRow is the capacity one operation consumes per request: the API's
// (read off the service's /metrics), the raw baseline's (off the store's
// meter, store.Store.Consumed) and the least DynamoDB's rules allow for
// the items involved.
type costRow struct {
	name          string
	requests      int // per side
	api, raw, min store.Capacity
	items         float64 // of the minimum, per request
	kb            float64 // their size, per request
	skip          string
	// Of an ingest only: its size, the capacity of the least the table
	// allows for the version (raw.least), where the API's writes spent
	// their time, per version, by phase, and the raw writes priced by the
	// rules (what DynamoDB Local should have reported for them).
	positions int
	first     bool // version 1 of a new document of new positions: no raw plan replayed
	least     store.Capacity
	phases    map[store.Phase]store.PhaseTotals
	rawByRule store.Capacity
	apiByRule store.Capacity // the API's, its writes corrected to the rules
	// What one version adds to the table and its indexes, to the table
	// alone and to its version partition, and its history record (see
	// planSize).
	storedKB, tableKB, versionKB float64
	historyBytes                 int
}

// planSize is what a write plan costs and adds to the table.
type planSize struct {
	// The minimum (each item the version leaves in the latest view, the
	// head, the document records and the fund's entries, written once,
	// standard, with its index entries: the Commit and Materialize puts),
	// and the whole plan by the rules.
	minimum, byRule store.Capacity
	items, bytes    int // the minimum's items and their size
	// What the version adds to the table and its indexes, with 100 bytes
	// of overhead per item; to the table alone (what a Scan reads of it);
	// and its version partition (what an incremental export reads of it).
	storedKB, tableKB, versionKB float64
	historyBytes                 int // its history record
}

// planCost prices a write plan.
func planCost(p store.Plan) planSize {
	var ps planSize
	stored, table := 0.0, 0
	put := func(item map[string]types.AttributeValue) {
		stored += float64((store.ItemSize(item) + 100) * (1 + rules.Indexes(item)))
		table += store.ItemSize(item)
	}
	for _, in := range p.Stage {
		for _, reqs := range in.RequestItems {
			for _, w := range reqs {
				if w.PutRequest != nil {
					ps.byRule.Write += rules.WriteUnits(w.PutRequest.Item)
					put(w.PutRequest.Item)
					ps.versionKB += float64(store.ItemSize(w.PutRequest.Item)) / 1024
				}
			}
		}
	}
	lo, hi := store.VersionRange(store.DocumentVersionPrefix, 1, store.MaxVersion)
	for _, tx := range append([]*dynamodb.TransactWriteItemsInput{p.Commit}, p.Materialize...) {
		for _, ti := range tx.TransactItems {
			switch {
			case ti.Put != nil:
				w := rules.WriteUnits(ti.Put.Item)
				ps.minimum.Write += w
				ps.byRule.Write += 2 * w
				ps.items++
				ps.bytes += store.ItemSize(ti.Put.Item)
				put(ti.Put.Item)
				if sk, ok := ti.Put.Item[store.AttrSK].(*types.AttributeValueMemberS); ok && sk.Value >= lo && sk.Value <= hi {
					ps.historyBytes = store.ItemSize(ti.Put.Item)
				}
			case ti.ConditionCheck != nil, ti.Update != nil, ti.Delete != nil:
				// A check reads the item and costs a write unit per KB, as
				// the other kinds do; their items are small.
				ps.byRule.Write += 2
			}
		}
	}
	if len(p.Commit.TransactItems) > 0 && p.Commit.TransactItems[0].Put != nil {
		ps.byRule.Write += rules.WriteUnits(p.Commit.TransactItems[0].Put.Item) // Finish updates the head, the commit's first put
	}
	ps.storedKB, ps.tableKB = stored/1024, float64(table)/1024
	return ps
}

var capacityLine = regexp.MustCompile(`(?m)^fundsvc_dynamodb_capacity_units_total\{kind="(read|write)",operation="([A-Za-z]+)"\} (\S+)$`)

// scrapeCapacity reads the service's consumed capacity off /metrics.
func scrapeCapacity(ctx context.Context, svc *service) (store.Capacity, error) {
	_, body, err := svc.expect(ctx, http.StatusOK, http.MethodGet, "/metrics", nil)
	if err != nil {
		return store.Capacity{}, err
	}
	var c store.Capacity
	for _, m := range capacityLine.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return c, fmt.Errorf("/metrics: %s: %w", m[0], err)
		}
		if m[1] == "read" {
			c.Read += v
		} else {
			c.Write += v
		}
	}
	return c, nil
}

var phaseLine = regexp.MustCompile(`(?m)^fundsvc_write_phase_(seconds|requests|items)_total\{phase="([a-z]+)"\} (\S+)$`)

// scrapePhases reads off /metrics where the service's writes spent their
// time, round trips and items, by phase (store.Phase).
func scrapePhases(ctx context.Context, svc *service) (map[store.Phase]store.PhaseTotals, error) {
	_, body, err := svc.expect(ctx, http.StatusOK, http.MethodGet, "/metrics", nil)
	if err != nil {
		return nil, err
	}
	out := map[store.Phase]store.PhaseTotals{}
	for _, m := range phaseLine.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return nil, fmt.Errorf("/metrics: %s: %w", m[0], err)
		}
		t := out[store.Phase(m[2])]
		switch m[1] {
		case "seconds":
			t.Seconds = v
		case "requests":
			t.Requests = int(v)
		default:
			t.Items = int(v)
		}
		out[store.Phase(m[2])] = t
	}
	return out, nil
}

var itemAnswersLine = regexp.MustCompile(`(?m)^fundsvc_position_item_answers_total\{source="(memo|encoded)"\} (\S+)$`)

// scrapeItemAnswers reads off /metrics the items the service's position
// reads answered from its memo and those they decoded and encoded.
func scrapeItemAnswers(ctx context.Context, svc *service) (memo, encoded int, err error) {
	_, body, err := svc.expect(ctx, http.StatusOK, http.MethodGet, "/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range itemAnswersLine.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/metrics: %s: %w", m[0], err)
		}
		if m[1] == "memo" {
			memo = int(v)
		} else {
			encoded = int(v)
		}
	}
	return memo, encoded, nil
}

// quiet waits, polling /metrics, until the service has written nothing for
// a while: a webhook delivery that reached the receiver is recorded a
// moment later, and its writes must not be counted as a read's.
func quiet(ctx context.Context, svc *service) error {
	const still, most = 300 * time.Millisecond, 30 * time.Second
	deadline := time.Now().Add(most)
	last, err := scrapeCapacity(ctx, svc)
	for err == nil && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(still):
		}
		var now store.Capacity
		if now, err = scrapeCapacity(ctx, svc); err == nil && now.Write == last.Write {
			return nil
		}
		last = now
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("the service was still writing %s after the last comparison", most)
}

// apiCapacity is what the service consumed, per request, while do ran n
// requests one after another. Nothing else runs against the service then.
func apiCapacity(ctx context.Context, svc *service, n int, do func(k int) error) (store.Capacity, error) {
	before, err := scrapeCapacity(ctx, svc)
	if err != nil {
		return store.Capacity{}, err
	}
	for k := range n {
		if err := do(k); err != nil {
			return store.Capacity{}, err
		}
	}
	after, err := scrapeCapacity(ctx, svc)
	return per(after.Sub(before), n), err
}

func per(c store.Capacity, n int) store.Capacity {
	return store.Capacity{Read: c.Read / float64(n), Write: c.Write / float64(n)}
}

// costReads are the read routes whose capacity is measured, with the raw
// Query behind each and whether it reads strongly consistent.
type costRead struct {
	name       string
	target     func(*rand.Rand) string
	path       string
	raw        func(context.Context, string) ([]map[string]types.AttributeValue, error)
	consistent bool
}

func costReads(r *raw, ds dataset) []costRead {
	doc := func(rng *rand.Rand) string { return ds.doc(rng.IntN(ds.docs)).id }
	pos := func(rng *rand.Rand) string { return ds.positionID(rng.IntN(ds.funds()), rng.IntN(ds.positions)) }
	fnd := func(rng *rand.Rand) string { return fundID(rng.IntN(ds.funds())) }
	return []costRead{
		{"document overview", doc, "/v1/documents/{}", r.overview, true},
		{"position across documents", pos, "/v1/positions/{}", func(ctx context.Context, p string) ([]map[string]types.AttributeValue, error) {
			return r.positionItems(ctx, p, apiPageLimit, false)
		}, false},
		{summaryName, pos, "/v1/positions/{}/summary", func(ctx context.Context, p string) ([]map[string]types.AttributeValue, error) {
			return r.positionItems(ctx, p, 0, true)
		}, false},
		{"fund documents", fnd, "/v1/funds/{}/documents", func(ctx context.Context, f string) ([]map[string]types.AttributeValue, error) {
			return r.fundDocuments(ctx, f, apiPageLimit)
		}, false},
	}
}

// measureCost measures the capacity of every route the timing measured
// (comps: a skipped one is skipped here too), n requests per side for a
// read, max(1, n/5) for an ingest, the same targets on both sides.
func measureCost(ctx context.Context, o options, svc *service, r *raw, pools []*pool, comps []*comparison) ([]*costRow, error) {
	if err := quiet(ctx, svc); err != nil {
		return nil, err
	}
	skipped := map[string]string{}
	for _, c := range comps {
		skipped[c.name] = c.skip
	}
	n := o.costRequests
	var rows []*costRow
	for _, cr := range costReads(r, o.ds) {
		row := &costRow{name: cr.name, requests: n, skip: skipped[cr.name]}
		rows = append(rows, row)
		if row.skip != "" {
			continue
		}
		rng := rand.New(rand.NewPCG(o.seed, hash(cr.name)))
		targets := make([]string, n)
		for k := range targets {
			targets[k] = cr.target(rng)
		}
		var err error
		row.api, err = apiCapacity(ctx, svc, n, func(k int) error {
			_, _, err := svc.expect(ctx, http.StatusOK, http.MethodGet, strings.Replace(cr.path, "{}", targets[k], 1), nil)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("capacity of %s: %w", cr.name, err)
		}
		before := r.store.Consumed().Total()
		var minimum store.Capacity
		for _, t := range targets {
			items, err := cr.raw(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("capacity of %s, raw: %w", cr.name, err)
			}
			m, bytes := rules.QueryMinimum(items, cr.consistent)
			minimum = minimum.Add(m)
			row.items += float64(len(items)) / float64(n)
			row.kb += float64(bytes) / 1024 / float64(n)
		}
		row.raw, row.min = per(r.store.Consumed().Total().Sub(before), n), per(minimum, n)
		fmt.Printf("  capacity of %-26s API %s, raw %s, minimum %s\n", cr.name, units(row.api), units(row.raw), units(row.min))
	}
	writes := max(1, n/5)
	for _, p := range pools {
		for _, first := range []bool{true, false} {
			row, err := ingestCost(ctx, svc, r, p, writes, first, skipped)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// ingestCost measures the capacity and the phases of writes versions of
// the pool's documents (first: of new documents, each of new positions)
// through the API, and the least the table allows for the same; for a
// restatement, also the store's write plan replayed raw and priced by the
// rules.
func ingestCost(ctx context.Context, svc *service, r *raw, p *pool, writes int, first bool, skipped map[string]string) (*costRow, error) {
	name, next, status := ingestName(p.specs[0].positions), p.next, http.StatusOK
	if first {
		name, next, status = firstName(p.specs[0].positions), p.fresh, http.StatusCreated
	}
	row := &costRow{name: name, requests: writes, positions: p.specs[0].positions, first: first, skip: skipped[name]}
	if row.skip != "" {
		return row, nil
	}
	phasesBefore, err := scrapePhases(ctx, svc)
	if err != nil {
		return nil, err
	}
	row.api, err = apiCapacity(ctx, svc, writes, func(k int) error {
		d := next(k % len(p.specs))
		body, err := requestBody(d)
		if err != nil {
			return err
		}
		_, _, err = svc.expect(ctx, status, http.MethodPut, "/v1/documents/"+d.ID, body)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("capacity of %s: %w", name, err)
	}
	phasesAfter, err := scrapePhases(ctx, svc)
	if err != nil {
		return nil, err
	}
	row.phases = map[store.Phase]store.PhaseTotals{}
	for ph, a := range phasesAfter {
		d := a.Sub(phasesBefore[ph])
		row.phases[ph] = store.PhaseTotals{Seconds: d.Seconds / float64(writes), Requests: d.Requests / writes, Items: d.Items / writes}
	}
	before := r.store.Consumed().Total()
	for k := range writes {
		if err := r.least(ctx, next(k%len(p.specs))); err != nil {
			return nil, fmt.Errorf("capacity of %s, least: %w", name, err)
		}
	}
	row.least = per(r.store.Consumed().Total().Sub(before), writes)
	row.apiByRule = row.api
	if first {
		fmt.Printf("  capacity of %-26s API %s, least %s\n", name, units(row.api), units(row.least))
		return row, nil
	}
	if err := p.refresh(ctx, r); err != nil {
		return nil, err
	}
	before = r.store.Consumed().Total()
	var minimum, byRule store.Capacity
	for k := range writes {
		j := k % len(p.specs)
		d := p.next(j)
		prev := fund.DocumentHeader{Version: p.versions[j], DocumentFields: fund.DocumentFields{AsOf: d.AsOf}}
		plan, err := r.store.WritePlan(d, &prev)
		if err != nil {
			return nil, err
		}
		ps := planCost(plan)
		minimum, byRule = minimum.Add(ps.minimum), byRule.Add(ps.byRule)
		row.items += float64(ps.items) / float64(writes)
		row.kb += float64(ps.bytes) / 1024 / float64(writes)
		row.storedKB += ps.storedKB / float64(writes)
		row.tableKB += ps.tableKB / float64(writes)
		row.versionKB += ps.versionKB / float64(writes)
		row.historyBytes = max(row.historyBytes, ps.historyBytes)
		if err := r.restate(ctx, d, prev); err != nil {
			return nil, fmt.Errorf("capacity of %s, raw: %w", name, err)
		}
		p.versions[j]++
	}
	row.raw, row.min, row.rawByRule = per(r.store.Consumed().Total().Sub(before), writes), per(minimum, writes), per(byRule, writes)
	// DynamoDB Local reports less than DynamoDB's rules give for the
	// materialize transactions (see docs/benchmarks.md); the API sends
	// the same plan, so its writes are corrected by what the raw writes
	// missed, for the cost model.
	if miss := row.rawByRule.Write - row.raw.Write; miss > 0 {
		row.apiByRule.Write += miss
	}
	fmt.Printf("  capacity of %-26s API %s, raw %s, minimum %s\n", name, units(row.api), units(row.raw), units(row.min))
	return row, nil
}

// formatPhases is where one ingest's versions spent their time, round
// trips and items, per version, by phase, as the service's /metrics
// counted them (fundsvc_write_phase_*).
func formatPhases(r *costRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Where a version of %s spends its time (API, per version, over %d versions written one after another; confirm and materialize run side by side):\n\n", r.name, r.requests)
	b.WriteString("| phase | seconds | requests | items | items per request |\n|---|---:|---:|---:|---:|\n")
	for _, ph := range []store.Phase{store.PhaseRead, store.PhaseClaim, store.PhaseStage, store.PhaseCommit, store.PhaseConfirm, store.PhaseMaterialize, store.PhaseFinish} {
		t := r.phases[ph]
		perRequest := "–"
		if t.Requests > 0 {
			perRequest = strconv.FormatFloat(float64(t.Items)/float64(t.Requests), 'f', 1, 64)
		}
		fmt.Fprintf(&b, "| %s | %.3f | %d | %d | %s |\n", ph, t.Seconds, t.Requests, t.Items, perRequest)
	}
	return b.String()
}

func units(c store.Capacity) string { return fmt.Sprintf("%g read + %g write units", c.Read, c.Write) }

// formatCost renders the capacity table and the monthly cost of the
// reference workload.
func formatCost(o options, rows []*costRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Command: `%s`. Capacity units per request, as DynamoDB Local reported them (`ReturnConsumedCapacity`): the API's off the service's `/metrics` (`fundsvc_dynamodb_capacity_units_total`), the raw baseline's off the bench's own client; %d requests per side for a read, %d for an ingest, one after another, the same targets on both sides. Dataset: %d documents of %d positions, funds of %d documents.\n\n",
		o.makeCommand, o.costRequests, max(1, o.costRequests/5), o.ds.docs, o.ds.positions, docsPerFund)
	b.WriteString("| operation | API read | API write | raw read | raw write | minimum read | minimum write | items (minimum) | KB (minimum) | API ÷ minimum |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		if r.skip != "" {
			fmt.Fprintf(&b, "| %s | – | – | – | – | – | – | – | – | %s |\n", r.name, r.skip)
			continue
		}
		if r.first {
			fmt.Fprintf(&b, "| %s | %s | %s | – | – | – | – | – | – | – |\n", r.name, num(r.api.Read), num(r.api.Write))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %.0f | %.1f | %s |\n", r.name,
			num(r.api.Read), num(r.api.Write), num(r.raw.Read), num(r.raw.Write), num(r.min.Read), num(r.min.Write),
			r.items, r.kb, ratio(r.api, r.min))
	}
	b.WriteString("\n")
	for _, r := range rows {
		if r.skip == "" && r.first {
			fmt.Fprintf(&b, "- %s: the least the table allows consumed %s write units; DynamoDB Local reported %s for the API's writes, but it counts transactions at half or less of DynamoDB's rules, and a first version has no plan to price by them, so no ratio is given.\n",
				r.name, num(r.least.Write), num(r.api.Write))
		} else if r.skip == "" && r.positions > 0 {
			fmt.Fprintf(&b, "- %s: the least the table allows (BatchWriteItem of the version's position items) consumed %s write units. The raw writes (the store's write plan) priced by the rules come to %s write units, DynamoDB Local reported %s; the API's writes so corrected: %s, %.2f times the least; one version stores %.0f KB with its index entries.\n",
				r.name, num(r.least.Write), num(r.rawByRule.Write), num(r.raw.Write), num(r.apiByRule.Write), r.apiByRule.Write/r.least.Write, r.storedKB)
		}
	}
	for _, r := range rows {
		if r.skip == "" && r.positions > 0 && len(r.phases) > 0 {
			b.WriteString("\n" + formatPhases(r))
		}
	}
	if m, ok := fitModel(rows, o.ds.positions); ok {
		b.WriteString("\n" + m.format(referenceWorkload, onDemandUSEast1))
	}
	return b.String()
}

// ratio is the API's units over the minimum's, reads and writes together
// weighed by their on-demand prices.
func ratio(api, min store.Capacity) string {
	p := onDemandUSEast1
	den := p.of(dec(min.Read), dec(min.Write))
	if den.IsZero() {
		return "–"
	}
	return p.of(dec(api.Read), dec(api.Write)).Div(den).StringFixed(1)
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
