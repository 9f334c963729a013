package config

import (
	"strings"
	"testing"
)

// TestNAVStaleAfterIsAnISOPeriod: FUNDSVC_NAV_STALE_AFTER reads an ISO 8601
// period of years, months and days into calendar months and days (a year is
// 12 months), P3M45D by default, and refuses anything else by name.
func TestNAVStaleAfterIsAnISOPeriod(t *testing.T) {
	if d := Default(); d.NAVStaleMonths != 3 || d.NAVStaleDays != 45 {
		t.Errorf("default: %d months %d days, want 3 and 45", d.NAVStaleMonths, d.NAVStaleDays)
	}
	for v, want := range map[string][2]int{"P3M45D": {3, 45}, "P1Y": {12, 0}, "P1Y2M3D": {14, 3}, "P10D": {0, 10}, "P0D": {0, 0}} {
		c, _, err := Load(vars(map[string]string{"FUNDSVC_NAV_STALE_AFTER": v}), nil, CmdServe)
		if err != nil || c.NAVStaleMonths != want[0] || c.NAVStaleDays != want[1] {
			t.Errorf("%s: %d months %d days (%v), want %v", v, c.NAVStaleMonths, c.NAVStaleDays, err, want)
		}
	}
	for _, v := range []string{"P", "3M45D", "P-1D", "PT1H", "P1W", "P45D3M", "p3m", "P1000000D", "P101Y"} {
		if _, _, err := Load(vars(map[string]string{"FUNDSVC_NAV_STALE_AFTER": v}), nil, CmdServe); err == nil || !strings.Contains(err.Error(), "FUNDSVC_NAV_STALE_AFTER") {
			t.Errorf("%s: accepted (%v), want an error naming FUNDSVC_NAV_STALE_AFTER", v, err)
		}
	}
}
