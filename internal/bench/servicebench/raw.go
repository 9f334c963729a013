package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/guregu/dynamo/v2"
	"github.com/guregu/dynamo/v2/dynamodbiface"
	"golang.org/x/sync/errgroup"
)

// raw makes the DynamoDB calls behind each route directly, with a client
// configured as the store's (store.NewDB: same retry policy); its writes
// are the least the table allows for a version (least), or the store's
// own write plan (restate).
type raw struct {
	client dynamodbiface.DynamoDBAPI // counts consumed capacity (store.NewDB)
	table  string
	store  *store.Store // for its write plans only
}

func newRaw(db *dynamo.DB, s *store.Store) *raw {
	return &raw{client: db.Client(), table: s.TableName(), store: s}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// query runs in and, if all is set, every page after it, and returns the
// items read.
func (r *raw) query(ctx context.Context, in *dynamodb.QueryInput, all bool) ([]map[string]types.AttributeValue, error) {
	in.TableName = aws.String(r.table)
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(r.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return items, err
		}
		items = append(items, page.Items...)
		if !all {
			break
		}
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("query %s: no items", aws.ToString(in.KeyConditionExpression))
	}
	return items, nil
}

// overview is the document overview's Query: the document partition's
// latest view (the keys before the history records, store.HistoryStart),
// strongly consistent, every page.
func (r *raw) overview(ctx context.Context, doc string) ([]map[string]types.AttributeValue, error) {
	return r.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:   aws.String("#pk = :pk AND #sk < :history"),
		ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK, "#sk": store.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(store.DocPK(doc)), ":history": str(store.HistoryStart),
		},
		ConsistentRead: aws.Bool(true),
	}, true)
}

// positionItems is the Query of GSI2 behind a position's items across
// documents: one page of limit items, or every page.
func (r *raw) positionItems(ctx context.Context, pos string, limit int32, all bool) ([]map[string]types.AttributeValue, error) {
	in := &dynamodb.QueryInput{
		IndexName:                 aws.String(store.IndexGSI2),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": store.AttrGSI2PK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(store.PositionGSI2PK(pos))},
	}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	return r.query(ctx, in, all)
}

// fundDocuments is the Query behind a fund's documents: its index entries
// of every date, one page of limit.
func (r *raw) fundDocuments(ctx context.Context, fundID string, limit int32) ([]map[string]types.AttributeValue, error) {
	lo, hi := store.FundDocumentRange(fund.Date{}, fund.Date{})
	return r.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK, "#sk": store.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(store.FundPK(fundID)), ":lo": str(lo), ":hi": str(hi),
		},
		Limit: aws.Int32(limit),
	}, false)
}

// headVersion reads a document's committed version from its head.
func (r *raw) headVersion(ctx context.Context, doc string) (int, error) {
	out, err := r.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(r.table),
		Key:            map[string]types.AttributeValue{store.AttrPK: str(store.DocPK(doc)), store.AttrSK: str(store.HeadSK)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, fmt.Errorf("read head of %s: %w", doc, err)
	}
	var h store.Item
	if err := dynamo.UnmarshalItem(out.Item, &h); err != nil || h.Version == 0 {
		return 0, fmt.Errorf("read head of %s: no version (%v)", doc, err)
	}
	return h.Version, nil
}

// restate writes version prev.Version+1 of d by sending the store's own
// write plan (store.WritePlan) with plain SDK calls: the requests Restate
// makes for a restatement whose positions are all registered already (see
// store/plan.go and docs/commit-protocol.md), namely the version partition
// with BatchWriteItem, the flip in one transaction conditional on the head
// still being at prev, the latest view in transactions of whole positions,
// and the head marked materialized. It leaves out the reads the store makes
// before writing (head, position claims, the latest view's keys), so this
// is the floor under any ingest of the version.
func (r *raw) restate(ctx context.Context, d fund.Document, prev fund.DocumentHeader) error {
	p, err := r.store.WritePlan(d, &prev)
	if err != nil {
		return err
	}
	v := p.Document.Version
	if err := r.batchWrites(ctx, p.Stage); err != nil {
		return fmt.Errorf("stage %s version %d: %w", d.ID, v, err)
	}
	if _, err := r.client.TransactWriteItems(ctx, p.Commit); err != nil {
		return fmt.Errorf("commit %s version %d: %w", d.ID, v, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, r.store.Parallelism))
	for _, in := range p.Materialize {
		g.Go(func() error {
			_, err := r.client.TransactWriteItems(gctx, in)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("materialize %s version %d: %w", d.ID, v, err)
	}
	if _, err := r.client.UpdateItem(ctx, p.Finish); err != nil {
		return fmt.Errorf("mark %s version %d materialized: %w", d.ID, v, err)
	}
	return nil
}

// least writes the least the table allows for the next version of d
// (store.Store.Least): the version's position items as the latest view
// stores them, with their index keys, with BatchWriteItem, 25 items a
// request, as many requests at once as the store may send (its
// Parallelism), and nothing else. They go to a document of their own
// (d's ID with "_L" appended), so the documents the API restates stay as
// the service wrote them.
func (r *raw) least(ctx context.Context, d fund.Document) error {
	d.ID += "_L"
	p, err := r.store.WritePlan(d, nil)
	if err != nil {
		return err
	}
	least, err := r.store.Least(p)
	if err != nil {
		return err
	}
	if err := r.batchWrites(ctx, least); err != nil {
		return fmt.Errorf("write the position items of %s: %w", d.ID, err)
	}
	return nil
}

// batchWrites sends BatchWriteItem requests, as many at once as the store
// may send (its Parallelism).
func (r *raw) batchWrites(ctx context.Context, ins []*dynamodb.BatchWriteItemInput) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, r.store.Parallelism))
	for _, in := range ins {
		g.Go(func() error { return r.batchWrite(gctx, in) })
	}
	return g.Wait()
}

// batchWrite sends one BatchWriteItem, again for any items the server left
// unprocessed.
func (r *raw) batchWrite(ctx context.Context, in *dynamodb.BatchWriteItemInput) error {
	for {
		out, err := r.client.BatchWriteItem(ctx, in)
		if err != nil || len(out.UnprocessedItems) == 0 {
			return err
		}
		in = &dynamodb.BatchWriteItemInput{RequestItems: out.UnprocessedItems}
	}
}
