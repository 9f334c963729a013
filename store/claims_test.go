package store_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// instance is a second store on e's table through its own client, whose
// writes hook holds at a chosen point: another fundsvc process.
func instance(e *fundtest.Env, hook *dynamotest.WriteHook, now func() time.Time) *store.Store {
	s := store.NewStore(store.NewDB(dynamotest.Shared().Config(dynamotest.WithAPIOptions(hook.APIOption()))), e.Table)
	s.Now = now
	return s
}

// oneCall is a document of one new position held by investor inv.
func oneCall(id, fundID, pos, inv string) fund.Document {
	return fund.Document{ID: id,
		Positions: []fund.Position{{ID: pos, InvestorID: inv, CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("1000.00")}}}, DocumentFields:

		// registered lists who the fund and investor registries name for pos.
		fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalCallNotice, Title: "Call " + id, AsOf: fund.MustDate("2025-06-30")},
	}
}

func registered(t *testing.T, e *fundtest.Env, pos string, funds, investors []string) []string {
	t.Helper()
	var out []string
	for _, f := range funds {
		rs, _, err := e.Positions.OfFund(ctx, f, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.PositionID == pos {
				out = append(out, "fund:"+r.FundID+"/"+r.InvestorID)
			}
		}
	}
	for _, inv := range investors {
		rs, _, err := e.Positions.VisibleOfInvestor(ctx, fund.Viewer{AllFunds: true}, inv, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.PositionID == pos {
				out = append(out, "investor:"+r.FundID+"/"+r.InvestorID)
			}
		}
	}
	return out
}

// isTransactionPutting matches the transaction that writes an item whose
// sort key is sk (the head: the commit; a position item: materializing).
func isTransactionPutting(sk string) func(string, any) bool {
	return func(op string, input any) bool {
		in, ok := input.(*dynamodb.TransactWriteItemsInput)
		if !ok {
			return false
		}
		for _, it := range in.TransactItems {
			if it.Put == nil {
				continue
			}
			if v, ok := it.Put.Item[store.AttrSK].(*types.AttributeValueMemberS); ok && strings.HasPrefix(v.Value, sk) {
				return true
			}
		}
		return false
	}
}

func TestARefusedWriteChangesNothing(t *testing.T) {
	t.Run("a write whose commit fails leaves no claim, registry row, fund or staged item", func(t *testing.T) {
		e := fundtest.New(t)
		before := e.Dump(t)
		// The fence, the claims and the staged version go through; the commit fails.
		e.Faults.FailWrites(3, 1)
		_, err := e.Store.Restate(ctx, oneCall("D1", "F_NEW", "P1", "INV_A"), nil)
		if err == nil || e.Faults.Injected() != 1 {
			t.Fatalf("restate: %v after %d injected failures, want the commit to fail", err, e.Faults.Injected())
		}
		if after := e.Dump(t); !reflect.DeepEqual(before, after) {
			t.Fatalf("a refused write left %d items (had %d): %v", len(after), len(before), after)
		}
		// So the corrected document, for another investor, is accepted at once.
		if _, err := e.Store.Restate(ctx, oneCall("D1", "F_NEW", "P1", "INV_B"), nil); err != nil {
			t.Fatalf("corrected document: %v", err)
		}
		if got := registered(t, e, "P1", []string{"F_NEW"}, []string{"INV_A", "INV_B"}); fmt.Sprint(got) != "[fund:F_NEW/INV_B investor:F_NEW/INV_B]" {
			t.Fatalf("registries name %v", got)
		}
	})

	t.Run("a write that loses its If-Match after staging gives its claims back", func(t *testing.T) {
		e := fundtest.New(t)
		hook := &dynamotest.WriteHook{}
		slow := instance(e, hook, e.Store.Now)
		// Between the slow writer's staging and its commit, another instance
		// creates the document with another position.
		hook.OnWriteWhere(isTransactionPutting(store.HeadSK), 1, func() {
			if _, err := e.Store.Restate(ctx, oneCall("D1", "F1", "P_OTHER", "INV_B"), nil); err != nil {
				t.Errorf("concurrent create: %v", err)
			}
		})
		zero := 0
		_, err := slow.Restate(ctx, oneCall("D1", "F1", "P1", "INV_A"), &zero)
		if fund.ErrorCode(err) != fund.EPRECONDITION || !hook.Fired() {
			t.Fatalf("slow create: %v (hook fired: %v), want precondition failed", err, hook.Fired())
		}
		versions := map[string]bool{}
		for _, it := range e.Dump(t) {
			pk := it[store.AttrPK].(*types.AttributeValueMemberS).Value
			committed, _ := it["Committed"].(*types.AttributeValueMemberBOOL)
			if strings.Contains(pk, "P1") || strings.HasPrefix(pk, "FENCE#") && (committed == nil || !committed.Value) {
				t.Errorf("the refused write left %s", pk)
			}
			if strings.HasPrefix(pk, "VERSION#") {
				versions[pk] = true
			}
		}
		if len(versions) != 1 {
			t.Errorf("version partitions %v, want only the committed one", versions)
		}
		if got := registered(t, e, "P1", []string{"F1"}, []string{"INV_A"}); len(got) != 0 {
			t.Fatalf("registries name %v", got)
		}
	})
}

