package positions_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/positions/positionstest"
	"github.com/shopspring/decimal"
)

// committed is positionstest.Memory with the events of its writes: each
// version committed at the Clock it was written at, as Memory's
// PositionKnownAt counts it.
type committed struct {
	*positionstest.Memory
	events []fund.Event
	listed atomic.Int64 // DocumentVersionsBetween calls, which the fan-out makes concurrently
}

func (c *committed) write(d fund.Document) {
	w := c.Restate(d)
	c.events = append(c.events, fund.Event{Type: fund.EventTypeOf(&w), Timestamp: w.CreatedAt,
		Data: fund.EventData{DocumentID: w.ID, FundID: w.FundID, Version: w.Version}})
}

func (c *committed) DocumentVersionsBetween(_ context.Context, doc string, from, to time.Time, limit int) ([]fund.Event, error) {
	c.listed.Add(1)
	var out []fund.Event
	for _, e := range c.events {
		if e.Data.DocumentID == doc && e.Timestamp.After(from) && !e.Timestamp.After(to) && len(out) <= limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func changesDoc(id, asOf string, ps ...fund.Position) fund.Document {
	return fund.Document{ID: id, Positions: ps, DocumentFields: fund.DocumentFields{FundID: "FUND_C", Kind: fund.KindCapitalCallNotice, Title: id, AsOf: fund.MustDate(asOf), Currency: "USD"}}
}

func changesCall(amount string) fund.Position {
	return fund.Position{ID: "PC1", InvestorID: "INV_C", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(amount), Status: fund.StatusCompleted}}
}

// contributions are a change's money contributions by figure.
func contributions(c positions.VersionChange) map[string]string {
	out := map[string]string{}
	for _, f := range c.Figures {
		if f.Contribution != nil {
			out[f.Name] = f.Contribution.String()
		}
	}
	return out
}

// TestChangesFollowCommitOrderAndAddUp: two documents committed in the
// same instant are taken in document order, a restatement that moves a
// document's asOf past the date asked contributes what its earlier
// version no longer does, and every money figure's contributions add up
// to its change over the window.
func TestChangesFollowCommitOrderAndAddUp(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := &committed{Memory: positionstest.NewMemory(t0)}
	c.Clock = t0.Add(time.Minute)
	c.write(changesDoc("B", "2025-01-31", changesCall("30.00")))
	c.write(changesDoc("A", "2025-01-31", changesCall("10.00"))) // the same instant as B
	c.Clock = t0.Add(2 * time.Minute)
	c.write(changesDoc("A", "2025-01-31", changesCall("12.50")))
	c.Clock = t0.Add(3 * time.Minute)
	c.write(changesDoc("A", "2025-03-31", changesCall("99.00"))) // dated after asOf: A counts at v2 still
	c.Clock = t0.Add(4 * time.Minute)
	c.write(changesDoc("B", "2025-03-31", changesCall("40.00"))) // B v1 stays counted: no change
	c.Clock = t0.Add(5 * time.Minute)
	c.write(changesDoc("B", "2025-01-31")) // B drops PC1 (another position only)
	s := positions.NewAnalytics(c)

	got, err := s.SummaryChanges(context.Background(), fund.Viewer{AllFunds: true}, "PC1", fund.MustDate("2025-02-28"), t0, t0.Add(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		key  string
		paid map[string]string
	}
	var have []entry
	for _, v := range got.Versions {
		have = append(have, entry{fmt.Sprintf("%s v%d", v.Event.Data.DocumentID, v.Event.Data.Version), contributions(v)})
	}
	want := []entry{
		{"A v1", map[string]string{"called": "10", "paidIn": "10"}},
		{"B v1", map[string]string{"called": "30", "paidIn": "30"}},
		{"A v2", map[string]string{"called": "2.5", "paidIn": "2.5"}},
		{"B v3", map[string]string{"called": "-30", "paidIn": "-30"}},
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("changes %v\nwant %v", have, want)
	}
	sums := map[string]decimal.Decimal{}
	for _, v := range got.Versions {
		for _, f := range v.Figures {
			if f.Contribution != nil {
				sums[f.Name] = sums[f.Name].Add(*f.Contribution)
			}
		}
	}
	for _, f := range got.Figures {
		if f.Contribution != nil && !sums[f.Name].Equal(*f.Contribution) {
			t.Errorf("%s changed by %s over the window, its versions' contributions add up to %s", f.Name, f.Contribution, sums[f.Name])
		}
		if f.Name == "called" && (f.After.String() != "12.5" || f.Contribution.String() != "12.5") {
			t.Errorf("called after %s (change %s), want 12.50 (12.50)", f.After, f.Contribution)
		}
	}
	if got.KnownAtFrom || !got.KnownAtTo {
		t.Errorf("knownAtFrom %v, knownAtTo %v; want false, true", got.KnownAtFrom, got.KnownAtTo)
	}
}

// TestChangesAreBounded: a position whose documents committed more than
// MaxChangeVersions versions in the window is EINVALID once the versions
// are listed, before any item is read; a window of exactly that many
// versions is read; an unknown or refused position is ENOTFOUND after the
// ledger's one read.
func TestChangesAreBounded(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := &committed{Memory: positionstest.NewMemory(t0)}
	for i := range positions.MaxChangeVersions + 1 {
		c.Clock = t0.Add(time.Duration(i+1) * time.Second)
		c.write(changesDoc(fmt.Sprintf("D%d", i%3), "2025-01-31", changesCall(fmt.Sprintf("%d.00", i+1))))
	}
	s := positions.NewAnalytics(c)
	ctx := context.Background()
	c.ResetReads()
	_, err := s.SummaryChanges(ctx, fund.Viewer{AllFunds: true}, "PC1", fund.MustDate("2025-02-28"), t0, c.Clock)
	if fund.ErrorCode(err) != fund.EINVALID {
		t.Fatalf("%d versions: %v, want EINVALID", positions.MaxChangeVersions+1, err)
	}
	if reads := c.Reads(); slices.Contains(reads, "PositionKnownAt") {
		t.Errorf("refused after reading items: %v", reads)
	}
	// Without the first version, the window holds exactly the bound.
	got, err := s.SummaryChanges(ctx, fund.Viewer{AllFunds: true}, "PC1", fund.MustDate("2025-02-28"), t0.Add(time.Second), c.Clock)
	if err != nil || len(got.Versions) != positions.MaxChangeVersions {
		t.Fatalf("%d versions: %d changes, %v; want %d", positions.MaxChangeVersions, len(got.Versions), err, positions.MaxChangeVersions)
	}

	for name, allow := range map[string]fund.Viewer{"refused": {}, "unknown": {AllFunds: true}} {
		pos := "PC1"
		if name == "unknown" {
			pos = "NOPE"
		}
		c.ResetReads()
		c.listed.Store(0)
		if _, err := s.SummaryChanges(ctx, allow, pos, fund.MustDate("2025-02-28"), t0, c.Clock); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Errorf("%s: %v, want ENOTFOUND", name, err)
		}
		if reads := c.Reads(); !slices.Equal(reads, []string{"PositionDocuments"}) || c.listed.Load() != 0 {
			t.Errorf("%s: read %v and listed %d documents' versions, want the ledger alone", name, reads, c.listed.Load())
		}
	}
}
