// Command exportbench measures `fundsvc export` against the raw parallel
// Scan it wraps (`make bench-export`, see docs/benchmarks.md).
//
// For each table size it starts from an empty table in one DynamoDB Local
// and loads documents through the store (the writes the service makes).
// Then, for several rounds, it times:
//
//   - a raw parallel Scan that only counts items;
//   - the full export to a local folder, run as a child process, whose
//     peak RSS it reads from the kernel;
//   - after it restates 1% of the documents, `fundsvc export --since-last`
//     from that round's snapshot.
//
// It prints, as medians over the rounds, items per second for the Scan and
// the export, their ratio, the peak RSS, and the incremental run's time
// beside the full export's. It adds the DynamoDB capacity both runs
// consumed, from their manifests.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/bench/benchdoc"
	"github.com/fundsvc/fundsvc/internal/bench/rules"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/store"
	"golang.org/x/sync/errgroup"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "exportbench:", err)
		os.Exit(1)
	}
}

type result struct {
	items            int64
	docs             int
	rawRate, expRate float64 // medians, items per second
	ratio            float64 // median of per-round ratios
	rssMB            float64 // largest peak RSS of the export over the rounds
	load             time.Duration
	inc              incremental
}

// incremental is the measure of an incremental export after 1% of the
// documents changed, beside the full export it starts from: one round's,
// and the medians over the rounds.
type incremental struct {
	changed           int // documents restated
	full, incremental time.Duration
	fullM, incM       export.Manifest
	// The least each run's reads can consume by DynamoDB's rules: a Scan
	// of the table's items; the changed documents read at their version.
	fullMin, incMin float64
	// Medians over the rounds (seconds; ratio of incremental to full), and
	// each round's ratio.
	fullSeconds, incSeconds, ratio float64
	ratios                         []float64
}

// options are the command's flags.
type options struct {
	sizes                    string
	perDoc, segments, rounds int
	bin, out, dataDir        string
	tablePrefix              string // tables are <prefix>-v1-<items>-<items per document>
	verbose                  bool
	args                     []string
}

func parseFlags(args []string) (options, error) {
	o := options{tablePrefix: "exportbench", args: args}
	fs := flag.NewFlagSet("exportbench", flag.ContinueOnError)
	fs.StringVar(&o.sizes, "items", "200000", "table sizes in items, comma-separated (e.g. 100000,1000000 to compare memory)")
	fs.IntVar(&o.perDoc, "items-per-doc", 100, "items per document (the default makes 2,000 documents of 200,000 items)")
	fs.IntVar(&o.segments, "segments", 4, "parallel Scan segments, for both the raw Scan and the export")
	fs.IntVar(&o.rounds, "rounds", 3, "measurements per size; medians are reported")
	fs.StringVar(&o.bin, "fundsvc", "./fundsvc", "the fundsvc binary to run")
	fs.StringVar(&o.out, "out", "", "also write the results into this Markdown file, between the exportbench markers")
	fs.StringVar(&o.dataDir, "data", ".data/exportbench", "DynamoDB Local's folder; loaded tables are kept there and reused")
	fs.BoolVar(&o.verbose, "v", false, "print what each fundsvc export run logs (its steps, with their times)")
	return o, fs.Parse(args)
}

// run parses args, starts DynamoDB Local with its tables in -data and
// measures (see bench).
func run(ctx context.Context, args []string, w io.Writer) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	// On disk, not in memory: a million items in memory outgrow DynamoDB
	// Local's default Java heap, and its Scan then crawls through GC. Kept,
	// because loading a million items takes most of an hour.
	if err := os.MkdirAll(o.dataDir, 0o755); err != nil {
		return err
	}
	db, err := dynamotest.StartPersistent(ctx, o.dataDir, 0)
	if err != nil {
		return err
	}
	defer db.Stop()
	return bench(ctx, o, db, w)
}

