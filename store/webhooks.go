package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// Webhook endpoints, their feed cursors, delivery logs and pending queues,
// as stored: fund's values (fund/webhook.go), written in items that add
// their keys and type, read back as the values. The policy (what to
// deliver, when to retry, how to sign) is the webhooks package's; this file
// only stores it, every change by a conditional write, so that several
// instances agree on who delivers what (see docs/webhooks.md).

type webhookEndpointItem struct {
	PK, SK, Type string
	fund.WebhookEndpoint
}

// MaxLoggedAttempts bounds the attempts a delivery's log keeps.
const MaxLoggedAttempts = 20

type webhookDeliveryItem struct {
	PK, SK, Type string
	fund.WebhookDelivery
}

type webhookPendingItem struct {
	PK, SK, Type string
	fund.WebhookPending
}

// pendingItemOf is p's item in its endpoint's queue.
func pendingItemOf(p fund.WebhookPending) webhookPendingItem {
	return webhookPendingItem{PK: WebhookPK(p.EndpointID), SK: pendingSK(p), Type: TypeWebhookPending, WebhookPending: p}
}

// pendingSK is p's place in its endpoint's queue: by document, then version.
func pendingSK(p fund.WebhookPending) string {
	return WebhookPendingSK(p.OrderKey, p.Version, p.EventID)
}

type webhookCursorItem struct {
	PK, SK, Type string
	Cursor       string
}

// ErrWebhookLeaseLost is returned by FinishWebhookAttempt when another
// instance took the delivery over (the lease ended).
var ErrWebhookLeaseLost = errors.New("store: the webhook delivery's lease is held by another instance")

func webhookNotFound(id string) error {
	return fund.Errorf(fund.ENOTFOUND, "no webhook endpoint %s", id)
}

// DefaultMaxWebhookEndpoints is Store.MaxWebhookEndpoints from NewStore.
const DefaultMaxWebhookEndpoints = 10

// MaxWebhookEndpointFunds is the most funds one endpoint names: a change
// of every one of them (a PATCH replacing them all) adjusts 2 ×
// MaxWebhookEndpointFunds counts and the endpoint in one transaction of at
// most 100 items.
const MaxWebhookEndpointFunds = 49

// An endpoint's funds are counted, per fund, by a count item in
// WebhooksPK (WebhookCountSK), changed in the transaction that creates,
// changes or deletes the endpoint: it is raised only while below
// Store.MaxWebhookEndpoints, so two instances creating an endpoint of the
// same fund at once cannot both pass the limit. An endpoint of every fund
// (no funds named) is counted under WebhookCountSK("").

type webhookCountItem struct {
	PK, SK, Type string
	Count        int
}

// countedFunds are the count items an endpoint of funds is counted
// under, each once.
func countedFunds(funds []string) []string {
	if len(funds) == 0 {
		return []string{""}
	}
	out := slices.Clone(funds)
	slices.Sort(out)
	return slices.Compact(out)
}

// raiseCount is the update raising the count of fundID ("" for every
// fund) by one, refused at max.
func (s *Store) raiseCount(fundID string, max int) *dynamo.Update {
	return s.table.Update(AttrPK, WebhooksPK).Range(AttrSK, WebhookCountSK(fundID)).
		Set("Type", TypeWebhookCount).Add("Count", 1).
		If("attribute_not_exists($) OR $ < ?", "Count", "Count", max)
}

// lowerCount is the update lowering the count of fundID by one.
func (s *Store) lowerCount(fundID string) *dynamo.Update {
	return s.table.Update(AttrPK, WebhooksPK).Range(AttrSK, WebhookCountSK(fundID)).
		Set("Type", TypeWebhookCount).Add("Count", -1)
}

// limitError is the ELIMIT error of a transaction whose raises (the
// transaction's items from first on, one per fund of raised) were refused:
// it names the first fund at the limit.
func (s *Store) limitError(err error, first int, raised []string) error {
	var txe *types.TransactionCanceledException
	if errors.As(err, &txe) {
		for i, f := range raised {
			if j := first + i; j < len(txe.CancellationReasons) {
				if c := txe.CancellationReasons[j].Code; c != nil && *c == "ConditionalCheckFailed" {
					return endpointLimit(f, s.MaxWebhookEndpoints)
				}
			}
		}
	}
	return nil
}

