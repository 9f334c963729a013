package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
	"golang.org/x/sync/errgroup"
)

// Plan is the writes that store one version of a document, phase by phase,
// as the DynamoDB requests Restate sends (docs/commit-protocol.md). Restate
// builds its writes from the same functions, and the benchmark's raw
// baseline sends a Plan with plain SDK calls, so the baseline writes exactly
// the items the store writes.
type Plan struct {
	// Document is the version the plan writes, with its server-owned fields
	// (Version, CommitID, CreatedAt) set.
	Document fund.Document
	// Stage puts the version's immutable items into a partition of its own,
	// invisible to readers until a head names it: BatchWriteItem requests of
	// at most 25 puts, which may run concurrently.
	Stage []*dynamodb.BatchWriteItemInput
	// Commit flips the head to the version, conditional on the head read
	// before, together with the document-level items of the latest view, the
	// version's history records and the fund's items. The head carries the
	// change index's keys (changes.go) under the Store's ChangeShards; unlike
	// Restate, sending a Plan does not record that count in the table, so a
	// plan of more shards than the table records is found only by readers
	// configured with as many.
	Commit *dynamodb.TransactWriteItemsInput
	// Materialize brings the latest view's position items to the version:
	// transactions of whole positions (at most 100 items), each checking
	// that the head still names the version; they may run concurrently.
	Materialize []*dynamodb.TransactWriteItemsInput
	// Finish marks the head materialized, once every Materialize
	// transaction has succeeded.
	Finish *dynamodb.UpdateItemInput
}

// Least is the least the table allows for p's version, which is not a
// protocol: the version's position items as the latest view stores them
// (with their index keys), in BatchWriteItem requests of 25 puts,
// unconditional. It is the benchmark's ingest baseline.
func (s *Store) Least(p Plan) ([]*dynamodb.BatchWriteItemInput, error) {
	var latest []any
	for _, it := range positionItems(&p.Document, true) {
		latest = append(latest, it)
	}
	return s.batchRequests(latest)
}

// WritePlan returns the writes Restate makes to store d as the version after
// prev (nil for a document that does not exist yet), when every position of
// d is already registered to its fund and investor (so no claim is taken),
// no Idempotency-Key is involved, and d reports the positions prev reports
// (whose ledger entries exist), which the latest view holds. It returns EINVALID for a document that
// breaks a rule. It reads nothing and writes nothing. A header does not
// hold the recent versions a head carries (recent.go): the plan's head
// carries d's alone, so an overview of the version lists no earlier one;
// WritePlanAfter, given the head, writes what Restate writes.
func (s *Store) WritePlan(d fund.Document, prev *fund.DocumentHeader) (Plan, error) {
	var head *Item
	if prev != nil {
		// prev's creation stands for its commit instant, which a header
		// does not hold: the commit stamps its instant after both.
		head = &Item{Version: prev.Version, CommittedAt: prev.CreatedAt, DocumentFields: fund.DocumentFields{AsOf: prev.AsOf}}
	}
	return s.WritePlanAfter(d, head)
}

// WritePlanAfter is WritePlan after head, the document's commit head as
// the table holds it (nil for a document that does not exist yet; the
// head a Plan's Commit puts is the head of its version): the plan's head
// carries head's recent versions on, as Restate's does.
func (s *Store) WritePlanAfter(d fund.Document, head *Item) (Plan, error) {
	hash, _, err := s.prepare(&d)
	if err != nil {
		return Plan{}, err
	}
	s.nextVersion(&d, head)
	p := Plan{Document: d}
	// The event names every position added: the plan does not read prev's.
	added := changesOf(nil, &d)
	t, err := touchedOf(&d, nil, &added, s.partBytes())
	if err != nil {
		return Plan{}, err
	}
	var ledger []string // a new document's positions need its ledger entries; prev's have them
	if head == nil {
		ledger = added.Positions.Added
	}
	if p.Stage, err = s.stageRequests(&d, t, ledger); err != nil {
		return Plan{}, err
	}
	if p.Commit, err = s.commitRequest(&d, head, hash, nil, t); err != nil {
		return Plan{}, err
	}
	if p.Materialize, err = s.materializeRequests(&d, nil); err != nil {
		return Plan{}, err
	}
	p.Finish = s.finishRequest(&d)
	return p, nil
}

