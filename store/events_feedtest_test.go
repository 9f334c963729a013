package store

import (
	"context"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// PutEventsForTest writes the events es as their commits would (their
// items, with the keys of the feed's indexes), 25 a BatchWriteItem, and
// lowers the feed's start to the first: a feed of many events costs a test
// no commit.
func (s *Store) PutEventsForTest(ctx context.Context, es []fund.Event) error {
	items := make([]any, 0, len(es))
	first := time.Time{}
	for _, e := range es {
		touched, err := encodeTouched(e.Data.Positions)
		if err != nil {
			return err
		}
		at := e.Timestamp
		order := EventOrderSK(at, e.Data.DocumentID, e.Data.Version)
		items = append(items, eventItem{
			PK: EventPK(e.Data.DocumentID), SK: EventSK(e.Data.Version), Type: TypeEvent,
			GSI1PK: EventsGSI1PK(at, ChangeShard(e.Data.DocumentID, s.changeShards())), GSI1SK: order,
			GSI2PK: FundEventsGSI2PK(e.Data.FundID, at), GSI2SK: order,
			EventType: string(e.Type), DocumentID: e.Data.DocumentID, FundID: e.Data.FundID, Kind: string(e.Data.Kind),
			Version: e.Data.Version, CommittedAt: at, Touched: touched,
		})
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	for i := 0; i < len(items); i += maxBatchWrite {
		if _, err := s.table.Batch().Write().Put(items[i:min(i+maxBatchWrite, len(items))]...).Run(ctx); err != nil {
			return err
		}
	}
	if err := s.recordChangeShards(ctx); err != nil {
		return err
	}
	return s.lowerEventsStart(ctx, first)
}
