package export_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/shopspring/decimal"
)

// ingestDocument is a new version of document id of fundID: a random
// choice among eight positions, each with a random choice of items (calls
// with stated typed lines or none, statements), so
// consecutive versions add and drop positions and items. A position ID
// always names the same investor.
func ingestDocument(r *rand.Rand, id, fundID string) fund.Document {
	var ps []fund.Position
	for i := 1; i <= 8; i++ {
		if r.IntN(3) == 0 {
			continue
		}
		p := fund.Position{ID: fmt.Sprintf("%s_P%d", fundID, i), InvestorID: fmt.Sprintf("INV_%d", i)}
		if r.IntN(2) == 0 {
			p.CapitalCall = &fund.CapitalCallItem{Amount: money(r, 1e7), Status: fund.StatusPending}
			if r.IntN(2) == 0 { // stated typed lines
				fee := money(r, 1e4)
				p.CapitalCall.Amount = p.CapitalCall.Amount.Add(fee)
				p.CapitalCall.Transactions = []fund.Transaction{
					{Type: "investment", Amount: p.CapitalCall.Amount.Sub(fee), Unfunded: fund.Reduces},
					{Type: "management_fee_outside_commitment", Amount: fee, Unfunded: fund.NoEffect}}
			}
		}
		if r.IntN(3) == 0 {
			begin, gain := money(r, 1e7), money(r, 1e6)
			p.CapitalAccount = &fund.CapitalAccount{PeriodStart: fund.MustDate("2026-04-01"),
				BeginningNAV: begin, NetUnrealizedGainLoss: &gain, EndingNAV: begin.Add(gain)}
		}
		if r.IntN(2) == 0 {
			p.Distribution = &fund.DistributionItem{Amount: money(r, 1e7), Status: fund.StatusCompleted}
		}
		if p.CapitalCall == nil && p.Distribution == nil || r.IntN(2) == 0 {
			p.UnfundedCommitment = &fund.UnfundedCommitmentItem{Amount: money(r, 1e7)}
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		ps = append(ps, fund.Position{ID: fundID + "_P1", InvestorID: "INV_1",
			UnfundedCommitment: &fund.UnfundedCommitmentItem{Amount: money(r, 1e7)}})
	}
	return fund.Document{ID: id,
		Positions: ps, DocumentFields:

		// fundOf is the fund of document DOC_<n>: one of three.
		fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalCallNotice, Title: "notice " + id, AsOf: fund.MustDate("2026-06-30"), Currency: "USD"}}
}

func fundOf(id string) string {
	var n int
	fmt.Sscanf(id, "DOC_%d", &n)
	return fmt.Sprintf("FUND_%c", 'A'+n%3)
}

// ingestDocuments writes version 1 of n documents over three funds and
// returns their IDs.
func ingestDocuments(t *testing.T, e *fundtest.Env, r *rand.Rand, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("DOC_%02d", i)
		if _, err := e.Store.Restate(context.Background(), ingestDocument(r, id, fundOf(id)), nil); err != nil {
			t.Fatalf("write %s: %v", id, err)
		}
		ids = append(ids, id)
	}
	return ids
}

