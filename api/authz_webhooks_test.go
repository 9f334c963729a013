package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The webhook routes in the authorization matrix: an endpoint of FUND_A
// (WH_AUTHZ) is managed by the admin of FUND_A only; to the admin of
// FUND_Z it is answered as an unknown endpoint, it is left out of its
// list, and it may not subscribe to FUND_A.

// authzWebhookBody is a creation request for an endpoint of fundID.
func authzWebhookBody(fundID string) any {
	return map[string]any{"url": "https://hooks.example.com/fundsvc", "funds": []string{fundID}}
}

// authzWebhookFixture stores WH_AUTHZ, FUND_A's endpoint, unless it exists.
func authzWebhookFixture(t *testing.T, s *testServer) {
	t.Helper()
	now := time.Now().UTC()
	err := s.Env.Store.PutWebhookEndpoint(context.Background(), fund.WebhookEndpoint{
		ID: "WH_AUTHZ", URL: "https://hooks.example.com/a", Funds: []string{"FUND_A"}, Enabled: true,
		SealedSecret: testSealer(t).Seal("WH_AUTHZ", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), CreatedBy: "fixture", CreatedAt: now, UpdatedAt: now,
	})
	if err != nil && fund.ErrorCode(err) != fund.ECONFLICT {
		t.Fatal(err)
	}
}

// authzFreshWebhook creates an endpoint of FUND_A with auth and returns its path.
func authzFreshWebhook(t *testing.T, s *testServer, auth string) string {
	t.Helper()
	res := authzSend(t, s, http.MethodPost, "/v1/webhooks", authzWebhookBody("FUND_A"), auth)
	if res.Status != http.StatusCreated {
		t.Fatalf("POST /v1/webhooks: %d\n%s", res.Status, res.Body)
	}
	return res.Header.Get("Location")
}

// authzWebhookPositive is the request and status a verified admin token of
// FUND_A gets on r.
func authzWebhookPositive(t *testing.T, s *testServer, r authzRoute, auth string) (string, int) {
	t.Helper()
	switch {
	case r.method == http.MethodPost && r.path == "/v1/webhooks":
		return "/v1/webhooks", http.StatusCreated
	case r.method == http.MethodDelete:
		return authzFreshWebhook(t, s, auth), http.StatusOK
	case strings.HasSuffix(r.path, "/redeliver"):
		return r.probes[0].path, http.StatusNotFound
	}
	return r.probes[0].path, http.StatusOK
}

func authzWebhookCases(t *testing.T, s *testServer, r authzRoute, run func(string, func(*testing.T)), asA, asZ string) {
	name := r.name()
	switch {
	case r.method == http.MethodPost && r.path == "/v1/webhooks":
		run(name+" by the admin of FUND_A for FUND_A is 201 with the secret, once", func(t *testing.T) {
			res := authzSend(t, s, r.method, "/v1/webhooks", authzWebhookBody("FUND_A"), asA)
			if res.Status != http.StatusCreated {
				t.Fatalf("status %d\n%s", res.Status, res.Body)
			}
			if !strings.Contains(string(res.Body), `"secret":"whsec_`) {
				t.Errorf("the creation's answer holds no secret\n%s", res.Body)
			}
			again := authzSend(t, s, http.MethodGet, res.Header.Get("Location"), nil, asA)
			if again.Status != http.StatusOK || strings.Contains(string(again.Body), "whsec_") || strings.Contains(string(again.Body), `"secret"`) {
				t.Errorf("GET after creation: %d, and it must not show the secret\n%s", again.Status, again.Body)
			}
		})
		for _, c := range []struct {
			what, auth string
			body       any
		}{
			{"the admin of FUND_Z for FUND_A", asZ, authzWebhookBody("FUND_A")},
			{"the admin of FUND_A for every fund", asA, map[string]any{"url": "https://hooks.example.com/x"}},
		} {
			run(fmt.Sprintf("%s by %s is 403 on funds", name, c.what), func(t *testing.T) {
				authzWantProblem(t, authzSend(t, s, r.method, "/v1/webhooks", c.body, c.auth), http.StatusForbidden, "/problems/forbidden")
			})
		}
	case r.method == http.MethodGet && r.path == "/v1/webhooks":
		run(name+" lists FUND_A's endpoint to the admin of FUND_A and not to the admin of FUND_Z", func(t *testing.T) {
			a := authzSend(t, s, r.method, "/v1/webhooks", nil, asA)
			z := authzSend(t, s, r.method, "/v1/webhooks", nil, asZ)
			if a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"WH_AUTHZ"`) {
				t.Errorf("admin of FUND_A: %d\n%s", a.Status, a.Body)
			}
			if z.Status != http.StatusOK || strings.Contains(string(z.Body), `"WH_AUTHZ"`) || strings.Contains(string(z.Body), "FUND_A") {
				t.Errorf("admin of FUND_Z: %d, must not see FUND_A's endpoint\n%s", z.Status, z.Body)
			}
		})
	default:
		for _, p := range r.probes {
			want := cmpStatus(p.status, http.StatusOK)
			path := p.path
			if r.method == http.MethodDelete {
				run(name+" by the admin of FUND_A deletes its endpoint (200), then it is unknown (404)", func(t *testing.T) {
					fresh := authzFreshWebhook(t, s, asA)
					if res := authzSend(t, s, r.method, fresh, nil, asA); res.Status != http.StatusOK {
						t.Fatalf("status %d\n%s", res.Status, res.Body)
					}
					authzWantProblem(t, authzSend(t, s, http.MethodGet, fresh, nil, asA), http.StatusNotFound, "/problems/not_found")
				})
			} else {
				run(fmt.Sprintf("%s %s by the admin of FUND_A is %d", r.method, path, want), func(t *testing.T) {
					res := authzSend(t, s, r.method, path, r.bodyFor("FUND_A"), asA)
					if res.Status != want {
						t.Fatalf("status %d, want %d\n%s", res.Status, want, res.Body)
					}
				})
			}
			run(fmt.Sprintf("%s %s by the admin of FUND_Z is 404, as for an unknown endpoint", r.method, path), func(t *testing.T) {
				authzLikeUnknown(t, s, r.method, path, r.bodyFor("FUND_A"), asZ, p.unknown, http.StatusNotFound)
			})
		}
	}
}

func cmpStatus(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}