func TestAPendingClaimOfADeadWriterIsFreeAfterItsLease(t *testing.T) {
	e := fundtest.New(t)
	now := fundtest.Clock
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e.Store.Now = clock
	e.Store.ClaimLease = time.Minute
	// The writer dies right after claiming: nothing after reaches the table.
	e.Faults.FailAfterWrites(2)
	if _, err := e.Store.Restate(ctx, oneCall("D1", "F1", "P1", "INV_A"), nil); err == nil {
		t.Fatal("the dying write succeeded")
	}
	e.Faults.Disarm()
	if got := registered(t, e, "P1", []string{"F1"}, []string{"INV_A"}); len(got) != 0 {
		t.Fatalf("a dead write's position is listed: %v", got)
	}
	// Within the lease the claim is another writer's: refused, nothing changed.
	before := e.Dump(t)
	if _, err := e.Store.Restate(ctx, oneCall("D2", "F2", "P1", "INV_B"), nil); fund.ErrorCode(err) != fund.ECONFLICT {
		t.Fatalf("claim within the lease: %v, want conflict", err)
	}
	if after := e.Dump(t); !reflect.DeepEqual(before, after) {
		t.Fatal("the refused write changed the table")
	}
	// The same investor's document shares the pending claim and is not held up.
	if _, err := e.Store.Restate(ctx, oneCall("D3", "F1", "P1", "INV_A"), nil); err != nil {
		t.Fatalf("same identity within the lease: %v", err)
	}
	// The claim stands for the ledger entry of D1, whose write put it; D3,
	// which joined it, staged an entry of its own.
	if _, docs, err := e.Store.PositionDocuments(ctx, "P1", 10); err != nil || !slices.Contains(docs, "D3") {
		t.Fatalf("P1's ledger names %v (%v), want D3 among them", docs, err)
	}
	if _, err := e.Store.Restate(ctx, oneCall("D2", "F2", "P1", "INV_B"), nil); fund.ErrorCode(err) != fund.ECONFLICT {
		t.Fatalf("claim confirmed by a committed document taken: %v", err)
	}

	// A second position, orphaned alone, is taken over once the lease ran out.
	e.Faults.FailAfterWrites(2)
	_, _ = e.Store.Restate(ctx, oneCall("D4", "F1", "P2", "INV_A"), nil)
	e.Faults.Disarm()
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := e.Store.Restate(ctx, oneCall("D5", "F2", "P2", "INV_B"), nil); err != nil {
		t.Fatalf("claim after the lease: %v", err)
	}
	if got := registered(t, e, "P2", []string{"F1", "F2"}, []string{"INV_A", "INV_B"}); fmt.Sprint(got) != "[fund:F2/INV_B investor:F2/INV_B]" {
		t.Fatalf("registries name %v", got)
	}
}