// checkWhole reads the snapshot published in dir with DuckDB and checks
// that every document of ids is in it, in every dataset, at exactly one
// committed version, whole: its rows of each position-level dataset are
// exactly the items of that version as store.View.Version reads it back
// (and the typed lines of its calls and distributions),
// its document_versions are 1 to that version with only the last one
// latest, each committed at its event's instant and superseded at the
// next one's, the datasets of every version hold exactly the items of
// each of those versions, and every position it reports is in positions.
// It returns the version of each document in the snapshot.
func checkWhole(t *testing.T, e *fundtest.Env, dir string, ids []string) map[string]int {
	t.Helper()
	rows := duck(t, views(t, dir, ""), `
		SELECT 'doc', document_id, version::VARCHAR, position_count::VARCHAR, '' FROM documents
		UNION ALL SELECT 'version', document_id, version::VARCHAR, status, '' FROM document_versions
		UNION ALL SELECT 'capital_call', document_id, document_version::VARCHAR, position_id, amount::VARCHAR FROM capital_calls
		UNION ALL SELECT 'distribution', document_id, document_version::VARCHAR, position_id, amount::VARCHAR FROM distributions
		UNION ALL SELECT 'unfunded_commitment', document_id, document_version::VARCHAR, position_id, amount::VARCHAR FROM unfunded_commitments
		UNION ALL SELECT 'capital_account', document_id, document_version::VARCHAR, position_id, ending_nav::VARCHAR FROM capital_accounts
		UNION ALL SELECT 'line', document_id, document_version::VARCHAR, position_id || ' ' || item_type || ' ' || line || ' ' || transaction_type, amount::VARCHAR FROM transaction_lines
		UNION ALL SELECT 'position', fund_id, position_id, investor_id, '' FROM positions
		UNION ALL SELECT 'instants', document_id, version::VARCHAR, epoch_ms(committed_at)::VARCHAR, coalesce(epoch_ms(superseded_at)::VARCHAR, 'NULL') FROM document_versions
		UNION ALL SELECT 'v:capital_call', document_id, document_version::VARCHAR, position_id, amount::VARCHAR FROM capital_call_versions
		UNION ALL SELECT 'v:distribution', document_id, document_version::VARCHAR, position_id, amount::VARCHAR FROM distribution_versions
		UNION ALL SELECT 'v:unfunded_commitment', document_id, document_version::VARCHAR, position_id, amount::VARCHAR FROM unfunded_commitment_versions
		UNION ALL SELECT 'v:capital_account', document_id, document_version::VARCHAR, position_id, ending_nav::VARCHAR FROM capital_account_versions
		UNION ALL SELECT 'v:line', document_id, document_version::VARCHAR, position_id || ' ' || item_type || ' ' || line || ' ' || transaction_type, amount::VARCHAR FROM transaction_line_versions`)
	versions := map[string]int{}          // document → version in documents
	latest := map[string][]string{}       // document → "version latest" of document_versions
	items := map[string]map[string]bool{} // document → "kind pos version amount"
	every := map[string]map[string]bool{} // the same of the datasets of every version
	instants := map[string][]string{}     // document → "version committed superseded" of document_versions, in ms
	registered := map[string]bool{}       // position IDs in positions
	for _, r := range rows {
		switch r[0] {
		case "doc":
			if _, dup := versions[r[1]]; dup {
				t.Errorf("documents holds %s twice", r[1])
			}
			var v int
			fmt.Sscan(r[2], &v)
			versions[r[1]] = v
		case "version":
			latest[r[1]] = append(latest[r[1]], r[2]+" "+r[3])
		case "position":
			registered[r[2]] = true
		case "instants":
			instants[r[1]] = append(instants[r[1]], strings.Join(r[2:], " "))
		default:
			set := items
			kind, ok := strings.CutPrefix(r[0], "v:")
			if ok {
				set = every
			}
			if set[r[1]] == nil {
				set[r[1]] = map[string]bool{}
			}
			key := strings.Join([]string{kind, r[3], r[2], decimal.RequireFromString(r[4]).String()}, " ")
			if set[r[1]][key] {
				t.Errorf("document %s: row %s exported twice (%s)", r[1], key, r[0])
			}
			set[r[1]][key] = true
		}
	}
	for _, id := range ids {
		v, ok := versions[id]
		if !ok {
			t.Errorf("document %s is not in documents", id)
			continue
		}
		// The rows each version's items are: of the latest datasets for
		// version v, of the datasets of every version for each.
		rowsOf := func(n int, d fund.Document, into map[string]bool) {
			for _, it := range d.Items() {
				into[strings.Join([]string{it.Kind.Name(), it.PositionID, fmt.Sprint(n), it.Amount.Decimal().String()}, " ")] = true
				for i, l := range it.TypedLines() {
					into[strings.Join([]string{"line", fmt.Sprintf("%s %s %d %s", it.PositionID, it.Kind.Name(), i+1, l.Type), fmt.Sprint(n), l.Amount.Decimal().String()}, " ")] = true
				}
			}
		}
		want, wantEvery := map[string]bool{}, map[string]bool{}
		var wantInstants []string
		for n := 1; n <= v; n++ {
			d, err := e.Store.As(fund.Operator).Version(context.Background(), id, n)
			if err != nil {
				t.Fatalf("read version %d of %s: %v", n, id, err)
			}
			rowsOf(n, d, wantEvery)
			if n == v {
				rowsOf(n, d, want)
				for _, it := range d.Items() {
					if !registered[it.PositionID] {
						t.Errorf("document %s version %d reports position %s, which positions lacks", id, v, it.PositionID)
					}
				}
			}
			ev, err := e.Store.Event(context.Background(), id, n)
			if err != nil {
				t.Fatalf("the event of version %d of %s: %v", n, id, err)
			}
			if n > 1 {
				wantInstants[n-2] += fmt.Sprint(ev.Timestamp.UnixMilli())
			}
			wantInstants = append(wantInstants, fmt.Sprintf("%d %d ", n, ev.Timestamp.UnixMilli()))
		}
		wantInstants[v-1] += "NULL"
		for _, c := range []struct {
			what      string
			got, want map[string]bool
		}{{"the latest datasets", items[id], want}, {"the datasets of every version", every[id], wantEvery}} {
			if len(c.got) != len(c.want) {
				t.Errorf("document %s version %d: %s hold %d position-level rows, the versions %d items and lines", id, v, c.what, len(c.got), len(c.want))
			}
			for k := range c.want {
				if !c.got[k] {
					t.Errorf("document %s version %d: %s have no row for %s", id, v, c.what, k)
				}
			}
			for k := range c.got {
				if !c.want[k] {
					t.Errorf("document %s: row %s of %s is not an item of versions 1 to %d", id, k, c.what, v)
				}
			}
		}
		gotInstants := instants[id]
		sort.Slice(gotInstants, func(i, j int) bool {
			var a, b int
			fmt.Sscan(gotInstants[i], &a)
			fmt.Sscan(gotInstants[j], &b)
			return a < b
		})
		if !slices.Equal(gotInstants, wantInstants) {
			t.Errorf("document %s: document_versions' instants %v, the feed's %v", id, gotInstants, wantInstants)
		}
		var wantVersions []string
		for n := 1; n <= v; n++ {
			wantVersions = append(wantVersions, fmt.Sprintf("%d %s", n, map[bool]string{true: "latest", false: "superseded"}[n == v]))
		}
		gotVersions := latest[id]
		sort.Slice(gotVersions, func(i, j int) bool {
			var a, b int
			fmt.Sscan(gotVersions[i], &a)
			fmt.Sscan(gotVersions[j], &b)
			return a < b
		})
		if fmt.Sprint(gotVersions) != fmt.Sprint(wantVersions) {
			t.Errorf("document %s: document_versions %v, want %v", id, gotVersions, wantVersions)
		}
	}
	if len(versions) != len(ids) {
		t.Errorf("documents holds %d documents, want %d", len(versions), len(ids))
	}
	return versions
}

