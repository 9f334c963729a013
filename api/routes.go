// Package api is fundsvc's HTTP interface: every route, its handlers,
// problem+json errors, signed pagination cursors and the OpenAPI document.
package api

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/gin-gonic/gin"
)

// Options are the server's dependencies and limits.
type Options struct {
	Documents      *fund.Store
	Positions      *positions.Store
	Logger         *slog.Logger
	CursorKey      []byte // signs cursors; random when empty (cursors then die with the process)
	MaxBodyBytes   int64
	DefaultLimit   int
	MaxLimit       int
	RequestTimeout time.Duration
}

type server struct {
	docs         *fund.Store
	positions    *positions.Store
	log          *slog.Logger
	cursors      cursorCodec
	maxBody      int64
	defaultLimit int
	maxLimit     int
	timeout      time.Duration
	metrics      *metrics
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
		docs: o.Documents, positions: o.Positions, log: o.Logger, cursors: cursorCodec{key: o.CursorKey},
		maxBody: o.MaxBodyBytes, defaultLimit: o.DefaultLimit, maxLimit: o.MaxLimit, timeout: o.RequestTimeout,
		metrics: newMetrics(),
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	_ = r.SetTrustedProxies(nil)
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

// routes is the whole API surface.
func (s *server) routes(r *gin.Engine) {
	r.GET("/livez", s.livez)
	r.GET("/readyz", s.readyz)
	r.GET("/metrics", gin.WrapH(s.metrics.handler()))
	r.GET("/openapi.json", s.openAPI)

	v1 := r.Group("/v1")
	v1.PUT("/documents/:documentId", s.putDocument)
	v1.GET("/documents/:documentId", s.getOverview)
	v1.GET("/documents/:documentId/versions", s.getVersions)
	v1.GET("/documents/:documentId/versions/:version", s.getVersion)
	v1.GET("/documents/:documentId/positions/:positionId", s.getDocumentPosition)
	v1.GET("/documents/:documentId/capital", s.getCapital)
	v1.GET("/documents/:documentId/analysis", s.getAnalysis)
	v1.GET("/funds/:fundId/documents", s.listFundDocuments)
	v1.GET("/funds/:fundId/positions", s.listFundPositions)
	v1.GET("/investors/:investorId/positions", s.listInvestorPositions)
	v1.GET("/positions/:positionId", s.listPositionItems)
	v1.GET("/positions/:positionId/capital-calls", s.listPositionCapitalCalls)
}

// deadline bounds every request's work.
func (s *server) deadline(c *gin.Context) {
	if s.timeout <= 0 {
		c.Next()
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.timeout)
	defer cancel()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}