func TestAWriterWhoseClaimWasTakenOverCannotCommit(t *testing.T) {
	e := fundtest.New(t)
	now := fundtest.Clock
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e.Store.Now, e.Store.ClaimLease = clock, time.Minute
	hook := &dynamotest.WriteHook{}
	slow := instance(e, hook, clock)
	slow.ClaimLease = time.Minute
	// The slow writer stalls past its lease just before its commit; another
	// investor's document takes the position over meanwhile.
	hook.OnWriteWhere(isTransactionPutting(store.HeadSK), 1, func() {
		mu.Lock()
		now = now.Add(2 * time.Minute)
		mu.Unlock()
		if _, err := e.Store.Restate(ctx, oneCall("D_B", "F_B", "P1", "INV_B"), nil); err != nil {
			t.Errorf("take over: %v", err)
		}
	})
	_, err := slow.Restate(ctx, oneCall("D_A", "F_A", "P1", "INV_A"), nil)
	if fund.ErrorCode(err) != fund.ECONFLICT || !hook.Fired() {
		t.Fatalf("slow writer: %v (hook fired: %v), want conflict", err, hook.Fired())
	}
	if _, err := e.Store.As(fund.Operator).Overview(ctx, "D_A"); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Fatalf("the slow writer's document: %v", err)
	}
	if got := registered(t, e, "P1", []string{"F_A", "F_B"}, []string{"INV_A", "INV_B"}); fmt.Sprint(got) != "[fund:F_B/INV_B investor:F_B/INV_B]" {
		t.Fatalf("registries name %v", got)
	}
}

func TestConcurrentFirstUseOfAPositionHasOneOwner(t *testing.T) {
	e := fundtest.New(t)
	const rounds, writers = 12, 4
	stores := make([]*store.Store, writers)
	for i := range stores {
		stores[i] = instance(e, &dynamotest.WriteHook{}, e.Store.Now)
	}
	for r := range rounds {
		pos := fmt.Sprintf("P%d", r)
		var won atomic.Int32
		winner := make([]bool, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := oneCall(fmt.Sprintf("D%d_%d", r, w), fmt.Sprintf("F%d", w%2), pos, fmt.Sprintf("INV%d", w))
				_, err := stores[w].Restate(ctx, d, nil)
				switch {
				case err == nil:
					won.Add(1)
					winner[w] = true
				case fund.ErrorCode(err) != fund.ECONFLICT:
					t.Errorf("round %d writer %d: %v", r, w, err)
				}
			}()
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("round %d: %d writers won position %s", r, won.Load(), pos)
		}
		var want []string
		for w := range writers {
			_, err := e.Store.As(fund.Operator).Overview(ctx, fmt.Sprintf("D%d_%d", r, w))
			if winner[w] != (err == nil) {
				t.Fatalf("round %d writer %d: won %v, document read: %v", r, w, winner[w], err)
			}
			if winner[w] {
				want = []string{fmt.Sprintf("fund:F%d/INV%d", w%2, w), fmt.Sprintf("investor:F%d/INV%d", w%2, w)}
			}
		}
		got := registered(t, e, pos, []string{"F0", "F1"}, []string{"INV0", "INV1", "INV2", "INV3"})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: registries name %v, want %v", r, got, want)
		}
	}
	// The winners' fences stay, committed: they make their claims
	// permanent. The losers' are gone.
	fences := 0
	for _, it := range e.Dump(t) {
		if pk := it[store.AttrPK].(*types.AttributeValueMemberS).Value; strings.HasPrefix(pk, "FENCE#") {
			fences++
			if c, ok := it["Committed"].(*types.AttributeValueMemberBOOL); !ok || !c.Value {
				t.Errorf("fence left behind: %s", pk)
			}
		}
	}
	if fences != rounds {
		t.Errorf("%d committed fences, want one a round", fences)
	}
}

