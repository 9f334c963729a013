// Command servicebench measures the fundsvc REST API against the raw
// DynamoDB operations behind each route (`make bench`, see
// docs/benchmarks.md).
//
// It starts DynamoDB Local with its tables on disk and loads a dataset
// through the store (the writes the service makes): documents of 100
// positions in funds of 20 documents that share their positions, a tenth
// of them restated twice. Loaded tables are kept and reused. It then runs
// `fundsvc serve` as a child process on a loopback port and, in one run:
//
//   - times each read route (document overview, a position across
//     documents, a position's summary, a fund's documents) against the
//     Query behind it, made directly with the AWS SDK;
//   - times restatements of a 100- and a 1,000-position document (PUT)
//     against the least the table allows for the same version: its
//     position items, with their index keys, in BatchWriteItem requests
//     (store.Store.Least), and reports where the API's versions spend their
//     time, by phase (store.Phase, off /metrics);
//   - each at concurrency 1 and 16: p50 and p99 latency, requests per
//     second, and API ÷ raw, against the targets;
//   - with -webhook (the default), subscribes a webhook endpoint at a
//     receiver of its own on a loopback port during these comparisons, so
//     the API's ingest pays for the deliveries, and measures the latency
//     from each timed write's answer to the arrival of its event
//     (webhook.go);
//   - measures the DynamoDB capacity each route consumes, the API's (off
//     the service's /metrics) and the raw baseline's, beside the minimum
//     DynamoDB's rules give for the items' sizes, and prices a reference
//     workload with it (cost.go, costmodel.go);
//   - runs a sustained mixed load of reads and writes, counts the answers
//     by status, and checks that every acknowledged write is readable
//     afterwards at its version or later.
//
// It prints a Markdown report and, with -out, writes it into that file
// between the servicebench markers, the cost tables between the
// servicebench-cost markers and the history's cost between the
// servicebench-history markers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/bench/benchdoc"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/store"
)

func main() {
	serveFloorIfAsked()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "servicebench:", err)
		os.Exit(1)
	}
}

