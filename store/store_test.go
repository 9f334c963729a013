package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

var ctx = context.Background()

// doc builds a document with one capital call per position, amount base+i.
func doc(id, fundID string, base int, positions ...string) fund.Document {
	d := fund.Document{ID: id, DocumentFields: fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalCallNotice, Title: "Call " + id, AsOf: fund.MustDate("2025-06-30")}}
	for i, p := range positions {
		d.Positions = append(d.Positions, fund.Position{ID: p, InvestorID: "INV_" + strings.TrimPrefix(p, "POS_"),
			CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(fmt.Sprintf("%d.00", base+i))}})
	}
	return d
}

func positionIDs(ps []fund.Position) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

func TestRestatementKeepsHistoryAndDropsPositionsFromTheLatestView(t *testing.T) {
	e := fundtest.New(t)
	v1, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1", "POS_2", "POS_3"), nil)
	if err != nil || v1.Version != 1 {
		t.Fatalf("create: %+v %v", v1, err)
	}
	restated := doc("D1", "F1", 200, "POS_2", "POS_4")
	restated.AsOf = fund.MustDate("2025-07-31")
	v2, err := e.Store.Restate(ctx, restated, nil)
	if err != nil || v2.Version != 2 {
		t.Fatalf("restate: %+v %v", v2, err)
	}

	snap, err := e.Store.As(fund.Operator).Overview(ctx, "D1")
	if err != nil {
		t.Fatal(err)
	}
	if got := positionIDs(snap.Document.Positions); strings.Join(got, ",") != "POS_2,POS_4" || snap.FromVersion {
		t.Fatalf("latest view holds %v (from version partition: %v), want POS_2,POS_4", got, snap.FromVersion)
	}
	if !snap.Document.Positions[0].CapitalCall.Amount.Equal(fund.MustMoney("200")) {
		t.Fatalf("POS_2 called %s, want 200", snap.Document.Positions[0].CapitalCall.Amount)
	}
	if len(snap.History) != 1 || snap.History[0].Version != 1 {
		t.Fatalf("history %+v", snap.History)
	}

	old, err := e.Store.As(fund.Operator).Version(ctx, "D1", 1)
	if err != nil || strings.Join(positionIDs(old.Positions), ",") != "POS_1,POS_2,POS_3" || !old.Positions[0].CapitalCall.Amount.Equal(fund.MustMoney("100")) {
		t.Fatalf("version 1: %+v %v", old, err)
	}
	if _, _, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "D1", "POS_1", ""); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Fatalf("dropped position in the latest view: %v", err)
	}
	items, _, err := e.Positions.Items(ctx, fund.Operator, "POS_1", "", 100, nil)
	if fund.ErrorCode(err) != fund.ENOTFOUND || len(items) != 0 {
		t.Fatalf("dropped position across documents: %+v %v", items, err)
	}

	// The fund index follows the new asOf and the registry keeps every position.
	docs, _, err := e.Store.As(fund.Operator).FundDocuments(ctx, "F1", fund.Date{}, fund.Date{}, "", 10, nil)
	if err != nil || len(docs) != 1 || docs[0].AsOf.String() != "2025-07-31" || docs[0].Version != 2 {
		t.Fatalf("fund documents: %+v %v", docs, err)
	}
	regs, _, err := e.Positions.OfFund(ctx, "F1", 10, nil)
	if err != nil || len(regs) != 4 {
		t.Fatalf("fund positions: %+v %v", regs, err)
	}
}

func TestRestatementRefusesToMoveMoney(t *testing.T) {
	e := fundtest.New(t)
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		d    fund.Document
		code string
	}{
		{"a restatement cannot move a document to another fund", doc("D1", "F2", 1, "POS_1"), fund.ECONFLICT},
		{"a position cannot change investor", func() fund.Document {
			d := doc("D2", "F1", 1, "POS_1")
			d.Positions[0].InvestorID = "SOMEONE_ELSE"
			return d
		}(), fund.ECONFLICT},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.Dump(t)
			if _, err := e.Store.Restate(ctx, c.d, nil); fund.ErrorCode(err) != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
			if after := e.Dump(t); len(after) != len(before) {
				t.Fatalf("table changed: %d items, was %d", len(after), len(before))
			}
		})
	}
	t.Run("a stale If-Match is refused", func(t *testing.T) {
		stale := 0
		if _, err := e.Store.Restate(ctx, doc("D1", "F1", 5, "POS_1"), &stale); fund.ErrorCode(err) != fund.EPRECONDITION {
			t.Fatalf("got %v", err)
		}
	})
}

