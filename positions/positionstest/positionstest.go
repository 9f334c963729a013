// Package positionstest holds a position Reader in memory, the model of
// what the storage package answers, so that the arithmetic of package
// positions is tested without DynamoDB, and documents whose figures its
// tests work out by hand. The storage package's tests hold *store.Store to
// the same answers against DynamoDB Local.
package positionstest

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// Memory is a positions.Reader over documents kept in memory, each with
// every version written. It counts its reads by method name. It is safe
// for concurrent use.
type Memory struct {
	// Clock is the time of every write; keep it equal to the store's clock
	// when comparing answers with it.
	Clock time.Time

	mu       sync.Mutex
	versions map[string][]fund.Document // document → its versions, oldest first
	registry []fund.Registered          // in write order
	reads    []string
}

// NewMemory returns an empty Memory writing at clock.
func NewMemory(clock time.Time) *Memory {
	return &Memory{Clock: clock, versions: map[string][]fund.Document{}}
}

// Restate writes d as the next version of its document and returns it as
// written (version and time set). Like the store, it registers a position in
// its fund the first time a document names it.
func (m *Memory) Restate(d fund.Document) fund.Document {
	m.mu.Lock()
	defer m.mu.Unlock()
	d.Version, d.CreatedAt = len(m.versions[d.ID])+1, m.Clock
	m.versions[d.ID] = append(m.versions[d.ID], d)
	for _, p := range d.Positions {
		if !slices.ContainsFunc(m.registry, func(r fund.Registered) bool { return r.PositionID == p.ID }) {
			m.registry = append(m.registry, fund.Registered{PositionID: p.ID, FundID: d.FundID, InvestorID: p.InvestorID, Currency: d.Currency, CreatedAt: d.CreatedAt})
		}
	}
	return d
}

// Reads returns the reads made since the last ResetReads, by method name,
// in call order.
func (m *Memory) Reads() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reads)
}

// ResetReads forgets the reads made.
func (m *Memory) ResetReads() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads = nil
}

func (m *Memory) read(name string) {
	m.reads = append(m.reads, name)
}

// latestItems returns the items of pos in the latest version of every
// document that reports it, by kind then document.
func (m *Memory) latestItems(pos string) []fund.PositionItem {
	var out []fund.PositionItem
	for _, versions := range m.versions {
		d := versions[len(versions)-1]
		if p, ok := d.PositionByID(pos); ok {
			out = d.AppendItems(&p, out)
		}
	}
	slices.SortFunc(out, func(a, b fund.PositionItem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.DocumentID, b.DocumentID))
	})
	return out
}

// page cuts one page of at most limit from all, resuming at the offset
// start encodes.
func page[T any](all []T, limit int, start []byte) ([]T, []byte, error) {
	from := 0
	if len(start) > 0 {
		n, err := strconv.Atoi(string(start))
		if err != nil || n < 0 || n > len(all) {
			return nil, nil, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
		}
		from = n
	}
	to := min(from+limit, len(all))
	var next []byte
	if to < len(all) {
		next = []byte(strconv.Itoa(to))
	}
	return all[from:to], next, nil
}

// PositionItems implements positions.Reader.
func (m *Memory) PositionItems(_ context.Context, pos string, kind fund.ItemKind, limit int, start []byte) ([]fund.PositionItem, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("PositionItems")
	all := slices.DeleteFunc(m.latestItems(pos), func(it fund.PositionItem) bool { return kind != "" && it.Kind != kind })
	return page(all, limit, start)
}

// AllPositionItems implements positions.Reader.
func (m *Memory) AllPositionItems(_ context.Context, pos string) ([]fund.PositionItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("AllPositionItems")
	return m.latestItems(pos), nil
}

// PositionAsOf implements positions.Reader.
func (m *Memory) PositionAsOf(_ context.Context, doc, pos string, asOf fund.Date, before int) ([]fund.PositionItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("PositionAsOf")
	versions := m.versions[doc]
	for v := min(before-1, len(versions)); v >= 1; v-- {
		d := versions[v-1]
		if d.AsOf.Compare(asOf) > 0 {
			continue
		}
		if p, ok := d.PositionByID(pos); ok {
			return d.AppendItems(&p, nil), nil
		}
		return nil, nil
	}
	return nil, nil
}