// prepare normalizes and validates d and sorts its positions, as every
// write does first. It returns d's content hash and each position's index
// in the request, by which errors found later still name it.
func (s *Store) prepare(d *fund.Document) (hash string, requestIndex map[string]int, err error) {
	d.Normalize()
	if err := d.Validate(s.MaxPositions); err != nil {
		return "", nil, err
	}
	requestIndex = make(map[string]int, len(d.Positions))
	for i, p := range d.Positions {
		requestIndex[p.ID] = i
	}
	d.SortPositions()
	hash, err = contentHash(*d)
	return hash, requestIndex, err
}

// nextVersion sets the server-owned fields of the version after head.
func (s *Store) nextVersion(d *fund.Document, head *Item) {
	current := 0
	if head != nil {
		current = head.Version
	}
	d.Version, d.CreatedAt = current+1, s.Now()
	d.CommitID = fmt.Sprintf("%d-%s", d.Version, randomHex(6))
}

// stageRequests puts the version partition: the document, its capital
// activity and its position items, the ledger entries of the positions
// added (those the version it replaces did not report: the others have
// theirs), and the parts of its event that t holds, 25 to a request.
func (s *Store) stageRequests(d *fund.Document, t touched, added []string) ([]*dynamodb.BatchWriteItemInput, error) {
	pk := VersionPK(d.ID, d.CommitID)
	items := []Item{documentItem(d, pk, VersionDocumentSK)}
	if d.CapitalActivity != nil {
		items = append(items, activityItem(d, pk, VersionCapitalActivitySK))
	}
	items = append(items, positionItems(d, false)...)
	// The ledger entries (ledger.go) go with them.
	puts := make([]any, 0, len(items)+len(added))
	for _, it := range items {
		puts = append(puts, it)
	}
	for _, e := range ledgerItems(d, added) {
		puts = append(puts, e)
	}
	for _, p := range t.partItems(d) {
		puts = append(puts, p)
	}
	out, err := s.batchRequests(puts)
	if err != nil {
		return nil, fmt.Errorf("stage document %s: %w", d.ID, err)
	}
	return out, nil
}

// batchRequests puts items, 25 to a BatchWriteItem request.
func (s *Store) batchRequests(items []any) ([]*dynamodb.BatchWriteItemInput, error) {
	var out []*dynamodb.BatchWriteItemInput
	for i := 0; i < len(items); i += maxBatchWrite {
		part := items[i:min(i+maxBatchWrite, len(items))]
		reqs := make([]types.WriteRequest, 0, len(part))
		for _, it := range part {
			av, err := dynamo.MarshalItem(it)
			if err != nil {
				return nil, fmt.Errorf("encode an item: %w", err)
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		}
		out = append(out, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.name: reqs}})
	}
	return out, nil
}

// maxBatchWrite is DynamoDB's limit of requests in one BatchWriteItem.
const maxBatchWrite = 25

