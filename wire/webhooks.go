package wire

import (
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// WebhookRequest creates a webhook endpoint (POST /v1/webhooks).
type WebhookRequest struct {
	URL        string   `json:"url" maxLength:"2048" doc:"Where events are POSTed: an https URL of a public host, without credentials or fragment (plain http only to a loopback host, and only when the server sets FUNDSVC_WEBHOOK_ALLOW_LOOPBACK)."`
	EventTypes []string `json:"eventTypes,omitempty" doc:"The event types delivered (document.created, document.restated, document.voided); every type when absent or empty."`
	Funds      []string `json:"funds,omitempty" doc:"The funds whose events are delivered, each one the token covers; every fund when absent, which only a token of every fund may ask for."`
	Enabled    *bool    `json:"enabled,omitempty" doc:"Whether events are delivered; true when absent."`
}

// WebhookPatch changes an endpoint (PATCH /v1/webhooks/{webhookId}): the
// members present replace the endpoint's.
type WebhookPatch struct {
	URL        *string   `json:"url,omitempty" maxLength:"2048" doc:"A new URL, under the same rules as at creation."`
	EventTypes *[]string `json:"eventTypes,omitempty" doc:"The new event types; an empty list means every type."`
	Funds      *[]string `json:"funds,omitempty" doc:"The new funds, each one the token covers; an empty list means every fund, which only a token of every fund may ask for."`
	Enabled    *bool     `json:"enabled,omitempty" doc:"true to (re-)enable delivery, which also clears why it was disabled and resumes the events queued meanwhile; false to pause it (events are still queued)."`
	// RotateSecret, when present, replaces the secret.
	RotateSecret *SecretRotation `json:"rotateSecret,omitempty" doc:"Replace the signing secret: the answer shows the new one, once. During the overlap each delivery carries two signatures, space-separated, one with each secret."`
}

// SecretRotation is how a secret is replaced.
type SecretRotation struct {
	Overlap string `json:"overlap,omitempty" maxLength:"32" doc:"How long the previous secret still signs, beside the new one: a Go duration from 0s to 168h, 24h when absent."`
}

// Webhook is an endpoint as answered.
type Webhook struct {
	ID                  string    `json:"id" doc:"The endpoint's ID, chosen by the server."`
	URL                 string    `json:"url" doc:"Where events are POSTed."`
	EventTypes          []string  `json:"eventTypes" doc:"The event types delivered; empty means every type."`
	Funds               []string  `json:"funds" doc:"The funds whose events are delivered; empty means every fund."`
	Enabled             bool      `json:"enabled" doc:"Whether events are delivered now."`
	DisabledReason      string    `json:"disabledReason,omitempty" doc:"Why the server disabled delivery (the endpoint answered 410 Gone, or failed every attempt for longer than FUNDSVC_WEBHOOK_DISABLE_AFTER); re-enable with PATCH enabled true."`
	DisabledAt          time.Time `json:"disabledAt,omitzero" doc:"When the server disabled delivery (UTC)."`
	FailingSince        time.Time `json:"failingSince,omitzero" doc:"When the endpoint's current run of failed attempts began (UTC); absent while it answers."`
	PreviousSecretUntil time.Time `json:"previousSecretUntil,omitzero" doc:"Until when deliveries are also signed with the secret a rotation replaced (UTC)."`
	CreatedAt           time.Time `json:"createdAt" doc:"When the endpoint was created (UTC); events committed before are not delivered to it."`
	UpdatedAt           time.Time `json:"updatedAt" doc:"When the endpoint was last changed (UTC)."`
	CreatedBy           string    `json:"createdBy" doc:"The subject (sub) of the token that created it."`
	Secret              string    `json:"secret,omitempty" doc:"The signing secret (whsec_ and base64), shown only in the answer that created or rotated it and never again; stored encrypted."`
}

// WebhookDelivery is the delivery of one event to one endpoint.
type WebhookDelivery struct {
	EventID       string           `json:"eventId" doc:"The event delivered, also the webhook-id header of every attempt."`
	EventType     string           `json:"eventType" doc:"The event's type."`
	DocumentID    string           `json:"documentId,omitempty" doc:"The document the event is about."`
	Version       int              `json:"version,omitempty" doc:"The document version the event announces."`
	Status        string           `json:"status" doc:"pending (waiting or being tried), delivered (an attempt got a 2xx), or failed (the retry schedule ran out, or the endpoint answered 410 Gone)."`
	AttemptCount  int              `json:"attemptCount" doc:"How many attempts were made."`
	NextAttemptAt time.Time        `json:"nextAttemptAt,omitzero" doc:"When the next attempt is due (UTC), while pending; a later version of the same document waits for this one."`
	DeliveredAt   time.Time        `json:"deliveredAt,omitzero" doc:"When an attempt got a 2xx (UTC)."`
	Attempts      []WebhookAttempt `json:"attempts" doc:"The latest attempts (at most 20), oldest first."`
}

// WebhookAttempt is one try of a delivery.
type WebhookAttempt struct {
	At         time.Time `json:"at" doc:"When the attempt was sent (UTC); also its webhook-timestamp."`
	StatusCode int       `json:"statusCode,omitempty" doc:"The endpoint's HTTP status; absent when no answer came."`
	Error      string    `json:"error,omitempty" doc:"'no answer' when no HTTP answer came, whatever the cause (the address refused, DNS, the connection refused, reset or closed, TLS, a timeout): the log does not tell how a connection failed. Absent when the endpoint answered."`
	LatencyMS  int64     `json:"latencyMs,omitempty" doc:"Milliseconds from sending to the answer; absent when no answer came."`
}

// WebhookOf is endpoint e as answered at now, without its secrets: the
// previous secret's end shows while it still signs.
func WebhookOf(e fund.WebhookEndpoint, now time.Time) Webhook {
	w := Webhook{
		ID: e.ID, URL: e.URL, EventTypes: append([]string{}, e.EventTypes...), Funds: append([]string{}, e.Funds...),
		Enabled: e.Enabled, DisabledReason: e.DisabledReason, DisabledAt: e.DisabledAt, FailingSince: e.FailingSince,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, CreatedBy: e.CreatedBy,
	}
	if len(e.SealedPrevious) > 0 && now.Before(e.PreviousUntil) {
		w.PreviousSecretUntil = e.PreviousUntil
	}
	return w
}

// WebhookDeliveryOf is delivery d as answered: its next attempt only while
// it is pending.
func WebhookDeliveryOf(d fund.WebhookDelivery) WebhookDelivery {
	out := WebhookDelivery{
		EventID: d.EventID, EventType: d.EventType, DocumentID: d.DocumentID, Version: d.Version,
		Status: d.Status, AttemptCount: d.AttemptCount, DeliveredAt: d.DeliveredAt, Attempts: []WebhookAttempt{},
	}
	if d.Status == fund.DeliveryPending {
		out.NextAttemptAt = d.NextAttemptAt
	}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, WebhookAttempt{At: a.At, StatusCode: a.StatusCode, Error: a.Error, LatencyMS: a.LatencyMS})
	}
	return out
}