// TestExportRereadsAVersionTheScanPassedTooEarly restates documents twice
// in the middle of the Scan, from inside the Scan request after which only
// a few documents' partitions remain unread: the Scan requests nothing
// more until the restatements have committed, so it reads those
// documents' heads at their new version, while the new versions'
// partitions may lie behind it (written after the Scan passed their
// place). Each such document must be exported whole at its new version,
// the new version's partition read again exactly when the Scan returned
// none of it, and the version between, which the datasets of every version
// hold too, read again because it committed after the snapshot's
// high-water mark (the store's clock moved past the settle margin since
// the documents' earlier versions, which are not read again). Rounds
// repeat until one has caught a new version's partition behind the Scan.
func TestExportRereadsAVersionTheScanPassedTooEarly(t *testing.T) {
	e := fundtest.New(t)
	// A clock that moves on with every reading, so every commit and the
	// high-water mark have instants of their own.
	clock := &storeClock{t: fundtest.Clock, tick: time.Millisecond}
	e.Store.Now = clock.now
	r := rand.New(rand.NewPCG(5, 6))
	ids := ingestDocuments(t, e, r, 24)
	version := map[string]int{} // document → its latest version
	for _, id := range ids {
		version[id] = 1
	}
	// The exporter's store, on the same table, sees every Scan response
	// before the Scan goes on: answered holds the partition keys of the
	// items returned so far.
	var (
		mu       sync.Mutex
		answered map[string]bool
		onScan   func() error // runs once, inside the request after which at most restateLeft documents' partitions are unread
	)
	const restateLeft = 3
	exporter := store.NewStore(store.NewDB(dynamotest.Shared().Config(dynamotest.WithAPIOptions(
		scanResponses(func(items []map[string]types.AttributeValue) error {
			mu.Lock()
			defer mu.Unlock()
			for _, it := range items {
				if pk, ok := it[store.AttrPK].(*types.AttributeValueMemberS); ok {
					answered[pk.Value] = true
				}
			}
			unread := 0
			for _, id := range ids {
				if !answered[store.DocPK(id)] {
					unread++
				}
			}
			if onScan == nil || unread > restateLeft {
				return nil
			}
			f := onScan
			onScan = nil
			return f()
		})))), e.Table)
	exporter.Now = clock.now

	short := 0
	for round := 1; round <= 8 && short == 0; round++ {
		// Past the settle margin of every commit before: the first
		// versions, and an earlier round's restatements, which its export
		// would otherwise read again as within the margin.
		clock.pass()
		restated := map[string]string{} // document → its new version's partition
		between := map[string]string{}  // document → the partition of the version before that
		mu.Lock()
		answered = map[string]bool{}
		onScan = func() error {
			for _, id := range ids {
				if answered[store.DocPK(id)] {
					continue
				}
				for range 2 {
					d, err := e.Store.Restate(context.Background(), ingestDocument(r, id, fundOf(id)), nil)
					if err != nil {
						return fmt.Errorf("restate %s during the Scan: %w", id, err)
					}
					if restated[id] != "" {
						between[id] = restated[id]
					}
					restated[id], version[id] = store.VersionPK(id, d.CommitID), d.Version
				}
			}
			return nil
		}
		mu.Unlock()
		rereads := map[string]bool{}
		sink, dir := dirSink(t)
		runExport(t, e, sink, func(c *export.Config) {
			c.Store = exporter
			c.Segments, c.PageItems = 1, 1 // one item a request: exactly restateLeft documents are unread when the restatements run
			c.OnEvent = func(ev export.Event) {
				if ev.Kind == export.EventReread {
					rereads[ev.Key] = true
				}
			}
		})
		mu.Lock()
		scanned := answered
		mu.Unlock()
		if len(restated) == 0 {
			t.Fatalf("round %d: no document was restated during the Scan", round)
		}
		got := checkWhole(t, e, dir, ids)
		for id, pk := range restated {
			if got[id] != version[id] {
				t.Errorf("round %d: %s exported at version %d, want %d: the Scan read its head after the restatements", round, id, got[id], version[id])
			}
			switch {
			case !scanned[pk] && !rereads[pk]:
				t.Errorf("round %d: %s, the new version's partition, which the Scan had passed, was not read again", round, pk)
			case !scanned[pk]:
				short++
			case rereads[pk]:
				t.Errorf("round %d: %s, the new version's partition, was read again though the Scan read it whole", round, pk)
			}
			delete(rereads, pk)
			delete(rereads, store.EventPK(id)) // the new versions' events, which the Scan may have passed too
		}
		for _, pk := range between {
			if !rereads[pk] {
				t.Errorf("round %d: %s, committed after the high-water mark and superseded during the Scan, was not read again", round, pk)
			}
			delete(rereads, pk)
		}
		for key := range rereads {
			t.Errorf("round %d: %s was read again; none of it committed during the Scan", round, key)
		}
		t.Logf("round %d: %d documents restated during the Scan, %d of them caught short", round, len(restated), short)
	}
	if short == 0 {
		t.Fatal("no round caught a document's new version short; the test did not exercise the re-read")
	}
}