func endpointLimit(fundID string, max int) error {
	what := "fund " + fundID + " has"
	if fundID == "" {
		what = "every fund (an endpoint naming no funds) has"
	}
	return &fund.Error{Code: fund.ELIMIT, Field: "funds", Message: fmt.Sprintf(
		"%s %d webhook endpoints, the limit per fund (FUNDSVC_WEBHOOK_MAX_ENDPOINTS); delete one first", what, max)}
}

// PutWebhookEndpoint creates e and counts it under each of its funds, in
// one transaction. It returns ELIMIT if a fund it names already has
// MaxWebhookEndpoints endpoints, ECONFLICT if its ID is taken.
func (s *Store) PutWebhookEndpoint(ctx context.Context, e fund.WebhookEndpoint) error {
	it := webhookEndpointItem{PK: WebhooksPK, SK: WebhookEndpointSK(e.ID), Type: TypeWebhookEndpoint, WebhookEndpoint: e}
	tx := s.db.WriteTx().Put(s.table.Put(it).If("attribute_not_exists($)", AttrPK))
	raised := countedFunds(e.Funds)
	for _, f := range raised {
		tx = tx.Update(s.raiseCount(f, s.MaxWebhookEndpoints))
	}
	err := tx.Run(ctx)
	if isTxCondFailed(err) {
		if lerr := s.limitError(err, 1, raised); lerr != nil {
			return lerr
		}
		return fund.Errorf(fund.ECONFLICT, "a webhook endpoint %s exists", e.ID)
	}
	if err != nil {
		return fmt.Errorf("store: create webhook endpoint %s: %w", e.ID, err)
	}
	return nil
}

// ReplaceWebhookEndpoint stores e over the revision it was read at
// (e.Revision), as revision e.Revision+1, and moves its counts from the
// funds it named to the ones it names, in one transaction. It reads the
// stored endpoint first (one consistent GetItem). It returns ENOTFOUND if
// the endpoint is gone, ECONFLICT if it changed since, ELIMIT if a fund
// it now names has MaxWebhookEndpoints endpoints.
func (s *Store) ReplaceWebhookEndpoint(ctx context.Context, e fund.WebhookEndpoint) (fund.WebhookEndpoint, error) {
	read := e.Revision
	stored, err := s.WebhookEndpoint(ctx, e.ID)
	if err != nil {
		return fund.WebhookEndpoint{}, err
	}
	changed := func() (fund.WebhookEndpoint, error) {
		return fund.WebhookEndpoint{}, fund.Errorf(fund.ECONFLICT, "the webhook endpoint %s changed meanwhile; read it and try again", e.ID)
	}
	if stored.Revision != read {
		return changed()
	}
	e.Revision++
	it := webhookEndpointItem{PK: WebhooksPK, SK: WebhookEndpointSK(e.ID), Type: TypeWebhookEndpoint, WebhookEndpoint: e}
	put := s.table.Put(it).If("attribute_exists($) AND $ = ?", AttrPK, "Revision", read)
	tx := s.db.WriteTx().Put(put)
	was, now := countedFunds(stored.Funds), countedFunds(e.Funds)
	var raised, lowered []string
	for _, f := range now {
		if !slices.Contains(was, f) {
			raised = append(raised, f)
			tx = tx.Update(s.raiseCount(f, s.MaxWebhookEndpoints))
		}
	}
	for _, f := range was {
		if !slices.Contains(now, f) {
			lowered = append(lowered, f)
			tx = tx.Update(s.lowerCount(f))
		}
	}
	if len(raised)+len(lowered) == 0 {
		err = put.Run(ctx) // no count changes: one PutItem
	} else {
		err = tx.Run(ctx)
	}
	if isTxCondFailed(err) {
		if lerr := s.limitError(err, 1, raised); lerr != nil {
			return fund.WebhookEndpoint{}, lerr
		}
		if _, gerr := s.WebhookEndpoint(ctx, e.ID); gerr != nil {
			return fund.WebhookEndpoint{}, gerr
		}
		return changed()
	}
	if err != nil {
		return fund.WebhookEndpoint{}, fmt.Errorf("store: update webhook endpoint %s: %w", e.ID, err)
	}
	return e, nil
}

