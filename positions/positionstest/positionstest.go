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
			m.registry = append(m.registry, fund.Registered{PositionID: p.ID, FundID: d.FundID, InvestorID: p.InvestorID, Currency: d.Currency, RegisteredAt: d.CreatedAt})
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

// PositionDocuments implements positions.Reader: the claim is the
// position's registry row, the documents those any version of which
// reports it.
func (m *Memory) PositionDocuments(_ context.Context, pos string, limit int) (fund.Registered, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("PositionDocuments")
	var claim fund.Registered
	if i := slices.IndexFunc(m.registry, func(r fund.Registered) bool { return r.PositionID == pos }); i >= 0 {
		claim = m.registry[i]
	}
	var docs []string
	for doc, versions := range m.versions {
		if slices.ContainsFunc(versions, func(d fund.Document) bool { _, ok := d.PositionByID(pos); return ok }) {
			docs = append(docs, doc)
		}
	}
	slices.Sort(docs)
	return claim, docs[:min(len(docs), limit+1)], nil
}

// PositionKnownAt implements positions.Reader: a version is committed at
// the Clock it was written at.
func (m *Memory) PositionKnownAt(_ context.Context, doc, pos string, at time.Time) ([]fund.PositionItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("PositionKnownAt")
	versions := m.versions[doc]
	for v := len(versions); v >= 1; v-- {
		d := versions[v-1]
		if d.CreatedAt.After(at) {
			continue
		}
		if p, ok := d.PositionByID(pos); ok && !d.Voided {
			return d.AppendItems(&p, nil), nil
		}
		return nil, nil
	}
	return nil, nil
}

// FundChangedSince reports whether a version of one of the fund's
// documents was created after at (CreatedAt stands for the commit instant,
// as KnownVersion takes it).
func (m *Memory) FundChangedSince(_ context.Context, fundID string, at time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("FundChangedSince")
	for _, versions := range m.versions {
		for _, d := range versions {
			if d.FundID == fundID && d.CreatedAt.After(at) {
				return true, nil
			}
		}
	}
	return false, nil
}

// KnownVersion implements positions.Reader: a version is committed at the
// Clock it was written at; its commit ID is its version number.
func (m *Memory) KnownVersion(_ context.Context, doc string, at time.Time) (fund.DocumentHeader, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("KnownVersion")
	versions := m.versions[doc]
	for v := len(versions); v >= 1; v-- {
		if d := versions[v-1]; !d.CreatedAt.After(at) {
			h := d.Header()
			h.CommitID = strconv.Itoa(v)
			return h, nil
		}
	}
	return fund.DocumentHeader{}, fund.Errorf(fund.ENOTFOUND, "document %s not found", doc)
}

// version returns the version a commit ID KnownVersion issued names.
func (m *Memory) version(doc, commitID string) (fund.Document, bool) {
	v, err := strconv.Atoi(commitID)
	if err != nil || v < 1 || v > len(m.versions[doc]) {
		return fund.Document{}, false
	}
	return m.versions[doc][v-1], true
}

// VersionPosition implements positions.Reader.
func (m *Memory) VersionPosition(_ context.Context, doc, commitID, pos string) ([]fund.PositionItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("VersionPosition")
	if d, ok := m.version(doc, commitID); ok {
		if p, ok := d.PositionByID(pos); ok {
			return d.AppendItems(&p, nil), nil
		}
	}
	return nil, nil
}

// VersionStatements implements positions.Reader, with the keys of
// DocumentStatements (an offset), over the version's statements.
func (m *Memory) VersionStatements(_ context.Context, doc, commitID string, limit int, start []byte) ([]fund.PositionItem, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("VersionStatements")
	d, _ := m.version(doc, commitID)
	return page(statementsOf(d), limit, start)
}