// bench loads a table of each size into db unless it holds it already and
// measures the raw Scan and the export on it. It writes the report to w
// (and into the file o.out names) and its progress to standard output.
func bench(ctx context.Context, o options, db *dynamotest.Server, w io.Writer) error {
	cfg := db.Config()
	raw := dynamodb.NewFromConfig(cfg)

	var results []result
	for _, s := range strings.Split(o.sizes, ",") {
		target, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || target < int64(o.perDoc) {
			return fmt.Errorf("bad size %q", s)
		}
		// The name says what the loader wrote; a table that exists was
		// loaded completely (the marker item is written last).
		table := fmt.Sprintf("%s-v1-%d-%d", o.tablePrefix, target, o.perDoc)
		store := store.NewStore(store.NewDB(cfg), table)
		r := result{docs: int(target / int64(o.perDoc))}
		if loaded(ctx, raw, table) {
			fmt.Printf("reusing %s from %s\n", table, o.dataDir)
		} else {
			_, _ = raw.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
			if err := store.CreateTable(ctx); err != nil {
				return err
			}
			start := time.Now()
			if err := load(ctx, store, r.docs, o.perDoc); err != nil {
				return err
			}
			if err := markLoaded(ctx, raw, table); err != nil {
				return err
			}
			r.load = time.Since(start)
			fmt.Printf("loaded %d documents into %s in %s\n", r.docs, table, r.load.Round(time.Second))
		}

		// One untimed Scan warms DynamoDB Local's JIT and caches.
		if _, _, _, err := rawScan(ctx, raw, store, o.segments); err != nil {
			return err
		}
		var rawRates, expRates, ratios, incRatios []float64
		var fulls, incs []float64
		for round := 1; round <= o.rounds; round++ {
			n, rawTime, scanMin, err := rawScan(ctx, raw, store, o.segments)
			if err != nil {
				return err
			}
			inc, rss, err := measureRound(ctx, o, db.Endpoint(), raw, store, r.docs)
			if err != nil {
				return err
			}
			inc.fullMin = scanMin
			r.items, r.rssMB, r.inc = n, max(r.rssMB, rss), inc
			rr, er := float64(n)/rawTime.Seconds(), float64(n)/inc.full.Seconds()
			ir := inc.incremental.Seconds() / inc.full.Seconds()
			rawRates, expRates, ratios = append(rawRates, rr), append(expRates, er), append(ratios, er/rr)
			fulls, incs, incRatios = append(fulls, inc.full.Seconds()), append(incs, inc.incremental.Seconds()), append(incRatios, ir)
			fmt.Printf("  round %d: %d items; raw Scan %.0f items/s, export %.0f items/s (%.2f); export peak RSS %.0f MB; "+
				"incremental after %d documents changed %.2fs (%.3f of the export); no Scan: %t\n",
				round, n, rr, er, er/rr, rss, inc.changed, inc.incremental.Seconds(), ir, inc.incM.ItemsScanned == 0)
		}
		r.rawRate, r.expRate, r.ratio = median(rawRates), median(expRates), median(ratios)
		r.inc.fullSeconds, r.inc.incSeconds, r.inc.ratio, r.inc.ratios = median(fulls), median(incs), median(incRatios), incRatios
		results = append(results, r)
	}

	report := format(results, o.segments, o.rounds, strings.Join(o.args, " "))
	fmt.Fprint(w, "\n"+report)
	if o.out != "" {
		return benchdoc.Splice(o.out, "exportbench", report)
	}
	return nil
}

// load writes docs documents through the store, with the positions a
// document needs to make about perDoc items, eight at a time. Funds have 20
// documents each and share positions across them, as a fund's investors
// recur in its notices; every tenth document is restated once.
func load(ctx context.Context, store *store.Store, docs, perDoc int) error {
	// A document of P positions (three items each) makes about 6P+8 items:
	// its version partition, its latest view, its head and history
	// records, its fund's index; a position's registry and claim once.
	positions := max(1, (perDoc-8)/6)
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range docs {
		g.Go(func() error {
			d := benchDocument(i, positions, 1)
			if _, err := store.Restate(gctx, d, nil); err != nil {
				return fmt.Errorf("load %s: %w", d.ID, err)
			}
			if i%10 == 0 {
				v := 1
				if _, err := store.Restate(gctx, benchDocument(i, positions, 2), &v); err != nil {
					return fmt.Errorf("restate %s: %w", d.ID, err)
				}
			}
			if n := done.Add(1); n%500 == 0 {
				fmt.Printf("  %d/%d documents\n", n, docs)
			}
			return nil
		})
	}
	return g.Wait()
}

