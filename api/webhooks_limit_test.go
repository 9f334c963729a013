package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/store"
)

// TestAFundHasAtMostTheLimitOfWebhookEndpoints drives the limit of
// endpoints per fund at its default (FUNDSVC_WEBHOOK_MAX_ENDPOINTS, 10):
// the last place is raced for by eight creations at once through two
// servers on one table, and exactly one gets it; the next creation, and a
// PATCH adding the fund to another endpoint, are 409
// /problems/limit_exceeded naming the fund and the limit, and change
// nothing. An endpoint of two funds counts once for each; deleting an
// endpoint makes room.
func TestAFundHasAtMostTheLimitOfWebhookEndpoints(t *testing.T) {
	s := newServer(t, false)
	other := startAPI(t, s.Env, nil) // a second instance on the same table
	limit := store.DefaultMaxWebhookEndpoints
	admin := "Bearer " + token(t, api.Principal{Subject: "admin-ab", Role: api.RoleAdmin, Funds: []string{"FUND_A", "FUND_B"}})
	body := func(funds ...string) map[string]any {
		return map[string]any{"url": "https://hooks.example.com/fundsvc", "funds": funds}
	}
	create := func(t *testing.T, want int, funds ...string) response {
		t.Helper()
		res := s.do(t, http.MethodPost, "/v1/webhooks", body(funds...), "Authorization", admin)
		if res.Status != want {
			t.Fatalf("POST /v1/webhooks of %v: %d, want %d\n%s", funds, res.Status, want, res.Body)
		}
		return res
	}
	wantLimit := func(t *testing.T, res response, fundID string) {
		t.Helper()
		p := authzWantProblem(t, res, http.StatusConflict, "/problems/limit_exceeded")
		if p.Field != "funds" || !strings.Contains(p.Detail, fundID) || !strings.Contains(p.Detail, strconv.Itoa(limit)) ||
			!strings.Contains(p.Detail, "FUNDSVC_WEBHOOK_MAX_ENDPOINTS") {
			t.Errorf("the problem does not name the fund, the limit and its setting: %+v", p)
		}
	}
	endpointsOf := func(fundID string) int {
		var page struct{ Items []struct{ Funds []string } }
		if err := json.Unmarshal(s.do(t, http.MethodGet, "/v1/webhooks", nil, "Authorization", admin).Body, &page); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range page.Items {
			for _, f := range e.Funds {
				if f == fundID {
					n++
				}
			}
		}
		return n
	}

	for range limit - 2 {
		create(t, http.StatusCreated, "FUND_A")
	}
	both := create(t, http.StatusCreated, "FUND_A", "FUND_B").Header.Get("Location")

	// FUND_A has limit-1 endpoints: eight creations race for the last place.
	enc, _ := json.Marshal(body("FUND_A"))
	statuses := make([]int, 8)
	bodies := make([]string, 8)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := s.URL
			if i%2 == 1 {
				base = other.URL
			}
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/webhooks", bytes.NewReader(enc))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", admin)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				bodies[i] = err.Error()
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			statuses[i], bodies[i] = res.StatusCode, string(b)
		}()
	}
	wg.Wait()
	created := 0
	for i, st := range statuses {
		switch {
		case st == http.StatusCreated:
			created++
		case st == http.StatusConflict && strings.Contains(bodies[i], "/problems/limit_exceeded"):
		default:
			t.Errorf("a racing creation: %d\n%s", st, bodies[i])
		}
	}
	if created != 1 {
		t.Fatalf("%d of 8 racing creations for the last place succeeded, want exactly 1 (statuses %v)", created, statuses)
	}
	if n := endpointsOf("FUND_A"); n != limit {
		t.Fatalf("FUND_A has %d endpoints, want the limit, %d", n, limit)
	}

	wantLimit(t, s.do(t, http.MethodPost, "/v1/webhooks", body("FUND_A"), "Authorization", admin), "FUND_A")
	wantLimit(t, s.do(t, http.MethodPost, "/v1/webhooks", body("FUND_B", "FUND_A"), "Authorization", admin), "FUND_A")
	onlyB := create(t, http.StatusCreated, "FUND_B").Header.Get("Location") // FUND_B has 2: counted per fund
	wantLimit(t, s.do(t, http.MethodPatch, onlyB, map[string]any{"funds": []string{"FUND_B", "FUND_A"}}, "Authorization", admin), "FUND_A")
	if n, m := endpointsOf("FUND_A"), endpointsOf("FUND_B"); n != limit || m != 2 {
		t.Fatalf("after the refusals FUND_A has %d endpoints and FUND_B %d, want %d and 2", n, m, limit)
	}

	// Deleting the endpoint of both funds makes room in each.
	if res := s.do(t, http.MethodDelete, both, nil, "Authorization", admin); res.Status != http.StatusOK {
		t.Fatalf("DELETE: %d\n%s", res.Status, res.Body)
	}
	if res := s.do(t, http.MethodPatch, onlyB, map[string]any{"funds": []string{"FUND_B", "FUND_A"}}, "Authorization", admin); res.Status != http.StatusOK {
		t.Fatalf("PATCH adding FUND_A after a deletion: %d\n%s", res.Status, res.Body)
	}
	wantLimit(t, s.do(t, http.MethodPost, "/v1/webhooks", body("FUND_A"), "Authorization", admin), "FUND_A")
	// Moving it off FUND_A frees the place again.
	if res := s.do(t, http.MethodPatch, onlyB, map[string]any{"funds": []string{"FUND_B"}}, "Authorization", admin); res.Status != http.StatusOK {
		t.Fatalf("PATCH removing FUND_A: %d\n%s", res.Status, res.Body)
	}
	create(t, http.StatusCreated, "FUND_A")
	if n := endpointsOf("FUND_A"); n != limit {
		t.Errorf("FUND_A has %d endpoints, want %d", n, limit)
	}
}

// TestAnEndpointNamesEachFundOnceAndAtMostTheLimitOfFunds: a fund named
// twice, and more funds than one transaction can count, are 400 on funds.
func TestAnEndpointNamesEachFundOnceAndAtMostTheLimitOfFunds(t *testing.T) {
	s := newServer(t, false)
	twice := s.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/x", "funds": []string{"FUND_A", "FUND_A"}})
	if p := authzWantProblem(t, twice, http.StatusBadRequest, "/problems/invalid"); p.Field != "funds" {
		t.Errorf("a fund named twice: field %q", p.Field)
	}
	funds := make([]string, store.MaxWebhookEndpointFunds+1)
	for i := range funds {
		funds[i] = "FUND_" + strconv.Itoa(i)
	}
	many := s.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/x", "funds": funds})
	if p := authzWantProblem(t, many, http.StatusBadRequest, "/problems/invalid"); p.Field != "funds" {
		t.Errorf("%d funds: field %q", len(funds), p.Field)
	}
	if res := s.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/x", "funds": funds[:len(funds)-1]}); res.Status != http.StatusCreated {
		t.Errorf("%d funds, the most: %d\n%s", len(funds)-1, res.Status, res.Body)
	}
}
