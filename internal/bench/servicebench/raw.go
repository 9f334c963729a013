package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/harness"
	"github.com/fundsvc/fundsvc/store"
	"github.com/guregu/dynamo/v2"
	"golang.org/x/sync/errgroup"
)

// raw makes the DynamoDB calls behind each route directly, with a client
// configured as the store's (store.NewDB: same retry policy).
type raw struct {
	client *dynamodb.Client
	table  string
}

func newRaw(db *dynamo.DB, table string) (*raw, error) {
	c, ok := db.Client().(*dynamodb.Client)
	if !ok {
		return nil, errors.New("store.NewDB did not make a *dynamodb.Client")
	}
	return &raw{client: c, table: table}, nil
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// query runs in and, if all is set, every page after it, and returns the
// number of items read.
func (r *raw) query(ctx context.Context, in *dynamodb.QueryInput, all bool) (int, error) {
	in.TableName = aws.String(r.table)
	n := 0
	p := dynamodb.NewQueryPaginator(r.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, err
		}
		n += len(page.Items)
		if !all {
			break
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("query %s: no items", aws.ToString(in.KeyConditionExpression))
	}
	return n, nil
}

// overview is the document overview's Query: the whole document
// partition, strongly consistent, every page.
func (r *raw) overview(ctx context.Context, doc string) error {
	_, err := r.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": store.AttrPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(store.DocPK(doc))},
		ConsistentRead:            aws.Bool(true),
	}, true)
	return err
}

// positionItems is the Query of GSI2 behind a position's items across
// documents: one page of limit items, or every page.
func (r *raw) positionItems(ctx context.Context, pos string, limit int32, all bool) error {
	in := &dynamodb.QueryInput{
		IndexName:                 aws.String(store.IndexGSI2),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": store.AttrGSI2PK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(store.PositionGSI2PK(pos))},
	}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	_, err := r.query(ctx, in, all)
	return err
}

// fundDocuments is the Query behind a fund's documents: its index entries
// of every date, one page of limit.
func (r *raw) fundDocuments(ctx context.Context, fundID string, limit int32) error {
	lo, hi := store.FundDocumentRange(fund.Date{}, fund.Date{})
	_, err := r.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK, "#sk": store.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(store.FundPK(fundID)), ":lo": str(lo), ":hi": str(hi),
		},
		Limit: aws.Int32(limit),
	}, false)
	return err
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

// writeParallelism is the store's Parallelism: how many batches or
// transactions of one ingest run at once.
const writeParallelism = 4

// restate writes version prev+1 of d with the writes the store makes for a
// restatement whose positions are all registered already (see
// fund/store.go and docs/commit-protocol.md): the version partition with
// BatchWriteItem, the flip in one transaction conditional on the head
// still being at prev, the latest view in transactions of whole positions
// (up to 100 items), and the head marked materialized. It leaves out the
// reads the store makes before writing (head, position claims, the latest
// view's keys), so this is the floor under any ingest of the version.
func (r *raw) restate(ctx context.Context, d fund.Document, prev int) error {
	d.Version, d.CreatedAt = prev+1, time.Now().UTC().Truncate(time.Millisecond)
	d.CommitID = fmt.Sprintf("%d-%s", d.Version, harness.RandomHex(6))
	if err := r.stage(ctx, &d); err != nil {
		return fmt.Errorf("stage %s version %d: %w", d.ID, d.Version, err)
	}
	if err := r.flip(ctx, &d, prev); err != nil {
		return fmt.Errorf("commit %s version %d: %w", d.ID, d.Version, err)
	}
	if err := r.materialize(ctx, &d); err != nil {
		return fmt.Errorf("materialize %s version %d: %w", d.ID, d.Version, err)
	}
	return nil
}

