package api_test

import (
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// TestAKnownAtBeforeTheFeedsStartIsBeforeAnythingAtTheCostOfAnOrdinaryRead
// asks the routes that take knownAt at the first instant RFC 3339 can name,
// two years after the table's first commit: each answers what it answers
// just before the feed's start (nothing was known then), in the same shape,
// and makes no more DynamoDB requests than the same read as known now.
func TestAKnownAtBeforeTheFeedsStartIsBeforeAnythingAtTheCostOfAnOrdinaryRead(t *testing.T) {
	env := fundtest.New(t)
	env.Seed(t)
	now := fundtest.Clock.AddDate(2, 0, 0)
	env.Store.Now = func() time.Time { return now }
	s := startAPI(t, env, nil)
	const year1 = "0001-01-01T00:00:00Z"
	beforeStart := fundtest.Clock.Add(-time.Hour).Format(time.RFC3339Nano)
	present := now.Add(-time.Minute).Format(time.RFC3339Nano)
	routes := []string{
		"/v1/funds/FUND_A/documents",
		"/v1/funds/FUND_A/documents?kind=capital_call_notice",
		"/v1/funds/FUND_A/positions",
		"/v1/funds/FUND_A",
		"/v1/funds",
		"/v1/investors?fundId=FUND_A",
		"/v1/investors/INVESTOR_1",
		"/v1/investors/INVESTOR_1/positions",
		"/v1/investors/INVESTOR_1/summary",
		"/v1/investors/INVESTOR_1/performance",
		"/v1/positions/POSITION_1",
		"/v1/positions/POSITION_1/capital-calls",
		"/v1/positions/POSITION_1/summary",
		"/v1/positions/POSITION_1/cashflows",
		"/v1/positions/POSITION_1/performance",
		"/v1/funds/FUND_A/performance",
	}
	ask := func(path, at string) (response, int) {
		t.Helper()
		env.Counter.Reset()
		r := s.do(t, http.MethodGet, path+sep(path)+"knownAt="+at, nil)
		return r, len(env.Counter.Ops())
	}
	for _, path := range routes {
		t.Run(path, func(t *testing.T) {
			floor, floorCost := ask(path, year1)
			before, _ := ask(path, beforeStart)
			ordinary, ordinaryCost := ask(path, present)
			if ordinary.Status != http.StatusOK {
				t.Fatalf("as known now: %d\n%s", ordinary.Status, ordinary.Body)
			}
			if floor.Status != before.Status {
				t.Fatalf("at %s: %d, before the feed's start: %d\n%s\n%s", year1, floor.Status, before.Status, floor.Body, before.Body)
			}
			if floor.Status == http.StatusOK {
				f, b := withoutBasis(floor.JSON(t)), withoutBasis(before.JSON(t))
				if !reflect.DeepEqual(f, b) {
					t.Errorf("at %s: %v\nbefore the feed's start: %v", year1, f, b)
				}
				if fb, _ := floor.JSON(t)["basis"].(map[string]any); fb == nil || fb["knownAt"] != year1 {
					t.Errorf("at %s the basis is %v", year1, floor.JSON(t)["basis"])
				}
			}
			if floorCost > ordinaryCost {
				t.Errorf("at %s: %d DynamoDB requests, as known now %d", year1, floorCost, ordinaryCost)
			}
			t.Logf("status %d, %d requests (known now: %d)", floor.Status, floorCost, ordinaryCost)
		})
	}
}

// TestConcurrentKnownAtReadsMakeNoMoreRequestsThanTheirTokens sends ten
// reads of a fund's documents as known at an instant four years back at
// once, on a bucket of ten tokens that does not refill: each would read
// the fund's events month by month (about fifty Queries), but the months
// are paid for before the first is read, so together they make no more
// DynamoDB requests than the bucket's ten tokens and the one charge that
// may take it into debt.
func TestConcurrentKnownAtReadsMakeNoMoreRequestsThanTheirTokens(t *testing.T) {
	env := fundtest.New(t)
	env.Seed(t)
	now := fundtest.Clock.AddDate(4, 0, 0)
	env.Store.Now = func() time.Time { return now }
	path := "/v1/funds/FUND_A/documents?knownAt=" + fundtest.Clock.Add(time.Minute).Format(time.RFC3339Nano)

	free := startAPI(t, env, nil)
	env.Counter.Reset()
	if r := free.do(t, http.MethodGet, path, nil); r.Status != http.StatusOK {
		t.Fatalf("one read: %d\n%s", r.Status, r.Body)
	}
	single := len(env.Counter.Ops())
	if single < 40 {
		t.Fatalf("one read made %d requests: the test needs a read of many months", single)
	}

	const burst, n = 10, 10
	tight := startAPI(t, env, func(o *api.Options) {
		o.RateLimit, o.RateBurst, o.Clock = 0.001, burst, func() time.Time { return now }
	})
	env.Counter.Reset()
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = tight.do(t, http.MethodGet, path, nil).Status
		}()
	}
	wg.Wait()
	total := len(env.Counter.Ops())
	t.Logf("%d concurrent reads (%d requests alone each): %v, %d requests", n, single, statuses, total)
	if total > burst+single {
		t.Errorf("%d reads on a bucket of %d made %d DynamoDB requests: more than the bucket and one read's charge (%d)", n, burst, total, burst+single)
	}
	for _, st := range statuses {
		if st != http.StatusOK && st != http.StatusTooManyRequests {
			t.Errorf("a read answered %d", st)
		}
	}
}

// TestAKnownAtReadGivesBackWhatItPaidForAndDidNotRead reads a fund that
// has no record and a document committed four years after the table's
// first: the read pays for the fund's feed month by month back to the
// feed's start (49 months) before its first Query, finds the document in
// the first month read, and gives back the other 48, so ten such reads in
// a row fit in a bucket of 60 that does not refill.
func TestAKnownAtReadGivesBackWhatItPaidForAndDidNotRead(t *testing.T) {
	env := fundtest.New(t)
	env.Seed(t)
	now := fundtest.Clock.AddDate(4, 0, 0)
	env.Store.Now = func() time.Time { return now.Add(-2 * time.Minute) }
	if r := startAPI(t, env, nil).do(t, http.MethodPut, "/v1/documents/NOREC1", map[string]any{
		"fundId": "FUND_N", "kind": "capital_call_notice", "title": "N", "asOf": "2029-12-31", "currency": "USD",
		"positions": []any{map[string]any{"positionId": "POS_N1", "investorId": "INV_N1",
			"capitalCall": map[string]any{"amount": "10.00", "status": "pending", "dueDate": "2030-01-31"}}},
	}); r.Status != http.StatusCreated {
		t.Fatalf("PUT: %d\n%s", r.Status, r.Body)
	}
	env.Store.Now = func() time.Time { return now }
	s := startAPI(t, env, func(o *api.Options) {
		o.RateLimit, o.RateBurst, o.Clock = 0.001, 60, func() time.Time { return now }
	})
	path := "/v1/funds/FUND_N?knownAt=" + now.Add(-time.Minute).Format(time.RFC3339Nano)
	for i := range 10 {
		env.Counter.Reset()
		if r := s.do(t, http.MethodGet, path, nil); r.Status != http.StatusOK {
			t.Fatalf("read %d of 10 (%d requests each): %d\n%s", i+1, len(env.Counter.Ops()), r.Status, r.Body)
		}
	}
}