func TestConcurrentRestatementsLoseNoVersion(t *testing.T) {
	e := fundtest.New(t)
	const writers = 12
	e.Store.MaxWaitingWriters = writers // all may queue: what is tested is the serialization, not its bound (turns_test.go)
	var wg sync.WaitGroup
	versions := make(chan int, writers)
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := e.Store.Restate(ctx, doc("D1", "F1", 1000*w, "POS_1", "POS_2", "POS_3"), nil)
			if err != nil {
				errs <- err
				return
			}
			versions <- d.Version
		}()
	}
	wg.Wait()
	close(versions)
	close(errs)
	for err := range errs {
		t.Fatalf("writer failed: %v", err)
	}
	// The writers took turns: each read the head once, so none lost the
	// commit and staged its version again.
	if n := e.Counter.Count("GetItem"); n != writers {
		t.Errorf("%d reads of the head by %d writers: writers raced for the commit", n, writers)
	}
	var got []int
	for v := range versions {
		got = append(got, v)
	}
	sort.Ints(got)
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("versions %v: want 1..%d, each once", got, writers)
		}
	}
	snap, err := e.Store.As(fund.Operator).Overview(ctx, "D1")
	if err != nil || snap.Document.Version != writers || len(snap.History) != writers-1 || snap.FromVersion {
		t.Fatalf("overview: version %d, %d history records, from version %v, %v", snap.Document.Version, len(snap.History), snap.FromVersion, err)
	}
	// The latest view holds exactly the last version's amounts.
	last, err := e.Store.As(fund.Operator).Version(ctx, "D1", writers)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range snap.Document.Positions {
		if !p.CapitalCall.Amount.Equal(last.Positions[i].CapitalCall.Amount) {
			t.Fatalf("%s: latest view %s, version %d says %s", p.ID, p.CapitalCall.Amount, writers, last.Positions[i].CapitalCall.Amount)
		}
	}
}

