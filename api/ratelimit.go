package api

import (
	"crypto/sha256"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/gin-gonic/gin"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// codeRateLimited is the problem code of a request over its principal's
// rate limit: 429 with Retry-After.
const codeRateLimited = "rate_limited"

// The status table lives in problem.go; this code is registered from here,
// beside the only place that answers it.
func init() { statusOf[codeRateLimited] = http.StatusTooManyRequests }

// maxRateBuckets bounds the limiter's memory: at most this many principals
// keep a bucket (a few hundred bytes each), the least recently seen giving
// way to a new one. A bucket idle for burst/rate seconds is full again, so
// dropping it changes nothing; only more than maxRateBuckets principals
// active at once would get fresh buckets, and principals are bounded by the
// tokens the issuer grants.
const maxRateBuckets = 10_000

// principalLimiter is a token bucket (golang.org/x/time/rate) for each
// authenticated principal. The buckets are this process's: behind a load
// balancer spreading requests over N instances a principal may make up to N
// times the rate. That is enough for what the limit is for, keeping one
// client from taking a process's capacity from the others; it guards no
// money and no data, which DynamoDB's conditional writes and the token's
// scope do, across every process.
type principalLimiter struct {
	limit   rate.Limit
	burst   int
	buckets *lru.Cache[[sha256.Size]byte, *rate.Limiter]
}

// newPrincipalLimiter returns a limiter of perSecond requests a second on
// average and burst at once for each principal, or nil (no limit) when
// perSecond is not positive. A burst below 1 is 1.
func newPrincipalLimiter(perSecond float64, burst int) *principalLimiter {
	if !(perSecond > 0) { // also NaN
		return nil
	}
	buckets, err := lru.New[[sha256.Size]byte, *rate.Limiter](maxRateBuckets)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &principalLimiter{limit: rate.Limit(perSecond), burst: max(burst, 1), buckets: buckets}
}

// take spends one request of the principal whose scope is key at now. It
// returns zero if the request may go ahead, and otherwise how long until it
// could, having spent nothing.
func (l *principalLimiter) take(key string, now time.Time) time.Duration {
	// Hashed, so a bucket's key is small whatever the size of a scope (an
	// admin's list of funds is as long as the token allows).
	k := sha256.Sum256([]byte(key))
	b, ok := l.buckets.Get(k)
	if !ok {
		b = rate.NewLimiter(l.limit, l.burst)
		if prev, found, _ := l.buckets.PeekOrAdd(k, b); found {
			b = prev // another request of the principal made it first
		}
	}
	r := b.ReserveN(now, 1)
	if !r.OK() { // cannot happen with a burst of at least 1
		return time.Second
	}
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return wait
	}
	return 0
}

// rateLimit answers 429 (problem+json, with Retry-After in whole seconds,
// at least 1) to a principal over its rate. It runs right after
// authenticate, so a refused request costs no read and no body decoding.
func (s *server) rateLimit(c *gin.Context) {
	if s.limiter == nil {
		c.Next()
		return
	}
	wait := s.limiter.take(principal(c).scope(), time.Now())
	if wait <= 0 {
		c.Next()
		return
	}
	c.Header("Retry-After", strconv.Itoa(int(max(1, math.Ceil(wait.Seconds())))))
	writeError(c, &fund.Error{Code: codeRateLimited, Message: "too many requests for this token; retry after the time in Retry-After"})
}