func benchDocument(i, positions, version int) fund.Document {
	m := func(cents int) fund.Money { return fund.MustMoney(fmt.Sprintf("%d.%02d", cents/100, cents%100)) }
	f := i / 20
	d := fund.Document{
		ID: fmt.Sprintf("DOC_%06d", i),

		CreatedBy:       "exportbench",
		CapitalActivity: &fund.CapitalActivity{Amount: m(100000 + i), Status: fund.StatusCompleted, ActivityDetails: fund.ActivityDetails{ActivityDate: fund.MustDate("2024-01-15"), Description: "bench"}}, DocumentFields: fund.DocumentFields{FundID: fmt.Sprintf("FUND_%04d", f), Kind: fund.KindCapitalAccountStatement, Title: fmt.Sprintf("Statement %d v%d", i, version), AsOf: fund.MustDate(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%700).Format("2006-01-02")), Currency: "USD"},
	}
	for p := range positions {
		amt := 1000*(i+1) + p + version
		commitment := m(amt * 10)
		d.Positions = append(d.Positions, fund.Position{
			ID: fmt.Sprintf("POS_%04d_%03d", f, p), InvestorID: fmt.Sprintf("INV_%03d", p),
			CapitalCall:        &fund.CapitalCallItem{Amount: m(amt), Status: fund.StatusPending, CallDetails: fund.CallDetails{DueDate: fund.MustDate("2024-03-31")}},
			Distribution:       &fund.DistributionItem{Amount: m(amt / 2), Status: fund.StatusCompleted, DistributionDetails: fund.DistributionDetails{PaymentDate: fund.MustDate("2024-02-15")}},
			UnfundedCommitment: &fund.UnfundedCommitmentItem{Amount: m(amt * 5), Status: fund.StatusActive, UnfundedDetails: fund.UnfundedDetails{UnfundedLines: fund.UnfundedLines{Commitment: &commitment}}},
		})
	}
	return d
}

// markerKey is the item that says a table's load finished. It is not an
// entity of the service, so the export ignores it (the raw Scan counts it).
var markerKey = map[string]types.AttributeValue{
	store.AttrPK: &types.AttributeValueMemberS{Value: "EXPORTBENCH"},
	store.AttrSK: &types.AttributeValueMemberS{Value: "LOADED"},
}

func markLoaded(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: markerKey})
	return err
}

func loaded(ctx context.Context, client *dynamodb.Client, table string) bool {
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: markerKey, ConsistentRead: aws.Bool(true)})
	return err == nil && out.Item != nil
}

// rawScan counts the table's items with a parallel Scan through the SDK,
// making the requests the export makes (the store's own Scan plan: every
// attribute, the same Limit) and decoding nothing. It also returns the
// least those pages can consume by DynamoDB's rules (package rules), which
// is what the export's Scan, making the same requests, consumes at best.
func rawScan(ctx context.Context, client *dynamodb.Client, st *store.Store, segments int) (int64, time.Duration, float64, error) {
	start := time.Now()
	var n atomic.Int64
	var mu sync.Mutex
	minimum := 0.0
	g, gctx := errgroup.WithContext(ctx)
	for _, in := range st.ScanPlan(store.ScanOptions{Segments: segments}) {
		g.Go(func() error {
			p := dynamodb.NewScanPaginator(client, in)
			for p.HasMorePages() {
				page, err := p.NextPage(gctx)
				if err != nil {
					return err
				}
				n.Add(int64(len(page.Items)))
				c, _ := rules.QueryMinimum(page.Items, true)
				mu.Lock()
				minimum += c.Read
				mu.Unlock()
			}
			return nil
		})
	}
	err := g.Wait()
	return n.Load(), time.Since(start), minimum, err
}