// commitRequest is the transaction that flips the head from prev (nil: none
// yet) to d, with every document-level item of the latest view, the
// version's history records and the fund's index entry. The head carries
// the change index's keys of this commit, and the transaction puts the
// version's event (events.go), which names the positions the version
// touched, t (its parts, if any, are staged). It fails its
// condition check if another writer moved the head since it was read, if
// the request's Idempotency-Key was taken over, or if the claims it relies
// on (cl, may be nil) were revoked.
func (s *Store) commitRequest(d *fund.Document, prev *Item, hash string, cl *claims, t touched) (*dynamodb.TransactWriteItemsInput, error) {
	head := Item{
		PK: DocPK(d.ID), SK: HeadSK, Type: TypeHead, DocumentID: d.ID,
		Version: d.Version, CommitID: d.CommitID, ContentHash: hash,
		PositionCount: len(d.Positions), CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy, RequestID: d.RequestID, Voided: d.Voided, DocumentFields:

		// The change index (changes.go) holds the head under the instant of
		// this commit, taken now rather than when the version was created: a
		// large version takes a while to stage, and the index must not hold a
		// commit under an instant much older than the commit itself.
		fund.DocumentFields{FundID: d.FundID, AsOf: d.AsOf},
	}

	head.CommittedAt = s.Now()
	if prev != nil && !head.CommittedAt.After(prev.CommittedAt) {
		// A version's instant follows its predecessor's even when another
		// process's clock lags, so the feed lists a document's versions in
		// version order.
		head.CommittedAt = prev.CommittedAt.Add(time.Millisecond)
	}
	for at := head.CommittedAt.UnixNano(); ; {
		if st := s.stamped.Load(); st >= at || s.stamped.CompareAndSwap(st, at) {
			break
		}
	}
	head.GSI1PK, head.GSI1SK = s.changeKeys(d.ID, head.CommittedAt)
	event := s.newEventItem(d, head.CommittedAt, t)
	headCond := ifExpr("attribute_not_exists(#pk)", exprNames{"#pk": AttrPK}, nil)
	if prev != nil {
		headCond = ifExpr("#v = :v", exprNames{"#v": "Version"}, exprValues{":v": attrN(prev.Version)})
	}
	// The version's history records are keyed by version, after the
	// latest view (keys.go); the head carries the recent versions the
	// overview lists (recent.go).
	var err error
	if head.Recent, err = nextRecent(d, prev); err != nil {
		return nil, err
	}
	latest := documentItem(d, DocPK(d.ID), DocumentLatestSK)
	latest.GSI1PK, latest.GSI1SK = DocumentLatestGSI1PK(d.ID), DocumentLatestGSI1SK
	history := documentItem(d, DocPK(d.ID), DocumentVersionSK(d.Version))
	index := documentItem(d, FundPK(d.FundID), FundDocumentSK(d.AsOf, d.ID))
	index.Type = TypeDocumentIndex

	tx := &txBuilder{table: s.name}
	tx.put(head, headCond)
	tx.putEvent(event)
	tx.put(versionInstantItem(d.ID, d.Version, head.CommittedAt), nil)
	tx.put(Item{PK: FundPK(d.FundID), SK: FundSK, Type: TypeFund, GSI1PK: FundsGSI1PK(d.FundID), GSI1SK: FundItemGSI1SK(d.FundID),
		DocumentFields: fund.DocumentFields{FundID: d.FundID, Currency: d.Currency}}, nil)
	tx.put(latest, nil)
	tx.put(history, nil)
	if !d.Voided {
		tx.put(index, nil) // a voided document leaves the fund's listing
	}
	if d.CapitalActivity != nil {
		tx.put(activityItem(d, DocPK(d.ID), CapitalActivityLatestSK), nil)
		tx.put(activityItem(d, DocPK(d.ID), ActivityVersionSK(d.Version)), nil)
	} else {
		tx.delete(DocPK(d.ID), CapitalActivityLatestSK, nil)
	}
	if prev != nil && (prev.AsOf != d.AsOf || d.Voided) {
		tx.delete(FundPK(d.FundID), FundDocumentSK(prev.AsOf, d.ID), nil)
	}
	if d.RequestID != "" && d.RequestOwner != "" {
		tx.check(d.RequestID, IdempotencyRecordSK, ifExpr("#o = :o", exprNames{"#o": "Owner"}, exprValues{":o": attrS(d.RequestOwner)}))
	}
	if cl != nil && cl.fence != "" {
		// The claims this version relies on stay its own only if no one
		// revoked them; once committed, the fence is kept for good: it is
		// what makes them permanent.
		tx.update(cl.fence, ClaimFenceSK, "SET #c = :t REMOVE #e", ifExpr("attribute_exists(#pk) AND attribute_not_exists(#r)",
			exprNames{"#c": "Committed", "#e": AttrExpiresAt, "#pk": AttrPK, "#r": "Revoked"}, exprValues{":t": attrBool(true)}))
	}
	return tx.input()
}

