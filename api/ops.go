package api

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type ctxKey int

const (
	keyLogger ctxKey = iota
	keyRequestID
	keyPrincipal
	keyRequestIdentity
	keyRequestOwner
)

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// observe gives every request an ID (the caller's X-Request-ID when it is
// sane), a logger that carries it, metrics labelled from fixed sets (see
// methodLabel, routeLabel, statusLabel), and one access log line with the
// client's address. Every answer is Cache-Control: no-store unless its
// handler says otherwise: /v1 answers hold investors' figures, which must
// never sit in a shared cache.
func (s *server) observe(c *gin.Context) {
	start := time.Now()
	id := c.GetHeader("X-Request-ID")
	if !requestIDPattern.MatchString(id) {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
	}
	c.Header("X-Request-ID", id)
	c.Header("Cache-Control", "no-store")
	log := s.log.With(slog.String("request_id", id))
	ctx := context.WithValue(c.Request.Context(), keyLogger, log)
	ctx = context.WithValue(ctx, keyRequestID, id)
	c.Request = c.Request.WithContext(ctx)

	c.Next()

	route := routeLabel(c)
	status := c.Writer.Status()
	elapsed := time.Since(start)
	method := methodLabel(c.Request.Method)
	s.metrics.requests.WithLabelValues(method, route, statusLabel(status)).Inc()
	s.metrics.duration.WithLabelValues(method, route).Observe(elapsed.Seconds())
	log.LogAttrs(c.Request.Context(), slog.LevelInfo, "request",
		slog.String("method", loggedMethod(c.Request.Method)), slog.String("route", route), slog.String("path", c.Request.URL.Path),
		slog.Int("status", status), slog.Int("bytes", c.Writer.Size()), slog.Duration("elapsed", elapsed),
		slog.String("client", c.ClientIP()))
}

// Metrics labels come from fixed sets, whatever a client sends: a label
// value is a new time series held for the life of the process, so a raw
// method or path would let anyone grow /metrics (and the server's memory)
// without a token.

// methodLabel is method if it is one of the standard HTTP methods, and
// "other" for anything else (methods are case-sensitive: "get" is other).
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}

// routeLabel is the template of the route that served the request (gin's
// FullPath, such as /v1/documents/:documentId), or "unmatched".
func routeLabel(c *gin.Context) string {
	if route := c.FullPath(); route != "" {
		return route
	}
	return "unmatched"
}

// statusLabel is the status code when it is one net/http knows (a fixed
// set of about sixty; the server only writes codes of its own choosing),
// and its class, such as "5xx", otherwise.
func statusLabel(status int) string {
	if http.StatusText(status) != "" {
		return strconv.Itoa(status)
	}
	if status >= 100 && status < 600 {
		return strconv.Itoa(status/100) + "xx"
	}
	return "other"
}

// loggedMethod is the method as an access log line repeats it: cut to 32
// bytes, since an invented method may be as long as the request line allows
// (methods are tokens, ASCII only, so the cut splits no character).
func loggedMethod(m string) string {
	const most = 32
	if len(m) <= most {
		return m
	}
	return m[:most] + "..."
}

func logger(c *gin.Context) *slog.Logger {
	if l, ok := c.Request.Context().Value(keyLogger).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

func requestID(c *gin.Context) string {
	id, _ := c.Request.Context().Value(keyRequestID).(string)
	return id
}

// Metrics are the series a server counts and /metrics serves. NewServer
// makes its own unless Options.Metrics gives them, which serve does so that
// a listener of their own (FUNDSVC_METRICS_LISTEN) serves the same series
// through Handler.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// itemsMemo and itemsEncoded count the position read's answers to
	// items by source (fundsvc_position_item_answers_total{source}): the
	// memo (itemanswers.go), or decoded and encoded. Resolved once, as every
	// position read adds to both.
	itemsMemo, itemsEncoded prometheus.Counter
}

// capacityUnits is the DynamoDB capacity the store has consumed since the
// process started (store.Store.Consumed), by API operation and kind (read
// or write units): on an on-demand table, the request units DynamoDB
// bills. Its labels come from the fixed set of operations the store sends.
var capacityUnits = prometheus.NewDesc("fundsvc_dynamodb_capacity_units_total",
	"DynamoDB capacity units consumed, as DynamoDB reported them, by operation and kind (read, write).",
	[]string{"operation", "kind"}, nil)

// writePhase* are where the store's document writes spend their time,
// round trips and items, by phase (store.Phase).
var (
	writePhaseSeconds = prometheus.NewDesc("fundsvc_write_phase_seconds_total",
		"Wall time document writes spent in each phase of the commit protocol.", []string{"phase"}, nil)
	writePhaseRequests = prometheus.NewDesc("fundsvc_write_phase_requests_total",
		"DynamoDB requests document writes sent in each phase of the commit protocol.", []string{"phase"}, nil)
	writePhaseItems = prometheus.NewDesc("fundsvc_write_phase_items_total",
		"Items the requests of each phase of a document write wrote or read.", []string{"phase"}, nil)
)

