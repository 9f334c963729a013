// Package api is fundsvc's HTTP interface: every route, its handlers,
// problem+json errors, signed pagination cursors and the OpenAPI document.
// Handlers are grouped by resource (documents.go, funds.go, investors.go,
// positions.go) and read their input through one parameter parser
// (params.go). They read documents through the store as the caller's
// viewer (store.View), which answers another fund's document as not found;
// they know nothing of DynamoDB.
package api

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/imports"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/webhooks"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// Options are the server's dependencies and limits.
type Options struct {
	Documents *store.Store
	// Positions answers the single position routes; the fan-out routes
	// read Documents through package positions of their own, so that each
	// read is charged to the caller's rate limit (charge.go).
	Positions    *positions.Analytics
	Logger       *slog.Logger
	CursorKey    []byte // seals cursors; random when empty (cursors then die with the process); serve passes the table's (store.CursorKey)
	MaxBodyBytes int64
	DefaultLimit int
	MaxLimit     int
	// RequestTimeout bounds a read's work, WriteTimeout a write's (PUT,
	// POST, PATCH, DELETE): restating a document of thousands of positions
	// takes far longer than reading one. Zero means no deadline.
	RequestTimeout, WriteTimeout time.Duration
	// Verifier checks bearer tokens; every /v1 route requires one.
	Verifier *Verifier
	// PublicMetrics and PublicOpenAPI leave /metrics and /openapi.json open;
	// otherwise /openapi.json needs a valid token (any role) and /metrics
	// an admin token of every fund (metricsAccess). /livez and /readyz are
	// always open.
	PublicMetrics, PublicOpenAPI bool
	// Metrics are the series the server counts and /metrics serves; a
	// fresh set when nil. serve passes its own to serve them on the metrics
	// listener too.
	Metrics *Metrics
	// IdempotencyLease is how long a claimed Idempotency-Key stays locked
	// if its request never finishes (its process died); IdempotencyTTL how
	// long a stored response is replayed. Defaults: the longer of the
	// request and write timeouts (at least a minute) plus 10s, and 24h.
	IdempotencyLease, IdempotencyTTL time.Duration
	// TrustedProxies are the proxies whose X-Forwarded-For is believed for
	// the client address in logs, and whose X-Forwarded-Proto for the
	// scheme of the server /openapi.json names (requestServer); none by
	// default.
	TrustedProxies []string
	// RateLimit is how many tokens a second each principal's bucket is
	// refilled with, RateBurst how many it holds; a request is charged one
	// token a DynamoDB request or position it reads (charge.go). Zero
	// RateLimit means no limit. The buckets are this process's own (see
	// ratelimit.go), on Clock's time (time.Now when nil).
	RateLimit float64
	RateBurst int
	Clock     func() time.Time
	// FanoutConcurrency bounds the fan-out reads (fund and investor
	// performance, investor summaries, reconciliation pages) the process
	// computes at once; beyond, 503. Zero: twice GOMAXPROCS, at least 4.
	FanoutConcurrency int
	// ItemMemoBytes bounds the position read's memo of its answers to
	// items (itemanswers.go): DefaultItemMemoBytes when zero, none when
	// negative.
	ItemMemoBytes int64
	// MaxBodyBytesInFlight bounds the bytes of write bodies the process
	// reads or holds at once (holdBody); zero means no bound.
	MaxBodyBytesInFlight int64
	// MaxFundPerformancePositions bounds the positions one fund's
	// performance pools (DefaultMaxFundPerformancePositions when zero).
	MaxFundPerformancePositions int
	// WebhookSealer seals webhook signing secrets; without it the webhook
	// routes answer 503. WebhookPolicy decides which URLs are accepted.
	WebhookSealer *webhooks.Sealer
	WebhookPolicy webhooks.Policy
	// Collectors are more metrics /metrics serves (webhook delivery's).
	Collectors []prometheus.Collector
	// Draining, when set and true, makes /readyz answer 503: the process is
	// shutting down and finishing the requests it has.
	Draining func() bool
	// ImportLimits bound a file of POST /v1/imports (imports.DefaultLimits
	// for a zero field); its bytes never exceed MaxBodyBytes, which is
	// their limit when zero.
	ImportLimits imports.Limits
}

type server struct {
	docs         *store.Store
	positions    *positions.Analytics // reads charged through a request's tab (charge.go)
	log          *slog.Logger
	cursors      cursorCodec
	maxBody      int64
	defaultLimit int
	maxLimit     int
	timeout      time.Duration // of a read
	writeTimeout time.Duration
	metrics      *Metrics
	verifier     *Verifier
	opts         Options
	idemLease    time.Duration
	idemTTL      time.Duration
	limiter      *principalLimiter // nil: no rate limit
	fanouts      fanoutSlots       // the fan-outs computing, at most FanoutConcurrency
	maxPositions int               // of a document, counted while its body is decoded; 0: no limit
	maxPooled    int               // positions one fund performance pools
	bodies       *bodyBudget       // of the writes in flight
	itemAnswers  *itemAnswers      // the position read's answers to items (itemanswers.go)
}