func TestASlowMaterializeCannotCreateItemsOfASupersededVersion(t *testing.T) {
	e := fundtest.New(t)
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	// Version 2 adds 120 positions, so its latest view is written in two
	// transactions; the second holds none of the positions version 3 has.
	added := []string{"POS_1"}
	for i := range 120 {
		added = append(added, fmt.Sprintf("POS_X%03d", i))
	}
	hook := &dynamotest.WriteHook{}
	slow := instance(e, hook, e.Store.Now)
	// Instance A has committed version 2 and is about to write its latest
	// view when instance B commits and materializes version 3, which has
	// POS_1 only.
	hook.OnWriteWhere(isTransactionPutting(store.PositionItemSK(fund.CapitalCall, "")), 1, func() {
		if _, err := e.Store.Restate(ctx, doc("D1", "F1", 300, "POS_1"), nil); err != nil {
			t.Errorf("version 3: %v", err)
		}
	})
	if _, err := slow.Restate(ctx, doc("D1", "F1", 200, added...), nil); err != nil || !hook.Fired() {
		t.Fatalf("version 2: %v (hook fired: %v)", err, hook.Fired())
	}
	snap, err := e.Store.As(fund.Operator).Overview(ctx, "D1")
	if err != nil || snap.Document.Version != 3 || snap.FromVersion || len(snap.Document.Positions) != 1 {
		t.Fatalf("overview: version %d, from version partition %v, %d positions, %v; want 3 from the latest view with one position",
			snap.Document.Version, snap.FromVersion, len(snap.Document.Positions), err)
	}
	for _, pos := range []string{"POS_X000", "POS_X119"} {
		items, _, err := e.Positions.Items(ctx, fund.Operator, pos, "", 100, nil)
		if (err != nil && fund.ErrorCode(err) != fund.ENOTFOUND) || len(items) != 0 {
			t.Fatalf("a superseded version's item of %s is in the position pivot: %+v %v", pos, items, err)
		}
		if _, _, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "D1", pos, ""); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Fatalf("%s in the latest view: %v", pos, err)
		}
	}
}

func TestARestatementOfKnownPositionsTakesNoClaim(t *testing.T) {
	e := fundtest.New(t)
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1", "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	e.Counter.Reset()
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 200, "POS_1", "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	// The version it replaces reports the same positions for the same
	// investors: their claims are not even read, and no fence is put.
	got := e.Counter.Ops()
	if e.Counter.Count("BatchGetItem") != 0 || e.Counter.Count("PutItem") != 0 || e.Counter.Count("DeleteItem") != 0 {
		t.Fatalf("a restatement of known positions made %v: want no read of the claims and no fence", got)
	}
	// Another document naming them reads their claims and then the one
	// fence they name, finds it committed (the claims permanent), and
	// takes none.
	e.Counter.Reset()
	if _, err := e.Store.Restate(ctx, doc("D2", "F1", 300, "POS_1", "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	if got := e.Counter.Ops(); e.Counter.Count("BatchGetItem") != 2 || e.Counter.Count("PutItem") != 0 || e.Counter.Count("DeleteItem") != 0 {
		t.Fatalf("a new document of known positions made %v: want a BatchGetItem of the claims and one of their fence, and no fence put", got)
	}
}

// TestTheNextWriteConfirmsTheClaimsOfAVersionThatDiedAfterItsFlip: a
// version whose writer died between its flip and listing its new
// positions leaves them claimed (by its committed fence) and unlisted;
// the document's next write, of other content, lists them.
func TestTheNextWriteConfirmsTheClaimsOfAVersionThatDiedAfterItsFlip(t *testing.T) {
	e := fundtest.New(t)
	e.Store.OnCommit = func() { e.Faults.FailAfterWrites(0) } // nothing after the flip reaches the table
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1", "POS_2"), nil); err == nil {
		t.Fatal("the write that died after its flip succeeded")
	}
	e.Faults.Disarm()
	e.Store.OnCommit = nil
	if got := registered(t, e, "POS_1", []string{"F1"}, []string{"INV_1"}); len(got) != 0 {
		t.Fatalf("a position of the unconfirmed version is listed: %v", got)
	}
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 200, "POS_1", "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	for _, pos := range []string{"POS_1", "POS_2"} {
		inv := "INV_" + strings.TrimPrefix(pos, "POS_")
		if got := registered(t, e, pos, []string{"F1"}, []string{inv}); len(got) == 0 {
			t.Errorf("%s is not listed after the next write", pos)
		}
	}
}
