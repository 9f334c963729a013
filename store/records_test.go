package store_test

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// fullFund is a fund record with every field set.
func fullFund() fund.FundFields {
	size := fund.MustMoney("123456789012345.6789")
	return fund.FundFields{Name: "Fund A", LegalName: "Fund A, L.P.", BaseCurrency: "EUR", VintageYear: 2021, TargetSize: &size,
		InceptionDate: fund.MustDate("2021-03-15"), ExternalIDs: fund.ExternalIDs{"carta": "F-1", "burgiss.id": "77"}}
}

func TestARecordKeepsEveryFieldExactlyAndCountsItsVersions(t *testing.T) {
	e := fundtest.New(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	want := fullFund()
	if !allFieldsSet(want) {
		t.Fatal("fullFund leaves a field zero: the round trip would prove nothing of it")
	}
	r1, err := e.Store.PutFundRecord(ctx, "FUND_R", want, nil, "alice", at)
	if err != nil || r1.Version != 1 {
		t.Fatalf("first put: version %d, %v", r1.Version, err)
	}
	got, err := e.Store.As(fund.Operator).Fund(ctx, "FUND_R")
	if err != nil || got.Record == nil {
		t.Fatalf("read back: %+v %v", got, err)
	}
	rec := got.Record
	if !reflect.DeepEqual(rec.FundFields.ExternalIDs, want.ExternalIDs) || rec.Name != want.Name || rec.LegalName != want.LegalName ||
		rec.BaseCurrency != want.BaseCurrency || rec.VintageYear != want.VintageYear || !rec.TargetSize.Equal(*want.TargetSize) ||
		rec.TargetSize.String() != "123456789012345.6789" || rec.InceptionDate != want.InceptionDate {
		t.Errorf("read back %+v, want %+v", rec.FundFields, want)
	}
	if rec.Version != 1 || rec.UpdatedBy != "alice" || !rec.UpdatedAt.Equal(at) {
		t.Errorf("server fields: version %d by %q at %s", rec.Version, rec.UpdatedBy, rec.UpdatedAt)
	}

	two := 1
	if r, err := e.Store.PutFundRecord(ctx, "FUND_R", fund.FundFields{Name: "Renamed", BaseCurrency: "USD"}, &two, "bob", at); err != nil || r.Version != 2 {
		t.Fatalf("replace of version 1: version %d, %v", r.Version, err)
	}
	for name, ifMatch := range map[string]int{"a stale version": 1, "a version to come": 3, "creation only": 0} {
		t.Run("If-Match of "+name+" is refused and changes nothing", func(t *testing.T) {
			_, err := e.Store.PutFundRecord(ctx, "FUND_R", want, &ifMatch, "mallory", at)
			if fund.ErrorCode(err) != fund.EPRECONDITION {
				t.Fatalf("error %v, want EPRECONDITION", err)
			}
			got, _ := e.Store.As(fund.Operator).Fund(ctx, "FUND_R")
			if r := got.Record; r.Version != 2 || r.Name != "Renamed" || r.TargetSize != nil || r.ExternalIDs != nil {
				t.Errorf("the refused write changed the record: %+v", r)
			}
		})
	}
	anyVersion := store.AnyVersion
	if _, err := e.Store.PutFundRecord(ctx, "FUND_NONE", want, &anyVersion, "x", at); fund.ErrorCode(err) != fund.EPRECONDITION {
		t.Errorf("If-Match: * of a fund without a record: %v, want EPRECONDITION", err)
	}
	if f, err := e.Store.As(fund.Operator).Fund(ctx, "FUND_NONE"); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Errorf("the refused write created %+v (%v)", f, err)
	}
}

// allFieldsSet reports whether every field of a struct is non-zero.
func allFieldsSet(v any) bool {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			return false
		}
	}
	return true
}

