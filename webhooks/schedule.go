package webhooks

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultSchedule is how long to wait before each attempt after the first
// failed one: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h,
// 20 h and 24 h, about three days in all (Svix's schedule, which Standard
// Webhooks suggests).
var DefaultSchedule = []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// maxRetryAfter bounds how long a Retry-After may postpone an attempt.
const maxRetryAfter = 24 * time.Hour

// nextDelay is how long to wait after the failed attempt number failed
// (1-based), or false when the schedule has run out. The scheduled wait
// gets up to 10% of jitter, so endpoints that failed together do not retry
// in lockstep; a longer Retry-After is honoured (up to a day).
func nextDelay(schedule []time.Duration, failed int, retryAfter time.Duration, jitter func() float64) (time.Duration, bool) {
	if failed >= len(schedule) {
		return 0, false
	}
	d := schedule[failed]
	d += time.Duration(float64(d) * 0.1 * jitter())
	if retryAfter > d {
		d = min(retryAfter, maxRetryAfter)
	}
	return d, true
}

func defaultJitter() float64 { return rand.Float64() }

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
