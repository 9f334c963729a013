package api

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/gin-gonic/gin"
)

// Fan-out routes read one position (a Query or more) for each position they
// pool: a fund's performance, an investor's summary and performance, a
// document's reconciliation. Each is charged to its principal's bucket by
// those reads (ratelimit.go), and at most FanoutConcurrency of them run in
// a process at once. A route's charge:
//
//   - every /v1 request: 1, when its token is verified (its first read);
//   - an investor's summary: up front, before any read, 2 more and one per
//     position of a full page (limit): at most two Queries list the page's
//     positions, one BatchGet reads their names, one Query each reads the
//     positions; once the page is listed, the positions it does not hold
//     are given back, so a page costs 3 plus its positions;
//   - an investor's performance: as the summary, without the names: 2 plus
//     the page's positions (limit + 2 up front);
//   - a document's reconciliation: the head's GetItem and the Query of the
//     page's statements, then one per statement: 2 plus the page's
//     statements (limit + 2 up front);
//   - a fund's performance, which is not paged: 1 for the fund's registry
//     (1 more for each further Query of it), then, once the registry is
//     read and before any position is, one per registered position.
//
// A position whose documents were restated with a later date costs up to
// two Queries more per such document (package positions' reported), which
// no route charges, as none charges the single position routes for them.

// MaxFanoutPage is the most positions (or statements) one page of a
// fan-out route holds, and its page size when limit is absent: it bounds a
// page's reads to about 50 Queries, and its charge up front (limit + 3) to
// a quarter of the default burst, so a portal loading an investor's
// summary and performance at once is never refused.
const MaxFanoutPage = 50

// Reads a fan-out route makes besides one per position; a page's are
// charged up front with its limit (see above).
const (
	investorSummaryReads     = 3 // two Queries of the registry, one BatchGet of names
	investorPerformanceReads = 2 // two Queries of the registry
	reconciliationReads      = 2 // the document's head, the page of statements
	// A fund's performance is not paged: the request's token pays for the
	// registry's first Query, and its positions are charged once it is read.
	fundPerformanceReads = 1
)

// defaultFanoutConcurrency is Options.FanoutConcurrency when zero: twice
// the processors Go uses, so the position reads of the fan-outs in flight
// (8 each at a time, mostly waiting on DynamoDB) keep the processors busy
// without queueing, and at least 4, so a one-processor container still
// serves a portal's summary and performance at once.
func defaultFanoutConcurrency() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// fanoutSlots bounds the fan-outs a process computes at once.
type fanoutSlots chan struct{}

func (f fanoutSlots) tryEnter() bool {
	select {
	case f <- struct{}{}:
		return true
	default:
		return false
	}
}

func (f fanoutSlots) leave() { <-f }

// fanoutPage is page for a fan-out route: at most MaxFanoutPage a page, and
// MaxFanoutPage when limit is absent.
func (p *params) fanoutPage(query string) page {
	return p.pageOf("cursor", query, min(p.s.defaultLimit, MaxFanoutPage), min(p.s.maxLimit, MaxFanoutPage))
}

// fanout admits a fan-out computation, deciding before any read: it charges
// the principal up front for the route's reads besides its positions (reads,
// less the one the request paid for when its token was verified) and for
// held positions (a full page's), then takes one of the process's fan-out
// slots. When either is refused it answers 429 (the principal's rate) or 503
// (the process's slots, every principal's capacity, which a retry a moment
// later or on another instance finds) and returns ok false, having read
// nothing and charged nothing more. Otherwise it returns the context the
// computation reads with, which carries the request's tab, and done, to call
// once the computation is over.
func (s *server) fanout(c *gin.Context, reads, held int) (ctx context.Context, done func(), ok bool) {
	ctx = c.Request.Context()
	upfront := max(reads-1, 0) + held
	var t *tab
	if s.limiter != nil {
		t = &tab{l: s.limiter, key: principal(c).scope()}
		if upfront > 0 {
			if wait := s.limiter.take(t.key, upfront); wait > 0 {
				writeChargeError(c, &rateLimitedError{wait: wait})
				return nil, nil, false
			}
			t.held = held
		}
		ctx = context.WithValue(ctx, tabKey{}, t)
	}
	if !s.fanouts.tryEnter() {
		if t != nil {
			s.limiter.refund(t.key, upfront)
		}
		writeError(c, &fund.Error{Code: fund.EUNAVAILABLE, Message: "the server is computing as many fan-out reads as it may at once; retry after the time in Retry-After"})
		return nil, nil, false
	}
	return ctx, func() {
		s.fanouts.leave()
		t.close()
	}, true
}

