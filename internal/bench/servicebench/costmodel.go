package main

import (
	"fmt"
	"strings"

	"github.com/fundsvc/fundsvc/internal/bench/rules"
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
	perDocument, perPosition store.Capacity // API, per ingest
	// KB one version stores (table and indexes), adds to the table alone,
	// and puts in its version partition: per document and per position.
	stored, table, version size
	historyBytes           int            // a version's history record
	overview               store.Capacity // per overview of a document of overviewPositions positions
	overviewPositions      int
	position, summary      store.Capacity
	listing                store.Capacity
}

// size is a size in KB of a document of n positions: perDoc + perPos × n.
type size struct{ perDoc, perPos float64 }

func (z size) of(n int) float64 { return z.perDoc + z.perPos*float64(n) }

// fit is the line through (lo, a) and (hi, b), or through the origin and
// (lo, a) when hi is lo.
func fit(lo, hi int, a, b float64) size {
	if hi == lo {
		return size{perPos: a / float64(lo)}
	}
	perPos := (b - a) / float64(hi-lo)
	return size{perDoc: a - perPos*float64(lo), perPos: perPos}
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
		if r.positions > 0 && !r.first {
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
	read, write := fit(lo.positions, hi.positions, lo.api.Read, hi.api.Read), fit(lo.positions, hi.positions, lo.api.Write, hi.api.Write)
	m.perDocument, m.perPosition = store.Capacity{Read: read.perDoc, Write: write.perDoc}, store.Capacity{Read: read.perPos, Write: write.perPos}
	m.stored = fit(lo.positions, hi.positions, lo.storedKB, hi.storedKB)
	m.table = fit(lo.positions, hi.positions, lo.tableKB, hi.tableKB)
	m.version = fit(lo.positions, hi.positions, lo.versionKB, hi.versionKB)
	m.historyBytes = max(lo.historyBytes, hi.historyBytes)
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
	instead     bool // an alternative to a line above, left out of the total
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
	inc, full := m.nightlyExports(w)
	add(fmt.Sprintf("nightly incremental export (%s changed documents a night)", changedPerNight(w).StringFixed(1)), daysPerMonth, inc)
	versions := storedVersions(w)
	kb := decimal.NewFromInt(versions).Mul(dec(m.stored.of(w.positionsPerDocument)))
	gb := kb.Div(decimal.NewFromInt(1024 * 1024))
	lines = append(lines, costLine{what: fmt.Sprintf("storage after %d quarters (%d versions)", w.storageAfterQuarters, versions),
		gb: gb, cost: gb.Mul(p.perGBMonth)})
	add(fmt.Sprintf("nightly full export instead (a Scan of the table after %d quarters)", w.storageAfterQuarters), daysPerMonth, full)
	lines[len(lines)-1].instead = true
	return lines
}

// storedVersions is the document versions the table holds after
// w.storageAfterQuarters.
func storedVersions(w referenceLoad) int64 {
	return int64(w.storageAfterQuarters * (w.documentsPerQuarter + w.restatementsPerQuarter))
}

// The fixed part of a nightly export by DynamoDB's rules. An incremental
// run reads the change index: one strongly consistent GetItem of the shard
// count, and one Query of GSI1 per shard of the night's day, eventually
// consistent, half a unit each for the few heads a night changes. Each
// run writes its lease items (under 1 KB): a full export takes its date's
// lease, renews it before each of its three publishing steps and releases
// it (5 writes); an incremental run holds its base date's lease too, until
// its manifest is published (9 writes; see export.Run and publish).
var (
	changeIndexReads = 1 + float64(store.DefaultChangeShards)*0.5
	leaseWritesFull  = 5.0
	leaseWritesInc   = 9.0
)

// changedPerNight is the documents w writes or restates a night.
func changedPerNight(w referenceLoad) decimal.Decimal {
	return decimal.NewFromInt(int64(w.documentsPerQuarter + w.restatementsPerQuarter)).Div(daysPerMonth.Mul(decimal.NewFromInt(3)))
}

// changedDocumentReads is what an incremental export reads of one changed
// document of w (see nightlyExports).
func (m model) changedDocumentReads(w referenceLoad) float64 {
	return rules.ReadUnits(2*m.historyBytes, true) + rules.ReadUnits(int(m.version.of(w.positionsPerDocument)*1024), true)
}

// nightlyExports is what one night's export of w consumes by DynamoDB's
// rules, incremental and full. An incremental run reads each changed
// document's history records (a document of two versions) and its
// version partition with one strongly consistent Query each (what the
// export's bench measures it to consume, beside the change index); a full
// export reads the table, as it stands after w.storageAfterQuarters, with
// a strongly consistent Scan (1 MB pages: a unit per 4 KB).
func (m model) nightlyExports(w referenceLoad) (inc, full store.Capacity) {
	changed, _ := changedPerNight(w).Float64()
	inc = store.Capacity{Read: changeIndexReads + changed*m.changedDocumentReads(w), Write: leaseWritesInc}
	full = store.Capacity{Read: float64(storedVersions(w)) * m.table.of(w.positionsPerDocument) * 1024 / rules.ReadUnitBytes, Write: leaseWritesFull}
	return inc, full
}

// usd renders a cost to the cent, or, below a cent, to the first two
// significant digits, so a part that costs next to nothing does not read as
// free.
func usd(d decimal.Decimal) string {
	if d.IsZero() || d.Abs().GreaterThanOrEqual(decimal.New(1, -2)) {
		return d.StringFixed(2)
	}
	places := int32(2)
	for d.Abs().Shift(places).LessThan(decimal.NewFromInt(10)) {
		places++
	}
	return d.StringFixed(places)
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
	var instead []costLine
	for _, l := range m.monthly(w, p) {
		switch {
		case l.instead:
			instead = append(instead, l)
			continue
		case !l.gb.IsZero():
			fmt.Fprintf(&b, "| %s | %s GB | – | – | %s |\n", l.what, l.gb.StringFixed(2), usd(l.cost))
		default:
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", l.what, l.count.StringFixed(0), l.read.StringFixed(0), l.write.StringFixed(0), usd(l.cost))
		}
		total = total.Add(l.cost)
	}
	fmt.Fprintf(&b, "| **total** | | | | **%s** |\n", usd(total))
	for _, l := range instead {
		fmt.Fprintf(&b, "| *%s* | %s | %s | %s | *%s* |\n", l.what, l.count.StringFixed(0), l.read.StringFixed(0), l.write.StringFixed(0), usd(l.cost))
	}
	b.WriteString("\n")
	b.WriteString("How it grows (each figure is linear in its driver):\n\n")
	fmt.Fprintf(&b, "- per document ingested: %s read and %s write units, plus per position %s read and %s write units (the line through the ingests measured); $%s per million positions written.\n",
		num(round2(m.perDocument.Read)), num(round2(m.perDocument.Write)), num(round2(m.perPosition.Read)), num(round2(m.perPosition.Write)),
		p.of(dec(m.perPosition.Read).Mul(million), dec(m.perPosition.Write).Mul(million)).StringFixed(2))
	fmt.Fprintf(&b, "- per read: an overview %s read units per %d positions of its document (grows with the document's positions and versions); a position's items %s, its summary %s (grow with the documents the position is in); a fund listing %s; $%s per million overviews.\n",
		num(round2(m.overview.Read)), m.overviewPositions, num(round2(m.position.Read)), num(round2(m.summary.Read)), num(round2(m.listing.Read)),
		p.of(dec(m.overview.Read).Mul(million), dec(m.overview.Write).Mul(million)).StringFixed(2))
	fmt.Fprintf(&b, "- storage: %.2f KB per position per version, table and index entries with DynamoDB's 100 bytes per item; it only grows, since every version stays readable (an upper bound: a restatement replaces the latest view rather than adding to it).\n", m.stored.perPos)
	_, full := m.nightlyExports(w)
	fmt.Fprintf(&b, "- nightly export: incremental, %s read units a night plus %s per changed document of %d positions (its history and its version partition, %.2f KB per position), growing with the night's changes, not with the table; a full export instead reads the whole table, %s read units a night after %d quarters (%.2f KB of table items per position per version), and grows with every version stored, so its monthly cost rises quarter after quarter.\n",
		num(round2(changeIndexReads)), num(round2(m.changedDocumentReads(w))), w.positionsPerDocument, m.version.perPos,
		num(round2(full.Read)), w.storageAfterQuarters, m.table.perPos)
	return b.String()
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
