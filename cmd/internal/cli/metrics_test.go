package cli

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
)

// capacitySeries is the metric family that tells every fund's ingest
// timing and size.
const capacitySeries = "fundsvc_dynamodb_capacity_units_total"

// TestMetricsListenerServesWhatTheAPIListenerRefuses: with the defaults,
// an unauthenticated client (or any token but an admin's of every fund)
// cannot read the DynamoDB capacity series on the API's listener; the
// metrics listener (here on an ephemeral loopback port) serves them to
// Prometheus without a token, and serves nothing else.
func TestMetricsListenerServesWhatTheAPIListenerRefuses(t *testing.T) {
	table := dynamotest.UniqueName(t, "cmd")
	getenv := withVars(env(t, table), map[string]string{"FUNDSVC_METRICS_LISTEN": "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, []string{"table", "create"}, getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	out, done := startServe(t, ctx, getenv)
	base := listeningAddr(t, out, done)
	var scrape string
	metricsAddr := regexp.MustCompile(`"msg":"serving metrics","addr":"(http://127\.0\.0\.1:[0-9]+/metrics)"`)
	poll(t, "the metrics listener's log line", func() bool {
		if m := metricsAddr.FindStringSubmatch(out.String()); m != nil {
			scrape = m[1]
			return true
		}
		return false
	})
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	get := func(url, auth string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	// A read consumes capacity, which the series count.
	all := mint(t, getenv, "--role", "admin", "--funds", "*")
	if status, body := get(base+"/v1/documents/NOPE", all); status != http.StatusNotFound {
		t.Fatalf("GET an unknown document: %d %s", status, body)
	}
	poll(t, "the capacity series on the metrics listener", func() bool {
		status, body := get(scrape, "")
		return status == http.StatusOK && strings.Contains(body, capacitySeries+`{kind="read"`)
	})

	for _, tc := range []struct {
		who, token string
		status     int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"an investor token", mint(t, getenv, "--role", "investor", "--investor", "INVESTOR_1"), http.StatusForbidden},
		{"an admin token of one fund", mint(t, getenv, "--role", "admin", "--funds", "FUND_A"), http.StatusForbidden},
	} {
		status, body := get(base+"/metrics", tc.token)
		if status != tc.status || strings.Contains(body, capacitySeries) {
			t.Errorf("the API listener's /metrics with %s: %d, want %d without the capacity series:\n%.300s", tc.who, status, tc.status, body)
		}
	}
	if status, body := get(base+"/metrics", all); status != http.StatusOK || !strings.Contains(body, capacitySeries) {
		t.Errorf("the API listener's /metrics with an admin token of every fund: %d\n%.300s", status, body)
	}
	// The metrics listener serves /metrics and nothing of the API.
	if status, _ := get(strings.TrimSuffix(scrape, "/metrics")+"/v1/documents/NOPE", all); status != http.StatusNotFound {
		t.Errorf("the metrics listener answered an API route %d, want 404", status)
	}
	if status, _ := get(strings.TrimSuffix(scrape, "/metrics")+"/livez", ""); status != http.StatusNotFound {
		t.Errorf("the metrics listener answered /livez %d, want 404", status)
	}
}
