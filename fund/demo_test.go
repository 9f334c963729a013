package fund

import (
	"slices"
	"testing"
	"time"
)

// demoLatest returns the latest version of each demo document, in the
// order of their first write, and how many versions each has.
func demoLatest() ([]Document, map[string]int) {
	var order []string
	latest, versions := map[string]Document{}, map[string]int{}
	for _, d := range DemoVersions() {
		if versions[d.ID] == 0 {
			order = append(order, d.ID)
		}
		versions[d.ID]++
		latest[d.ID] = d
	}
	out := make([]Document, 0, len(order))
	for _, id := range order {
		out = append(out, latest[id])
	}
	return out, versions
}

// businessDays counts the weekdays after from up to and including to.
func businessDays(from, to Date) int {
	n := 0
	for d := from.Time().AddDate(0, 0, 1); !d.After(to.Time()); d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
			n++
		}
	}
	return n
}

// TestTheDemoTellsAFundsStory holds the demo to what a fund accountant
// checks on sight: documents whose kind matches what they hold, dated
// when they were issued and numbered in that order, titles that differ,
// calls due 10 to 15 business days after their notice and paid, money
// distributed only after it was paid in and never more capital returned
// than contributed, a recallable distribution recalled later, quarter-end
// statements for every position, and a history to show.
func TestTheDemoTellsAFundsStory(t *testing.T) {
	docs, versions := demoLatest()
	for _, d := range DemoVersions() {
		d.Normalize()
		if err := d.Validate(DefaultMaxPositions); err != nil {
			t.Errorf("%s version: %v", d.ID, err)
		}
	}
	if !slices.ContainsFunc(docs, func(d Document) bool { return versions[d.ID] > 1 && d.Kind == KindCapitalAccountStatement }) ||
		!slices.ContainsFunc(docs, func(d Document) bool { return versions[d.ID] > 1 && d.Kind == KindCapitalCallNotice }) {
		t.Errorf("versions %v: want a restated statement and a notice written twice, so that history shows", versions)
	}

	titles := map[string]string{}
	for i, d := range docs {
		if other, dup := titles[d.Title]; dup {
			t.Errorf("%s and %s are both titled %q", other, d.ID, d.Title)
		}
		titles[d.Title] = d.ID
		if i > 0 && (d.ID <= docs[i-1].ID || d.AsOf.Before(docs[i-1].AsOf)) {
			t.Errorf("%s (%s) follows %s (%s): IDs must follow the dates", d.ID, d.AsOf, docs[i-1].ID, docs[i-1].AsOf)
		}
		if len(d.Positions) != 3 || d.FundID != "FUND_A" || d.Currency != "USD" {
			t.Errorf("%s: %d positions of %s in %s, want all three of FUND_A in USD", d.ID, len(d.Positions), d.FundID, d.Currency)
		}
		for _, p := range d.Positions {
			holds := func(call, dist, unfunded, account bool) bool {
				return (p.CapitalCall != nil) == call && (p.Distribution != nil) == dist &&
					(p.UnfundedCommitment != nil) == unfunded && (p.CapitalAccount != nil) == account
			}
			switch d.Kind {
			case KindCapitalCallNotice:
				if !holds(true, false, true, false) {
					t.Errorf("%s %s: a call notice holds a call and the unfunded commitment after it, nothing else: %+v", d.ID, p.ID, p)
					continue
				}
				if days := businessDays(d.AsOf, p.CapitalCall.DueDate); days < 10 || days > 15 {
					t.Errorf("%s %s: due %s, %d business days after the notice of %s", d.ID, p.ID, p.CapitalCall.DueDate, days, d.AsOf)
				}
				if p.CapitalCall.Status != StatusCompleted {
					t.Errorf("%s %s: the call is %s, want Completed", d.ID, p.ID, p.CapitalCall.Status)
				}
			case KindDistributionNotice:
				// The unfunded commitment only beside a distribution that
				// raises it, as ILPA's 2025 CC&D template reports it.
				recallable := p.Distribution != nil && p.Distribution.Recallable != nil
				if !holds(false, true, recallable, false) {
					t.Errorf("%s %s: a distribution notice holds a distribution (and the unfunded commitment a recallable one raises): %+v", d.ID, p.ID, p)
					continue
				}
				if paid := p.Distribution.PaymentDate; !d.AsOf.Before(paid) || businessDays(d.AsOf, paid) > 10 || p.Distribution.Status != StatusCompleted {
					t.Errorf("%s %s: paid %s (%s) on a notice of %s", d.ID, p.ID, paid, p.Distribution.Status, d.AsOf)
				}
			case KindCapitalAccountStatement:
				if !holds(false, false, false, true) {
					t.Errorf("%s %s: a statement holds a capital account, nothing else: %+v", d.ID, p.ID, p)
					continue
				}
				end, start := d.AsOf.Time(), p.CapitalAccount.PeriodStart.Time()
				if end.AddDate(0, 0, 1).Day() != 1 || end.Month()%3 != 0 || start != time.Date(end.Year(), end.Month()-2, 1, 0, 0, 0, 0, time.UTC) {
					t.Errorf("%s %s: period %s to %s is not a calendar quarter", d.ID, p.ID, p.CapitalAccount.PeriodStart, d.AsOf)
				}
				if p.CapitalAccount.TotalCommitment == nil || p.CapitalAccount.EndingUnfundedCommitment == nil {
					t.Errorf("%s %s: no A.2 commitment reconciliation", d.ID, p.ID)
				}
			}
		}
	}

	// Per position, in date order: the first call is due before anything
	// is distributed, return of capital never exceeds what was paid in,
	// and a recallable distribution is followed by a call.
	type flow struct {
		date        Date
		paid, rocap Money
		recallable  Money
		commitment  *Money
	}
	byPosition := map[string][]flow{}
	quarters := map[string][]string{}
	for _, d := range docs {
		for _, p := range d.Positions {
			switch {
			case p.CapitalCall != nil:
				byPosition[p.ID] = append(byPosition[p.ID], flow{date: p.CapitalCall.DueDate, paid: p.CapitalCall.Amount, commitment: p.UnfundedCommitment.Commitment})
			case p.Distribution != nil:
				x := p.Distribution
				var rocap, recallable Money
				if x.ReturnOfCapital != nil {
					rocap = *x.ReturnOfCapital
				}
				if x.Recallable != nil {
					recallable = *x.Recallable
				}
				byPosition[p.ID] = append(byPosition[p.ID], flow{date: x.PaymentDate, rocap: rocap, recallable: recallable})
			case p.CapitalAccount != nil:
				quarters[p.ID] = append(quarters[p.ID], d.AsOf.String())
			}
		}
	}
	commitments := map[string]bool{}
	for pos, flows := range byPosition {
		slices.SortStableFunc(flows, func(a, b flow) int { return a.date.Compare(b.date) })
		if flows[0].commitment == nil || flows[0].paid.Sign() <= 0 {
			t.Errorf("%s: the first flow is not a call stating the commitment: %+v", pos, flows[0])
			continue
		}
		commitments[flows[0].commitment.String()] = true
		var paid, returned, recallable Money
		recalled := false
		for _, f := range flows {
			paid, returned, recallable = paid.Add(f.paid), returned.Add(f.rocap), recallable.Add(f.recallable)
			if returned.Cmp(paid) > 0 {
				t.Errorf("%s on %s: %s of capital returned, %s paid in", pos, f.date, returned, paid)
			}
			recalled = recalled || (recallable.Sign() > 0 && f.paid.Sign() > 0)
		}
		if recallable.Sign() <= 0 || !recalled {
			t.Errorf("%s: recallable %s, recalled by a later call %v; want a recallable distribution recalled later", pos, recallable, recalled)
		}
		if got := quarters[pos]; !slices.Equal(got, []string{"2025-09-30", "2025-12-31"}) {
			t.Errorf("%s: statements of %v, want Q3 and Q4 2025", pos, got)
		}
	}
	if len(byPosition) != 3 || len(commitments) != 3 {
		t.Errorf("%d positions with %d different commitments, want three of each", len(byPosition), len(commitments))
	}
}

func TestTheDemoRecordsAreValid(t *testing.T) {
	funds, investors := DemoRecords()
	if len(funds) == 0 || len(investors) == 0 {
		t.Fatal("the demo has no records")
	}
	for _, f := range funds {
		if err := f.Validate(); err != nil {
			t.Errorf("fund %s: %v", f.ID, err)
		}
	}
	for _, i := range investors {
		if err := i.Validate(); err != nil {
			t.Errorf("investor %s: %v", i.ID, err)
		}
	}
}
