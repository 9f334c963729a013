package api

import (
	"crypto/sha256"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/gin-gonic/gin"
	lru "github.com/hashicorp/golang-lru/v2"
)

// codeRateLimited is the problem code of a request over its principal's
// rate limit: 429 with Retry-After.
const codeRateLimited = "rate_limited"

// The status table lives in problem.go; this code is registered from here,
// beside the only place that answers it.
func init() { statusOf[codeRateLimited] = http.StatusTooManyRequests }

// maxRateBuckets bounds the limiter's memory: at most this many principals
// keep a bucket (a few hundred bytes each), the least recently seen giving
// way to a new one. A bucket idle until it is full again is the same as a
// fresh one, so dropping it changes nothing; a bucket dropped while in debt
// is forgiven its debt, which takes more than maxRateBuckets principals
// active at once, and principals are bounded by the tokens the issuer grants.
const maxRateBuckets = 10_000

// principalLimiter is a token bucket for each authenticated principal,
// charged by the work a request causes (charge.go): one token a DynamoDB
// request, or a position read. A charge goes ahead while the bucket holds at
// least one token, and may take it into debt, which the refill pays off
// before the principal's next request goes ahead: so a charge larger than
// the burst (a fund's performance pooling 2,000 positions) is possible, and
// costs its principal the time the refill takes to pay for it.
//
// The buckets are this process's: behind a load balancer spreading requests
// over N instances a principal may make up to N times the rate. That is
// enough for what the limit is for, keeping one client from taking a
// process's capacity from the others; it guards no money and no data, which
// DynamoDB's conditional writes and the token's scope do, across every
// process.
//
// The bucket is written here rather than taken from golang.org/x/time/rate,
// which refuses a charge larger than its burst and cannot give part of a
// charge back (a page held for limit positions that lists fewer).
type principalLimiter struct {
	perSecond float64
	burst     float64
	now       func() time.Time
	buckets   *lru.Cache[[sha256.Size]byte, *bucket]
}

// bucket is one principal's tokens at an instant; tokens is negative while
// the principal is in debt.
type bucket struct {
	mu     sync.Mutex
	tokens float64
	at     time.Time
}

// newPrincipalLimiter returns a limiter refilling perSecond tokens a second
// up to burst for each principal, reading the time from now (time.Now when
// nil), or nil (no limit) when perSecond is not positive. A burst below 1
// is 1.
func newPrincipalLimiter(perSecond float64, burst int, now func() time.Time) *principalLimiter {
	if !(perSecond > 0) { // also NaN
		return nil
	}
	buckets, err := lru.New[[sha256.Size]byte, *bucket](maxRateBuckets)
	if err != nil {
		panic(err) // only for a size below 1
	}
	if now == nil {
		now = time.Now
	}
	return &principalLimiter{perSecond: perSecond, burst: float64(max(burst, 1)), now: now, buckets: buckets}
}

// bucketOf returns the bucket of the principal whose scope is key, full
// when new.
func (l *principalLimiter) bucketOf(key string, now time.Time) *bucket {
	// Hashed, so a bucket's key is small whatever the size of a scope (an
	// admin's list of funds is as long as the token allows).
	k := sha256.Sum256([]byte(key))
	b, ok := l.buckets.Get(k)
	if !ok {
		b = &bucket{tokens: l.burst, at: now}
		if prev, found, _ := l.buckets.PeekOrAdd(k, b); found {
			b = prev // another request of the principal made it first
		}
	}
	return b
}

// refill adds what the time since b.at earned, up to the burst. The caller
// holds b.mu.
func (l *principalLimiter) refill(b *bucket, now time.Time) {
	if now.After(b.at) {
		b.tokens = min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.perSecond)
		b.at = now
	}
}

// take charges n tokens to the principal whose scope is key. It returns zero
// if the charge went ahead (the bucket held at least one token; it may now
// be in debt), and otherwise how long until it could, having charged
// nothing.
func (l *principalLimiter) take(key string, n int) time.Duration {
	now := l.now()
	b := l.bucketOf(key, now)
	b.mu.Lock()
	defer b.mu.Unlock()
	l.refill(b, now)
	if b.tokens < 1 {
		// At least a nanosecond, so a refusal never reads as 0 (go ahead),
		// and at most maxRateWait, which no float overflows.
		wait := (1 - b.tokens) / l.perSecond * float64(time.Second)
		return time.Duration(min(max(wait, 1), float64(maxRateWait)))
	}
	b.tokens -= float64(n)
	return 0
}

// charge charges n tokens whatever the bucket holds: reads already made.
func (l *principalLimiter) charge(key string, n int) {
	now := l.now()
	b := l.bucketOf(key, now)
	b.mu.Lock()
	defer b.mu.Unlock()
	l.refill(b, now)
	b.tokens -= float64(n)
}

// refund gives back n tokens charged for reads that will not be made, up to
// the burst.
func (l *principalLimiter) refund(key string, n int) {
	if n <= 0 {
		return
	}
	now := l.now()
	b := l.bucketOf(key, now)
	b.mu.Lock()
	defer b.mu.Unlock()
	l.refill(b, now)
	b.tokens = min(l.burst, b.tokens+float64(n))
}

// maxRateWait bounds the wait take reports: a bucket deep in debt at a
// low refill rate is told to come back in a day at most.
const maxRateWait = 24 * time.Hour

// rateLimitedError is a charge refused: 429 with Retry-After after wait.
type rateLimitedError struct{ wait time.Duration }

func (e *rateLimitedError) Error() string { return e.Unwrap().Error() }

func (e *rateLimitedError) Unwrap() error {
	return &fund.Error{Code: codeRateLimited, Message: "too many requests for this token; retry after the time in Retry-After"}
}

// retryAfter is the Retry-After of wait: whole seconds, at least 1.
func retryAfter(wait time.Duration) string {
	return strconv.Itoa(int(max(1, math.Ceil(wait.Seconds()))))
}

// rateLimit charges each /v1 request one token, for its first read, and
// answers 429 (problem+json, with Retry-After in whole seconds, at least 1)
// to a principal whose bucket is empty. It runs right after authenticate,
// so a refused request costs no read and no body decoding. A fan-out route
// charges the rest of its reads in its handler (charge.go).
func (s *server) rateLimit(c *gin.Context) {
	if s.limiter == nil {
		c.Next()
		return
	}
	if wait := s.limiter.take(principal(c).scope(), 1); wait > 0 {
		writeChargeError(c, &rateLimitedError{wait: wait})
		return
	}
	c.Next()
}