// WebhookEndpoint reads one endpoint (one consistent GetItem); ENOTFOUND if
// there is none.
func (s *Store) WebhookEndpoint(ctx context.Context, id string) (fund.WebhookEndpoint, error) {
	var e fund.WebhookEndpoint
	err := s.table.Get(AttrPK, WebhooksPK).Range(AttrSK, dynamo.Equal, WebhookEndpointSK(id)).Consistent(true).One(ctx, &e)
	if errors.Is(err, dynamo.ErrNotFound) {
		return fund.WebhookEndpoint{}, webhookNotFound(id)
	}
	if err != nil {
		return fund.WebhookEndpoint{}, fmt.Errorf("store: read webhook endpoint %s: %w", id, err)
	}
	return e, nil
}

// WebhookEndpoints reads every endpoint: one Query of their partition (more
// pages only past 1 MB).
func (s *Store) WebhookEndpoints(ctx context.Context) ([]fund.WebhookEndpoint, error) {
	var out []fund.WebhookEndpoint
	err := s.table.Get(AttrPK, WebhooksPK).Range(AttrSK, dynamo.BeginsWith, WebhookEndpointPrefix).Consistent(true).All(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("store: list webhook endpoints: %w", err)
	}
	return out, nil
}

// MarkWebhookEndpoint records how the endpoint is doing, without touching
// what an administrator set, and disables it when reason is not empty. It
// raises the revision, so a PATCH that read the endpoint before is refused
// rather than undoing a disable. A deleted endpoint is left alone.
func (s *Store) MarkWebhookEndpoint(ctx context.Context, id string, failingSince time.Time, disableReason string, now time.Time) error {
	u := s.table.Update(AttrPK, WebhooksPK).Range(AttrSK, WebhookEndpointSK(id)).Add("Revision", 1)
	if failingSince.IsZero() {
		u = u.Remove("FailingSince")
	} else {
		u = u.Set("FailingSince", failingSince.UTC())
	}
	if disableReason != "" {
		u = u.Set("Enabled", false).Set("DisabledReason", disableReason).Set("DisabledAt", now.UTC())
	}
	err := u.If("attribute_exists($)", AttrPK).Run(ctx)
	if err != nil && !dynamo.IsCondCheckFailed(err) {
		return fmt.Errorf("store: mark webhook endpoint %s: %w", id, err)
	}
	return nil
}

// WebhookRound reads the endpoints, their work markers and the fill cursor:
// one consistent Query of WebhooksPK (more pages only past 1 MB, some
// 10,000 endpoints), whatever the number of endpoints.
func (s *Store) WebhookRound(ctx context.Context) (fund.WebhookState, error) {
	var items []dynamo.Item
	if err := s.table.Get(AttrPK, WebhooksPK).Consistent(true).All(ctx, &items); err != nil {
		return fund.WebhookState{}, fmt.Errorf("store: read the webhook endpoints and their work: %w", err)
	}
	st := fund.WebhookState{Work: map[string]fund.WebhookWork{}}
	for _, av := range items {
		sk, _ := av[AttrSK].(*types.AttributeValueMemberS)
		if sk == nil {
			continue
		}
		var err error
		switch {
		case strings.HasPrefix(sk.Value, WebhookEndpointPrefix):
			var e fund.WebhookEndpoint
			err = dynamo.UnmarshalItem(av, &e)
			st.Endpoints = append(st.Endpoints, e)
		case strings.HasPrefix(sk.Value, WebhookWorkPrefix):
			var w fund.WebhookWork
			err = dynamo.UnmarshalItem(av, &w)
			st.Work[w.EndpointID] = w
		case sk.Value == WebhookFillSK:
			var it webhookCursorItem
			err = dynamo.UnmarshalItem(av, &it)
			st.Fill = it.Cursor
		}
		if err != nil {
			return fund.WebhookState{}, fmt.Errorf("store: read %s: %w", sk.Value, err)
		}
	}
	return st, nil
}

