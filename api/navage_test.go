package api_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/positions"
)

// navAge is the age a performance answer states of its NAV.
type navAge struct {
	Status         string   `json:"status"`
	AgeDays        *int     `json:"ageDays"`
	StaleAfter     string   `json:"staleAfter"`
	Stale          *bool    `json:"stale"`
	StalePositions []string `json:"stalePositions"`
}

// String is the age as the test compares it.
func (a navAge) String() string {
	days, stale := "absent", "absent"
	if a.AgeDays != nil {
		days = strconv.Itoa(*a.AgeDays)
	}
	if a.Stale != nil {
		stale = map[bool]string{true: "stale", false: "fresh"}[*a.Stale]
	}
	return a.Status + " " + days + " days, " + stale + " after " + a.StaleAfter + " " + strings.Join(a.StalePositions, ",")
}

// irrStatusOnly is an answer's IRR, its status alone.
type irrStatusOnly struct {
	Status string `json:"status"`
}

type conventionsOnly struct {
	NAVAge string `json:"navAge"`
}

// checkNAVAge reads the demo's performance answers (s serves the demo as
// seeded; TestDemoFigures runs it, before the tour's writes) on dates where
// the NAV is fresh, on the last fresh day, the day after, and a year after
// its statement: each states the NAV's status, age in days, last fresh date
// and stale flag, and the conventions state the bound; the fund's and
// investor's pooled answers name the positions whose NAV is stale. A
// server configured with another bound applies and states it.
func checkNAVAge(t *testing.T, s *testServer) {
	env := s.Env

	// DOC003 (Q3, 2025-09-30) is fresh through 2025-12-31 + 45 days;
	// DOC007 (Q4, 2025-12-31) through 2026-03-31 + 45 days.
	// The IRR solved on a stale NAV says so.
	for _, c := range []struct{ asOf, want, irr string }{
		{"2025-12-31", "statement 0 days, fresh after 2026-05-15 ", "ok"},
		{"2025-11-15", "rolled_forward 46 days, fresh after 2026-02-14 ", "ok"},
		{"2026-05-15", "rolled_forward 135 days, fresh after 2026-05-15 ", "ok"},
		{"2026-05-16", "rolled_forward 136 days, stale after 2026-05-15 ", "stale_nav"},
		{"2026-12-31", "rolled_forward 365 days, stale after 2026-05-15 ", "stale_nav"},
	} {
		p := goldenGet[struct {
			NAV         navAge           `json:"nav"`
			IRR         irrStatusOnly    `json:"irr"`
			Conventions *conventionsOnly `json:"conventions"`
		}](t, s, "/v1/positions/POSITION_1/performance?asOf="+c.asOf)
		if got := p.NAV.String(); got != c.want {
			t.Errorf("POSITION_1 on %s: %s\nwant %s", c.asOf, got, c.want)
		}
		if p.IRR.Status != c.irr {
			t.Errorf("POSITION_1 on %s: IRR status %q, want %q", c.asOf, p.IRR.Status, c.irr)
		}
		if p.Conventions == nil || !strings.Contains(p.Conventions.NAVAge, "3 calendar months, then 45 days (P3M45D)") {
			t.Errorf("POSITION_1 on %s: conventions %+v do not state the bound", c.asOf, p.Conventions)
		}
	}

	t.Run("pooled: the fund's and the investor's answers name the stale positions", func(t *testing.T) {
		for asOf, want := range map[string]string{
			"2025-12-31": "statement 0 days, fresh after 2026-05-15 ",
			"2026-12-31": "rolled_forward 365 days, stale after 2026-05-15 POSITION_1,POSITION_2,POSITION_3",
		} {
			f := goldenGet[struct {
				Currencies []struct {
					NAV navAge        `json:"nav"`
					IRR irrStatusOnly `json:"irr"`
				} `json:"currencies"`
				Conventions conventionsOnly `json:"conventions"`
			}](t, s, "/v1/funds/FUND_A/performance?asOf="+asOf)
			if len(f.Currencies) != 1 || f.Currencies[0].NAV.String() != want || !strings.Contains(f.Conventions.NAVAge, "P3M45D") {
				t.Errorf("FUND_A on %s: %+v\nwant %s", asOf, f, want)
			}
			if wantIRR := map[bool]string{true: "stale_nav", false: "ok"}[strings.Contains(want, "stale")]; len(f.Currencies) == 1 && f.Currencies[0].IRR.Status != wantIRR {
				t.Errorf("FUND_A on %s: pooled IRR status %q, want %q", asOf, f.Currencies[0].IRR.Status, wantIRR)
			}
		}
		inv := goldenGet[struct {
			Positions []struct {
				NAV         navAge           `json:"nav"`
				Conventions *conventionsOnly `json:"conventions"`
			} `json:"positions"`
			Totals []struct {
				NAV navAge `json:"nav"`
			} `json:"totals"`
			Conventions conventionsOnly `json:"conventions"`
		}](t, s, "/v1/investors/INVESTOR_1/performance?asOf=2026-12-31")
		want := "rolled_forward 365 days, stale after 2026-05-15 "
		if len(inv.Positions) != 1 || inv.Positions[0].NAV.String() != want || inv.Positions[0].Conventions != nil {
			t.Errorf("INVESTOR_1's position: %+v\nwant %s, the conventions stated once at the top", inv.Positions, want)
		}
		if len(inv.Totals) != 1 || inv.Totals[0].NAV.String() != want+"POSITION_1" || !strings.Contains(inv.Conventions.NAVAge, "P3M45D") {
			t.Errorf("INVESTOR_1's totals: %+v, conventions %q\nwant %sPOSITION_1", inv.Totals, inv.Conventions.NAVAge, want)
		}
	})

	t.Run("a server with another bound applies and states it", func(t *testing.T) {
		analytics := positions.NewAnalytics(env.Store)
		analytics.Freshness = positions.Freshness{Months: 1}
		month := startAPI(t, env, func(o *api.Options) { o.Positions = analytics })
		p := goldenGet[struct {
			NAV         navAge          `json:"nav"`
			Conventions conventionsOnly `json:"conventions"`
		}](t, month, "/v1/positions/POSITION_1/performance?asOf=2025-11-15")
		if got, want := p.NAV.String(), "rolled_forward 46 days, stale after 2025-10-31 "; got != want {
			t.Errorf("with P1M: %s\nwant %s", got, want)
		}
		if !strings.Contains(p.Conventions.NAVAge, "the period end plus 1 calendar month (P1M)") || strings.Contains(p.Conventions.NAVAge, "45 days") {
			t.Errorf("with P1M, conventions.navAge: %q", p.Conventions.NAVAge)
		}
		// The pooled routes apply the same bound.
		f := goldenGet[struct {
			Currencies []struct {
				NAV navAge `json:"nav"`
			} `json:"currencies"`
			Conventions conventionsOnly `json:"conventions"`
		}](t, month, "/v1/funds/FUND_A/performance?asOf=2025-11-15")
		want := "rolled_forward 46 days, stale after 2025-10-31 POSITION_1,POSITION_2,POSITION_3"
		if len(f.Currencies) != 1 || f.Currencies[0].NAV.String() != want || !strings.Contains(f.Conventions.NAVAge, "(P1M)") {
			t.Errorf("FUND_A with P1M: %+v\nwant %s", f, want)
		}
	})
}
