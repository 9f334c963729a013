package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/webhooks"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// Webhook endpoints: an administrator's subscriptions to the event feed.
// An endpoint is visible to a token that covers every fund it names (an
// endpoint of every fund, to a token of every fund only); any other answers
// 404, as an unknown one. The signing secret is shown in the answer that
// creates or rotates it, and sealed (webhooks.Sealer) before it is stored.

// maxSecretOverlap bounds how long a rotated secret keeps signing.
const maxSecretOverlap = 7 * 24 * time.Hour

// webhooksReady answers 503 when the server has no key to seal secrets with.
func (s *server) webhooksReady(c *gin.Context) bool {
	if s.opts.WebhookSealer == nil {
		writeError(c, fund.Errorf(fund.EUNAVAILABLE, "webhooks are not configured on this server (FUNDSVC_WEBHOOK_SECRET_KEY is not set)"))
		return false
	}
	return true
}

// mayManage reports whether v administers every fund of e's scope.
func mayManage(v fund.Viewer, e fund.WebhookEndpoint) bool {
	if len(e.Funds) == 0 {
		return v.AllFunds
	}
	for _, f := range e.Funds {
		if !v.Administers(f) {
			return false
		}
	}
	return true
}

// decodeWebhook decodes the request body into req (a pointer to a
// wire.WebhookRequest or wire.WebhookPatch) and bounds its strings.
func decodeWebhook(c *gin.Context, maxBody int64, req any) error {
	if err := wire.DecodeStrict(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody), req); err != nil {
		return err
	}
	return fund.CheckTexts("", req)
}

// checkSubscription validates what an endpoint subscribes to, for v.
func (s *server) checkSubscription(v fund.Viewer, url string, types, funds []string) error {
	if msg := s.opts.WebhookPolicy.CheckURL(url); msg != "" {
		return fund.Invalid("url", "%s", msg)
	}
	for i, t := range types {
		if !fund.EventType(t).Valid() {
			return fund.Invalid("eventTypes", "member %d must be one of %v, got %q", i, fund.EventTypes, t)
		}
	}
	if len(funds) > store.MaxWebhookEndpointFunds {
		return fund.Invalid("funds", "an endpoint names at most %d funds, got %d", store.MaxWebhookEndpointFunds, len(funds))
	}
	for i, f := range funds {
		if err := fund.CheckID("funds", f); err != nil {
			return err
		}
		if slices.Contains(funds[:i], f) {
			return fund.Invalid("funds", "names %s twice", f)
		}
		if !v.Administers(f) {
			return &fund.Error{Code: fund.EFORBIDDEN, Field: "funds", Message: "the token does not cover fund " + f}
		}
	}
	if len(funds) == 0 && !v.AllFunds {
		return &fund.Error{Code: fund.EFORBIDDEN, Field: "funds", Message: "name the funds: only a token of every fund may subscribe to every fund"}
	}
	return nil
}

func newWebhookID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "wh_" + hex.EncodeToString(b)
}

// createWebhook creates an endpoint and answers its secret, this once.
// Authorization (the funds it names) is decided before anything is read or
// written; the store refuses it with ELIMIT when a fund it names is at
// FUNDSVC_WEBHOOK_MAX_ENDPOINTS, in the transaction that would create it.
func (s *server) createWebhook(c *gin.Context) {
	in := s.params(c)
	in.jsonBody()
	if !in.ok() {
		return
	}
	var req wire.WebhookRequest
	if err := decodeWebhook(c, s.maxBody, &req); err != nil {
		writeError(c, err)
		return
	}
	if !s.webhooksReady(c) {
		return
	}
	p := principal(c)
	if err := s.checkSubscription(viewer(c), req.URL, req.EventTypes, req.Funds); err != nil {
		writeError(c, err)
		return
	}
	now := time.Now().UTC()
	e := fund.WebhookEndpoint{
		ID: newWebhookID(), URL: req.URL, EventTypes: req.EventTypes, Funds: req.Funds,
		Enabled: req.Enabled == nil || *req.Enabled, CreatedBy: p.Subject, CreatedAt: now, UpdatedAt: now,
	}
	secret := webhooks.NewSecret()
	e.SealedSecret = s.opts.WebhookSealer.Seal(e.ID, secret)
	if err := s.docs.PutWebhookEndpoint(c.Request.Context(), e); err != nil {
		writeError(c, err)
		return
	}
	w := wire.WebhookOf(e, time.Now())
	w.Secret = secret
	c.Header("Location", "/v1/webhooks/"+e.ID)
	c.JSON(http.StatusCreated, w)
}

