package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
	"golang.org/x/sync/errgroup"
)

// The change index: every commit rewrites the document's head, in the same
// transaction, with GSI1 keys of the commit's UTC day and shard
// (ChangesGSI1PK) and instant (ChangesGSI1SK), so GSI1 holds each
// document's latest commit once, and the documents changed in a period are
// found by one Query per day and shard of that period, never a Scan. The
// shard is a stable hash of the document ID, so a day's commits spread over
// Store.ChangeShards partitions and no index partition is a constant.
// docs/access-patterns.md describes the keys and what a caller must do
// about GSI1's eventual consistency.

// DefaultChangeShards is the shard count of a Store that is not told
// otherwise.
const DefaultChangeShards = 8

// MaxChangeShards bounds the shard count: ChangedSince makes a Query per
// shard of every day it covers.
const MaxChangeShards = 256

// ChangeSettleMargin is how far behind the present a caller of ChangedSince
// keeps its until, so that every commit at or before until is in GSI1 when
// it asks: it covers a commit transaction's latency with the SDK's retries
// (the instant is taken just before it is sent), GSI1's propagation (well
// under a second in normal operation) and what remains of the processes'
// clock skew once each is corrected to DynamoDB's clock (about a second
// and a round trip: see TableClock). It does not have to cover the skew
// of the machines' clocks, which the correction removes.
const ChangeSettleMargin = 5 * time.Minute

// SettledUntil is the event feed's watermark: the latest instant up to
// which every commit is in GSI1, the store's clock less FeedSettle
// (ChangeSettleMargin when zero). An incremental export keeps its own
// margin (export.Config.Settle, default ChangeSettleMargin).
func (s *Store) SettledUntil() time.Time {
	if s.FeedSettle > 0 {
		return s.Now().Add(-s.FeedSettle)
	}
	return s.Now().Add(-ChangeSettleMargin)
}

// Change is a document's latest commit, as the change index holds it.
type Change struct {
	DocumentID, FundID, CommitID string
	Version                      int
	CommittedAt                  time.Time
}

// ChangedSince returns the documents whose latest commit's instant is in
// (since, until], sorted by (CommittedAt, DocumentID). A document committed
// several times appears once, with its latest commit, or not at all if
// that commit is after until. It makes one strongly consistent GetItem (the
// recorded shard count) and one paged Query of GSI1 per UTC day of the
// period and shard, so its cost grows with the days and the changes, not
// the table.
//
// GSI1 is eventually consistent: a commit appears in it shortly after it
// succeeds. The answer is complete for any until at or before
// SettledUntil(); a later until may miss commits of its last minutes, and
// the next period, starting at that until, would miss them too.
//
// It returns EINVALID for a zero since or until; an until not after since
// is an empty period (no change, no request).
func (s *Store) ChangedSince(ctx context.Context, since, until time.Time) ([]Change, error) {
	if since.IsZero() || until.IsZero() {
		return nil, fund.Errorf(fund.EINVALID, "changes since %s until %s: both instants are required", since, until)
	}
	if !until.After(since) {
		return nil, nil
	}
	shards, err := s.changeShardsInUse(ctx)
	if err != nil {
		return nil, err
	}
	lo, hi := ChangesRange(since, until)
	var keys []string
	for day := utcDay(since); !day.After(utcDay(until)); day = day.AddDate(0, 0, 1) {
		for shard := range shards {
			keys = append(keys, ChangesGSI1PK(day, shard))
		}
	}
	found := make([][]Change, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.parallelism())
	for i, pk := range keys {
		g.Go(func() error {
			it := s.table.Get(AttrGSI1PK, pk).Index(IndexGSI1).Range(AttrGSI1SK, dynamo.Between, lo, hi).
				Project("Type", "DocumentID", "FundID", "CommitID", "Version", "CommittedAt").Iter()
			var head Item
			for it.Next(gctx, &head) {
				if head.Type == TypeHead {
					found[i] = append(found[i], Change{DocumentID: head.DocumentID, FundID: head.FundID,
						CommitID: head.CommitID, Version: head.Version, CommittedAt: head.CommittedAt})
				}
				head = Item{}
			}
			if err := it.Err(); err != nil {
				return fmt.Errorf("store: read the change index %s: %w", pk, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Each head has one place in the index; while GSI1 catches up with a
	// head that moved, both places may answer for a moment: keep the latest.
	latest := map[string]Change{}
	for _, part := range found {
		for _, c := range part {
			if old, ok := latest[c.DocumentID]; !ok || c.Version > old.Version {
				latest[c.DocumentID] = c
			}
		}
	}
	out := make([]Change, 0, len(latest))
	for _, c := range latest {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Change) int {
		if c := a.CommittedAt.Compare(b.CommittedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.DocumentID, b.DocumentID)
	})
	return out, nil
}

func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// changeShards is the shard count this Store writes the index with.
func (s *Store) changeShards() int {
	if s.ChangeShards < 1 {
		return DefaultChangeShards
	}
	return min(s.ChangeShards, MaxChangeShards)
}

// changeKeys are the GSI1 keys of a commit of doc at the given instant.
func (s *Store) changeKeys(doc string, at time.Time) (pk, sk string) {
	return ChangesGSI1PK(at, ChangeShard(doc, s.changeShards())), ChangesGSI1SK(at, doc)
}

// shardRecord remembers the shard count this process has recorded in the
// table, so that only its first commit (or the first after ChangeShards
// grows) writes the record.
type shardRecord struct {
	mu       sync.Mutex
	recorded int
}

// recordChangeShards raises the table's record of the largest shard count
// to this Store's, unless this process has done so already. The record only
// grows (a conditional update), whatever processes with other counts do at
// the same time.
func (s *Store) recordChangeShards(ctx context.Context) error {
	n := s.changeShards()
	s.shards.mu.Lock()
	defer s.shards.mu.Unlock()
	if s.shards.recorded >= n {
		return nil
	}
	_, err := s.db.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.name),
		Key:                       itemKey(ChangeShardsPK, ChangeShardsSK),
		UpdateExpression:          aws.String("SET #n = :n, #t = :t"),
		ConditionExpression:       aws.String("attribute_not_exists(#n) OR #n < :n"),
		ExpressionAttributeNames:  exprNames{"#n": "Shards", "#t": "Type"},
		ExpressionAttributeValues: exprValues{":n": attrN(n), ":t": attrS(TypeChangeShards)},
	})
	if err != nil && !dynamo.IsCondCheckFailed(err) { // refused: a count as large is recorded
		return fmt.Errorf("record the change index's shard count %d: %w", n, err)
	}
	s.shards.recorded = n
	return nil
}

// changeShardsInUse is the shard count to query: the largest recorded or
// this Store's own, whichever is larger.
func (s *Store) changeShardsInUse(ctx context.Context) (int, error) {
	var rec struct{ Shards int }
	err := s.table.Get(AttrPK, ChangeShardsPK).Range(AttrSK, dynamo.Equal, ChangeShardsSK).Consistent(true).One(ctx, &rec)
	if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
		return 0, fmt.Errorf("store: read the change index's shard count: %w", err)
	}
	return max(s.changeShards(), min(rec.Shards, MaxChangeShards)), nil
}