// writeChargeError is writeError that adds Retry-After to a refused charge.
func writeChargeError(c *gin.Context, err error) {
	var rl *rateLimitedError
	if errors.As(err, &rl) {
		c.Header("Retry-After", retryAfter(rl.wait))
	}
	writeError(c, err)
}

type tabKey struct{}

// tab is one fan-out request's account with its principal's bucket: the
// positions charged up front and not listed yet (held), those paid for,
// and those its listings found, which are paid for before the first of
// them is read.
type tab struct {
	l   *principalLimiter
	key string

	mu     sync.Mutex
	held   int
	paid   int
	listed int
	err    error // a refused charge: every later read is refused too
}

func tabOf(ctx context.Context) *tab {
	t, _ := ctx.Value(tabKey{}).(*tab)
	return t
}

// listedPage records a listing of n positions: the held positions it does
// not hold are given back.
func (t *tab) listedPage(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held > 0 {
		used := min(n, t.held)
		t.l.refund(t.key, t.held-used)
		t.paid += used
		t.held = 0
	}
	t.listed += n
}

// anotherListing charges a listing Query beyond the first, whatever the
// bucket holds: the listing reads on until the positions are known.
func (t *tab) anotherListing() { t.l.charge(t.key, 1) }

// beforeRead pays for the listed positions not paid for yet, before the
// first of them is read; it returns a *rateLimitedError, for this read and
// every later one, if the bucket is empty.
func (t *tab) beforeRead() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil && t.listed > t.paid {
		if wait := t.l.take(t.key, t.listed-t.paid); wait > 0 {
			t.err = &rateLimitedError{wait: wait}
		} else {
			t.paid = t.listed
		}
	}
	return t.err
}

// close gives back held positions that no listing came to use (the request
// was refused or failed first). t may be nil: no rate limit.
func (t *tab) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.l.refund(t.key, t.held)
	t.held = 0
}

// chargedReader is the store as the fan-out computations of package
// positions read it: the listings (a fund's registry, an investor's
// positions, a document's statements) and the position reads go through
// the tab of the request's context, when it carries one.
type chargedReader struct{ positions.Reader }

func (r chargedReader) FundPositions(ctx context.Context, fundID string, limit int, start []byte) ([]fund.Registered, []byte, error) {
	t := tabOf(ctx)
	if t != nil && start != nil {
		t.anotherListing()
	}
	page, next, err := r.Reader.FundPositions(ctx, fundID, limit, start)
	if t != nil && err == nil {
		t.listedPage(len(page))
	}
	return page, next, err
}

func (r chargedReader) InvestorPositions(ctx context.Context, v fund.Viewer, inv string, limit int, start []byte) ([]fund.Registered, []byte, error) {
	page, next, err := r.Reader.InvestorPositions(ctx, v, inv, limit, start)
	if t := tabOf(ctx); t != nil && err == nil {
		t.listedPage(len(page))
	}
	return page, next, err
}

func (r chargedReader) DocumentStatements(ctx context.Context, doc string, limit int, start []byte) ([]fund.PositionItem, []byte, error) {
	page, next, err := r.Reader.DocumentStatements(ctx, doc, limit, start)
	if t := tabOf(ctx); t != nil && err == nil {
		t.listedPage(len(page))
	}
	return page, next, err
}

func (r chargedReader) AllPositionItems(ctx context.Context, pos string) ([]fund.PositionItem, error) {
	if t := tabOf(ctx); t != nil {
		if err := t.beforeRead(); err != nil {
			return nil, err
		}
	}
	return r.Reader.AllPositionItems(ctx, pos)
}
