package webhooks

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// Purges lists the deleted endpoints whose partitions are to be emptied
// and empties them; *store.Store satisfies it.
type Purges interface {
	WebhookPurges(ctx context.Context) ([]fund.WebhookPurge, error)
	PurgeWebhookItems(ctx context.Context, id string) (empty bool, err error)
	FinishWebhookPurge(ctx context.Context, id string) error
}

// DefaultPurgeGrace is how long a deleted endpoint's partition is watched
// after its deletion: a delivery round that read the endpoint just before
// may still write its cursor or queue events for it, and a purge that
// finds the partition empty after the grace is the last.
const DefaultPurgeGrace = time.Hour

// Purger empties the partitions of deleted endpoints (their cursor,
// delivery log and pending queue): every instance that delivers runs one,
// and any of them may do any purge, as deleting an item twice is no
// error.
type Purger struct {
	Purges Purges
	Log    *slog.Logger
	// Now is the clock (time.Now when nil); Grace is DefaultPurgeGrace
	// when zero.
	Now   func() time.Time
	Grace time.Duration
}

// RunOnce purges every deleted endpoint's partition, page by page (a Query
// of 100 keys and BatchWriteItem requests of 25), and forgets the deletion
// once its partition is empty and its grace has passed. It costs one
// Query when nothing is deleted.
func (p *Purger) RunOnce(ctx context.Context) error {
	now := time.Now()
	if p.Now != nil {
		now = p.Now()
	}
	purges, err := p.Purges.WebhookPurges(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, pu := range purges {
		empty := false
		for !empty && ctx.Err() == nil {
			if empty, err = p.Purges.PurgeWebhookItems(ctx, pu.EndpointID); err != nil {
				break
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if empty && now.Sub(pu.DeletedAt) >= cmp.Or(p.Grace, DefaultPurgeGrace) {
			errs = append(errs, p.Purges.FinishWebhookPurge(ctx, pu.EndpointID))
		}
	}
	return errors.Join(append(errs, ctx.Err())...)
}

// Run purges every interval until ctx ends.
func (p *Purger) Run(ctx context.Context, interval time.Duration) {
	log := cmp.Or(p.Log, slog.Default())
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := p.RunOnce(ctx); err != nil && ctx.Err() == nil {
			log.Warn("purging deleted webhook endpoints failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
