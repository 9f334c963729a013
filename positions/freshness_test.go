package positions

import (
	"reflect"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

// TestLastFreshCountsCalendarMonthsThenDays: a month is the same day of the
// month a month later, or that month's last day when the period end is a
// month's last day or the day does not exist there; the days follow.
func TestLastFreshCountsCalendarMonthsThenDays(t *testing.T) {
	for _, c := range []struct {
		f          Freshness
		end, fresh string
	}{
		{DefaultFreshness, "2025-09-30", "2026-02-14"}, // Q3 → 2025-12-31, the next quarter's end, + 45
		{DefaultFreshness, "2025-12-31", "2026-05-15"}, // → 2026-03-31 + 45
		{DefaultFreshness, "2025-03-31", "2025-08-14"}, // → 2025-06-30, the last day, not 06-31
		{DefaultFreshness, "2025-06-30", "2025-11-14"}, // → 2025-09-30 + 45
		{DefaultFreshness, "2025-11-30", "2026-04-14"}, // a month's end → 2026-02-28 + 45
		{DefaultFreshness, "2025-11-15", "2026-04-01"}, // mid-month → 2026-02-15 + 45
		{DefaultFreshness, "2024-02-29", "2024-07-15"}, // a leap February's end → 2024-05-31 + 45
		{DefaultFreshness, "2024-02-28", "2024-07-12"}, // not its month's end → 2024-05-28 + 45
		{Freshness{Months: 2}, "2023-12-31", "2024-02-29"},
		{Freshness{Months: 12}, "2025-12-31", "2026-12-31"},
		{Freshness{Days: 30}, "2025-09-30", "2025-10-30"},
		{Freshness{}, "2025-09-30", "2025-09-30"},
		{DefaultFreshness, "9999-12-31", ""}, // past year 9999: never stale
	} {
		if got := c.f.LastFresh(fund.MustDate(c.end)).String(); got != c.fresh {
			t.Errorf("%s after %s: fresh through %q, want %q", c.f, c.end, got, c.fresh)
		}
	}
	for f, want := range map[Freshness]string{DefaultFreshness: "P3M45D", {Months: 12}: "P12M", {Days: 10}: "P10D", {}: "P0D"} {
		if got := f.String(); got != want {
			t.Errorf("%+v is %s, want %s", f, got, want)
		}
	}
}

// TestNAVAgeAndStaleness: a position's NAV on its statement's period end
// is 0 days old and fresh; 46 days on, rolled forward and fresh; on the
// last fresh day fresh, the day after stale; a year on, rolled forward from
// the year-old statement, stale. Pooled, the oldest age, the earliest
// staleAfter and the stale positions are named, also in an incomplete pool.
func TestNAVAgeAndStaleness(t *testing.T) {
	items := func(pos string) []fund.PositionItem {
		return []fund.PositionItem{paidCall("C", pos, "2025-08-01", "100"), statementOn("S", pos, "2025-07-01", "2025-09-30", "104"),
			paidCall("C2", pos, "2025-10-20", "50")}
	}
	for _, c := range []struct {
		name, asOf string
		status     NAVStatus
		days       int
		stale      bool
		value      string
	}{
		{"on the statement's period end, fresh", "2025-09-30", NAVStatement, 0, false, "104"},
		{"46 days on, rolled forward and fresh", "2025-11-15", NAVRolledForward, 46, false, "154"},
		{"on the last fresh day (2025-12-31 + 45), fresh", "2026-02-14", NAVRolledForward, 137, false, "154"},
		{"the day after, stale", "2026-02-15", NAVRolledForward, 138, true, "154"},
		{"a year on, rolled forward from a year-old statement, stale", "2026-09-30", NAVRolledForward, 365, true, "154"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Evaluate("P", fund.MustDate(c.asOf), items("P"), DefaultFreshness)
			n := p.NAV
			if n.Status != c.status || n.Value == nil || !n.Value.Equal(fund.MustMoney(c.value)) || n.Age == nil {
				t.Fatalf("NAV %+v, want %s of %s with an age", n, c.status, c.value)
			}
			if want := (NAVAge{Days: c.days, StaleAfter: fund.MustDate("2026-02-14"), Stale: c.stale}); !reflect.DeepEqual(*n.Age, want) {
				t.Errorf("age %+v, want %+v", *n.Age, want)
			}
			if p.Freshness != DefaultFreshness {
				t.Errorf("judged by %s, want %s", p.Freshness, DefaultFreshness)
			}
		})
	}

	t.Run("a tighter bound makes the same NAV stale sooner", func(t *testing.T) {
		p := Evaluate("P", fund.MustDate("2025-11-15"), items("P"), Freshness{Days: 30})
		if a := p.NAV.Age; a == nil || !a.Stale || a.Days != 46 || a.StaleAfter.String() != "2025-10-30" {
			t.Errorf("age %+v, want 46 days, stale after 2025-10-30", a)
		}
	})

	t.Run("no statement, no age", func(t *testing.T) {
		if p := Evaluate("P", fund.MustDate("2025-09-29"), items("P"), DefaultFreshness); p.NAV.Age != nil || p.NAV.Status != NAVNoStatement {
			t.Errorf("NAV %+v, want no statement and no age", p.NAV)
		}
	})

	t.Run("pooled", func(t *testing.T) {
		asOf := fund.MustDate("2026-03-31")
		old := Evaluate("OLD", asOf, items("OLD"), DefaultFreshness) // Q3 2025: stale after 2026-02-14
		recent := Evaluate("NEW", asOf, append(items("NEW"), statementOn("S4", "NEW", "2025-10-01", "2025-12-31", "160")), DefaultFreshness)
		none := Evaluate("NONE", asOf, []fund.PositionItem{paidCall("C", "NONE", "2025-08-01", "100")}, DefaultFreshness)
		if recent.NAV.Age == nil || recent.NAV.Age.Stale || recent.NAV.Age.Days != 90 {
			t.Fatalf("the position with a Q4 statement: %+v, want 90 days and fresh", recent.NAV.Age)
		}
		want := NAVAge{Days: 182, StaleAfter: fund.MustDate("2026-02-14"), Stale: true, StalePositions: []string{"OLD"}}
		for _, c := range []struct {
			name   string
			perfs  []Performance
			status NAVStatus
		}{
			{"complete", []Performance{old, recent}, NAVRolledForward},
			{"incomplete", []Performance{old, none, recent}, NAVIncomplete},
		} {
			pool := Pool("USD", asOf, c.perfs)
			if pool.NAV.Status != c.status || pool.NAV.Age == nil || !reflect.DeepEqual(*pool.NAV.Age, want) {
				t.Errorf("%s pool: status %s, age %+v; want %s and %+v", c.name, pool.NAV.Status, pool.NAV.Age, c.status, want)
			}
		}
		if pool := Pool("USD", asOf, []Performance{recent}); pool.NAV.Age == nil || pool.NAV.Age.Stale || pool.NAV.Age.StalePositions != nil {
			t.Errorf("a pool of fresh NAVs: %+v, want fresh with no stale positions", pool.NAV.Age)
		}
		if pool := Pool("USD", asOf, []Performance{none}); pool.NAV.Age != nil {
			t.Errorf("a pool without statements: age %+v, want none", pool.NAV.Age)
		}
	})
}

