package main

import (
	"fmt"
	"strings"

	"github.com/fundsvc/fundsvc/store"
	"github.com/shopspring/decimal"
)

// prices are DynamoDB's on-demand prices in one region, in US dollars.
type prices struct {
	region                            string
	perMillionReads, perMillionWrites decimal.Decimal // per million read (write) request units
	perGBMonth                        decimal.Decimal // Standard table class storage, beyond the free 25 GB
	source                            string
}

// onDemandUSEast1 are the on-demand prices of US East (N. Virginia) since
// AWS halved on-demand throughput prices on 1 November 2024. They are
// quoted from a secondary source (the text of AWS's own pricing page the
// bench's author could read did not carry the figures), so docs/benchmarks.md
// says they need checking against aws.amazon.com/dynamodb/pricing/on-demand/.
var onDemandUSEast1 = prices{
	region:           "US East (N. Virginia)",
	perMillionReads:  decimal.RequireFromString("0.125"),
	perMillionWrites: decimal.RequireFromString("0.625"),
	perGBMonth:       decimal.RequireFromString("0.25"),
	source:           "Airbyte, \"Amazon DynamoDB Pricing: On-Demand & Provisioned Plans\", 21 July 2025 (after the on-demand price cut of 1 November 2024); storage $0.25 per GB-month, Standard table class",
}

// referenceLoad is a reference workload to price.
type referenceLoad struct {
	funds, investors, positions int
	documentsPerQuarter         int // new documents, each to every position of its fund
	positionsPerDocument        int
	restatementsPerQuarter      int // each a new version of a whole document
	overviewsPerDay             int
	positionReadsPerDay         int // a position's items across documents (first page)
	summariesPerDay             int
	fundListingsPerDay          int
	storageAfterQuarters        int // storage is priced as it stands after this many quarters
}

// referenceWorkload: 200 funds of 250 positions each (50,000 positions of
// 20,000 investors); every quarter each fund sends a capital call notice,
// a distribution notice and a capital account statement to all its
// positions, and a tenth of the documents are restated once; every day
// administrators open 10 overviews and 10 document listings per fund, and
// investor portals read half of the positions' items and summaries.
var referenceWorkload = referenceLoad{
	funds: 200, investors: 20_000, positions: 50_000,
	documentsPerQuarter: 600, positionsPerDocument: 250, restatementsPerQuarter: 60,
	overviewsPerDay: 2_000, positionReadsPerDay: 25_000, summariesPerDay: 25_000, fundListingsPerDay: 2_000,
	storageAfterQuarters: 4,
}

// daysPerMonth is an average month (365.25 / 12).
var daysPerMonth = decimal.RequireFromString("30.4375")

// model is the measured capacity in the form the workload needs: an
// ingest as a cost per document plus a cost per position (the line
// through the two ingest sizes measured), the reads per request.
type model struct {
	perDocument, perPosition     store.Capacity // API, per ingest
	storedPerDocKB, storedPerPos float64        // KB one version stores, per document and per position
	overview                     store.Capacity // per overview of a document of overviewPositions positions
	overviewPositions            int
	position, summary, listing   store.Capacity
}

// fitModel builds the model from the measured rows, on a dataset of
// documents of positions; it needs the overview and at least one ingest.
func fitModel(rows []*costRow, positions int) (model, bool) {
	m := model{overviewPositions: positions}
	var ingests []*costRow
	found := map[string]bool{}
	for _, r := range rows {
		if r.skip != "" {
			continue
		}
		found[r.name] = true
		switch r.name {
		case "document overview":
			m.overview = r.api
		case "position across documents":
			m.position = r.api
		case summaryName:
			m.summary = r.api
		case "fund documents":
			m.listing = r.api
		}
		if r.positions > 0 {
			ingests = append(ingests, r)
		}
	}
	if !found["document overview"] || len(ingests) == 0 {
		return m, false
	}
	lo, hi := *ingests[0], *ingests[len(ingests)-1]
	if lo.apiByRule != (store.Capacity{}) {
		lo.api, hi.api = lo.apiByRule, hi.apiByRule
	}
	if hi.positions == lo.positions {
		n := float64(lo.positions)
		m.perPosition = store.Capacity{Read: lo.api.Read / n, Write: lo.api.Write / n}
		m.storedPerPos = lo.storedKB / n
	} else {
		dn := float64(hi.positions - lo.positions)
		m.perPosition = store.Capacity{Read: (hi.api.Read - lo.api.Read) / dn, Write: (hi.api.Write - lo.api.Write) / dn}
		m.storedPerPos = (hi.storedKB - lo.storedKB) / dn
		n := float64(lo.positions)
		m.perDocument = lo.api.Sub(store.Capacity{Read: m.perPosition.Read * n, Write: m.perPosition.Write * n})
		m.storedPerDocKB = lo.storedKB - m.storedPerPos*n
	}
	return m, true
}

// ingest is the capacity of one ingest of a document of n positions.
func (m model) ingest(n int) store.Capacity {
	return m.perDocument.Add(store.Capacity{Read: m.perPosition.Read * float64(n), Write: m.perPosition.Write * float64(n)})
}

// costLine is one part of the monthly bill.
type costLine struct {
	what        string
	count       decimal.Decimal // requests a month
	read, write decimal.Decimal // units a month
	gb          decimal.Decimal // stored, for storage
	cost        decimal.Decimal
}

func dec(x float64) decimal.Decimal { return decimal.NewFromFloat(x) }

var million = decimal.NewFromInt(1_000_000)