// statementsOf lists a version's statements by position.
func statementsOf(d fund.Document) []fund.PositionItem {
	var all []fund.PositionItem
	for _, p := range d.Positions {
		for _, it := range d.AppendItems(&p, nil) {
			if it.Kind == fund.Statement {
				all = append(all, it)
			}
		}
	}
	slices.SortFunc(all, func(a, b fund.PositionItem) int { return cmp.Compare(a.PositionID, b.PositionID) })
	return all
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
	return page(statementsOf(versions[len(versions)-1]), limit, start)
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
func (m *Memory) InvestorPositions(_ context.Context, v fund.Viewer, inv string, limit int, start []byte) ([]fund.Registered, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read("InvestorPositions")
	return page(m.registered(func(r fund.Registered) bool { return r.InvestorID == inv && v.MayReadPosition(r.FundID, r.InvestorID) }), limit, start)
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
//	  D1 2024-03-31       call 250,000.00 completed, due 2024-04-15; unfunded 750,000.00
//	  D2 2024-06-30 v1    call 100,000.00 pending;                 unfunded 650,000.00
//	  D2 2024-06-30 v2    call 120,000.00 pending, due 2024-07-15; unfunded 630,000.00 (restated)
//	  D3 2024-09-30       distribution 80,000.00 completed, 2024-10-05,
//	                      recallable 20,000.00, withholding 1,250.50
//	PB (INV_B, FUND_H) — commitment 500,000.00
//	  E1 2024-03-31 v1    call 50,000.00 completed; unfunded 450,000.00
//	  E1 2024-04-30 v2    call 55,000.00 completed; unfunded 445,000.00 (restated, as-of moved later)
//	  E2 2024-06-30       distribution 10,000.00 pending, all of it recallable
//	  E3 2024-07-31 v1    call 7,000.00; v2 drops PB (its line withdrawn)
//	PC (INV_A, FUND_E) — commitment 100,000.00, no distributions
//	  F1 2024-05-15       call 33,333.33 pending; unfunded 66,666.67
//	PD (INV_A, FUND_H) — no commitment stated
//	  D1 2024-03-31       call 1,000.00 completed
func HandFixtures() []fund.Document {
	var out []fund.Document
	restate := func(d fund.Document) { out = append(out, d) }
	doc := func(id, fundID, asOf string, ps ...fund.Position) fund.Document {
		cur := "USD"
		if fundID == "FUND_E" {
			cur = "EUR"
		}
		return fund.Document{ID: id, Positions: ps, DocumentFields: fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalAccountStatement, Title: id, AsOf: fund.MustDate(asOf), Currency: cur}}
	}
	call := func(amount string, status fund.Status, due string) *fund.CapitalCallItem {
		c := &fund.CapitalCallItem{Amount: fund.MustMoney(amount), Status: status}
		if due != "" {
			c.DueDate = fund.MustDate(due)
		}
		return c
	}
	unfunded := func(amount, commitment string) *fund.UnfundedCommitmentItem {
		return &fund.UnfundedCommitmentItem{Amount: fund.MustMoney(amount), Status: fund.StatusActive, UnfundedDetails: fund.UnfundedDetails{UnfundedLines: fund.UnfundedLines{Commitment: money(commitment)}}}
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
			Amount: fund.MustMoney("80000.00"),
			Status: fund.StatusCompleted, DistributionDetails: fund.DistributionDetails{PaymentDate: fund.MustDate("2024-10-05"), DistributionLines: fund.DistributionLines{ReturnOfCapital: money("50000.00"), RealizedGain: money("25000.00"), Income: money("5000.00"), Recallable: money("20000.00"), Withholding: money("1250.50")}},
		}})))

	restate(doc("E1", "FUND_H", "2024-03-31",
		pb(fund.Position{CapitalCall: call("50000.00", fund.StatusCompleted, ""), UnfundedCommitment: unfunded("450000.00", "500000.00")})))
	restate(doc("E1", "FUND_H", "2024-04-30",
		pb(fund.Position{CapitalCall: call("55000.00", fund.StatusCompleted, ""), UnfundedCommitment: unfunded("445000.00", "500000.00")})))
	restate(doc("E2", "FUND_H", "2024-06-30",
		pb(fund.Position{Distribution: &fund.DistributionItem{Amount: fund.MustMoney("10000.00"), Status: fund.StatusPending, DistributionDetails: fund.DistributionDetails{DistributionLines: fund.DistributionLines{Recallable: money("10000.00")}}}})))
	restate(doc("E3", "FUND_H", "2024-07-31", pb(fund.Position{CapitalCall: call("7000.00", fund.StatusPending, "")})))
	restate(doc("E3", "FUND_H", "2024-07-31", fund.Position{ID: "PX", InvestorID: "INV_X", CapitalCall: call("7000.00", fund.StatusPending, "")}))

	restate(doc("F1", "FUND_E", "2024-05-15",
		fund.Position{ID: "PC", InvestorID: "INV_A", CapitalCall: call("33333.33", fund.StatusPending, ""), UnfundedCommitment: unfunded("66666.67", "100000.00")}))
	return out
}

func money(s string) *fund.Money { m := fund.MustMoney(s); return &m }

