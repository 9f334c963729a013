package api

import (
	"strconv"
	"testing"
	"time"
)

// TestTheLimiterRemembersTenThousandPrincipals drives maxRateBuckets,
// 10,000: a principal in debt followed by 9,999 other principals is still
// refused (all 10,000 remembered); followed by 10,000 others it is
// forgotten, with its debt, and its next request goes ahead.
func TestTheLimiterRemembersTenThousandPrincipals(t *testing.T) {
	if maxRateBuckets != 10_000 {
		t.Fatalf("maxRateBuckets = %d, the documented limit is 10,000", maxRateBuckets)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return at } // no refill: the clock stands still
	for _, tc := range []struct {
		others     int
		remembered bool
	}{{maxRateBuckets - 1, true}, {maxRateBuckets, false}} {
		l := newPrincipalLimiter(1, 1, now)
		if wait := l.take("indebted", 5); wait != 0 {
			t.Fatalf("the first request of a fresh principal was refused (%s)", wait)
		}
		for i := range tc.others {
			if wait := l.take("other-"+strconv.Itoa(i), 1); wait != 0 {
				t.Fatalf("the first request of principal %d was refused (%s)", i, wait)
			}
		}
		wait := l.take("indebted", 1)
		if tc.remembered && wait == 0 {
			t.Errorf("after %d other principals the principal in debt went ahead: forgotten, want remembered", tc.others)
		}
		if !tc.remembered && wait != 0 {
			t.Errorf("after %d other principals the principal in debt was refused (%s): remembered, want forgotten", tc.others, wait)
		}
	}
}

// TestARefusalIsNeverReadAsGoAhead drives the wait take reports to both
// ends: a debt no float wait can express at the lowest refill rate, and
// a debt of a fraction of a nanosecond's refill. Each is a refusal (not
// 0), the first bounded by maxRateWait.
func TestARefusalIsNeverReadAsGoAhead(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	slow := newPrincipalLimiter(1e-9, 1, now)
	slow.charge("p", 1_000_000)
	if wait := slow.take("p", 1); wait <= 0 || wait > maxRateWait {
		t.Errorf("a bucket 1,000,000 tokens in debt at 1e-9 a second waits %s, want within (0, %s]", wait, maxRateWait)
	}
	fast := newPrincipalLimiter(1e12, 1, now)
	fast.charge("p", 1)
	if got := fast.take("p", 1); got <= 0 {
		t.Errorf("an empty bucket at 1e12 a second waits %s, want a refusal", got)
	}
}