// AdvanceWebhookFill moves the fill cursor from from to to, if it is still
// at from; it reports whether it moved (another instance may have moved it
// first, which is no error).
func (s *Store) AdvanceWebhookFill(ctx context.Context, from, to string) (bool, error) {
	it := webhookCursorItem{PK: WebhooksPK, SK: WebhookFillSK, Type: TypeWebhookCursor, Cursor: to}
	q := s.table.Put(it)
	if from == "" {
		q = q.If("attribute_not_exists($) OR $ = ?", AttrPK, "Cursor", "")
	} else {
		q = q.If("$ = ?", "Cursor", from)
	}
	err := q.Run(ctx)
	if dynamo.IsCondCheckFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: advance the webhook fill cursor: %w", err)
	}
	return true, nil
}

// workDue is the update that marks endpoint id's queue as due now.
func (s *Store) workDue(id string) *dynamo.Update {
	return s.table.Update(AttrPK, WebhooksPK).Range(AttrSK, WebhookWorkSK(id)).
		Set("Type", TypeWebhookWork).Set("EndpointID", id).Set("DueAt", 0).Add("Seq", 1)
}

// SettleWebhookWork records that endpoint id's queue has nothing due
// before dueAt (WebhookNeverDue: it is empty), as read while its marker
// was at seq; a change since (the marker's Seq moved) is left as it is.
// One conditional UpdateItem.
func (s *Store) SettleWebhookWork(ctx context.Context, id string, seq int, dueAt int64) error {
	err := s.table.Update(AttrPK, WebhooksPK).Range(AttrSK, WebhookWorkSK(id)).Set("DueAt", dueAt).
		If("$ = ?", "Seq", seq).Run(ctx)
	if err != nil && !dynamo.IsCondCheckFailed(err) {
		return fmt.Errorf("store: settle the work of webhook %s: %w", id, err)
	}
	return nil
}

// DropWebhookWork deletes the work marker of a deleted endpoint (nothing
// can be queued for it again), unless it changed since it was read at seq.
func (s *Store) DropWebhookWork(ctx context.Context, id string, seq int) error {
	err := s.table.Delete(AttrPK, WebhooksPK).Range(AttrSK, WebhookWorkSK(id)).If("$ = ?", "Seq", seq).Run(ctx)
	if err != nil && !dynamo.IsCondCheckFailed(err) {
		return fmt.Errorf("store: drop the work of webhook %s: %w", id, err)
	}
	return nil
}

// EnqueueWebhookDelivery writes the delivery's log entry and its place in
// the pending queue, and marks the endpoint's work due, in one
// transaction, unless the event was enqueued for the endpoint before or
// the endpoint is deleted (then nothing changes and it reports false).
func (s *Store) EnqueueWebhookDelivery(ctx context.Context, d fund.WebhookDelivery, now time.Time) (bool, error) {
	d.Status, d.NextAttemptAt, d.CreatedAt = fund.DeliveryPending, now.UTC(), now.UTC()
	p := pendingItemOf(fund.WebhookPending{EndpointID: d.EndpointID, EventID: d.EventID,
		OrderKey: orderKeyOf(d), Version: d.Version, NextAttemptAt: now.UnixMilli()})
	err := s.db.WriteTx().
		Put(s.table.Put(webhookDeliveryItem{PK: WebhookPK(d.EndpointID), SK: WebhookDeliverySK(d.EventID), Type: TypeWebhookDelivery, WebhookDelivery: d}).
			If("attribute_not_exists($)", AttrPK)).
		Put(s.table.Put(p)).
		Update(s.workDue(d.EndpointID)).
		Check(s.table.Check(AttrPK, WebhooksPK).Range(AttrSK, WebhookEndpointSK(d.EndpointID)).If("attribute_exists($)", AttrPK)).
		Run(ctx)
	if isTxCondFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: enqueue event %s for webhook %s: %w", d.EventID, d.EndpointID, err)
	}
	return true, nil
}

// orderKeyOf is what a delivery waits in line with: its document's other
// versions, or nothing (its own event) when it names no document.
func orderKeyOf(d fund.WebhookDelivery) string {
	if d.DocumentID != "" {
		return d.DocumentID
	}
	return "#" + d.EventID
}

// isTxCondFailed reports whether a transaction was refused by a condition.
func isTxCondFailed(err error) bool {
	return err != nil && dynamo.IsCondCheckFailed(err)
}