// CapitalCallIn implements positions.Reader.
func (m *Memory) CapitalCallIn(_ context.Context, pos, doc string) (fund.PositionItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("CapitalCallIn")
	for _, it := range m.latestItems(pos) {
		if it.DocumentID == doc && it.Kind == fund.CapitalCall {
			return it, nil
		}
	}
	return fund.PositionItem{}, fund.Errorf(fund.ENOTFOUND, "no capital call for position %s in document %s", pos, doc)
}

// DocumentStatements implements positions.Reader.
func (m *Memory) DocumentStatements(_ context.Context, doc string, limit int, start []byte) ([]fund.PositionItem, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("DocumentStatements")
	versions := m.versions[doc]
	if len(versions) == 0 {
		return page([]fund.PositionItem(nil), limit, start)
	}
	d := versions[len(versions)-1]
	var all []fund.PositionItem
	for _, p := range d.Positions {
		for _, it := range d.AppendItems(&p, nil) {
			if it.Kind == fund.Statement {
				all = append(all, it)
			}
		}
	}
	slices.SortFunc(all, func(a, b fund.PositionItem) int { return cmp.Compare(a.PositionID, b.PositionID) })
	return page(all, limit, start)
}

// FundPositions implements positions.Reader.
func (m *Memory) FundPositions(_ context.Context, fundID string, limit int, start []byte) ([]fund.Registered, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("FundPositions")
	return page(m.registered(func(r fund.Registered) bool { return r.FundID == fundID }), limit, start)
}

// InvestorPositions implements positions.Reader. Unlike the store, it reads
// without bound, so a page holds limit positions unless none follow.
func (m *Memory) InvestorPositions(_ context.Context, inv string, keep func(fund.Registered) bool, _ bool, limit int, start []byte) ([]fund.Registered, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("InvestorPositions")
	return page(m.registered(func(r fund.Registered) bool { return r.InvestorID == inv && keep(r) }), limit, start)
}

// registered lists the registry rows that match, by position ID.
func (m *Memory) registered(match func(fund.Registered) bool) []fund.Registered {
	var out []fund.Registered
	for _, r := range m.registry {
		if match(r) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b fund.Registered) int { return cmp.Compare(a.PositionID, b.PositionID) })
	return out
}