// scanResponses is a client middleware that passes the items of every
// answered Scan request to f before the request returns, so the Scan
// requests nothing more while f runs; an error of f fails the request.
func scanResponses(f func(items []map[string]types.AttributeValue) error) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		if stack.ID() != "Scan" {
			return nil
		}
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("export_test.scanResponses",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err != nil {
					return out, md, err
				}
				if o, ok := out.Result.(*dynamodb.ScanOutput); ok {
					if err := f(o.Items); err != nil {
						return out, md, err
					}
				}
				return out, md, nil
			}), middleware.After)
	}
}

// TestExportRereadsAVersionWhoseLatestViewIsBehind exports a document whose
// newest version committed but whose latest view was never brought to it
// (the writer died between the commit and the materialize, made to happen
// by failing every write after the commit): the latest view cannot vouch
// for the version's items, so the export reads the version partition
// again, and exports the committed version whole.
func TestExportRereadsAVersionWhoseLatestViewIsBehind(t *testing.T) {
	e := fundtest.New(t)
	r := rand.New(rand.NewPCG(7, 8))
	ids := ingestDocuments(t, e, r, 3)
	ctx := context.Background()
	next := ingestDocument(r, ids[0], fundOf(ids[0]))
	committed := false
	for k := 0; k < 100 && !committed; k++ {
		e.Faults.FailAfterWrites(k)
		_, err := e.Store.Restate(ctx, next, nil)
		e.Faults.Disarm()
		if err == nil {
			t.Fatalf("the restatement succeeded with every write after the %d-th failing", k)
		}
		h, err := e.Store.As(fund.Operator).LatestDocument(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		committed = h.Version == 2
	}
	if !committed {
		t.Fatal("no restatement committed")
	}

	var rereads []string
	reread := map[string]bool{} // dataset names of the re-reads
	sink, dir := dirSink(t)
	runExport(t, e, sink, func(c *export.Config) {
		c.OnEvent = func(ev export.Event) {
			if ev.Kind == export.EventReread {
				rereads = append(rereads, ev.Key)
				reread[ev.Dataset] = true
			}
		}
	})
	if got := checkWhole(t, e, dir, ids); got[ids[0]] != 2 {
		t.Errorf("%s exported at version %d, want the committed 2", ids[0], got[ids[0]])
	}
	h, err := e.Store.As(fund.Operator).LatestDocument(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	want := store.VersionPK(ids[0], h.CommitID)
	found := false
	for _, k := range rereads {
		found = found || k == want
		// The writer died before it wrote the registry items of the
		// positions its version added: those are read by key, and every
		// other document is whole as scanned.
		if doc, _, ok := store.ParseVersionPK(k); ok && doc != ids[0] {
			t.Errorf("re-read %s, a document whose latest view is at its head's version", k)
		}
	}
	if !found {
		t.Errorf("the version partition %s was not re-read (re-reads: %v)", want, rereads)
	}
	// Each position-level dataset, and the typed lines, read it again.
	for _, p := range next.Positions {
		if (p.CapitalCall != nil || p.Distribution != nil) && !reread["transaction_lines"] {
			t.Errorf("the version has calls or distributions but transaction_lines did not re-read it (re-reads: %v)", reread)
		}
		if p.CapitalAccount != nil && !reread[fund.TypeCapitalAccount] {
			t.Errorf("the version has statements but capital_accounts did not re-read it (re-reads: %v)", reread)
		}
	}
}

// TestExportDuringContinuousIngest exports while three writers restate
// documents without pause, adding and dropping positions, over a Scan of
// four segments and small pages so that it takes many requests: every
// document of the snapshot is whole at exactly one committed version.
func TestExportDuringContinuousIngest(t *testing.T) {
	e := fundtest.New(t)
	ids := ingestDocuments(t, e, rand.New(rand.NewPCG(9, 10)), 12)
	before := map[string]int{}
	for _, id := range ids {
		h, err := e.Store.As(fund.Operator).LatestDocument(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		before[id] = h.Version
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 11))
			for ctx.Err() == nil {
				i := r.IntN(len(ids))
				_, err := e.Store.Restate(ctx, ingestDocument(r, ids[i], fundOf(ids[i])), nil)
				if err != nil && ctx.Err() == nil && fund.ErrorCode(err) != fund.ECONFLICT {
					t.Errorf("writer %d: restate %s: %v", w, ids[i], err)
					return
				}
				if err == nil {
					writes.Add(1)
				}
			}
		}()
	}
	stop := func() {
		cancel()
		wg.Wait()
	}
	defer stop()
	deadline := time.Now().Add(30 * time.Second)
	for writes.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the writers wrote nothing in 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	duringScan := writes.Load()
	sink, dir := dirSink(t)
	runExport(t, e, sink, func(c *export.Config) {
		c.Segments, c.PageItems, c.MemoryRows = 4, 3, 50
		c.OnEvent = func(ev export.Event) {
			if ev.Kind == export.EventScan {
				duringScan = writes.Load() - duringScan
			}
		}
	})
	stop()
	if duringScan == 0 {
		t.Fatal("no restatement committed while the Scan ran; the test proves nothing")
	}
	got := checkWhole(t, e, dir, ids)
	moved := 0
	for _, id := range ids {
		if got[id] > before[id] {
			moved++
		}
	}
	t.Logf("%d restatements committed during the Scan; %d of %d documents exported at a version written after the writers started", duringScan, moved, len(ids))
	if moved == 0 {
		t.Error("every document exported at the version it had before the writers started")
	}
}