// stage writes the version partition in chunks of 100 items, several at
// once, each chunk as sequential BatchWriteItem calls of 25 (as the
// store's batchPut through guregu/dynamo does).
func (r *raw) stage(ctx context.Context, d *fund.Document) error {
	pk := store.VersionPK(d.ID, d.CommitID)
	items := []store.Item{documentItem(d, pk, store.VersionDocumentSK), activityItem(d, pk, store.VersionCapitalActivitySK)}
	items = append(items, positionItems(d, false)...)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeParallelism)
	for i := 0; i < len(items); i += 100 {
		chunk := items[i:min(i+100, len(items))]
		g.Go(func() error {
			for j := 0; j < len(chunk); j += 25 {
				if err := r.batchPut(gctx, chunk[j:min(j+25, len(chunk))]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// batchPut writes up to 25 items, again for any the server left unprocessed.
func (r *raw) batchPut(ctx context.Context, items []store.Item) error {
	reqs := make([]types.WriteRequest, 0, len(items))
	for _, it := range items {
		av, err := dynamo.MarshalItem(it)
		if err != nil {
			return err
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	for len(reqs) > 0 {
		out, err := r.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{r.table: reqs}})
		if err != nil {
			return err
		}
		reqs = out.UnprocessedItems[r.table]
	}
	return nil
}

// flip is the commit transaction: the head, conditional on the previous
// version, with the latest document and capital activity, both history
// records and the fund's index entry.
func (r *raw) flip(ctx context.Context, d *fund.Document, prev int) error {
	head := store.Item{
		PK: store.DocPK(d.ID), SK: store.HeadSK, Type: store.TypeHead, DocumentID: d.ID, FundID: d.FundID,
		AsOf: d.AsOf, Version: d.Version, CommitID: d.CommitID, ContentHash: harness.RandomHex(32),
		PositionCount: len(d.Positions), CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy,
	}
	latest := documentItem(d, store.DocPK(d.ID), store.DocumentLatestSK)
	latest.GSI1PK, latest.GSI1SK = store.DocumentLatestGSI1PK(d.ID), store.DocumentLatestGSI1SK
	index := documentItem(d, store.FundPK(d.FundID), store.FundDocumentSK(d.AsOf, d.ID))
	index.Type = store.TypeDocumentIndex
	items := []store.Item{
		latest,
		documentItem(d, store.DocPK(d.ID), store.DocumentHistorySK(d.AsOf, d.Version)),
		index,
		activityItem(d, store.DocPK(d.ID), store.CapitalActivityLatestSK),
		activityItem(d, store.DocPK(d.ID), store.CapitalActivityHistorySK(d.CapitalActivity.Date, d.Version)),
	}
	av, err := dynamo.MarshalItem(head)
	if err != nil {
		return err
	}
	tx := []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(r.table), Item: av,
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": "Version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: fmt.Sprint(prev)}},
	}}}
	for _, it := range items {
		av, err := dynamo.MarshalItem(it)
		if err != nil {
			return err
		}
		tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(r.table), Item: av}})
	}
	_, err = r.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx})
	return err
}