type options struct {
	ds          dataset
	ingest      []int // positions of each ingested document
	bin, out    string
	dataDir     string
	seed        uint64
	bounds      bounds
	warmup      int
	slices      int
	conc        int
	sustain     bounds
	sustainConc int
	writes      float64
	serviceLog  string
	reqTimeout  time.Duration
	wrTimeout   time.Duration
	// costRequests is how many requests per side measure a read's
	// capacity (a fifth as many for an ingest); 0 skips the cost table.
	costRequests int
	// history is how many versions the history measurement's long
	// document has (history.go); 0 skips it.
	history int
	// importRows and importDocs are the rows and documents of the import
	// measurement's files (import.go); 0 rows skips it.
	importRows, importDocs int
	only                   *regexp.Regexp // measure only the comparisons it matches; nil for all
	// webhook subscribes an endpoint at a receiver of the bench's for the
	// comparisons; webhookWait bounds each wait for its deliveries.
	webhook     bool
	webhookWait time.Duration

	args        []string // as given, for the report
	makeCommand string   // the make invocation that passes them
	loadBefore  string   // the load average when the measurements started
	notes       []string // anything that happened that the figures do not show
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("servicebench", flag.ContinueOnError)
	fs.IntVar(&o.ds.docs, "docs", 2000, "documents in the dataset (e.g. 40 for a quick run while developing)")
	fs.IntVar(&o.ds.positions, "positions", 100, "positions per document of the dataset")
	fs.Float64Var(&o.ds.restated, "restated", 0.1, "fraction of the dataset's documents restated twice (three versions)")
	ingest := fs.String("ingest", "100,1000", "positions of the documents whose restatement and first version are timed, comma-separated")
	fs.StringVar(&o.bin, "fundsvc", "./fundsvc", "the fundsvc binary to run (make build)")
	fs.StringVar(&o.out, "out", "", "also write the report into this Markdown file, between the servicebench markers")
	fs.StringVar(&o.dataDir, "data", ".data/servicebench", "DynamoDB Local's folder; loaded tables are kept there and reused")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random choice of documents and positions")
	fs.IntVar(&o.bounds.requests, "requests", 2000, "at most this many requests per measurement")
	fs.DurationVar(&o.bounds.limit, "duration", 20*time.Second, "at most this long per measurement")
	fs.IntVar(&o.warmup, "warmup", 20, "untimed requests before each comparison (a tenth of it for writes)")
	fs.IntVar(&o.slices, "slices", 5, "a read's measurement alternates API and raw in this many slices of -requests and -duration each")
	fs.IntVar(&o.conc, "concurrency", 16, "the concurrency measured besides 1")
	fs.DurationVar(&o.sustain.limit, "sustain", 5*time.Minute, "duration of the sustained mixed load (0 to skip it)")
	fs.IntVar(&o.sustain.requests, "sustain-requests", 1_000_000, "at most this many requests of the sustained load")
	fs.IntVar(&o.sustainConc, "sustain-concurrency", 16, "workers of the sustained load")
	fs.Float64Var(&o.writes, "sustain-writes", 0.2, "fraction of the sustained load that restates documents")
	fs.StringVar(&o.serviceLog, "fundsvc-log", "", "write the service's log to this file (empty: a temporary file, removed once the service started)")
	fs.DurationVar(&o.reqTimeout, "request-timeout", 0, "the service's FUNDSVC_REQUEST_TIMEOUT (0: its default, 60s)")
	fs.DurationVar(&o.wrTimeout, "write-timeout", 0, "the service's FUNDSVC_WRITE_TIMEOUT (0: its default, 5m)")
	fs.IntVar(&o.costRequests, "cost-requests", 10, "requests per side that measure a read's consumed capacity, a fifth as many for an ingest (0 to skip the cost tables)")
	fs.BoolVar(&o.webhook, "webhook", true, "subscribe a webhook endpoint (every event type, every fund) at a local receiver during the comparisons, and measure commit-to-delivery latency")
	fs.DurationVar(&o.webhookWait, "webhook-wait", 5*time.Minute, "at most this long to wait for the receiver to get the events of earlier writes (before each side of an ingest, and after the last)")
	fs.IntVar(&o.history, "history", 1000, "versions of the document whose overview's read units are measured against a one-version document's, written through the API before (0 to skip; needs -cost-requests)")
	fs.IntVar(&o.importRows, "import-rows", 5000, "rows of the capital account statement files POSTed to /v1/imports, dry run and commit, as CSV and XLSX (0 to skip)")
	fs.IntVar(&o.importDocs, "import-documents", 10, "documents the import's rows are grouped into")
	only := fs.String("only", "", "measure only the comparisons whose name matches this regular expression (e.g. 'overview|position'); empty for all")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return o, fmt.Errorf("-only: %w", err)
		}
		o.only = re
	}
	for _, s := range strings.Split(*ingest, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > fund.DefaultMaxPositions {
			return o, fmt.Errorf("-ingest: bad number of positions %q", s)
		}
		if o.only == nil || o.only.MatchString(ingestName(n)) || o.only.MatchString(firstName(n)) {
			o.ingest = append(o.ingest, n)
		}
	}
	switch {
	case o.ds.docs < 1 || o.ds.positions < 1 || o.ds.positions > fund.DefaultMaxPositions:
		return o, fmt.Errorf("-docs must be at least 1 and -positions from 1 to %d", fund.DefaultMaxPositions)
	case o.ds.restated < 0 || o.ds.restated > 1 || o.writes < 0 || o.writes > 1:
		return o, errors.New("-restated and -sustain-writes are fractions from 0 to 1")
	case o.conc < 1 || o.sustainConc < 1 || o.bounds.requests < 1 || o.warmup < 0 || o.slices < 1 || o.costRequests < 0:
		return o, errors.New("-concurrency, -sustain-concurrency, -requests and -slices must be at least 1")
	case o.importRows < 0 || o.importDocs < 1 || o.importRows > 0 && (o.importRows+o.importDocs-1)/o.importDocs > fund.DefaultMaxPositions:
		return o, fmt.Errorf("-import-rows must be at least 0, -import-documents at least 1, with at most %d rows a document", fund.DefaultMaxPositions)
	case o.webhook && o.webhookWait <= 0:
		return o, errors.New("-webhook-wait must be positive")
	case o.sustain.limit > 0 && len(o.ingest) == 0:
		return o, errors.New("the sustained load restates documents of the first -ingest size, which -only leaves out: add -sustain=0")
	}
	o.args = args
	o.makeCommand = "make bench"
	var extra []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "fundsvc" && f.Name != "out" {
			extra = append(extra, "-"+f.Name+"="+f.Value.String())
		}
	})
	if len(extra) > 0 {
		o.makeCommand += ` BENCH_FLAGS="` + strings.Join(extra, " ") + `"`
	}
	return o, nil
}