// PendingWebhookDeliveries reads up to limit entries of the endpoint's
// pending queue, by document then version (one Query).
func (s *Store) PendingWebhookDeliveries(ctx context.Context, endpointID string, limit int) ([]fund.WebhookPending, error) {
	var out []fund.WebhookPending
	err := s.table.Get(AttrPK, WebhookPK(endpointID)).Range(AttrSK, dynamo.BeginsWith, WebhookPendingPrefix).
		Consistent(true).Limit(limit).All(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("store: read the pending deliveries of webhook %s: %w", endpointID, err)
	}
	return out, nil
}

// ClaimWebhookDelivery makes owner the one instance trying p until until,
// if it is due and nobody holds it (one conditional UpdateItem); it reports
// whether it did.
func (s *Store) ClaimWebhookDelivery(ctx context.Context, p fund.WebhookPending, owner string, now, until time.Time) (bool, error) {
	err := s.table.Update(AttrPK, WebhookPK(p.EndpointID)).Range(AttrSK, pendingSK(p)).
		Set("LeaseOwner", owner).Set("LeaseUntil", until.UnixMilli()).
		If("attribute_exists($) AND $ <= ? AND (attribute_not_exists($) OR $ < ?)",
			AttrPK, "NextAttemptAt", now.UnixMilli(), "LeaseUntil", "LeaseUntil", now.UnixMilli()).
		Run(ctx)
	if dynamo.IsCondCheckFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: claim delivery of %s to webhook %s: %w", p.EventID, p.EndpointID, err)
	}
	return true, nil
}

// ReleaseWebhookDelivery ends owner's lease of p without recording an
// attempt, and marks the endpoint's work due, so that the next round may
// claim it at once (one transaction). A lease owner no longer holds is
// left alone.
func (s *Store) ReleaseWebhookDelivery(ctx context.Context, p fund.WebhookPending, owner string) error {
	err := s.db.WriteTx().
		Update(s.table.Update(AttrPK, WebhookPK(p.EndpointID)).Range(AttrSK, pendingSK(p)).Remove("LeaseOwner", "LeaseUntil").
			If("$ = ?", "LeaseOwner", owner)).
		Update(s.workDue(p.EndpointID)).
		Run(ctx)
	if err != nil && !isTxCondFailed(err) {
		return fmt.Errorf("store: release delivery of %s to webhook %s: %w", p.EventID, p.EndpointID, err)
	}
	return nil
}

// WebhookDeliveryOf reads the delivery of one event (one consistent GetItem).
func (s *Store) WebhookDeliveryOf(ctx context.Context, endpointID, eventID string) (fund.WebhookDelivery, error) {
	var d fund.WebhookDelivery
	err := s.table.Get(AttrPK, WebhookPK(endpointID)).Range(AttrSK, dynamo.Equal, WebhookDeliverySK(eventID)).Consistent(true).One(ctx, &d)
	if errors.Is(err, dynamo.ErrNotFound) {
		return fund.WebhookDelivery{}, fund.Errorf(fund.ENOTFOUND, "no delivery of event %s to webhook %s", eventID, endpointID)
	}
	if err != nil {
		return fund.WebhookDelivery{}, fmt.Errorf("store: read delivery of %s to webhook %s: %w", eventID, endpointID, err)
	}
	return d, nil
}

