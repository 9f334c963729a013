package fund

import (
	"math"
	"time"
)

// WebhookEndpoint is one subscription to the event feed. Its secrets are
// sealed (AES-GCM) before they are set here: an endpoint never holds a
// usable secret.
type WebhookEndpoint struct {
	ID         string
	URL        string
	EventTypes []string // empty: every type
	Funds      []string // empty: every fund (only an administrator of every fund may ask for it)
	Enabled    bool
	// DisabledReason says why delivery stopped when it was not by request
	// (410 Gone, failing for days); empty otherwise.
	DisabledReason string
	DisabledAt     time.Time
	// FailingSince is when the endpoint's current run of failed attempts
	// began; zero while it answers.
	FailingSince time.Time
	// SealedSecret is the current secret, sealed; SealedPrevious the one it
	// replaced, still signed with until PreviousUntil.
	SealedSecret   []byte
	SealedPrevious []byte
	PreviousUntil  time.Time
	CreatedBy      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Revision counts the endpoint's changes: each update is conditional
	// on the one it read.
	Revision int
}

// Scope is the funds e receives the events of, as the viewer that
// administers them: every fund when e names none.
func (e WebhookEndpoint) Scope() Viewer { return Viewer{AllFunds: len(e.Funds) == 0, Funds: e.Funds} }

// WebhookAttempt is one try of a delivery.
type WebhookAttempt struct {
	At         time.Time
	StatusCode int    // 0 when no answer came
	Error      string // when no answer came, the one word the deliverer records for any cause (webhooks.NoAnswer)
	LatencyMS  int64  // to the answer; 0 when none came
	Instance   string
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed" // the schedule ran out, or the endpoint answered 410
)

// WebhookDelivery is the delivery of one event to one endpoint: its log.
// It holds no body: each attempt builds it from the event, which is
// immutable, so every attempt sends the same bytes and no event's size
// bears on the log's.
type WebhookDelivery struct {
	EndpointID    string
	EventID       string
	EventType     string
	DocumentID    string
	Version       int
	CommittedAt   time.Time // the event's commit instant, for the delivery lag
	Status        string
	Attempts      []WebhookAttempt // the latest, store.MaxLoggedAttempts at most
	AttemptCount  int
	NextAttemptAt time.Time // zero once no attempt is due
	CreatedAt     time.Time
	DeliveredAt   time.Time
}

// WebhookPending is an event waiting in an endpoint's queue, with the lease
// of the instance trying it.
type WebhookPending struct {
	EndpointID    string
	EventID       string
	OrderKey      string // the document (events of one are delivered in version order)
	Version       int
	NextAttemptAt int64 // Unix milliseconds
	Attempts      int
	LeaseOwner    string
	LeaseUntil    int64 // Unix milliseconds
}

// WebhookPurge is a deleted endpoint whose deliveries and queue are still
// to be deleted.
type WebhookPurge struct {
	EndpointID string
	DeletedAt  time.Time
}

// WebhookWork is an endpoint's work marker: no delivery of its queue is
// due before DueAt. Every change to the queue that may make one due sooner
// (an enqueue, a finished attempt, a redelivery, a released lease) sets
// DueAt to 0 and raises Seq in the same write; a round that read the queue
// sets DueAt to what it found, conditional on Seq, so it never hides a
// change it did not see.
type WebhookWork struct {
	EndpointID string
	DueAt      int64 // Unix milliseconds; WebhookNeverDue for an empty queue
	Seq        int
}

// WebhookNeverDue is the DueAt of an endpoint whose queue is empty.
const WebhookNeverDue = math.MaxInt64

// WebhookState is what a delivery round reads first.
type WebhookState struct {
	Endpoints []WebhookEndpoint
	Work      map[string]WebhookWork // by endpoint ID; none: nothing was ever queued for it
	Fill      string                 // the feed cursor every queue is filled up to ("" before the first round)
}
