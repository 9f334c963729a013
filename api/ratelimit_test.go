package api_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// TestRateLimitIsPerPrincipal: with rate r and burst b, b+1 quick requests
// of one principal give exactly one 429 (problem+json with Retry-After, in
// whole seconds), another principal is unaffected, and the refused request
// costs no DynamoDB operation.
func TestRateLimitIsPerPrincipal(t *testing.T) {
	// One request a minute on average: however slow the machine, the b+1
	// requests below come far quicker than a token is refilled.
	const rate, burst = 1.0 / 60, 3
	env := fundtest.New(t)
	env.Seed(t)
	s := startAPI(t, env, func(o *api.Options) { o.RateLimit, o.RateBurst = rate, burst })
	asAdmin := []string{"Authorization", "Bearer " + token(t, adminOfAll)}
	asInvestor := []string{"Authorization", "Bearer " + token(t, api.Principal{Subject: "portal", Role: api.RoleInvestor, Investor: "INVESTOR_1"})}

	var statuses []int
	var refused []response
	var opsOfRefused int
	for range burst + 1 {
		env.Counter.Reset()
		r := s.do(t, http.MethodGet, "/v1/documents/DOC001", nil, asAdmin...)
		statuses = append(statuses, r.Status)
		if r.Status == http.StatusTooManyRequests {
			refused = append(refused, r)
			opsOfRefused += len(env.Counter.Ops())
		}
	}

	t.Run("b+1 quick requests of one principal give exactly one 429, the last", func(t *testing.T) {
		if len(refused) != 1 || statuses[burst] != http.StatusTooManyRequests {
			t.Fatalf("statuses %v, want %d answers of 200 and then one 429", statuses, burst)
		}
		for _, st := range statuses[:burst] {
			if st != http.StatusOK {
				t.Fatalf("statuses %v, want %d answers of 200 and then one 429", statuses, burst)
			}
		}
	})
	if len(refused) == 0 {
		return
	}
	r := refused[0]

	t.Run("the 429 is problem+json with Retry-After in whole seconds", func(t *testing.T) {
		checkProblem(t, r, http.StatusTooManyRequests, "/problems/rate_limited")
		n, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || n < 1 || n > 60 {
			t.Errorf("Retry-After = %q, want whole seconds from 1 to 60 (one token a minute)", r.Header.Get("Retry-After"))
		}
		if got := r.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control = %q, want no-store", got)
		}
	})

	t.Run("the refused request reads nothing", func(t *testing.T) {
		if opsOfRefused != 0 {
			t.Errorf("the refused request made %d DynamoDB operations, want 0", opsOfRefused)
		}
	})

	t.Run("another principal is unaffected", func(t *testing.T) {
		for i := range burst {
			if r := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_1/positions", nil, asInvestor...); r.Status != http.StatusOK {
				t.Fatalf("request %d of another principal: status %d\n%s", i+1, r.Status, r.Body)
			}
		}
	})

	t.Run("the limited principal stays limited, and unauthenticated requests are still 401", func(t *testing.T) {
		checkProblem(t, s.do(t, http.MethodGet, "/v1/documents/DOC001", nil, asAdmin...), http.StatusTooManyRequests, "/problems/rate_limited")
		checkProblem(t, s.do(t, http.MethodGet, "/v1/documents/DOC001", nil, "Authorization", ""), http.StatusUnauthorized, "/problems/unauthorized")
	})

	t.Run("operational routes are not limited", func(t *testing.T) {
		if r := s.do(t, http.MethodGet, "/livez", nil, asAdmin...); r.Status != http.StatusOK {
			t.Errorf("/livez for the limited principal: status %d", r.Status)
		}
	})
}

// TestRateLimitZeroDisables: without a rate, a principal's requests are
// never refused, however many.
func TestRateLimitZeroDisables(t *testing.T) {
	s := startAPI(t, fundtest.New(t), func(o *api.Options) { o.RateLimit, o.RateBurst = 0, 1 })
	for i := range 20 {
		if r := s.do(t, http.MethodGet, "/v1/documents/-bad", nil); r.Status != http.StatusBadRequest {
			t.Fatalf("request %d: status %d, want 400 (no limit)", i+1, r.Status)
		}
	}
}