// run parses args, starts DynamoDB Local with its tables in -data and
// measures (see bench).
func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	// On disk, as exportbench's: a large dataset outgrows DynamoDB Local's
	// default Java heap in memory, and loading it takes long enough to keep.
	if err := os.MkdirAll(o.dataDir, 0o755); err != nil {
		return err
	}
	db, err := dynamotest.StartPersistent(ctx, o.dataDir, 0)
	if err != nil {
		return err
	}
	defer db.Stop()
	return bench(ctx, o, db, out)
}

// bench loads the dataset into db unless it holds it already, runs the
// service on it and measures. It writes the report to out (and into the
// file o.out names) and its progress to standard output.
func bench(ctx context.Context, o options, db *dynamotest.Server, out io.Writer) error {
	fdb := store.NewDB(db.Config())
	store := store.NewStore(fdb, o.ds.table())
	r := newRaw(fdb, store)
	if err := ensureLoaded(ctx, r.client, store, o.ds); err != nil {
		return err
	}
	pools, err := newPools(ctx, store, o)
	if err != nil {
		return err
	}

	sc := serviceConfig{bin: o.bin, endpoint: db.Endpoint(), table: o.ds.table(), requestTimeout: o.reqTimeout, writeTimeout: o.wrTimeout}
	if o.serviceLog != "" {
		f, err := os.Create(o.serviceLog)
		if err != nil {
			return err
		}
		defer f.Close()
		sc.log = f
	}
	svc, err := startService(ctx, sc)
	if err != nil {
		return err
	}
	defer svc.stop()
	fmt.Fprintf(out, "fundsvc serves %s on %s\n", o.ds.table(), svc.base)

	if svc.notReady != "" {
		o.notes = append(o.notes, "fundsvc: "+svc.notReady+".")
	}
	var wh *webhookRun
	if o.webhook {
		recv, err := startReceiver()
		if err != nil {
			return err
		}
		defer recv.stop()
		id, err := subscribe(ctx, svc, recv.url)
		if err != nil {
			return fmt.Errorf("subscribe a webhook endpoint: %w", err)
		}
		wh = &webhookRun{recv: recv, endpointID: id, wait: o.webhookWait}
		fmt.Fprintf(out, "webhook endpoint %s subscribed: every event type of every fund, to %s\n", id, recv.url)
	}
	o.loadBefore = loadAverage()
	floor, err := startFloor(ctx, db.Endpoint(), o.ds.table())
	if err != nil {
		return err
	}
	defer floor.stop()
	comps, err := compareAll(ctx, o, svc, floor, r, pools, wh)
	if err != nil {
		return err
	}
	var wr *webhookResult
	if wh != nil {
		wh.awaitCommits(ctx)
		wr = wh.result()
		// Deliveries would show in the service's consumed capacity, which
		// the cost tables read, and the sustained load measures the API
		// alone.
		wr.endpointNotDeleted = unsubscribe(ctx, svc, wh.endpointID)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	var costs []*costRow
	if o.costRequests > 0 {
		fmt.Fprintln(out, "consumed capacity per request")
		if costs, err = measureCost(ctx, o, svc, r, pools, comps); err != nil {
			return err
		}
	}
	var history []historyRow
	if o.costRequests > 0 && o.history > 0 && (o.only == nil || o.only.MatchString(historyName)) {
		fmt.Fprintln(out, historyName)
		if history, err = measureHistory(ctx, svc, o, o.costRequests); err != nil {
			return err
		}
	}
	var imported string
	if o.importRows > 0 && (o.only == nil || o.only.MatchString(importName)) {
		fmt.Fprintln(out, importName)
		runs, err := measureImport(ctx, svc, o.importRows, o.importDocs)
		if err != nil {
			return err
		}
		imported = formatImport(o, runs)
	}
	var sr *sustainResult
	if o.sustain.limit > 0 {
		fmt.Fprintf(out, "sustained mixed load for %s\n", o.sustain.limit)
		res, err := sustain(ctx, svc, o.ds, pools[0], measured(comps, summaryName), o.sustainConc, o.writes, o.sustain, o.seed)
		if err != nil {
			return err
		}
		sr = &res
	}

	report := format(o, comps, wr, sr)
	if imported != "" {
		report += "\n" + imported
	}
	fmt.Fprint(out, "\n"+report)
	var cost string
	if costs != nil {
		cost = formatCost(o, costs)
		fmt.Fprint(out, "\n"+cost)
	}
	var hist string
	if history != nil {
		hist = formatHistory(o, history)
		fmt.Fprint(out, "\n"+hist)
	}
	if o.out == "" {
		return nil
	}
	if err := benchdoc.Splice(o.out, "servicebench", report); err != nil {
		return err
	}
	if hist != "" {
		if err := benchdoc.Splice(o.out, "servicebench-history", hist); err != nil {
			return err
		}
	}
	if cost == "" {
		return nil
	}
	// A table of its own (docs/benchmarks.md, "Cost: capacity per
	// operation"), between markers of its own.
	return benchdoc.Splice(o.out, "servicebench-cost", cost)
}

// newPools makes this run's documents to restate, one pool per ingest
// size, each with a document per writer. They are the run's own, so the
// dataset stays as loaded for the next run.
func newPools(ctx context.Context, store *store.Store, o options) ([]*pool, error) {
	tag := strconv.FormatInt(time.Now().Unix(), 36)
	pools := make([]*pool, len(o.ingest))
	for i, n := range o.ingest {
		start := time.Now()
		p, err := newPool(ctx, store, tag, o.conc, n)
		if err != nil {
			return nil, err
		}
		pools[i] = p
		fmt.Printf("created %d documents of %d positions to restate in %s\n", o.conc, n, time.Since(start).Round(time.Millisecond))
	}
	return pools, nil
}

// ingestName names the ingest comparison of restatements of documents of n
// positions, and firstName that of their first versions.
func ingestName(n int) string { return fmt.Sprintf("ingest, %d positions", n) }

func firstName(n int) string { return fmt.Sprintf("ingest, %d new positions", n) }

// compareAll measures every route against its baseline, the reads first,
// at concurrency 1 and o.conc; the position read's floor (floor.go) is
// served by floor. The position summary is skipped if this build of the
// service has no such route.
func compareAll(ctx context.Context, o options, svc, floor *service, r *raw, pools []*pool, wh *webhookRun) ([]*comparison, error) {
	comps := readComparisons(svc, floor, r, o.ds)
	for _, c := range comps {
		switch {
		case o.only != nil && !o.only.MatchString(c.name):
			c.skip = "not measured: -only " + o.only.String()
		case c.name == floorName && c.skip == "" && !measured(comps, positionName):
			c.skip = "not measured: it answers as many bytes as the position read, which was not measured"
		case c.name == summaryName:
			c.skip = probe(ctx, svc, "/v1/positions/"+o.ds.positionID(0, 0)+"/summary")
		}
	}
	for i, n := range o.ingest {
		for _, c := range []*comparison{ingestComparison(ingestName(n), svc, r, pools[i], wh, false), ingestComparison(firstName(n), svc, r, pools[i], wh, true)} {
			if o.only != nil && !o.only.MatchString(c.name) {
				c.skip = "not measured: -only " + o.only.String()
			}
			comps = append(comps, c)
		}
	}
	for _, c := range comps {
		if c.skip != "" {
			fmt.Printf("  %s: %s\n", c.name, c.skip)
			continue
		}
		if err := c.run(ctx, []int{1, o.conc}, o.bounds, o.slices, o.warmup, o.seed); err != nil {
			return nil, err
		}
		if c.name == positionName {
			memo, encoded, err := scrapeItemAnswers(ctx, svc)
			if err != nil {
				return nil, err
			}
			c.note = func(*comparison) string {
				return fmt.Sprintf("the position read answered %d of its %d items (%.1f%%) from its memo of answers (FUNDSVC_ITEM_MEMO_BYTES at its default), "+
					"decoding and encoding the rest: each item's first read, and the reads of items the memo had dropped. The reads draw uniformly from the dataset's %d positions, "+
					"so its figures mix the two kinds of read",
					memo, memo+encoded, 100*float64(memo)/float64(max(memo+encoded, 1)), o.ds.funds()*o.ds.positions)
			}
		}
	}
	return comps, nil
}
