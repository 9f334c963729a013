package store

import (
	"testing"
	"time"
)

// TestTableClockBoundsTheOffset feeds the clock measurements by hand: the
// Date of a response (DynamoDB's clock truncated to the second, read at a
// moment between the request's departure and its answer) bounds DynamoDB's
// clock less the local one, and the correction is the bound nearest zero.
func TestTableClockBoundsTheOffset(t *testing.T) {
	base := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	type sample struct{ sent, received, date time.Time }
	// at is a sample of a local clock that reads offset less than
	// DynamoDB's: sent at base+s (DynamoDB's clock), answered rtt later,
	// DynamoDB's clock read half way.
	at := func(offset, s, rtt time.Duration) sample {
		server := base.Add(s + rtt/2)
		return sample{base.Add(s - offset), base.Add(s + rtt - offset), server.Truncate(time.Second)}
	}
	for _, tc := range []struct {
		name    string
		samples []sample
		shift   time.Duration
		want    time.Duration // the correction
		within  time.Duration // of want
	}{
		{name: "no measurement corrects nothing", want: 0},
		{name: "a clock that agrees is left as it is",
			samples: []sample{at(0, 300*ms, 20*ms), at(0, 1900*ms, 20*ms)}, want: 0},
		{name: "a clock ten minutes behind is brought to within the round trip and the Date's second",
			samples: []sample{at(10*time.Minute, 300*ms, 20*ms)}, want: 10 * time.Minute, within: time.Second + 20*ms},
		{name: "measurements on both sides of a second's boundary narrow the bounds to a few round trips",
			samples: []sample{at(10*time.Minute, 10*ms, 20*ms), at(10*time.Minute, 985*ms, 20*ms), at(10*time.Minute, 2400*ms, 20*ms)},
			want:    10 * time.Minute, within: 50 * ms},
		{name: "a clock five minutes ahead is brought back",
			samples: []sample{at(-5*time.Minute, 10*ms, 20*ms), at(-5*time.Minute, 985*ms, 20*ms)}, want: -5 * time.Minute, within: 50 * ms},
		{name: "a local clock that was stepped is followed from its next measurement",
			samples: []sample{at(10*time.Minute, 10*ms, 20*ms), at(10*time.Minute, 985*ms, 20*ms), at(0, 1500*ms, 20*ms)}, want: 0},
		{name: "a clock that reads shift less than the measured one is corrected by shift more",
			samples: []sample{at(0, 10*ms, 20*ms), at(0, 985*ms, 20*ms)}, shift: 3 * time.Minute, want: 3 * time.Minute, within: 50 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTableClock()
			for _, s := range tc.samples {
				c.observe(s.sent, s.received, s.date)
			}
			got := c.correction(tc.shift)
			if d := got - tc.want; d < -tc.within || d > tc.within {
				t.Errorf("correction %s, want %s within %s (bounds [%s, %s])", got, tc.want, tc.within, c.lo, c.hi)
			}
		})
	}

	t.Run("measurements older than the window are let go", func(t *testing.T) {
		c := newTableClock()
		s := at(10*time.Minute, 10*ms, 20*ms)
		c.observe(s.sent, s.received, s.date)
		later := at(0, clockWindow+time.Minute, 20*ms)
		c.observe(later.sent, later.received, later.date)
		if got := c.correction(0); got != 0 {
			t.Errorf("correction %s after the clock was set right, want 0", got)
		}
	})
}