func TestConcurrentRecordWritersWithoutIfMatchLoseNoVersion(t *testing.T) {
	e := fundtest.New(t)
	const writers = 6
	var wg sync.WaitGroup
	versions := make([]int, writers)
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.Store.PutInvestorRecord(ctx, "INV_C", fund.InvestorFields{DisplayName: fmt.Sprintf("Writer %d", i), InvestorType: fund.InvestorOther}, nil, "w", time.Now())
			versions[i], errs[i] = r.Version, err
		}()
	}
	wg.Wait()
	var ok []int
	for i, err := range errs {
		switch {
		case err == nil:
			ok = append(ok, versions[i])
		case fund.ErrorCode(err) == fund.ECONFLICT: // too many raced: allowed, and then the write did not happen
		default:
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	slices.Sort(ok)
	for i, v := range ok {
		if v != i+1 {
			t.Fatalf("versions %v: each successful writer must get its own version, from 1 without a gap", ok)
		}
	}
	is, err := e.Store.Investors(ctx, []string{"INV_C"}, false)
	if err != nil || len(is) != 1 || is[0].Record.Version != len(ok) {
		t.Fatalf("stored %+v %v, want version %d", is, err, len(ok))
	}
}

// TestTheRegistriesListEveryFundAndInvestorOnce pages through the funds and
// the investors, of records, of documents or of both, with every page size,
// and finds each exactly once.
func TestTheRegistriesListEveryFundAndInvestorOnce(t *testing.T) {
	e := fundtest.New(t)
	at := time.Now()
	wantFunds, wantInvestors := []string{}, []string{}
	for i := range 12 {
		f := fmt.Sprintf("F%02d", i)
		wantFunds = append(wantFunds, f)
		if i%3 != 2 { // documents for most funds
			// The same investors in every fund: each is noted in many.
			d := doc("D"+f, f, 100, "POS_"+f+"_1", "POS_"+f+"_2")
			d.Positions = append(d.Positions, fund.Position{ID: "POS_SHARED_" + f, InvestorID: "INV_SHARED",
				CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("1.00")}})
			if _, err := e.Store.Restate(ctx, d, nil); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 != 0 { // records for most funds
			if _, err := e.Store.PutFundRecord(ctx, f, fund.FundFields{Name: "Fund " + f, BaseCurrency: "USD"}, nil, "t", at); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 12 {
		if i%3 != 2 {
			f := fmt.Sprintf("F%02d", i)
			wantInvestors = append(wantInvestors, "INV_"+f+"_1", "INV_"+f+"_2")
		}
	}
	for _, inv := range []string{"INV_ONLY_RECORD", "INV_F00_1"} {
		if _, err := e.Store.PutInvestorRecord(ctx, inv, fund.InvestorFields{DisplayName: inv, InvestorType: fund.InvestorEndowment}, nil, "t", at); err != nil {
			t.Fatal(err)
		}
	}
	wantInvestors = append(wantInvestors, "INV_ONLY_RECORD", "INV_SHARED")
	slices.Sort(wantFunds)
	slices.Sort(wantInvestors)

	for _, limit := range []int{1, 2, 5, 100} {
		for name, list := range map[string]func(int, store.PageKey) ([]string, store.PageKey, error){
			"funds":     func(n int, k store.PageKey) ([]string, store.PageKey, error) { return e.Store.AllFunds(ctx, n, k) },
			"investors": func(n int, k store.PageKey) ([]string, store.PageKey, error) { return e.Store.AllInvestors(ctx, n, k) },
		} {
			t.Run(fmt.Sprintf("%s by pages of %d", name, limit), func(t *testing.T) {
				var got []string
				var key store.PageKey
				for pages := 0; ; pages++ {
					if pages > 100 {
						t.Fatal("the listing does not end")
					}
					e.Counter.Reset()
					ids, next, err := list(limit, key)
					if err != nil {
						t.Fatal(err)
					}
					if len(ids) > limit {
						t.Fatalf("page of %d, limit %d", len(ids), limit)
					}
					if n := len(e.Counter.Ops()); n > store.RegistryShards+4 {
						t.Errorf("a page took %d requests", n)
					}
					got = append(got, ids...)
					if next == nil {
						break
					}
					key = next
				}
				want := wantFunds
				if name == "investors" {
					want = wantInvestors
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("listed %v\nwant     %v", got, want)
				}
			})
		}
	}

	t.Run("a fund's investors are listed by one Query per page", func(t *testing.T) {
		e.Counter.Reset()
		ids, next, err := e.Store.FundInvestors(ctx, "F00", 10, nil)
		if err != nil || next != nil || !slices.Equal(ids, []string{"INV_F00_1", "INV_F00_2", "INV_SHARED"}) {
			t.Fatalf("got %v next %s err %v", ids, next, err)
		}
		if ops := e.Counter.Ops(); len(ops) != 1 {
			t.Errorf("requests %v, want one Query", ops)
		}
	})
	t.Run("an investor's funds and its notes in funds", func(t *testing.T) {
		ids, _, err := e.Store.InvestorFunds(ctx, "INV_F03_2", 10, nil)
		if err != nil || !slices.Equal(ids, []string{"F03"}) {
			t.Fatalf("got %v err %v", ids, err)
		}
		held, err := e.Store.HoldsPositionIn(ctx, "INV_F03_2", []string{"F00", "F03", "F99"})
		if err != nil || !slices.Equal(held, []string{"F03"}) {
			t.Fatalf("held %v err %v", held, err)
		}
		ids, _, err = e.Store.InvestorFunds(ctx, "INV_SHARED", 100, nil)
		if want := []string{"F00", "F01", "F03", "F04", "F06", "F07", "F09", "F10"}; err != nil || !slices.Equal(ids, want) {
			t.Fatalf("funds of INV_SHARED %v err %v, want %v", ids, err, want)
		}
	})
}

// TestSeedingCreatesTheDemoRecordsOnce: the demo's records are written by
// the first seed, and a later seed leaves a record an administrator
// replaced as it is.
func TestSeedingCreatesTheDemoRecordsOnce(t *testing.T) {
	e := fundtest.New(t)
	if _, err := e.Store.SeedDemo(ctx); err != nil {
		t.Fatal(err)
	}
	funds, investors := fund.DemoRecords()
	f, err := e.Store.As(fund.Operator).Fund(ctx, funds[0].ID)
	if err != nil || f.Record == nil || f.Record.Name != funds[0].Name || f.Record.UpdatedBy != "fundsvc seed" {
		t.Fatalf("the demo fund: %+v %v", f, err)
	}
	is, err := e.Store.Investors(ctx, []string{investors[0].ID, investors[1].ID, "INVESTOR_3"}, true)
	if err != nil || len(is) != 3 || is[0].Record == nil || is[1].Record == nil || is[2].Record != nil {
		t.Fatalf("the demo investors: %+v %v", is, err)
	}
	one := 1
	if _, err := e.Store.PutFundRecord(ctx, funds[0].ID, fund.FundFields{Name: "Renamed", BaseCurrency: "USD"}, &one, "admin", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.SeedDemo(ctx); err != nil {
		t.Fatal(err)
	}
	if f, _ := e.Store.As(fund.Operator).Fund(ctx, funds[0].ID); f.Record.Name != "Renamed" || f.Record.Version != 2 {
		t.Errorf("seeding again changed the replaced record: %+v", f.Record)
	}
}