// materializeRequests are the transactions that bring the latest view's
// position items to d's version. existing is the latest view as
// materialize reads it (keys, Type, Version, Tombstone, PositionID); nil
// when it holds nothing d drops or has written already. Items of
// positions d no longer has become tombstones, and tombstones of the
// previous version are deleted. Every write is conditional on not
// overwriting a newer version, and every transaction checks that the head
// still names d's version.
func (s *Store) materializeRequests(d *fund.Document, existing []Item) ([]*dynamodb.TransactWriteItemsInput, error) {
	type op struct {
		put *Item
		del *Item
	}
	byPosition := map[string][]op{}
	var order []string
	add := func(pos string, o op) {
		if _, ok := byPosition[pos]; !ok {
			order = append(order, pos)
		}
		byPosition[pos] = append(byPosition[pos], o)
	}
	wanted := map[string]bool{}
	have := map[string]Item{}
	for _, it := range existing {
		if _, ok := ItemKindOfType(it.Type); ok {
			have[it.SK] = it
		}
	}
	for _, it := range positionItems(d, true) {
		wanted[it.SK] = true
		if old, ok := have[it.SK]; ok && old.Version == d.Version && !old.Tombstone {
			continue // written by an earlier, interrupted attempt
		}
		add(it.PositionID, op{put: &it})
	}
	for _, old := range existing {
		if _, ok := ItemKindOfType(old.Type); !ok {
			continue
		}
		switch {
		case wanted[old.SK] || old.Version >= d.Version:
		case old.Tombstone:
			// Absent in the previous version and in this one: nothing can read it.
			add(old.PositionID, op{del: &old})
		default:
			// Present in the previous version, dropped by this one.
			add(old.PositionID, op{put: &Item{
				PK: old.PK, SK: old.SK, Type: old.Type, DocumentID: d.ID, PositionID: old.PositionID,
				Version: d.Version, Tombstone: true,
			}})
		}
	}

	// One transaction holds whole positions, so a position's items in a
	// document always change together, and checks that the head still names
	// this version: once a newer version is committed, no item of this one
	// can be created, not only none overwritten.
	var batches [][]op
	var cur []op
	for _, pos := range order {
		ops := byPosition[pos]
		if len(cur)+len(ops) > 99 {
			batches = append(batches, cur)
			cur = nil
		}
		cur = append(cur, ops...)
	}
	if len(cur) > 0 {
		batches = append(batches, cur)
	}
	version := exprValues{":v": attrN(d.Version)}
	out := make([]*dynamodb.TransactWriteItemsInput, 0, len(batches))
	for _, batch := range batches {
		tx := &txBuilder{table: s.name}
		tx.check(DocPK(d.ID), HeadSK, ifExpr("#v = :v", exprNames{"#v": "Version"}, version))
		for _, o := range batch {
			if o.put != nil {
				tx.put(*o.put, ifExpr("attribute_not_exists(#pk) OR #v <= :v", exprNames{"#pk": AttrPK, "#v": "Version"}, version))
			} else {
				tx.delete(o.del.PK, o.del.SK, ifExpr("#v < :v", exprNames{"#v": "Version"}, version))
			}
		}
		in, err := tx.input()
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// finishRequest marks the head materialized, if it still names d's version.
func (s *Store) finishRequest(d *fund.Document) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.name),
		Key:                       itemKey(DocPK(d.ID), HeadSK),
		UpdateExpression:          aws.String("SET #m = :t"),
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  exprNames{"#m": "Materialized", "#v": "Version"},
		ExpressionAttributeValues: exprValues{":t": attrBool(true), ":v": attrN(d.Version)},
	}
}

