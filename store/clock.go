package store

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The table's clock. Commit instants (the change index, the event feed),
// the feed's watermark and the export's high-water marks are compared
// across processes: a commit stamped by a clock that runs behind the
// exporter's by more than the settle margin would be indexed below a
// high-water mark already published, and no incremental export would read
// it. So a Store stamps by DynamoDB's clock rather than its machine's: the
// Date header of every response DynamoDB sends, read by a middleware of
// the client NewDB makes, bounds the offset of the machine's clock from
// DynamoDB's, and Store.Now (TableClock) corrects the machine's clock by
// the least offset those bounds allow. A clock that agrees with DynamoDB's
// to within what they can tell (about a second and a round trip) is left
// as it is; one that does not is brought to within that of DynamoDB's.
// docs/commit-protocol.md states the convention. (The AWS SDK measures the
// same skew, but only to sign requests again, and keeps it to itself.)

// clockWindow is how long measurements are combined: after it, the bounds
// start again from the latest, so that a machine clock that was stepped
// (by NTP, or a virtual machine resumed) is followed.
const clockWindow = 10 * time.Minute

// tableClock bounds the offset of a machine clock from DynamoDB's.
type tableClock struct {
	local func() time.Time // the machine's clock, time.Now

	mu     sync.Mutex
	lo, hi time.Duration // DynamoDB's clock less the local one lies in [lo, hi]
	since  time.Time     // the local instant the bounds were started from
	known  bool
}

func newTableClock() *tableClock { return &tableClock{local: time.Now} }

// observe combines one response: sent and received are the local instants
// the request left and its answer arrived, date its Date header, DynamoDB's
// clock truncated to the second at some moment in between.
func (c *tableClock) observe(sent, received, date time.Time) {
	lo, hi := date.Sub(received), date.Add(time.Second).Sub(sent)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known || received.Sub(c.since) > clockWindow || lo > c.hi || hi < c.lo {
		// The first, a stale or a contradicting measurement: the local
		// clock may have been stepped since the others.
		c.lo, c.hi, c.since, c.known = lo, hi, received, true
		return
	}
	c.lo, c.hi = max(c.lo, lo), min(c.hi, hi)
}

// correction is what to add to a reading of a clock that reads shift less
// than the measured one: the offset within the bounds closest to zero,
// zero when the bounds allow it or before any measurement.
func (c *tableClock) correction(shift time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.known:
		return 0
	case c.lo+shift > 0:
		return c.lo + shift
	case c.hi+shift < 0:
		return c.hi + shift
	}
	return 0
}

// measure is the client middleware that observes every response,
// each attempt of a request on its own.
func (c *tableClock) measure(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("fundsvcTableClock",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			sent := c.local()
			out, md, err := next.HandleDeserialize(ctx, in)
			received := c.local()
			if res, ok := out.RawResponse.(*smithyhttp.Response); ok && res != nil && res.Response != nil {
				if date, perr := http.ParseTime(res.Header.Get("Date")); perr == nil {
					c.observe(sent, received, date)
				}
			}
			return out, md, err
		}), middleware.After)
}

// tableClock is the clock of the client NewDB made for s, nil for another
// client.
func (s *Store) tableClock() *tableClock {
	if mc, ok := s.db.Client().(meteredClient); ok {
		return mc.clock
	}
	return nil
}

// TableClock returns the clock local corrected to DynamoDB's, in UTC
// milliseconds: NewStore's Now is TableClock(time.Now). local is the
// machine's clock, or in a test a clock that runs apart from it by a
// constant (a machine clock set wrong), which is corrected the same way.
// Until the Store's client has had an answer from DynamoDB, local is not
// corrected; every commit reads before it writes.
func (s *Store) TableClock(local func() time.Time) func() time.Time {
	c := s.tableClock()
	return func() time.Time {
		t := local()
		if c != nil {
			t = t.Add(c.correction(c.local().Sub(t)))
		}
		return t.UTC().Truncate(time.Millisecond)
	}
}
