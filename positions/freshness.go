package positions

import (
	"fmt"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// A NAV's age: the days from the period end of the statement it starts
// from to the date it is taken at, and whether a newer statement was due by
// then. A stale NAV is still answered and counted; the answer says it is
// stale so that a NAV rolled forward from a year-old statement does not
// pass for a current one. See docs/analytics.md, "NAV age".

// Freshness is how long a NAV stays fresh after its statement's period
// end: Months calendar months, then Days days. A NAV taken on a date after
// the last fresh one (LastFresh) is stale.
type Freshness struct {
	Months, Days int
}

// DefaultFreshness is one quarter (three calendar months) plus 45 days:
// the next quarter's statement, due 45 days after that quarter's end, is
// late. A Q3 statement (period end 2025-09-30) is fresh through
// 2026-02-14 and stale from 2026-02-15.
var DefaultFreshness = Freshness{Months: 3, Days: 45}

// LastFresh is the last date on which a NAV from a statement whose period
// ends on end is fresh: end plus f.Months calendar months, then f.Days days.
// A month is counted on the calendar: the same day of the month f.Months
// later, or that month's last day when end is the last day of its month
// (as quarter ends are) or the day does not exist there; so 2025-09-30
// plus three months is 2025-12-31 and 2025-11-30 plus three months is
// 2026-02-28. It returns the zero date when the result is past year 9999.
func (f Freshness) LastFresh(end fund.Date) fund.Date {
	t := end.Time()
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(f.Months), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	if d > last || t.AddDate(0, 0, 1).Day() == 1 {
		d = last
	}
	out, err := fund.ParseDate(time.Date(first.Year(), first.Month(), d, 0, 0, 0, 0, time.UTC).AddDate(0, 0, f.Days).Format(time.DateOnly))
	if err != nil {
		return fund.Date{}
	}
	return out
}

// String is f as an ISO 8601 duration, such as P3M45D.
func (f Freshness) String() string {
	s := "P"
	if f.Months != 0 {
		s += fmt.Sprintf("%dM", f.Months)
	}
	if f.Days != 0 || f.Months == 0 {
		s += fmt.Sprintf("%dD", f.Days)
	}
	return s
}

// words is f as the conventions state it: "3 calendar months, then 45
// days".
func (f Freshness) words() string {
	var parts []string
	switch f.Months {
	case 0:
	case 1:
		parts = append(parts, "1 calendar month")
	default:
		parts = append(parts, fmt.Sprintf("%d calendar months", f.Months))
	}
	switch {
	case f.Days == 1:
		parts = append(parts, "1 day")
	case f.Days != 0 || f.Months == 0:
		parts = append(parts, fmt.Sprintf("%d days", f.Days))
	}
	return strings.Join(parts, ", then ")
}

// Convention states how a NAV's age is counted and when it is stale, with
// f's bound and an example worked out with it: the text of an answer's
// conventions.navAge.
func (f Freshness) Convention() string {
	example := fund.MustDate("2025-09-30")
	return fmt.Sprintf("ageDays is the number of days from the period end of the statement the NAV starts from (its document's asOf) to asOf. "+
		"The NAV is stale when asOf is after staleAfter, the period end plus %s (%s): a calendar month is the same day of the month a month later, "+
		"or that month's last day when the period end is the last day of its month (as every quarter end is) or the day does not exist there, "+
		"and a quarter is 3 such months (a period end of %s is fresh through %s, stale from the day after). "+
		"A stale NAV is still answered and counted in the multiples and the IRR, whose status is then stale_nav; pooled answers give the oldest NAV's ageDays, the earliest staleAfter, and the positions whose NAV is stale.",
		f.words(), f, example, f.LastFresh(example))
}

// ageOf is the age on asOf of a NAV from the statement st, judged by f.
func ageOf(st *fund.PositionItem, asOf fund.Date, f Freshness) *NAVAge {
	a := &NAVAge{Days: int(asOf.Time().Sub(st.AsOf.Time()).Hours() / 24), StaleAfter: f.LastFresh(st.AsOf)}
	a.Stale = !a.StaleAfter.IsZero() && asOf.Compare(a.StaleAfter) > 0
	return a
}