// reportCapacity adds the consumed capacity of docs, and its writes'
// phases, to /metrics.
func (m *Metrics) reportCapacity(docs *store.Store) { m.registry.MustRegister(capacityCollector{docs}) }

// capacityCollector reads the store's meter at each scrape, so /metrics
// and Store.Consumed cannot disagree.
type capacityCollector struct{ docs *store.Store }

func (c capacityCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- capacityUnits
	ch <- writePhaseSeconds
	ch <- writePhaseRequests
	ch <- writePhaseItems
}

func (c capacityCollector) Collect(ch chan<- prometheus.Metric) {
	for op, u := range c.docs.Consumed() {
		for _, k := range []struct {
			kind  string
			units float64
		}{{"read", u.Read}, {"write", u.Write}} {
			if k.units > 0 {
				ch <- prometheus.MustNewConstMetric(capacityUnits, prometheus.CounterValue, k.units, op, k.kind)
			}
		}
	}
	for p, t := range c.docs.WritePhases() {
		ch <- prometheus.MustNewConstMetric(writePhaseSeconds, prometheus.CounterValue, t.Seconds, string(p))
		ch <- prometheus.MustNewConstMetric(writePhaseRequests, prometheus.CounterValue, float64(t.Requests), string(p))
		ch <- prometheus.MustNewConstMetric(writePhaseItems, prometheus.CounterValue, float64(t.Items), string(p))
	}
}

// NewMetrics returns the series of one server; they may serve only one.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fundsvc_http_requests_total", Help: "HTTP requests by method, route template and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fundsvc_http_request_duration_seconds", Help: "HTTP request latency by method and route template.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}, []string{"method", "route"}),
	}
	items := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fundsvc_position_item_answers_total", Help: "Items the position read across documents answered, by source: memo (an answer memoized by the item's stored content) or encoded (decoded and encoded, then memoized).",
	}, []string{"source"})
	m.itemsMemo, m.itemsEncoded = items.WithLabelValues("memo"), items.WithLabelValues("encoded")
	b := runningBuild()
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "fundsvc_build_info", Help: "The build of the running binary (always 1): module version, VCS revision, Go version.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion},
	})
	info.Set(1)
	m.registry.MustRegister(m.requests, m.duration, items, info, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus exposition formats, to
// anyone who reaches it: serve mounts it on the metrics listener, and the
// API's /metrics behind metricsAccess.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Build is the build of the running binary, as the Go toolchain stamped it
// (debug.ReadBuildInfo): /livez, /readyz, the fundsvc_build_info metric and
// fundsvc version show it.
type Build struct {
	Version   string `json:"version" doc:"The main module's version: a tag, a pseudo-version from the VCS (with +dirty when modified), or (devel)."`
	Revision  string `json:"revision,omitempty" doc:"The VCS revision built, when the build recorded one."`
	Modified  bool   `json:"modified,omitempty" doc:"True when the working tree had changes the revision does not hold."`
	Time      string `json:"time,omitempty" doc:"The revision's commit time (RFC 3339)."`
	GoVersion string `json:"goVersion" doc:"The Go toolchain that built the binary."`
}

// ReadBuild reads the running binary's build; a binary without build
// information (none is built so today) reports version "unknown".
func ReadBuild() Build {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{Version: "unknown"}
	}
	b := Build{Version: info.Main.Version, GoVersion: info.GoVersion}
	b.Version = cmp.Or(b.Version, "(devel)") // a test binary's main module has no version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// runningBuild is ReadBuild, read once.
var runningBuild = sync.OnceValue(ReadBuild)

// health is the answer of /livez and /readyz.
type health struct {
	Status string `json:"status"`
	Build  Build  `json:"build"`
}

func (s *server) livez(c *gin.Context) {
	c.JSON(http.StatusOK, health{Status: "ok", Build: runningBuild()})
}

// readyz answers 200 only when DynamoDB answers and the table exists (one
// GetItem, store.CheckTable), and 503 from the moment the server begins to
// shut down, so that a load balancer stops sending it requests while the
// ones in flight finish. The problem's detail says which: shutting down,
// DynamoDB not reachable, the table missing, or the table not readable.
func (s *server) readyz(c *gin.Context) {
	if s.opts.Draining != nil && s.opts.Draining() {
		writeError(c, &fund.Error{Code: fund.EUNAVAILABLE, Message: "the server is shutting down"})
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), readyzTimeout)
	defer cancel()
	if err := s.docs.CheckTable(ctx); err != nil {
		var fe *fund.Error
		switch {
		case errors.As(err, &fe) && fe.Code == fund.EUNAVAILABLE:
		case ctx.Err() != nil:
			err = fmt.Errorf("%w: %w", &fund.Error{Code: fund.EUNAVAILABLE, Message: "DynamoDB did not answer within " + readyzTimeout.String()}, err)
		default:
			err = fmt.Errorf("%w: %w", &fund.Error{Code: fund.EUNAVAILABLE, Message: "the table is not readable"}, err)
		}
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, health{Status: "ready", Build: runningBuild()})
}