// batchWrite sends BatchWriteItem requests, up to Parallelism at once, each
// again for the items DynamoDB left unprocessed, after a growing, jittered
// pause (the SDK's own backoff).
func (s *Store) batchWrite(ctx context.Context, reqs []*dynamodb.BatchWriteItemInput) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.parallelism())
	for _, in := range reqs {
		g.Go(func() error {
			for attempt := 1; ; attempt++ {
				out, err := s.db.Client().BatchWriteItem(gctx, in)
				if err != nil {
					return err
				}
				if len(out.UnprocessedItems) == 0 {
					return nil
				}
				in = &dynamodb.BatchWriteItemInput{RequestItems: out.UnprocessedItems}
				wait, _ := unprocessedBackoff.BackoffDelay(attempt, nil)
				t := time.NewTimer(wait)
				select {
				case <-gctx.Done():
					t.Stop()
					return fmt.Errorf("%d items left unprocessed: %w", len(out.UnprocessedItems[s.name]), gctx.Err())
				case <-t.C:
				}
			}
		})
	}
	return g.Wait()
}

// unprocessedBackoff paces the retries of unprocessed batch items.
var unprocessedBackoff = retry.NewExponentialJitterBackoff(5 * time.Second)

// transact sends transactions, up to Parallelism at once.
func (s *Store) transact(ctx context.Context, txs []*dynamodb.TransactWriteItemsInput) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.parallelism())
	for _, in := range txs {
		g.Go(func() error {
			_, err := s.db.Client().TransactWriteItems(gctx, in)
			return err
		})
	}
	return g.Wait()
}

type (
	exprNames  = map[string]string
	exprValues = map[string]types.AttributeValue
)

// writeCond is a condition expression with its placeholders.
type writeCond struct {
	expr   string
	names  exprNames
	values exprValues
}

func ifExpr(expr string, n exprNames, v exprValues) *writeCond { return &writeCond{expr, n, v} }

func attrS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func attrN(n int) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
}

func attrBool(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrPK: attrS(pk), AttrSK: attrS(sk)}
}

// txBuilder collects the items of one TransactWriteItems request.
type txBuilder struct {
	table string
	items []types.TransactWriteItem
	err   error
}

func (b *txBuilder) put(it Item, c *writeCond) {
	av, err := dynamo.MarshalItem(it)
	if err != nil {
		b.err = fmt.Errorf("encode %s %s: %w", it.PK, it.SK, err)
		return
	}
	p := &types.Put{TableName: aws.String(b.table), Item: av}
	if c != nil {
		p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues = aws.String(c.expr), c.names, c.values
	}
	b.items = append(b.items, types.TransactWriteItem{Put: p})
}

// putEvent puts an event item on condition that its version has none:
// only the commit of a version writes its event, and only once.
func (b *txBuilder) putEvent(e eventItem) {
	av, err := dynamo.MarshalItem(e)
	if err != nil {
		b.err = fmt.Errorf("encode the event %s %s: %w", e.PK, e.SK, err)
		return
	}
	b.items = append(b.items, types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(b.table), Item: av,
		ConditionExpression: aws.String("attribute_not_exists(#pk)"), ExpressionAttributeNames: exprNames{"#pk": AttrPK},
	}})
}

func (b *txBuilder) delete(pk, sk string, c *writeCond) {
	d := &types.Delete{TableName: aws.String(b.table), Key: itemKey(pk, sk)}
	if c != nil {
		d.ConditionExpression, d.ExpressionAttributeNames, d.ExpressionAttributeValues = aws.String(c.expr), c.names, c.values
	}
	b.items = append(b.items, types.TransactWriteItem{Delete: d})
}

func (b *txBuilder) check(pk, sk string, c *writeCond) {
	b.items = append(b.items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(b.table), Key: itemKey(pk, sk),
		ConditionExpression: aws.String(c.expr), ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.values,
	}})
}

func (b *txBuilder) update(pk, sk, expr string, c *writeCond) {
	b.items = append(b.items, types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(b.table), Key: itemKey(pk, sk), UpdateExpression: aws.String(expr),
		ConditionExpression: aws.String(c.expr), ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.values,
	}})
}

func (b *txBuilder) input() (*dynamodb.TransactWriteItemsInput, error) {
	if b.err != nil {
		return nil, b.err
	}
	return &dynamodb.TransactWriteItemsInput{TransactItems: b.items}, nil
}
