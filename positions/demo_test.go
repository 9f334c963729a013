package positions_test

import (
	"context"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/positions/positionstest"
)

// TestTheDemoReconcilesToZero: every capital account statement of the demo
// (fund.DemoVersions) rolls forward (fund's validation) and reconciles with
// the notices of its period to zero, contributions, distributions and
// ending unfunded commitment alike; and on every day of the demo's half
// year each position's reported unfunded commitment (the most recent item
// or statement) equals the one computed from its notices.
func TestTheDemoReconcilesToZero(t *testing.T) {
	ctx := context.Background()
	m := positionstest.NewMemory(clock)
	statements := map[string]bool{}
	for _, d := range fund.DemoVersions() {
		d.Normalize()
		if err := d.Validate(fund.DefaultMaxPositions); err != nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		if d.Kind == fund.KindCapitalAccountStatement {
			statements[d.ID] = true
		}
		m.Restate(d)
	}
	ps := positions.NewAnalytics(m)
	zero := func(c positions.Compared) bool { return c.Difference.Sign() == 0 && c.Statement.Equal(c.Notices) }

	reconciled := 0
	for doc := range statements {
		r, _, err := ps.DocumentReconciliation(ctx, fund.Operator, fund.DocumentHeader{ID: doc}, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Reconciliations) != 3 {
			t.Errorf("%s reconciles %d statements, want one per position", doc, len(r.Reconciliations))
		}
		for _, rc := range r.Reconciliations {
			reconciled++
			if !zero(rc.Contributions) || rc.Contributions.Notices.Sign() <= 0 || !zero(rc.Distributions) || rc.Distributions.Notices.Sign() <= 0 ||
				rc.EndingUnfunded == nil || !zero(*rc.EndingUnfunded) {
				t.Errorf("%s %s does not reconcile to zero: %+v, ending unfunded %+v", doc, rc.PositionID, rc, rc.EndingUnfunded)
			}
		}
	}
	if reconciled != 6 {
		t.Errorf("%d statements reconciled, want Q3 and Q4 of three positions", reconciled)
	}

	for _, pos := range []string{"POSITION_1", "POSITION_2", "POSITION_3"} {
		for day := fund.MustDate("2025-07-15").Time(); !day.After(fund.MustDate("2025-12-31").Time()); day = day.AddDate(0, 0, 1) {
			asOf := fund.MustDate(day.Format("2006-01-02"))
			s, err := ps.Summary(ctx, fund.Operator, pos, asOf)
			if err != nil {
				t.Fatal(err)
			}
			if s.UnfundedDifference == nil || s.UnfundedDifference.Sign() != 0 {
				t.Errorf("%s on %s: reported %v from %+v, computed %v", pos, asOf, s.UnfundedReported, s.UnfundedSource, s.UnfundedComputed)
			}
		}
		p, err := ps.Performance(ctx, fund.Operator, pos, fund.MustDate("2025-12-31"))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Reconciliations) != 2 {
			t.Errorf("%s's performance reconciles %d statements, want Q3 and Q4", pos, len(p.Reconciliations))
		}
		for _, rc := range p.Reconciliations {
			if !zero(rc.Contributions) || !zero(rc.Distributions) || rc.EndingUnfunded == nil || !zero(*rc.EndingUnfunded) {
				t.Errorf("%s, statement %s: %+v", pos, rc.Statement.DocumentID, rc)
			}
		}
	}
}