// HandFixtures returns, in the order to write them, the documents whose
// figures the tests of package positions work out by hand. Fund FUND_H is
// in USD, FUND_E in EUR.
//
//	PA (INV_A, FUND_H) — commitment 1,000,000.00
//	  D1 2024-03-31       call 250,000.00 Completed, due 2024-04-15; unfunded 750,000.00
//	  D2 2024-06-30 v1    call 100,000.00 Pending;                 unfunded 650,000.00
//	  D2 2024-06-30 v2    call 120,000.00 Pending, due 2024-07-15; unfunded 630,000.00 (restated)
//	  D3 2024-09-30       distribution 80,000.00 Completed, 2024-10-05,
//	                      recallable 20,000.00, withholding 1,250.50
//	PB (INV_B, FUND_H) — commitment 500,000.00
//	  E1 2024-03-31 v1    call 50,000.00 Completed; unfunded 450,000.00
//	  E1 2024-04-30 v2    call 55,000.00 Completed; unfunded 445,000.00 (restated, as-of moved later)
//	  E2 2024-06-30       distribution 10,000.00 Pending, all of it recallable
//	  E3 2024-07-31 v1    call 7,000.00; v2 drops PB (its line withdrawn)
//	PC (INV_A, FUND_E) — commitment 100,000.00, no distributions
//	  F1 2024-05-15       call 33,333.33 Pending; unfunded 66,666.67
//	PD (INV_A, FUND_H) — no commitment stated
//	  D1 2024-03-31       call 1,000.00 Completed
func HandFixtures() []fund.Document {
	var out []fund.Document
	restate := func(d fund.Document) { out = append(out, d) }
	doc := func(id, fundID, asOf string, ps ...fund.Position) fund.Document {
		cur := "USD"
		if fundID == "FUND_E" {
			cur = "EUR"
		}
		return fund.Document{ID: id, FundID: fundID, Kind: fund.KindCapitalAccountStatement, Title: id, AsOf: fund.MustDate(asOf), Currency: cur, Positions: ps}
	}
	call := func(amount string, status fund.Status, due string) *fund.CapitalCallItem {
		c := &fund.CapitalCallItem{Amount: fund.MustMoney(amount), Status: status}
		if due != "" {
			c.DueDate = fund.MustDate(due)
		}
		return c
	}
	unfunded := func(amount, commitment string) *fund.UnfundedCommitmentItem {
		return &fund.UnfundedCommitmentItem{Amount: fund.MustMoney(amount), Status: fund.StatusActive, UnfundedLines: fund.UnfundedLines{Commitment: money(commitment)}}
	}
	pa := func(p fund.Position) fund.Position { p.ID, p.InvestorID = "PA", "INV_A"; return p }
	pb := func(p fund.Position) fund.Position { p.ID, p.InvestorID = "PB", "INV_B"; return p }

	d1 := call("250000.00", fund.StatusCompleted, "2024-04-15")
	d1.Investment, d1.ManagementFee = money("240000.00"), money("10000.00")
	restate(doc("D1", "FUND_H", "2024-03-31",
		pa(fund.Position{CapitalCall: d1, UnfundedCommitment: unfunded("750000.00", "1000000.00")}),
		fund.Position{ID: "PD", InvestorID: "INV_A", CapitalCall: call("1000.00", fund.StatusCompleted, "")}))
	restate(doc("D2", "FUND_H", "2024-06-30",
		pa(fund.Position{CapitalCall: call("100000.00", fund.StatusPending, ""), UnfundedCommitment: unfunded("650000.00", "1000000.00")})))
	restate(doc("D2", "FUND_H", "2024-06-30",
		pa(fund.Position{CapitalCall: call("120000.00", fund.StatusPending, "2024-07-15"), UnfundedCommitment: unfunded("630000.00", "1000000.00")})))
	restate(doc("D3", "FUND_H", "2024-09-30",
		pa(fund.Position{Distribution: &fund.DistributionItem{
			Amount:            fund.MustMoney("80000.00"),
			Status:            fund.StatusCompleted,
			Date:              fund.MustDate("2024-10-05"),
			DistributionLines: fund.DistributionLines{ReturnOfCapital: money("50000.00"), RealizedGain: money("25000.00"), Income: money("5000.00"), Recallable: money("20000.00"), Withholding: money("1250.50")},
		}})))

	restate(doc("E1", "FUND_H", "2024-03-31",
		pb(fund.Position{CapitalCall: call("50000.00", fund.StatusCompleted, ""), UnfundedCommitment: unfunded("450000.00", "500000.00")})))
	restate(doc("E1", "FUND_H", "2024-04-30",
		pb(fund.Position{CapitalCall: call("55000.00", fund.StatusCompleted, ""), UnfundedCommitment: unfunded("445000.00", "500000.00")})))
	restate(doc("E2", "FUND_H", "2024-06-30",
		pb(fund.Position{Distribution: &fund.DistributionItem{Amount: fund.MustMoney("10000.00"), Status: fund.StatusPending, DistributionLines: fund.DistributionLines{Recallable: money("10000.00")}}})))
	restate(doc("E3", "FUND_H", "2024-07-31", pb(fund.Position{CapitalCall: call("7000.00", fund.StatusPending, "")})))
	restate(doc("E3", "FUND_H", "2024-07-31", fund.Position{ID: "PX", InvestorID: "INV_X", CapitalCall: call("7000.00", fund.StatusPending, "")}))

	restate(doc("F1", "FUND_E", "2024-05-15",
		fund.Position{ID: "PC", InvestorID: "INV_A", CapitalCall: call("33333.33", fund.StatusPending, ""), UnfundedCommitment: unfunded("66666.67", "100000.00")}))
	return out
}

func money(s string) *fund.Money { m := fund.MustMoney(s); return &m }