// materialize writes the latest view in transactions of whole positions,
// each put conditional on not overwriting a newer version, then marks the
// head materialized.
func (r *raw) materialize(ctx context.Context, d *fund.Document) error {
	items := positionItems(d, true)
	perTx := 100 / len(fund.ItemKinds) * len(fund.ItemKinds) // whole positions: 33 of 3 items
	version := &types.AttributeValueMemberN{Value: fmt.Sprint(d.Version)}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeParallelism)
	for i := 0; i < len(items); i += perTx {
		part := items[i:min(i+perTx, len(items))]
		g.Go(func() error {
			tx := make([]types.TransactWriteItem, 0, len(part))
			for _, it := range part {
				av, err := dynamo.MarshalItem(it)
				if err != nil {
					return err
				}
				tx = append(tx, types.TransactWriteItem{Put: &types.Put{
					TableName: aws.String(r.table), Item: av,
					ConditionExpression:       aws.String("attribute_not_exists(#pk) OR #v <= :v"),
					ExpressionAttributeNames:  map[string]string{"#pk": store.AttrPK, "#v": "Version"},
					ExpressionAttributeValues: map[string]types.AttributeValue{":v": version},
				}})
			}
			_, err := r.client.TransactWriteItems(gctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	_, err := r.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(r.table),
		Key:                       map[string]types.AttributeValue{store.AttrPK: str(store.DocPK(d.ID)), store.AttrSK: str(store.HeadSK)},
		UpdateExpression:          aws.String("SET #m = :t"),
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#m": "Materialized", "#v": "Version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}, ":v": version},
	})
	return err
}

// The stored shapes below are those of fund/item.go (documentItem,
// activityItem, positionItems), which the fund package keeps unexported.

func documentItem(d *fund.Document, pk, sk string) store.Item {
	return store.Item{
		PK: pk, SK: sk, Type: store.TypeDocument,
		DocumentID: d.ID, FundID: d.FundID, Kind: string(d.Kind), Title: d.Title,
		AsOf: d.AsOf, Currency: d.Currency, PositionCount: len(d.Positions),
		Version: d.Version, CommitID: d.CommitID, CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy,
	}
}

func activityItem(d *fund.Document, pk, sk string) store.Item {
	a := d.CapitalActivity
	amt := a.Amount
	return store.Item{
		PK: pk, SK: sk, Type: store.TypeCapitalActivity,
		DocumentID: d.ID, FundID: d.FundID, Currency: d.Currency, AsOf: d.AsOf,
		Amount: &amt, Status: string(a.Status), Date: a.Date, Description: a.Description,
		Version: d.Version, CommitID: d.CommitID, CreatedAt: d.CreatedAt,
	}
}

// positionItems returns a document's position items for its latest view
// (with index keys) or its version partition, position by position.
func positionItems(d *fund.Document, latest bool) []store.Item {
	items := make([]store.Item, 0, len(d.Positions)*len(fund.ItemKinds))
	for _, p := range d.Positions {
		add := func(k fund.ItemKind, it store.Item) {
			it.Type = k.Type()
			it.DocumentID, it.FundID, it.InvestorID, it.PositionID = d.ID, d.FundID, p.InvestorID, p.ID
			it.AsOf, it.Currency, it.Version, it.CreatedAt = d.AsOf, d.Currency, d.Version, d.CreatedAt
			if latest {
				it.PK, it.SK = store.DocPK(d.ID), store.PositionItemSK(k, p.ID)
				it.GSI1PK, it.GSI1SK = store.PositionItemGSI1PK(k, p.ID, d.ID), store.GSI1LatestSK
				it.GSI2PK, it.GSI2SK = store.PositionGSI2PK(p.ID), store.PositionItemGSI2SK(k, d.ID)
			} else {
				it.PK, it.SK = store.VersionPK(d.ID, d.CommitID), store.VersionPositionItemSK(p.ID, k)
			}
			items = append(items, it)
		}
		c, x, u := p.CapitalCall, p.Distribution, p.UnfundedCommitment
		add(fund.CapitalCall, store.Item{
			Amount:    &c.Amount,
			Status:    string(c.Status),
			Date:      c.DueDate,
			CallLines: fund.CallLines{Investment: c.Investment, ManagementFee: c.ManagementFee, FundExpenses: c.FundExpenses},
		})
		add(fund.Distribution, store.Item{
			Amount:            &x.Amount,
			Status:            string(x.Status),
			Date:              x.Date,
			DistributionLines: fund.DistributionLines{ReturnOfCapital: x.ReturnOfCapital, RealizedGain: x.RealizedGain, Income: x.Income, Recallable: x.Recallable, Withholding: x.Withholding},
		})
		add(fund.UnfundedCommitment, store.Item{Amount: &u.Amount, Status: string(u.Status), UnfundedLines: fund.UnfundedLines{Commitment: u.Commitment}})
	}
	return items
}
