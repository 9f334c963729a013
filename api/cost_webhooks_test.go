package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/api"
)

// TestWebhookRoutesCostWhatTheirDocsSay counts the DynamoDB operations of
// each webhook route: no Scan anywhere; a list is one Query of the
// endpoints' partition; an endpoint's routes begin with one GetItem of the
// endpoint, which decides authorization before anything else is read or
// written, so another fund's endpoint costs what an unknown one does. A
// creation is one transaction (the endpoint and its funds' counts); a
// PATCH reads the endpoint again where it is stored (one PutItem, or one
// transaction when its funds change); a deletion is one transaction (the
// endpoint, its counts, its purge's record).
func TestWebhookRoutesCostWhatTheirDocsSay(t *testing.T) {
	s := newServer(t, false)
	admin := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	other := "Bearer " + token(t, api.Principal{Subject: "admin-b", Role: api.RoleAdmin, Funds: []string{"FUND_B"}})
	created := s.do(t, http.MethodPost, "/v1/webhooks", authzWebhookBody("FUND_A"), "Authorization", admin)
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d\n%s", created.Status, created.Body)
	}
	wh := created.Header.Get("Location")
	costsAre(t, s, []costCase{
		{http.MethodPost, "/v1/webhooks", admin, authzWebhookBody("FUND_A"), 201, "TransactWriteItems"},
		{http.MethodPost, "/v1/webhooks", other, authzWebhookBody("FUND_A"), 403, ""},
		{http.MethodGet, "/v1/webhooks", admin, nil, 200, "Query"},
		{http.MethodGet, wh, admin, nil, 200, "GetItem"},
		{http.MethodGet, wh, other, nil, 404, "GetItem"},
		{http.MethodGet, "/v1/webhooks/wh_unknown", other, nil, 404, "GetItem"},
		{http.MethodGet, wh + "/deliveries", admin, nil, 200, "GetItem Query"},
		{http.MethodGet, wh + "/deliveries", other, nil, 404, "GetItem"},
		{http.MethodPost, wh + "/deliveries/evt_DOC001_v1/redeliver", admin, nil, 404, "GetItem GetItem"},
		{http.MethodPost, wh + "/deliveries/evt_DOC001_v1/redeliver", other, nil, 404, "GetItem"},
		{http.MethodPatch, wh, admin, map[string]any{"enabled": false}, 200, "GetItem GetItem PutItem"},
		{http.MethodPatch, wh, admin, map[string]any{"funds": []string{"FUND_A", "FUND_A2"}}, 403, "GetItem"},
		{http.MethodPatch, wh, other, map[string]any{"enabled": false}, 404, "GetItem"},
		{http.MethodDelete, wh, other, nil, 404, "GetItem"},
		{http.MethodDelete, wh, admin, nil, 200, "GetItem TransactWriteItems"},
	})
}

// TestAWebhookSecretIsShownOnceAndNeverStoredOrLoggedInClear creates an
// endpoint and rotates its secret: each secret is in the answer that made
// it and nowhere else, not in a later answer, the logs or the table; the
// rotation's answer says until when the previous one still signs.
func TestAWebhookSecretIsShownOnceAndNeverStoredOrLoggedInClear(t *testing.T) {
	s := newServer(t, false)
	admin := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	created := s.do(t, http.MethodPost, "/v1/webhooks", authzWebhookBody("FUND_A"), "Authorization", admin)
	first, _ := created.JSON(t)["secret"].(string)
	wh := created.Header.Get("Location")
	rotated := s.do(t, http.MethodPatch, wh, map[string]any{"rotateSecret": map[string]any{"overlap": "2h"}}, "Authorization", admin)
	second, _ := rotated.JSON(t)["secret"].(string)
	if !strings.HasPrefix(first, "whsec_") || !strings.HasPrefix(second, "whsec_") || first == second {
		t.Fatalf("secrets %q and %q: want two whsec_ secrets\n%s\n%s", first, second, created.Body, rotated.Body)
	}
	if until, _ := rotated.JSON(t)["previousSecretUntil"].(string); until == "" {
		t.Errorf("the rotation's answer does not say until when the previous secret signs\n%s", rotated.Body)
	}
	bad := s.do(t, http.MethodPatch, wh, map[string]any{"rotateSecret": map[string]any{"overlap": "200h"}}, "Authorization", admin)
	if bad.Status != http.StatusBadRequest {
		t.Errorf("an overlap of 200h: %d, want 400", bad.Status)
	}
	var later []string
	for _, path := range []string{wh, "/v1/webhooks", wh + "/deliveries"} {
		later = append(later, string(s.do(t, http.MethodGet, path, nil, "Authorization", admin).Body))
	}
	var dump strings.Builder // every string and binary attribute of the table, as text
	for _, item := range s.Env.Dump(t) {
		for _, av := range item {
			switch v := av.(type) {
			case *types.AttributeValueMemberS:
				dump.WriteString(v.Value + "\n")
			case *types.AttributeValueMemberB:
				dump.WriteString(string(v.Value) + "\n")
			}
		}
	}
	for _, secret := range []string{first, second} {
		key := strings.TrimPrefix(secret, "whsec_")
		for what, text := range map[string]string{"a later answer": strings.Join(later, "\n"), "the logs": s.logs.String(), "the table": dump.String()} {
			if strings.Contains(text, key) {
				t.Errorf("a secret appears in %s", what)
			}
		}
	}
}