// PerformanceFixtures returns, in the order to write them, the documents
// whose performance the tests of package positions work out by hand: fund
// FUND_P, in USD but for Q4's documents, in EUR. Amounts are signed as
// ILPA signs them (A.1 contributions positive, distributions negative).
//
//	Q1 (INV_P1) — commitment 1,000,000
//	  N1 2023-01-15  call 200,000 completed, due 2023-01-31: investment 190,000 + managementFee 10,000 (today's lines);
//	                 unfunded 800,000
//	  S1 2023-03-31  statement from 2023-01-01: NAV 0 + 200,000 − 10,000 fees + 15,000 unrealized = 205,000;
//	                 A.2 commitment 1,000,000: unfunded 1,000,000 − 200,000 = 800,000
//	  N2 2023-05-01  call 100,000 pending, due 2023-05-15: investment 100,000 (typed)
//	  N3 2023-06-20  distribution 80,000 completed, paid 2023-06-25: return_of_capital 50,000 + gain_loss 30,000
//	  S2 2023-06-30  v1 statement from 2023-04-01: 205,000 + 100,000 − 80,000 + 30,000 realized + 45,000 unrealized = 300,000;
//	                 A.2 (no commitment stated): 800,000 − 100,000 = 700,000
//	  S2 2023-06-30  v2 (restated): unrealized 55,000, so 310,000
//	  N4 2023-08-01  call 50,000 completed, due 2023-08-10 (no lines: one investment line)
//	  N5 2023-09-01  distribution 20,000 completed, paid 2023-09-05: returnOfCapital 20,000 (today's lines)
//	Q2 (INV_P2) — commitment 500,000
//	  M1 2023-02-01  call 100,000 completed, due 2023-02-15: investment 90,000 (reduces) +
//	                 management_fee_outside_commitment 10,000 (no effect); unfunded 410,000
//	  M2 2023-05-01  distribution 40,000 completed, paid 2023-05-10: recallable_return_of_capital 30,000 (increases) + income 10,000
//	  S2 2023-06-30  statement (v1 and v2 alike) from 2023-01-01, off from the notices:
//	                 0 + 105,000 − 42,000 − 10,000 fees + 20,000 unrealized = 73,000;
//	                 A.2 commitment 500,000: 500,000 − 95,000 + 30,000 recallable = 435,000
//	  N4 2023-08-01  call 30,000 completed, due 2023-08-15: investment 30,000 (the recall); unfunded 410,000
//	Q3 (INV_P2) — no statement
//	  M1 2023-02-01  call 50,000 completed, due 2023-02-15 (no lines)
//	  M2 2023-05-01  distribution 25,000 completed, paid 2023-05-10: income 20,000 + carry 5,000
//	Q4 (INV_P1) — in EUR
//	  G1 2022-01-01  call 1,000 completed, due 2022-01-01
//	  G2 2022-12-31  statement from 2022-01-01: 0 + 1,000 + 100 unrealized = 1,100
func PerformanceFixtures() []fund.Document {
	doc := func(id string, kind fund.Kind, asOf string, ps ...fund.Position) fund.Document {
		return fund.Document{ID: id, Positions: ps, DocumentFields: fund.DocumentFields{FundID: "FUND_P", Kind: kind, Title: id, AsOf: fund.MustDate(asOf), Currency: "USD"}}
	}
	q := func(id, inv string) fund.Position { return fund.Position{ID: id, InvestorID: inv} }
	typed := func(pairs ...string) []fund.Transaction {
		var out []fund.Transaction
		for i := 0; i < len(pairs); i += 2 {
			t := fund.Transaction{Type: fund.TransactionType(pairs[i]), Amount: fund.MustMoney(pairs[i+1])}
			t.Unfunded = t.Info().Effect
			out = append(out, t)
		}
		return out
	}
	call := func(amount string, status fund.Status, due string, lines []fund.Transaction) *fund.CapitalCallItem {
		return &fund.CapitalCallItem{Amount: fund.MustMoney(amount), Status: status, Transactions: lines, CallDetails: fund.CallDetails{DueDate: fund.MustDate(due)}}
	}
	dist := func(amount, paid string, lines []fund.Transaction) *fund.DistributionItem {
		return &fund.DistributionItem{Amount: fund.MustMoney(amount), Status: fund.StatusCompleted, Transactions: lines, DistributionDetails: fund.DistributionDetails{PaymentDate: fund.MustDate(paid)}}
	}
	unfunded := func(amount, commitment string) *fund.UnfundedCommitmentItem {
		return &fund.UnfundedCommitmentItem{Amount: fund.MustMoney(amount), Status: fund.StatusActive, UnfundedDetails: fund.UnfundedDetails{UnfundedLines: fund.UnfundedLines{Commitment: money(commitment)}}}
	}

	q1 := q("Q1", "INV_P1")
	n1 := q1
	n1.CapitalCall = call("200000", fund.StatusCompleted, "2023-01-31", nil)
	n1.CapitalCall.Investment, n1.CapitalCall.ManagementFee = money("190000"), money("10000")
	n1.UnfundedCommitment = unfunded("800000", "1000000")
	s1 := q1
	s1.CapitalAccount = &fund.CapitalAccount{PeriodStart: fund.MustDate("2023-01-01"),
		Contributions: money("200000"), ManagementFeesGross: money("-10000"), NetUnrealizedGainLoss: money("15000"), EndingNAV: fund.MustMoney("205000"),
		TotalCommitment: money("1000000"), BeginningUnfundedCommitment: money("1000000"), LessContributions: money("-200000"), EndingUnfundedCommitment: money("800000")}
	n2 := q1
	n2.CapitalCall = call("100000", fund.StatusPending, "2023-05-15", typed("investment", "100000"))
	n3 := q1
	n3.Distribution = dist("80000", "2023-06-25", typed("return_of_capital", "50000", "gain_loss", "30000"))
	s2 := func(unrealized, ending string) fund.Position {
		p := q1
		p.CapitalAccount = &fund.CapitalAccount{PeriodStart: fund.MustDate("2023-04-01"), BeginningNAV: fund.MustMoney("205000"),
			Contributions: money("100000"), Distributions: money("-80000"), NetRealizedGainLoss: money("30000"), NetUnrealizedGainLoss: money(unrealized),
			EndingNAV:                   fund.MustMoney(ending),
			BeginningUnfundedCommitment: money("800000"), LessContributions: money("-100000"), EndingUnfundedCommitment: money("700000")}
		return p
	}
	n4 := q1
	n4.CapitalCall = call("50000", fund.StatusCompleted, "2023-08-10", nil)
	n5 := q1
	n5.Distribution = dist("20000", "2023-09-05", nil)
	n5.Distribution.ReturnOfCapital = money("20000")

	q2 := q("Q2", "INV_P2")
	m1 := q2
	m1.CapitalCall = call("100000", fund.StatusCompleted, "2023-02-15", typed("investment", "90000", "management_fee_outside_commitment", "10000"))
	m1.UnfundedCommitment = unfunded("410000", "500000")
	m2 := q2
	m2.Distribution = dist("40000", "2023-05-10", typed("recallable_return_of_capital", "30000", "income", "10000"))
	t1 := q2
	t1.CapitalAccount = &fund.CapitalAccount{PeriodStart: fund.MustDate("2023-01-01"),
		Contributions: money("105000"), Distributions: money("-42000"), ManagementFeesGross: money("-10000"), NetUnrealizedGainLoss: money("20000"),
		EndingNAV:       fund.MustMoney("73000"),
		TotalCommitment: money("500000"), BeginningUnfundedCommitment: money("500000"), LessContributions: money("-95000"),
		PlusRecallableDistributions: money("30000"), EndingUnfundedCommitment: money("435000")}
	n4q2 := q2
	n4q2.CapitalCall = call("30000", fund.StatusCompleted, "2023-08-15", typed("investment", "30000"))
	n4q2.UnfundedCommitment = unfunded("410000", "500000")

	q3 := q("Q3", "INV_P2")
	m1q3 := q3
	m1q3.CapitalCall = call("50000", fund.StatusCompleted, "2023-02-15", nil)
	m2q3 := q3
	m2q3.Distribution = dist("25000", "2023-05-10", typed("income", "20000", "carry", "5000"))

	q4 := q("Q4", "INV_P1")
	g1 := q4
	g1.CapitalCall = call("1000", fund.StatusCompleted, "2022-01-01", nil)
	g2 := q4
	g2.CapitalAccount = &fund.CapitalAccount{PeriodStart: fund.MustDate("2022-01-01"),
		Contributions: money("1000"), NetUnrealizedGainLoss: money("100"), EndingNAV: fund.MustMoney("1100")}
	eur := func(d fund.Document) fund.Document { d.Currency = "EUR"; return d }

	return []fund.Document{
		eur(doc("G1", fund.KindCapitalCallNotice, "2022-01-01", g1)),
		eur(doc("G2", fund.KindCapitalAccountStatement, "2022-12-31", g2)),
		doc("N1", fund.KindCapitalCallNotice, "2023-01-15", n1),
		doc("M1", fund.KindCapitalCallNotice, "2023-02-01", m1, m1q3),
		doc("S1", fund.KindCapitalAccountStatement, "2023-03-31", s1),
		doc("N2", fund.KindCapitalCallNotice, "2023-05-01", n2),
		doc("M2", fund.KindDistributionNotice, "2023-05-01", m2, m2q3),
		doc("N3", fund.KindDistributionNotice, "2023-06-20", n3),
		doc("S2", fund.KindCapitalAccountStatement, "2023-06-30", s2("45000", "300000"), t1),
		doc("S2", fund.KindCapitalAccountStatement, "2023-06-30", s2("55000", "310000"), t1),
		doc("N4", fund.KindCapitalCallNotice, "2023-08-01", n4, n4q2),
		doc("N5", fund.KindDistributionNotice, "2023-09-01", n5),
	}
}