// TestAnIRRSolvedOnAStaleNAVSaysSo: the IRR solved with a fresh NAV as its
// terminal value is ok; with a stale one (a day after the last fresh day,
// a year on) it is stale_nav, with the same rate and cumulative return an
// ok status would give. Pooled, one stale NAV makes the pool's IRR
// stale_nav; a pool of fresh NAVs is ok.
func TestAnIRRSolvedOnAStaleNAVSaysSo(t *testing.T) {
	items := func(pos string) []fund.PositionItem {
		return []fund.PositionItem{paidCall("C", pos, "2025-08-01", "100"), statementOn("S", pos, "2025-07-01", "2025-09-30", "104"),
			paidCall("C2", pos, "2025-10-20", "50")}
	}
	for _, c := range []struct {
		asOf       string
		want       IRRStatus
		annualised bool
	}{
		{"2025-11-15", IRROK, false},
		{"2026-02-14", IRROK, false},
		{"2026-02-15", IRRStaleNAV, false},
		{"2026-09-30", IRRStaleNAV, true},
	} {
		p := Evaluate("P", fund.MustDate(c.asOf), items("P"), DefaultFreshness)
		irr := p.IRR
		if irr.Status != c.want || !irr.Status.Solved() || irr.CumulativeReturn == nil || irr.Annualised != c.annualised || (irr.Rate != nil) != c.annualised {
			t.Errorf("on %s (NAV age %+v): IRR %+v, want %s with a cumulative return, annualised %v", c.asOf, p.NAV.Age, irr, c.want, c.annualised)
		}
		same := XIRR(irr.Flows).GIPS()
		if same.Status != IRROK || !same.CumulativeReturn.Equal(*irr.CumulativeReturn) {
			t.Errorf("on %s: the flows solve to %+v, want ok with cumulative return %s", c.asOf, same, irr.CumulativeReturn)
		}
	}

	asOf := fund.MustDate("2026-03-31")
	old := Evaluate("OLD", asOf, items("OLD"), DefaultFreshness)
	recent := Evaluate("NEW", asOf, append(items("NEW"), statementOn("S4", "NEW", "2025-10-01", "2025-12-31", "160")), DefaultFreshness)
	if old.IRR.Status != IRRStaleNAV || recent.IRR.Status != IRROK {
		t.Fatalf("positions: OLD %s, NEW %s; want stale_nav and ok", old.IRR.Status, recent.IRR.Status)
	}
	if got := Pool("USD", asOf, []Performance{old, recent}).IRR.Status; got != IRRStaleNAV {
		t.Errorf("a pool with one stale NAV: IRR %s, want stale_nav", got)
	}
	if got := Pool("USD", asOf, []Performance{recent}).IRR.Status; got != IRROK {
		t.Errorf("a pool of fresh NAVs: IRR %s, want ok", got)
	}
}