// readyzTimeout bounds /readyz's check of the table.
const readyzTimeout = 2 * time.Second

// authenticate requires a valid bearer token and records its principal.
func (s *server) authenticate(c *gin.Context) {
	if s.verifier == nil {
		writeError(c, fmt.Errorf("no token verifier configured"))
		return
	}
	scheme, token, ok := strings.Cut(c.GetHeader("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		c.Header("WWW-Authenticate", `Bearer realm="fundsvc"`)
		writeError(c, &fund.Error{Code: fund.EUNAUTHORIZED, Message: "send a bearer token: Authorization: Bearer <token>"})
		return
	}
	p, err := s.verifier.Verify(strings.TrimSpace(token))
	if err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="fundsvc", error="invalid_token"`)
		writeError(c, err)
		return
	}
	ctx := context.WithValue(c.Request.Context(), keyPrincipal, p)
	c.Request = c.Request.WithContext(ctx)
	log := logger(c).With(slog.String("subject", p.Subject), slog.String("role", p.Role))
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), keyLogger, log))
	c.Next()
}

// requireRole refuses, with 403, tokens of another role: the route is not
// theirs whatever the data, so the answer reveals nothing about it.
func (s *server) requireRole(role string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if principal(c).Role != role {
			writeError(c, &fund.Error{Code: fund.EFORBIDDEN, Message: "this route is for " + role + " tokens"})
			return
		}
		c.Next()
	}
}

// openUnless leaves an operational route open when public, and otherwise
// requires a valid token of any role.
func (s *server) openUnless(public bool) gin.HandlerFunc {
	if public {
		return func(c *gin.Context) { c.Next() }
	}
	return s.authenticate
}

// metricsAccess guards the API listener's /metrics: open when public
// (FUNDSVC_PUBLIC_METRICS=true), and otherwise, as by default, only for an
// admin token of every fund (401 without a valid token, 403 for any other).
// The series count every fund's requests and DynamoDB capacity, so their
// rise and fall tells when any fund ingests and how much: only a principal
// that may read every fund may read them. Prometheus scrapes the metrics
// listener instead (FUNDSVC_METRICS_LISTEN), which needs no token.
func (s *server) metricsAccess() []gin.HandlerFunc {
	if s.opts.PublicMetrics {
		return nil
	}
	return []gin.HandlerFunc{s.authenticate, requireEveryFund}
}

// requireEveryFund refuses, with 403, every token but an admin's whose
// funds claim is every fund.
func requireEveryFund(c *gin.Context) {
	if p := principal(c); p.Role != RoleAdmin || !slices.Contains(p.Funds, AllFunds) {
		writeError(c, &fund.Error{Code: fund.EFORBIDDEN, Message: `/metrics is for admin tokens of every fund (funds ["*"]): its series count every fund's activity`})
		return
	}
	c.Next()
}

func principal(c *gin.Context) Principal {
	p, _ := c.Request.Context().Value(keyPrincipal).(Principal)
	return p
}

// healthBody is the schema of /livez's and /readyz's answer: the status
// and the build, whose members and descriptions come from Build.
func healthBody(status string) *schema {
	b := &schema{Type: "object", Description: "The build of the running binary."}
	t := reflect.TypeFor[Build]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		typ := "string"
		if f.Type.Kind() == reflect.Bool {
			typ = "boolean"
		}
		b.Properties = append(b.Properties, property{name, &schema{Type: typ, Description: f.Tag.Get("doc")}})
		if !strings.Contains(opts, "omitempty") {
			b.Required = append(b.Required, name)
		}
	}
	s := healthSchema(status)
	s.Properties = append(s.Properties, property{"build", b})
	s.Required = append(s.Required, "build")
	return s
}

// healthExample is an answer of /livez or /readyz.
func healthExample(status string) health {
	return health{Status: status, Build: Build{Version: "v0.0.0-20261127041656-063d320c8e1f+dirty", Revision: "063d320c8e1f5a8a7f0e0b7d5c2e3c4b5a697887",
		Modified: true, Time: "2026-11-27T04:16:56Z", GoVersion: "go1.26.8"}}
}