// documentsMinimum is the least that reading docs at their latest
// committed version, restated once since the last snapshot, can consume by
// DynamoDB's rules: for each, a strongly consistent Query of its history
// records, one of its two latest events (the version restated since, and
// the one before it) and one of its version's partition, the requests of
// store.Store.DocumentRecords, priced from the sizes of the items they
// return.
func documentsMinimum(ctx context.Context, client *dynamodb.Client, st *store.Store, docs []string) (float64, error) {
	query := func(in *dynamodb.QueryInput) (float64, error) {
		var items []map[string]types.AttributeValue
		p := dynamodb.NewQueryPaginator(client, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return 0, err
			}
			items = append(items, page.Items...)
		}
		c, _ := rules.QueryMinimum(items, true)
		return c.Read, nil
	}
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}}
	}
	total := 0.0
	for _, doc := range docs {
		head, err := st.As(fund.Operator).LatestDocument(ctx, doc)
		if err != nil {
			return 0, err
		}
		lo, hi := store.VersionRange(store.DocumentVersionPrefix, 1, store.MaxVersion)
		vals := key(store.DocPK(doc))
		vals[":lo"], vals[":hi"] = &types.AttributeValueMemberS{Value: lo}, &types.AttributeValueMemberS{Value: hi}
		history, err := query(&dynamodb.QueryInput{TableName: aws.String(st.TableName()), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
			ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK, "#sk": store.AttrSK}, ExpressionAttributeValues: vals})
		if err != nil {
			return 0, err
		}
		latest, err := client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(st.TableName()), ConsistentRead: aws.Bool(true),
			KeyConditionExpression: aws.String("#pk = :pk"), ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK},
			ExpressionAttributeValues: key(store.EventPK(doc)), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(2)})
		if err != nil {
			return 0, err
		}
		events, _ := rules.QueryMinimum(latest.Items, true)
		version, err := query(&dynamodb.QueryInput{TableName: aws.String(st.TableName()), ConsistentRead: aws.Bool(true),
			KeyConditionExpression: aws.String("#pk = :pk"), ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK},
			ExpressionAttributeValues: key(store.VersionPK(doc, head.CommitID))})
		if err != nil {
			return 0, err
		}
		total += history + events.Read + version
	}
	return total, nil
}

// settle is the settle margin the bench's exports for the incremental
// measure use, rather than the store's 5 minutes: DynamoDB Local updates
// its indexes with the write, and nothing else writes the table, so the
// full export is complete up to its start, and the incremental run reads
// the documents restated after it, whenever the table was loaded.
const settle = "1ms"

// measureRound exports the table in full into a new folder (the round's
// export, whose peak RSS in MB it returns), restates 1% of its documents (at
// least one, spread over the table) through the store and exports it with
// --since-last into the same folder.
func measureRound(ctx context.Context, o options, endpoint string, raw *dynamodb.Client, st *store.Store, docs int) (incremental, float64, error) {
	var m incremental
	dir, err := os.MkdirTemp("", "exportbench-*")
	if err != nil {
		return m, 0, err
	}
	defer os.RemoveAll(dir)
	dest := filepath.Join(dir, "out")
	segs := strconv.Itoa(o.segments)
	var rss float64
	if m.full, rss, err = exportTo(ctx, o, endpoint, st.TableName(), dir, "export", "--dest", dest, "--date", "2026-11-21",
		"--segments", segs, "--settle", settle, "--progress", "log"); err != nil {
		return m, 0, err
	}
	positions := max(1, (o.perDoc-8)/6)
	m.changed = max(1, docs/100)
	stride := docs / m.changed
	// A new version each run: the amounts depend on the instant.
	variant := int(time.Now().Unix() % 1000)
	var changed []string
	for k := range m.changed {
		d, err := st.Restate(ctx, benchDocument(k*stride, positions, 3+variant), nil)
		if err != nil {
			return m, 0, fmt.Errorf("restate: %w", err)
		}
		changed = append(changed, d.ID)
	}
	if m.incMin, err = documentsMinimum(ctx, raw, st, changed); err != nil {
		return m, 0, err
	}
	if m.incremental, _, err = exportTo(ctx, o, endpoint, st.TableName(), dir, "export", "--dest", dest, "--date", "2026-11-22",
		"--since-last", "--settle", settle, "--progress", "log"); err != nil {
		return m, 0, err
	}
	for date, into := range map[string]*export.Manifest{"2026-11-21": &m.fullM, "2026-11-22": &m.incM} {
		b, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(export.ManifestKey(fund.MustDate(date)))))
		if err != nil {
			return m, 0, err
		}
		if err := json.Unmarshal(b, into); err != nil {
			return m, 0, err
		}
	}
	if m.incM.Kind != "incremental" || m.incM.ItemsScanned != 0 || m.incM.DocumentsChanged < m.changed {
		return m, 0, fmt.Errorf("the --since-last run was %s, scanned %d items and read %d documents; want incremental, none, at least %d",
			m.incM.Kind, m.incM.ItemsScanned, m.incM.DocumentsChanged, m.changed)
	}
	return m, rss, nil
}

