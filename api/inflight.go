package api

import (
	"net/http"
	"sync"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// Writes in flight are bounded per process, so that no client can hold an
// instance's memory until the write deadline: the bytes of the request
// bodies being read or held (bodyBudget, here), and the writers waiting
// for one document (store.Store.MaxWaitingWriters). Beyond either, the
// answer is 503 with Retry-After, before anything is read or written.

// bodyBudget is the bytes of write bodies a process reads or holds at once.
// It is a counter of its own rather than golang.org/x/sync's semaphore,
// which cannot say how much is held, as the metrics and the tests read.
type bodyBudget struct {
	mu      sync.Mutex
	max     int64 // 0: no bound
	held    int64
	refused uint64
}

// take reserves n bytes, or reports that they would exceed the budget.
func (b *bodyBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max > 0 && b.held+n > b.max {
		b.refused++
		return false
	}
	b.held += n
	return true
}

// give returns n bytes taken.
func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
}

func (b *bodyBudget) stats() (held int64, refused uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held, b.refused
}

// holdBody reserves a write's body in the process's budget before anything
// reads it, and returns it when the request is answered: until then the
// body is read, held whole (an Idempotency-Key hashes and keeps it) or
// decoded into a document. A body is counted at its Content-Length, or at
// the largest body accepted (FUNDSVC_MAX_BODY_BYTES) when it has none or
// states more, since that is what may be read of it. Beyond the budget the
// answer is 503 with Retry-After at once: the request has changed nothing.
func (s *server) holdBody(c *gin.Context) {
	n := c.Request.ContentLength
	if n < 0 || n > s.maxBody {
		n = s.maxBody
	}
	if n == 0 {
		c.Next()
		return
	}
	if !s.bodies.take(n) {
		writeError(c, &fund.Error{Code: fund.EUNAVAILABLE,
			Message: "this instance holds as many request bodies as it may (FUNDSVC_MAX_BODY_BYTES_IN_FLIGHT); retry later"})
		return
	}
	defer s.bodies.give(n)
	c.Next()
}

// writes reports whether a method may carry a body the API reads.
func writes(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// The write bounds' series.
var (
	bodyBytesHeld = prometheus.NewDesc("fundsvc_write_body_bytes_held",
		"Bytes of write request bodies the process reads or holds now, as FUNDSVC_MAX_BODY_BYTES_IN_FLIGHT counts them.", nil, nil)
	waitingWriters = prometheus.NewDesc("fundsvc_write_waiting_writers",
		"Writers waiting for their turn behind the writer of their document, over every document (FUNDSVC_MAX_WAITING_WRITERS bounds each document's).", nil, nil)
	writesRefused = prometheus.NewDesc("fundsvc_writes_refused_total",
		"Writes answered 503 because a bound of writes in flight was reached: reason body_budget or waiting_writers.", []string{"reason"}, nil)
)

// writeBoundsCollector reads the budget and the store's queue at each
// scrape.
type writeBoundsCollector struct {
	bodies *bodyBudget
	docs   *store.Store // nil: no store, no queue
}

func (c writeBoundsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- bodyBytesHeld
	ch <- waitingWriters
	ch <- writesRefused
}

func (c writeBoundsCollector) Collect(ch chan<- prometheus.Metric) {
	held, refused := c.bodies.stats()
	var q store.WriteQueue
	if c.docs != nil {
		q = c.docs.WriteQueue()
	}
	ch <- prometheus.MustNewConstMetric(bodyBytesHeld, prometheus.GaugeValue, float64(held))
	ch <- prometheus.MustNewConstMetric(waitingWriters, prometheus.GaugeValue, float64(q.Waiting))
	ch <- prometheus.MustNewConstMetric(writesRefused, prometheus.CounterValue, float64(refused), "body_budget")
	ch <- prometheus.MustNewConstMetric(writesRefused, prometheus.CounterValue, float64(q.Refused), "waiting_writers")
}