// visibleWebhook reads the path's endpoint, ENOTFOUND unless the token
// covers it.
func (s *server) visibleWebhook(c *gin.Context, in *params) (fund.WebhookEndpoint, bool) {
	id := in.id("webhookId")
	if !in.ok() || !s.webhooksReady(c) {
		return fund.WebhookEndpoint{}, false
	}
	e, err := s.docs.WebhookEndpoint(c.Request.Context(), id)
	if err == nil && !mayManage(viewer(c), e) {
		err = fund.Errorf(fund.ENOTFOUND, "no webhook endpoint %s", id)
	}
	if err != nil {
		writeError(c, err)
		return fund.WebhookEndpoint{}, false
	}
	return e, true
}

// listWebhooks lists the endpoints the token covers.
func (s *server) listWebhooks(c *gin.Context) {
	if !s.webhooksReady(c) {
		return
	}
	all, err := s.docs.WebhookEndpoints(c.Request.Context())
	if err != nil {
		writeError(c, err)
		return
	}
	v := viewer(c)
	out := []wire.Webhook{}
	for _, e := range all {
		if mayManage(v, e) {
			out = append(out, wire.WebhookOf(e, time.Now()))
		}
	}
	c.JSON(http.StatusOK, wire.Page[wire.Webhook]{Items: out})
}

func (s *server) getWebhook(c *gin.Context) {
	if e, ok := s.visibleWebhook(c, s.params(c)); ok {
		c.JSON(http.StatusOK, wire.WebhookOf(e, time.Now()))
	}
}

// patchWebhook changes an endpoint, and rotates its secret when asked.
func (s *server) patchWebhook(c *gin.Context) {
	in := s.params(c)
	in.id("webhookId")
	in.jsonBody()
	e, ok := s.visibleWebhook(c, in)
	if !ok {
		return
	}
	var req wire.WebhookPatch
	if err := decodeWebhook(c, s.maxBody, &req); err != nil {
		writeError(c, err)
		return
	}
	if req.URL != nil {
		e.URL = *req.URL
	}
	if req.EventTypes != nil {
		e.EventTypes = *req.EventTypes
	}
	if req.Funds != nil {
		e.Funds = *req.Funds
	}
	if err := s.checkSubscription(viewer(c), e.URL, e.EventTypes, e.Funds); err != nil {
		writeError(c, err)
		return
	}
	now := time.Now().UTC()
	if req.Enabled != nil {
		e.Enabled = *req.Enabled
		if e.Enabled {
			e.DisabledReason, e.DisabledAt, e.FailingSince = "", time.Time{}, time.Time{}
		}
	}
	var secret string
	if r := req.RotateSecret; r != nil {
		overlap := 24 * time.Hour
		if r.Overlap != "" {
			d, err := time.ParseDuration(r.Overlap)
			if err != nil || d < 0 || d > maxSecretOverlap {
				writeError(c, fund.Invalid("rotateSecret.overlap", "must be a duration from 0s to 168h, got %q", r.Overlap))
				return
			}
			overlap = d
		}
		secret = webhooks.NewSecret()
		e.SealedPrevious, e.PreviousUntil = e.SealedSecret, now.Add(overlap)
		e.SealedSecret = s.opts.WebhookSealer.Seal(e.ID, secret)
	}
	e.UpdatedAt = now
	e, err := s.docs.ReplaceWebhookEndpoint(c.Request.Context(), e)
	if err != nil {
		writeError(c, err)
		return
	}
	w := wire.WebhookOf(e, time.Now())
	w.Secret = secret
	c.JSON(http.StatusOK, w)
}

// deleteWebhook deletes an endpoint and answers what it was; its
// partition is purged after the answer (webhooks.Purger).
func (s *server) deleteWebhook(c *gin.Context) {
	e, ok := s.visibleWebhook(c, s.params(c))
	if !ok {
		return
	}
	if err := s.docs.DeleteWebhookEndpoint(c.Request.Context(), e); err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.WebhookOf(e, time.Now()))
}

// listWebhookDeliveries pages through an endpoint's delivery log.
func (s *server) listWebhookDeliveries(c *gin.Context) {
	in := s.params(c)
	e, ok := s.visibleWebhook(c, in)
	if !ok {
		return
	}
	pg := in.page("webhook-deliveries:" + e.ID)
	if !in.ok() {
		return
	}
	ds, next, err := s.docs.WebhookDeliveries(c.Request.Context(), e.ID, pg.limit, pg.cursor.Key)
	if err != nil {
		writeError(c, err)
		return
	}
	out := make([]wire.WebhookDelivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, wire.WebhookDeliveryOf(d))
	}
	c.JSON(http.StatusOK, wire.Page[wire.WebhookDelivery]{Items: out, Next: pg.next(next)})
}