func (p prices) of(read, write decimal.Decimal) decimal.Decimal {
	return read.Div(million).Mul(p.perMillionReads).Add(write.Div(million).Mul(p.perMillionWrites))
}

// monthly prices w with m at p, line by line.
func (m model) monthly(w referenceLoad, p prices) []costLine {
	var lines []costLine
	add := func(what string, count decimal.Decimal, per store.Capacity) {
		r, wr := count.Mul(dec(per.Read)), count.Mul(dec(per.Write))
		lines = append(lines, costLine{what: what, count: count, read: r, write: wr, cost: p.of(r, wr)})
	}
	three := decimal.NewFromInt(3)
	perDay := func(n int) decimal.Decimal { return decimal.NewFromInt(int64(n)).Mul(daysPerMonth) }
	ingest := m.ingest(w.positionsPerDocument)
	add(fmt.Sprintf("new documents of %d positions", w.positionsPerDocument), decimal.NewFromInt(int64(w.documentsPerQuarter)).Div(three), ingest)
	add(fmt.Sprintf("restatements of %d positions", w.positionsPerDocument), decimal.NewFromInt(int64(w.restatementsPerQuarter)).Div(three), ingest)
	scale := float64(w.positionsPerDocument) / float64(max(1, m.overviewPositions))
	add(fmt.Sprintf("document overviews (%d positions)", w.positionsPerDocument), perDay(w.overviewsPerDay),
		store.Capacity{Read: m.overview.Read * scale, Write: m.overview.Write * scale})
	add("position reads across documents", perDay(w.positionReadsPerDay), m.position)
	add("position summaries", perDay(w.summariesPerDay), m.summary)
	add("fund document listings", perDay(w.fundListingsPerDay), m.listing)
	versions := int64(w.storageAfterQuarters * (w.documentsPerQuarter + w.restatementsPerQuarter))
	kb := decimal.NewFromInt(versions).Mul(dec(m.storedPerDocKB + m.storedPerPos*float64(w.positionsPerDocument)))
	gb := kb.Div(decimal.NewFromInt(1024 * 1024))
	lines = append(lines, costLine{what: fmt.Sprintf("storage after %d quarters (%d versions)", w.storageAfterQuarters, versions),
		gb: gb, cost: gb.Mul(p.perGBMonth)})
	return lines
}

// format renders the monthly bill of w and how each part grows.
func (m model) format(w referenceLoad, p prices) string {
	var b strings.Builder
	b.WriteString("### Cost: monthly on-demand, reference workload\n\n")
	fmt.Fprintf(&b, "Computed by the bench from the API's units above (an ingest's writes corrected to the rules) (`internal/bench/servicebench/costmodel.go`). Workload: %d funds, %d investors, %d positions (%d per fund); %d new documents a quarter, each to the %d positions of its fund, and %d restatements of whole documents; a day: %d overviews, %d position reads, %d summaries, %d fund listings. A month is %s days. Prices: %s, $%s per million read request units, $%s per million write request units, $%s per GB-month (source: %s; **to be checked** against AWS's pricing page). No free tier, no reserved capacity, no backups, streams or data transfer.\n\n",
		w.funds, w.investors, w.positions, w.positions/max(1, w.funds), w.documentsPerQuarter, w.positionsPerDocument, w.restatementsPerQuarter,
		w.overviewsPerDay, w.positionReadsPerDay, w.summariesPerDay, w.fundListingsPerDay, daysPerMonth, p.region,
		p.perMillionReads, p.perMillionWrites, p.perGBMonth, p.source)
	b.WriteString("| part | a month | read units | write units | cost (USD) |\n|---|---:|---:|---:|---:|\n")
	total := decimal.Zero
	for _, l := range m.monthly(w, p) {
		total = total.Add(l.cost)
		if !l.gb.IsZero() {
			fmt.Fprintf(&b, "| %s | %s GB | – | – | %s |\n", l.what, l.gb.StringFixed(2), l.cost.StringFixed(2))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", l.what, l.count.StringFixed(0), l.read.StringFixed(0), l.write.StringFixed(0), l.cost.StringFixed(2))
	}
	fmt.Fprintf(&b, "| **total** | | | | **%s** |\n\n", total.StringFixed(2))
	b.WriteString("How it grows (each figure is linear in its driver):\n\n")
	fmt.Fprintf(&b, "- per document ingested: %s read and %s write units, plus per position %s read and %s write units (the line through the ingests measured); $%s per million positions written.\n",
		num(round2(m.perDocument.Read)), num(round2(m.perDocument.Write)), num(round2(m.perPosition.Read)), num(round2(m.perPosition.Write)),
		p.of(dec(m.perPosition.Read).Mul(million), dec(m.perPosition.Write).Mul(million)).StringFixed(2))
	fmt.Fprintf(&b, "- per read: an overview %s read units per %d positions of its document (grows with the document's positions and versions); a position's items %s, its summary %s (grow with the documents the position is in); a fund listing %s; $%s per million overviews.\n",
		num(round2(m.overview.Read)), m.overviewPositions, num(round2(m.position.Read)), num(round2(m.summary.Read)), num(round2(m.listing.Read)),
		p.of(dec(m.overview.Read).Mul(million), dec(m.overview.Write).Mul(million)).StringFixed(2))
	fmt.Fprintf(&b, "- storage: %.2f KB per position per version, table and index entries with DynamoDB's 100 bytes per item; it only grows, since every version stays readable (an upper bound: a restatement replaces the latest view rather than adding to it).\n", m.storedPerPos)
	return b.String()
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