// FinishWebhookAttempt records an attempt in one transaction, conditional on
// owner still holding the lease: the log gets the attempt and the status;
// the pending entry goes (status delivered or failed) or waits until next
// (status pending); the endpoint's work is marked due, for the next round
// to read its queue again. It returns ErrWebhookLeaseLost if another instance
// took the delivery over.
func (s *Store) FinishWebhookAttempt(ctx context.Context, p fund.WebhookPending, owner string, a fund.WebhookAttempt, status string, next time.Time) error {
	pk := WebhookPK(p.EndpointID)
	d, err := s.WebhookDeliveryOf(ctx, p.EndpointID, p.EventID)
	if err != nil {
		return err
	}
	log := append(d.Attempts, a)
	if len(log) > MaxLoggedAttempts {
		log = log[len(log)-MaxLoggedAttempts:]
	}
	du := s.table.Update(AttrPK, pk).Range(AttrSK, WebhookDeliverySK(p.EventID)).
		Set("Attempts", log).Set("Status", status).Add("AttemptCount", 1)
	if status == fund.DeliveryPending {
		du = du.Set("NextAttemptAt", next.UTC())
	} else {
		du = du.Remove("NextAttemptAt")
	}
	if status == fund.DeliveryDelivered {
		du = du.Set("DeliveredAt", a.At.UTC())
	}
	tx := s.db.WriteTx().Update(du.If("attribute_exists($)", AttrPK))
	if status == fund.DeliveryPending {
		tx = tx.Update(s.table.Update(AttrPK, pk).Range(AttrSK, pendingSK(p)).
			Set("NextAttemptAt", next.UnixMilli()).Add("Attempts", 1).Remove("LeaseOwner", "LeaseUntil").
			If("$ = ?", "LeaseOwner", owner))
	} else {
		tx = tx.Delete(s.table.Delete(AttrPK, pk).Range(AttrSK, pendingSK(p)).If("$ = ?", "LeaseOwner", owner))
	}
	err = tx.Update(s.workDue(p.EndpointID)).Run(ctx)
	if isTxCondFailed(err) {
		return ErrWebhookLeaseLost
	}
	if err != nil {
		return fmt.Errorf("store: record delivery of %s to webhook %s: %w", p.EventID, p.EndpointID, err)
	}
	return nil
}

// WebhookDeliveries reads one page of the endpoint's delivery log, by event
// ID (one Query).
func (s *Store) WebhookDeliveries(ctx context.Context, endpointID string, limit int, start PageKey) ([]fund.WebhookDelivery, PageKey, error) {
	from, err := paging(start)
	if err != nil {
		return nil, nil, err
	}
	q := s.table.Get(AttrPK, WebhookPK(endpointID)).Range(AttrSK, dynamo.BeginsWith, WebhookDeliveryPrefix).Limit(limit)
	if from != nil {
		q = q.StartFrom(from)
	}
	var out []fund.WebhookDelivery
	last, err := q.AllWithLastEvaluatedKey(ctx, &out)
	if err != nil {
		return nil, nil, fmt.Errorf("store: read the deliveries of webhook %s: %w", endpointID, err)
	}
	if len(out) < limit {
		last = nil
	}
	return out, pageKeyOf(last), nil
}

// RedeliverWebhook puts an event delivered (or given up) back in the
// endpoint's queue, due now, in one transaction. It returns ENOTFOUND if
// the event was never enqueued for the endpoint and ECONFLICT if it is
// still pending.
func (s *Store) RedeliverWebhook(ctx context.Context, endpointID, eventID string, now time.Time) (fund.WebhookDelivery, error) {
	d, err := s.WebhookDeliveryOf(ctx, endpointID, eventID)
	if err != nil {
		return fund.WebhookDelivery{}, err
	}
	if d.Status == fund.DeliveryPending {
		return fund.WebhookDelivery{}, fund.Errorf(fund.ECONFLICT, "event %s is still being delivered to webhook %s", eventID, endpointID)
	}
	pk := WebhookPK(endpointID)
	p := pendingItemOf(fund.WebhookPending{EndpointID: endpointID, EventID: eventID,
		OrderKey: orderKeyOf(d), Version: d.Version, NextAttemptAt: now.UnixMilli()})
	err = s.db.WriteTx().
		Update(s.table.Update(AttrPK, pk).Range(AttrSK, WebhookDeliverySK(eventID)).
			Set("Status", fund.DeliveryPending).Set("NextAttemptAt", now.UTC()).
			If("$ = ?", "Status", d.Status)).
		Put(s.table.Put(p).If("attribute_not_exists($)", AttrPK)).
		Update(s.workDue(endpointID)).
		Run(ctx)
	if isTxCondFailed(err) {
		return fund.WebhookDelivery{}, fund.Errorf(fund.ECONFLICT, "event %s is still being delivered to webhook %s", eventID, endpointID)
	}
	if err != nil {
		return fund.WebhookDelivery{}, fmt.Errorf("store: redeliver %s to webhook %s: %w", eventID, endpointID, err)
	}
	d.Status, d.NextAttemptAt = fund.DeliveryPending, now.UTC()
	return d, nil
}