// NewServer returns the HTTP handler of the whole API.
func NewServer(o Options) http.Handler {
	if len(o.CursorKey) == 0 {
		o.CursorKey = make([]byte, 32)
		_, _ = rand.Read(o.CursorKey)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &server{
		docs: o.Documents, log: o.Logger, cursors: cursorCodec{key: o.CursorKey},
		maxBody: o.MaxBodyBytes, defaultLimit: o.DefaultLimit, maxLimit: o.MaxLimit, timeout: o.RequestTimeout,
		writeTimeout: o.WriteTimeout,
		metrics:      o.Metrics, verifier: o.Verifier, opts: o,
		idemLease: o.IdempotencyLease, idemTTL: o.IdempotencyTTL,
		limiter:     newPrincipalLimiter(o.RateLimit, o.RateBurst, o.Clock),
		fanouts:     make(fanoutSlots, cmp.Or(max(o.FanoutConcurrency, 0), defaultFanoutConcurrency())),
		bodies:      &bodyBudget{max: o.MaxBodyBytesInFlight},
		itemAnswers: newItemAnswers(cmp.Or(o.ItemMemoBytes, DefaultItemMemoBytes)),
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.idemLease <= 0 {
		// Longer than any request may run, so no live request loses its key.
		s.idemLease = max(o.RequestTimeout, o.WriteTimeout, time.Minute) + 10*time.Second
	}
	if o.Documents != nil {
		s.positions = positions.NewAnalytics(chargedReader{o.Documents})
		if o.Positions != nil {
			s.positions.Freshness = o.Positions.Freshness // the NAV staleness bound serve configured
		}
		s.maxPositions = o.Documents.MaxPositions
		s.metrics.reportCapacity(o.Documents)
	}
	s.metrics.registry.MustRegister(writeBoundsCollector{bodies: s.bodies, docs: o.Documents})
	s.metrics.registry.MustRegister(o.Collectors...)
	if s.idemTTL <= 0 {
		s.idemTTL = 24 * time.Hour
	}
	s.maxPooled = cmp.Or(o.MaxFundPerformancePositions, DefaultMaxFundPerformancePositions)
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	if err := r.SetTrustedProxies(o.TrustedProxies); err != nil {
		_ = r.SetTrustedProxies(nil)
		o.Logger.Error("ignoring invalid trusted proxies", "error", err.Error())
	}
	r.Use(s.observe, gin.CustomRecovery(func(c *gin.Context, v any) {
		writeError(c, fmt.Errorf("panic: %v", v))
	}), s.deadline)
	r.NoRoute(func(c *gin.Context) { writeError(c, &fund.Error{Code: codeNoRoute, Message: "no such route"}) })
	r.NoMethod(func(c *gin.Context) {
		writeError(c, &fund.Error{Code: codeNoMethod, Message: "method not allowed on this route"})
	})
	s.routes(r)
	return r
}

// routes is the whole API surface: every operation of the route table
// (spec.go), which the OpenAPI document describes, and the interactive
// reference of that document.
func (s *server) routes(r *gin.Engine) {
	for _, op := range s.operations() {
		var chain []gin.HandlerFunc
		switch op.Access {
		case accessAnyRole:
			// The rate limit is decided as soon as the principal is known,
			// before any route does work on its behalf.
			chain = []gin.HandlerFunc{s.authenticate, s.rateLimit}
		case accessAdmin:
			chain = []gin.HandlerFunc{s.authenticate, s.rateLimit, s.requireRole(RoleAdmin)}
		}
		if op.checksQuery() { // after the 401, 429 and 403, before any read (query.go)
			chain = append(chain, declaredQueryOnly(op))
		}
		if (op.Access == accessAnyRole || op.Access == accessAdmin) && writes(op.Method) {
			chain = append(chain, s.holdBody) // before the body is read (inflight.go)
		}
		r.Handle(op.Method, op.Path, append(chain, op.Handlers...)...)
	}
	r.GET("/docs", s.openUnless(s.opts.PublicOpenAPI), apiReference())       // the interactive reference of /openapi.json,
	r.GET("/docs/:file", s.openUnless(s.opts.PublicOpenAPI), apiReference()) // open or not with it (docs.go)
}

// deadline bounds every request's work: a read's by the request timeout, a
// write's by the write timeout.
func (s *server) deadline(c *gin.Context) {
	timeout := s.timeout
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		timeout = s.writeTimeout
	}
	if timeout <= 0 {
		c.Next()
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), timeout)
	defer cancel()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}
