package store

import (
	"context"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

type webhookPurgeItem struct {
	PK, SK, Type string
	fund.WebhookPurge
}

// DeleteWebhookEndpoint removes endpoint e, lowers the counts of its funds
// and records its partition as to be purged (WebhookPurges), in one
// transaction conditional on the revision e was read at. When the
// endpoint changed meanwhile (the deliverer marks it), it is read again
// (one consistent GetItem) and the deletion tried again, up to three
// times. It returns ENOTFOUND if there is none. No instance delivers for an
// endpoint it cannot read.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, e fund.WebhookEndpoint) error {
	for try := 0; ; try++ {
		tx := s.db.WriteTx().
			Delete(s.table.Delete(AttrPK, WebhooksPK).Range(AttrSK, WebhookEndpointSK(e.ID)).If("$ = ?", "Revision", e.Revision)).
			Delete(s.table.Delete(AttrPK, WebhooksPK).Range(AttrSK, WebhookWorkSK(e.ID))).
			Put(s.table.Put(webhookPurgeItem{PK: WebhooksPK, SK: WebhookPurgeSK(e.ID), Type: TypeWebhookPurge,
				WebhookPurge: fund.WebhookPurge{EndpointID: e.ID, DeletedAt: s.Now().UTC()}}))
		for _, f := range countedFunds(e.Funds) {
			tx = tx.Update(s.lowerCount(f))
		}
		err := tx.Run(ctx)
		if err == nil {
			return nil
		}
		if !isTxCondFailed(err) {
			return fmt.Errorf("store: delete webhook endpoint %s: %w", e.ID, err)
		}
		if try == 2 {
			return fund.Errorf(fund.ECONFLICT, "the webhook endpoint %s kept changing while it was deleted; try again", e.ID)
		}
		if e, err = s.WebhookEndpoint(ctx, e.ID); err != nil {
			return err
		}
	}
}

// WebhookPurges lists the deleted endpoints whose partitions are still to
// be emptied (one Query of WebhooksPK).
func (s *Store) WebhookPurges(ctx context.Context) ([]fund.WebhookPurge, error) {
	var out []fund.WebhookPurge
	err := s.table.Get(AttrPK, WebhooksPK).Range(AttrSK, dynamo.BeginsWith, WebhookPurgePrefix).Consistent(true).All(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("store: list webhook purges: %w", err)
	}
	return out, nil
}

// purgePage is how many items one step of PurgeWebhookItems deletes: one
// Query page of keys, then BatchWriteItem requests of 25.
const purgePage = 100

// PurgeWebhookItems deletes up to purgePage items of the endpoint's
// partition (WebhookPK: deliveries, pending queue) and reports
// whether the partition was empty before or is after it. Its cost is one
// Query and at most four BatchWriteItem requests.
func (s *Store) PurgeWebhookItems(ctx context.Context, id string) (empty bool, err error) {
	var keys []struct{ PK, SK string }
	last, err := s.table.Get(AttrPK, WebhookPK(id)).Project(AttrPK, AttrSK).Consistent(true).Limit(purgePage).
		AllWithLastEvaluatedKey(ctx, &keys)
	if err != nil {
		return false, fmt.Errorf("store: read the items of deleted webhook %s: %w", id, err)
	}
	if len(keys) == 0 {
		return true, nil
	}
	del := make([]dynamo.Keyed, 0, len(keys))
	for _, k := range keys {
		del = append(del, dynamo.Keys{k.PK, k.SK})
	}
	if _, err := s.table.Batch(AttrPK, AttrSK).Write().Delete(del...).Run(ctx); err != nil {
		return false, fmt.Errorf("store: delete the items of deleted webhook %s: %w", id, err)
	}
	return len(keys) < purgePage && last == nil, nil
}

// FinishWebhookPurge forgets a purge: the endpoint's partition is empty
// for good.
func (s *Store) FinishWebhookPurge(ctx context.Context, id string) error {
	if err := s.table.Delete(AttrPK, WebhooksPK).Range(AttrSK, WebhookPurgeSK(id)).Run(ctx); err != nil {
		return fmt.Errorf("store: finish the purge of webhook %s: %w", id, err)
	}
	return nil
}