// redeliverWebhook queues one event again for the endpoint.
func (s *server) redeliverWebhook(c *gin.Context) {
	in := s.params(c)
	in.id("webhookId")
	eventID := c.Param("eventId")
	if _, _, ok := fund.ParseEventID(eventID); !ok {
		in.fail(fund.Invalid("eventId", "is not an event ID (evt_<documentId>_v<version>)"))
	}
	e, ok := s.visibleWebhook(c, in)
	if !ok {
		return
	}
	d, err := s.docs.RedeliverWebhook(c.Request.Context(), e.ID, eventID, time.Now())
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusAccepted, wire.WebhookDeliveryOf(d))
}

// The examples the OpenAPI document shows for the webhook routes.
var (
	exampleWebhookAt = time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC)
	exampleWebhook   = wire.Webhook{
		ID: "wh_3f9c2a8e5b7d41c6a0e1f2b3", URL: "https://portal.example.com/hooks/fundsvc",
		EventTypes: []string{"document.created", "document.restated"}, Funds: []string{"FUND_A"}, Enabled: true,
		CreatedAt: exampleWebhookAt, UpdatedAt: exampleWebhookAt, CreatedBy: "admin@example.com",
	}
	exampleDelivery = wire.WebhookDelivery{
		EventID: "evt_DOC001_v3", EventType: "document.restated", DocumentID: "DOC001", Version: 3,
		Status: "pending", AttemptCount: 2, NextAttemptAt: exampleWebhookAt.Add(5*time.Minute + 7*time.Second),
		Attempts: []wire.WebhookAttempt{
			{At: exampleWebhookAt.Add(6 * time.Second), StatusCode: 500, LatencyMS: 84},
			{At: exampleWebhookAt.Add(11 * time.Second), Error: webhooks.NoAnswer},
		},
	}
)

func exampleCreatedWebhook() wire.Webhook {
	w := exampleWebhook
	w.Secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	return w
}

// webhookDoc is one entry of the OpenAPI document's webhooks: what an
// endpoint receives for one event type.
type webhookDoc struct {
	Name, ID, Summary, Description string
	Body                           fund.Event
	Responses                      map[string]string
}

// apiWebhooks is one webhookDoc per event type.
func apiWebhooks() []webhookDoc {
	var out []webhookDoc
	for i, t := range fund.EventTypes {
		version := i + 1
		ev := fund.Event{ID: fund.EventID("DOC001", version), Type: t, Timestamp: exampleWebhookAt.Add(time.Duration(version) * time.Minute),
			Data: fund.EventData{DocumentID: "DOC001", FundID: "FUND_A", Kind: fund.KindCapitalCallNotice, Version: version,
				VersionPath: fmt.Sprintf("/v1/documents/DOC001/versions/%d", version),
				Positions:   []fund.EventPosition{{PositionID: "POSITION_1", InvestorID: "INVESTOR_1", Change: fund.PositionAdded, ItemTypes: []fund.ItemKind{fund.CapitalCall}}}}}
		switch t {
		case fund.EventDocumentRestated:
			ev.Data.Positions[0].Change = fund.PositionChanged
		case fund.EventDocumentVoided:
			ev.Data.Positions[0].Change = fund.PositionRemoved
		}
		name := strings.ReplaceAll(string(t), ".", "_")
		out = append(out, webhookDoc{
			Name: string(t), ID: "on_" + name, Summary: "Delivered for each " + string(t) + " event",
			Description: "POSTed to every enabled endpoint subscribed to `" + string(t) + "` whose funds include the event's, for every version committed after the endpoint's creation, signed per Standard Webhooks 1.0: `webhook-id` is the event's ID (the same on every retry), `webhook-signature` the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` with the endpoint's secret (two, space-separated, during a rotation's overlap). At least once across instances; a document's versions in version order. Verify with a Standard Webhooks library and deduplicate on `id` (docs/webhooks.md).",
			Body:        ev,
			Responses: map[string]string{
				"200":     "Any 2xx answered within FUNDSVC_WEBHOOK_TIMEOUT (15 s) marks the delivery delivered; the body is not read beyond 4 KiB.",
				"410":     "Gone: the delivery is failed and the endpoint disabled, saying why (re-enable with PATCH).",
				"default": "Any other answer, a timeout or a failed connection is retried on the schedule (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, with jitter; a longer Retry-After wins), then failed.",
			},
		})
	}
	return out
}
