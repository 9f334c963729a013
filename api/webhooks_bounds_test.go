package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
)

// TestAWebhookURLOfTheLimitIsKeptAndOneByteMoreIsRefused drives the URL
// limit, 2,048 bytes: a URL of exactly 2,048 bytes is created and answered
// back unchanged, at creation and through PATCH; one of 2,049 is 400
// /problems/invalid of field url, and changes nothing.
func TestAWebhookURLOfTheLimitIsKeptAndOneByteMoreIsRefused(t *testing.T) {
	s := newServer(t, false)
	admin := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	urlOf := func(n int) string {
		base := "https://hooks.example.com/"
		return base + strings.Repeat("p", n-len(base))
	}
	limit, over := urlOf(2048), urlOf(2049)
	if len(limit) != 2048 || len(over) != 2049 {
		t.Fatalf("URL lengths %d and %d", len(limit), len(over))
	}
	urlIn := func(t *testing.T, res response) string {
		t.Helper()
		var w struct{ URL string }
		if err := json.Unmarshal(res.Body, &w); err != nil {
			t.Fatal(err)
		}
		return w.URL
	}

	res := s.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": limit, "funds": []string{"FUND_A"}}, "Authorization", admin)
	if res.Status != http.StatusCreated || urlIn(t, res) != limit {
		t.Fatalf("POST of a 2048-byte URL: %d\n%.300s", res.Status, res.Body)
	}
	path := res.Header.Get("Location")
	if got := urlIn(t, s.do(t, http.MethodGet, path, nil, "Authorization", admin)); got != limit {
		t.Fatalf("the stored URL has %d bytes, want the 2048 sent", len(got))
	}

	p := authzWantProblem(t, s.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": over, "funds": []string{"FUND_A"}}, "Authorization", admin),
		http.StatusBadRequest, "/problems/invalid")
	if p.Field != "url" || !strings.Contains(p.Detail, "2048") {
		t.Errorf("POST of a 2049-byte URL: %+v", p)
	}
	p = authzWantProblem(t, s.do(t, http.MethodPatch, path, map[string]any{"url": over}, "Authorization", admin),
		http.StatusBadRequest, "/problems/invalid")
	if p.Field != "url" || !strings.Contains(p.Detail, "2048") {
		t.Errorf("PATCH to a 2049-byte URL: %+v", p)
	}
	var page struct{ Items []struct{ URL string } }
	if err := json.Unmarshal(s.do(t, http.MethodGet, "/v1/webhooks", nil, "Authorization", admin).Body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].URL != limit {
		t.Errorf("after the refusals the endpoints are %d, want the one of the 2048-byte URL", len(page.Items))
	}

	shorter := urlOf(2047)
	res = s.do(t, http.MethodPatch, path, map[string]any{"url": shorter}, "Authorization", admin)
	if res.Status != http.StatusOK || urlIn(t, res) != shorter {
		t.Fatalf("PATCH to a 2047-byte URL: %d\n%.300s", res.Status, res.Body)
	}
	res = s.do(t, http.MethodPatch, path, map[string]any{"url": limit}, "Authorization", admin)
	if res.Status != http.StatusOK || urlIn(t, res) != limit {
		t.Fatalf("PATCH to a 2048-byte URL: %d\n%.300s", res.Status, res.Body)
	}
}

// TestASecretOverlapFromZeroTo168HoursIsTakenAndBeyondIsRefused drives the
// bounds of rotateSecret.overlap: 0s ends the previous secret at once, 168h
// keeps it 168 hours; 168h plus a nanosecond, and -1ns, are 400
// /problems/invalid of field rotateSecret.overlap and rotate nothing.
func TestASecretOverlapFromZeroTo168HoursIsTakenAndBeyondIsRefused(t *testing.T) {
	s := newServer(t, false)
	admin := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	path := authzFreshWebhook(t, s, admin)
	type answer struct {
		Secret              string
		PreviousSecretUntil time.Time
	}
	rotate := func(t *testing.T, overlap string) (response, answer) {
		t.Helper()
		res := s.do(t, http.MethodPatch, path, map[string]any{"rotateSecret": map[string]any{"overlap": overlap}}, "Authorization", admin)
		var a answer
		if err := json.Unmarshal(res.Body, &a); err != nil {
			t.Fatal(err)
		}
		return res, a
	}

	res, a := rotate(t, "0s")
	if res.Status != http.StatusOK || a.Secret == "" || !a.PreviousSecretUntil.IsZero() {
		t.Fatalf("overlap 0s: %d, previousSecretUntil %v, want 200, a new secret, and no previous secret\n%s", res.Status, a.PreviousSecretUntil, res.Body)
	}
	before := time.Now()
	res, a = rotate(t, "168h")
	after := time.Now()
	if res.Status != http.StatusOK || a.Secret == "" ||
		a.PreviousSecretUntil.Before(before.Add(168*time.Hour).Truncate(time.Second)) || a.PreviousSecretUntil.After(after.Add(168*time.Hour)) {
		t.Fatalf("overlap 168h: %d, previousSecretUntil %v, want 200 and 168 h from now\n%s", res.Status, a.PreviousSecretUntil, res.Body)
	}
	until := a.PreviousSecretUntil

	for _, overlap := range []string{"168h0m0.000000001s", "-1ns"} {
		res, _ := rotate(t, overlap)
		p := authzWantProblem(t, res, http.StatusBadRequest, "/problems/invalid")
		if p.Field != "rotateSecret.overlap" || !strings.Contains(p.Detail, overlap) {
			t.Errorf("overlap %s: %+v", overlap, p)
		}
	}
	var got answer
	if err := json.Unmarshal(s.do(t, http.MethodGet, path, nil, "Authorization", admin).Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Secret != "" || !got.PreviousSecretUntil.Equal(until) {
		t.Errorf("after the refusals previousSecretUntil is %v, want %v (no rotation)", got.PreviousSecretUntil, until)
	}
}