// TestNoIndexPartitionKeyIsAConstant guards against the hot-partition
// anti-pattern: every GSI partition key of every item is built from the
// item's own IDs, or for a commit head from its commit's day and its
// document's shard (TestADaysChangesSpreadOverEveryShard holds the
// spread), GSI1 keys are unique, and none is a bare constant.
func TestNoIndexPartitionKeyIsAConstant(t *testing.T) {
	e := fundtest.New(t)
	e.Seed(t)
	if _, err := e.Store.Restate(ctx, doc("D9", "FUND_A", 1, "POS_7", "POS_8"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Restate(ctx, statementDoc("100.00"), nil); err != nil { // every item kind
		t.Fatal(err)
	}
	str := func(it map[string]types.AttributeValue, k string) string {
		s, _ := it[k].(*types.AttributeValueMemberS)
		if s == nil {
			return ""
		}
		return s.Value
	}
	constants := regexp.MustCompile(`^[A-Z_]+(#[A-Z_]+)*$`) // e.g. DOCUMENT#LATEST, STATUS#ACTIVE, TYPE#CAPITAL_CALL
	gsi1 := map[string]int{}
	checked, heads, registry := 0, 0, 0
	if _, err := e.Store.PutFundRecord(ctx, "FUND_R", fund.FundFields{Name: "Record only", BaseCurrency: "EUR"}, nil, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.PutInvestorRecord(ctx, "INVESTOR_1", fund.InvestorFields{DisplayName: "One", InvestorType: fund.InvestorPension}, nil, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, it := range e.Dump(t) {
		doc, pos, inv := str(it, "DocumentID"), str(it, "PositionID"), str(it, "InvestorID")
		if pk := str(it, store.AttrGSI1PK); pk != "" {
			ok := pk == store.DocumentLatestGSI1PK(doc)
			for _, k := range fund.ItemKinds {
				ok = ok || (pos != "" && pk == store.PositionItemGSI1PK(k, pos, doc))
			}
			if str(it, "Type") == store.TypeHead {
				// A day's shard holds many heads: the sort key, of the
				// commit and the document, is what is unique.
				at, err := time.Parse(time.RFC3339Nano, str(it, "CommittedAt"))
				ok = err == nil && pk == store.ChangesGSI1PK(at, store.ChangeShard(doc, store.DefaultChangeShards)) &&
					str(it, store.AttrGSI1SK) == store.ChangesGSI1SK(at, doc)
				pk += " " + str(it, store.AttrGSI1SK)
				heads++
			}
			// The registries of funds and investors (records.go) are
			// sharded by the ID's hash too; the sort key, of the fund or
			// the investor (and the fund it holds a position of), is
			// unique.
			sk, fundID := str(it, store.AttrGSI1SK), str(it, "FundID")
			switch str(it, "Type") {
			case store.TypeFund:
				ok = pk == store.FundsGSI1PK(fundID) && sk == store.FundItemGSI1SK(fundID)
				pk += " " + sk
				registry++
			case store.TypeFundRecord:
				ok = pk == store.FundsGSI1PK(fundID) && sk == store.FundRecordGSI1SK(fundID)
				pk += " " + sk
				registry++
			case store.TypeInvestorRecord:
				ok = pk == store.InvestorsGSI1PK(inv) && sk == store.InvestorRecordGSI1SK(inv)
				pk += " " + sk
				registry++
			case store.TypeFundInvestor:
				ok = pk == store.InvestorsGSI1PK(inv) && sk == store.FundInvestorGSI1SK(inv, fundID)
				pk += " " + sk
				registry++
			case store.TypeEvent:
				// An event is indexed as its commit head is: by the
				// commit's day and the document's shard.
				at, err := time.Parse(time.RFC3339Nano, str(it, "CommittedAt"))
				v, _ := strconv.Atoi(it["Version"].(*types.AttributeValueMemberN).Value)
				ok = err == nil && pk == store.EventsGSI1PK(at, store.ChangeShard(doc, store.DefaultChangeShards)) &&
					str(it, store.AttrGSI1SK) == store.EventOrderSK(at, doc, v)
				pk += " " + str(it, store.AttrGSI1SK)
			}
			gsi1[pk]++
			if !ok || constants.MatchString(pk) {
				t.Errorf("GSI1PK %q of %s/%s is not built from the item's IDs", pk, str(it, "PK"), str(it, "SK"))
			}
			checked++
		}
		if pk := str(it, store.AttrGSI2PK); pk != "" {
			ok := (pos != "" && pk == store.PositionGSI2PK(pos)) || (inv != "" && str(it, "Type") == store.TypePosition && pk == store.InvestorGSI2PK(inv))
			if str(it, "Type") == store.TypeEvent { // a fund's events by month
				at, err := time.Parse(time.RFC3339Nano, str(it, "CommittedAt"))
				ok = err == nil && pk == store.FundEventsGSI2PK(str(it, "FundID"), at)
			}
			if !ok || constants.MatchString(pk) {
				t.Errorf("GSI2PK %q of %s/%s is not built from the item's IDs", pk, str(it, "PK"), str(it, "SK"))
			}
			checked++
		}
	}
	for pk, n := range gsi1 {
		if n > 1 {
			t.Errorf("GSI1PK %q is shared by %d items; it must be unique per entity and document", pk, n)
		}
	}
	if checked < 20 || heads < 5 || registry < 6 {
		t.Fatalf("only %d index keys checked, %d of heads, %d of the registries; the dataset is too small to prove anything", checked, heads, registry)
	}
}

// TestPrefixesNeverMatchALongerID: POSITION_1 must not read POSITION_10's
// items, on any path, including the fallback to a version partition.
func TestPrefixesNeverMatchALongerID(t *testing.T) {
	e := fundtest.New(t)
	for _, d := range []fund.Document{doc("D1", "F1", 100, "POS_1", "POS_10", "POS_11"), doc("D2", "F1", 500, "POS_10")} {
		if _, err := e.Store.Restate(ctx, d, nil); err != nil {
			t.Fatal(err)
		}
	}
	only := func(t *testing.T, what string, items []fund.PositionItem, want int) {
		t.Helper()
		for _, it := range items {
			if it.PositionID != "POS_1" {
				t.Fatalf("%s returned %s's item", what, it.PositionID)
			}
		}
		if len(items) != want {
			t.Fatalf("%s returned %d items, want %d", what, len(items), want)
		}
	}
	_, items, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "D1", "POS_1", "")
	if err != nil {
		t.Fatal(err)
	}
	only(t, "position in document", items, 1)
	items, _, err = e.Positions.Items(ctx, fund.Operator, "POS_1", fund.CapitalCall, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	only(t, "position across documents", items, 1)
	regs, _, err := e.Positions.VisibleOfInvestor(ctx, fund.Viewer{AllFunds: true}, "INV_1", 100, nil)
	if err != nil || len(regs) != 1 || regs[0].PositionID != "POS_1" {
		t.Fatalf("investor INV_1 positions: %+v %v", regs, err)
	}

	// Kill a restatement right after its commit flips, so the latest view is
	// mid-rewrite and reads fall back to the version partition.
	restated := doc("D1", "F1", 900, "POS_1", "POS_10", "POS_11")
	var snap store.Snapshot
	for k := 0; k < 20 && !snap.FromVersion; k++ {
		e.Faults.FailAfterWrites(k)
		_, err := e.Store.Restate(ctx, restated, nil)
		e.Faults.Disarm()
		if err == nil {
			t.Fatalf("failing after %d writes did not fail the write", k)
		}
		if snap, err = e.Store.As(fund.Operator).Overview(ctx, "D1"); err != nil {
			t.Fatal(err)
		}
	}
	if !snap.FromVersion || snap.Document.Version != 2 {
		t.Fatalf("could not leave the latest view mid-rewrite (version %d)", snap.Document.Version)
	}
	version, items, err := e.Store.As(fund.Operator).DocumentPosition(ctx, "D1", "POS_1", "")
	if err != nil {
		t.Fatal(err)
	}
	only(t, "position in document, from the version partition", items, 1)
	if version != 2 || !items[0].Amount.Equal(fund.MustMoney("900")) {
		t.Fatalf("version %d, amount %s; want version 2 calling 900", version, items[0].Amount)
	}
	page, more, err := e.Store.As(fund.Operator).PositionsAfter(ctx, "D1", snap.Document.CommitID, "POS_1", 10)
	if err != nil || more || strings.Join(positionIDs(fund.GroupPositions(page)), ",") != "POS_10,POS_11" {
		t.Fatalf("positions after POS_1: %v more=%v %v", positionIDs(fund.GroupPositions(page)), more, err)
	}
}

func TestAPositionIDBelongsToOneFundAndInvestor(t *testing.T) {
	e := fundtest.New(t)
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1", "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	before := e.Dump(t)
	other := doc("D2", "F2", 1, "POS_3", "POS_1")
	_, err := e.Store.Restate(ctx, other, nil)
	var fe *fund.Error
	if !errors.As(err, &fe) || fe.Code != fund.ECONFLICT || fe.Field != "positions[1].positionId" || strings.Contains(fe.Message, "F1") || strings.Contains(fe.Message, "INV_") {
		t.Fatalf("another fund re-using POS_1: %v (must conflict, name the field, and reveal neither fund nor investor)", err)
	}
	if after := e.Dump(t); len(after) != len(before) {
		t.Fatalf("the refused document wrote %d items", len(after)-len(before))
	}
	// The same fund and investor in another document is fine.
	if _, err := e.Store.Restate(ctx, doc("D3", "F1", 7, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
}
