// Package apitest serves the API over a fundtest.Env for the tests of
// other packages (a TypeScript client's, the contract's): on an ephemeral
// loopback port, with serve's defaults, until the test ends.
package apitest

import (
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/harness"
)

// Server is the API serving one Env.
type Server struct {
	URL    string
	Logs   *fundtest.SyncBuffer // the API's JSON log
	secret []byte
}

// Serve serves the API on env's table with config.Default's settings until
// t ends.
func Serve(t testing.TB, env *fundtest.Env) *Server {
	t.Helper()
	cfg := config.Default()
	s := &Server{Logs: &fundtest.SyncBuffer{}, secret: []byte(harness.RandomHex(32))}
	v, err := api.NewVerifier(api.AuthConfig{HS256Secret: s.secret, Leeway: cfg.JWTLeeway, MaxLifetime: cfg.JWTMaxLifetime})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(api.Options{
		Documents: env.Store, Positions: env.Positions, Verifier: v, Logger: slog.New(slog.NewJSONHandler(s.Logs, nil)),
		PublicMetrics: cfg.PublicMetrics, PublicOpenAPI: cfg.PublicOpenAPI,
		IdempotencyLease: cfg.IdempotencyLease, IdempotencyTTL: cfg.IdempotencyTTL,
		MaxBodyBytes: cfg.MaxBodyBytes, MaxBodyBytesInFlight: cfg.BodiesInFlight, DefaultLimit: cfg.DefaultPageLimit, MaxLimit: cfg.MaxPageLimit,
		RequestTimeout: cfg.RequestTimeout, WriteTimeout: cfg.WriteTimeout, RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst,
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Token is a bearer token of p, valid for an hour.
func (s *Server) Token(t testing.TB, p api.Principal) string {
	t.Helper()
	tok, err := api.MintToken(s.secret, p, "", "", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