// exportTo runs fundsvc with args, its temporary files in tmp, and returns
// its wall time and peak RSS in MB.
func exportTo(ctx context.Context, o options, endpoint, table, tmp string, args ...string) (time.Duration, float64, error) {
	bin := o.bin
	cmd := exec.CommandContext(ctx, bin, args...)
	// Nothing from make run's stack file (.data/stack.env in the checkout
	// the bench runs from): the export measured is the one configured here.
	cmd.Env = append(os.Environ(), "FUNDSVC_STACK_FILE=/dev/null",
		"FUNDSVC_DYNAMODB_ENDPOINT="+endpoint, "FUNDSVC_TABLE="+table, "TMPDIR="+tmp)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s export: %w\n%s", bin, err, out)
	}
	if o.verbose {
		fmt.Printf("  fundsvc %s:\n%s", strings.Join(args, " "), out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, errors.New("no rusage on this platform")
	}
	return elapsed, float64(ru.Maxrss) / 1024, nil // Maxrss is in KiB on Linux
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func format(results []result, segments, rounds int, args string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Command: `make bench-export` (`go run ./internal/bench/exportbench %s`)\n\n", args)
	fmt.Fprintf(&b, "Machine: %s/%s, %d CPUs, Go %s; DynamoDB Local (tables on disk) on the same machine. %d Scan segments, medians of %d rounds.\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), segments, rounds)
	b.WriteString("| items | documents | raw Scan items/s | export items/s | export ÷ raw | export peak RSS |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %d | %d | %.0f | %.0f | %.2f | %.0f MB |\n", r.items, r.docs, r.rawRate, r.expRate, r.ratio, r.rssMB)
	}
	if len(results) >= 2 {
		small, big := results[0], results[len(results)-1]
		fmt.Fprintf(&b, "\nPeak RSS at %d items is %.2f× the peak at %d items (target: within 1.20×).\n",
			big.items, big.rssMB/small.rssMB, small.items)
	}
	b.WriteString("\nIncremental export (`--since-last`) after 1% of the documents changed, from each round's full export (medians of the rounds; capacity units as DynamoDB reported them, in the last round):\n\n")
	b.WriteString("| items | documents changed | full export | incremental | incremental ÷ full | items scanned by the incremental | full export RCU / WCU | minimum RCU (the Scan's pages) | incremental RCU / WCU | minimum RCU (the changed documents) |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		i := r.inc
		fmt.Fprintf(&b, "| %d | %d | %.2f s | %.2f s | %.3f | %d | %.1f / %.1f | %.1f | %.1f / %.1f | %.1f |\n", r.items, i.incM.DocumentsChanged,
			i.fullSeconds, i.incSeconds, i.ratio, i.incM.ItemsScanned,
			i.fullM.Capacity.ReadUnits, i.fullM.Capacity.WriteUnits, i.fullMin, i.incM.Capacity.ReadUnits, i.incM.Capacity.WriteUnits, i.incMin)
	}
	b.WriteString("\n")
	for _, r := range results {
		rs := make([]string, len(r.inc.ratios))
		for k, x := range r.inc.ratios {
			rs[k] = fmt.Sprintf("%.3f", x)
		}
		fmt.Fprintf(&b, "Incremental ÷ full at %d items, by round: %s (target: at most 0.10).\n", r.items, strings.Join(rs, ", "))
	}
	return b.String()
}
