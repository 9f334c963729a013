// Package fundtest builds stores on fresh tables of the shared DynamoDB
// Local, with an operation counter and a fault injector wired in, for the
// integration tests of every package.
package fundtest

import (
	"bytes"
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

// Clock is the fixed time of every write made through an Env, so responses
// can be compared with golden files.
var Clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Env is a store on its own table.
type Env struct {
	Store     *store.Store
	Positions *positions.Analytics
	Counter   *dynamotest.Counter
	Faults    *dynamotest.FaultInjector
	Table     string
	raw       *dynamodb.Client
}

// New creates a table for t on the shared DynamoDB Local (see
// dynamotest.Main) and deletes it when t ends.
func New(t testing.TB) *Env {
	t.Helper()
	e := &Env{Counter: &dynamotest.Counter{}, Faults: &dynamotest.FaultInjector{}, Table: dynamotest.UniqueName(t, "fundsvc")}
	cfg := dynamotest.Shared().Config(dynamotest.WithAPIOptions(e.Counter.APIOption(), e.Faults.APIOption()))
	e.Store = store.NewStore(store.NewDB(cfg), e.Table)
	e.Store.Now = func() time.Time { return Clock }
	e.Positions = positions.NewAnalytics(e.Store)
	e.raw = dynamodb.NewFromConfig(dynamotest.Shared().Config())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Store.CreateTable(ctx); err != nil {
		t.Fatalf("create table: %v", err)
	}
	t.Cleanup(func() {
		_, _ = e.raw.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(e.Table)})
	})
	e.Counter.Reset()
	return e
}

// Seed loads the demo dataset.
func (e *Env) Seed(t testing.TB) {
	t.Helper()
	if _, err := e.Store.SeedDemo(context.Background()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	e.Counter.Reset()
}

// Put writes stored items as they are, past the store's protocol: the
// debris a crashed writer leaves, or items of an older layout.
func (e *Env) Put(t testing.TB, items ...store.Item) {
	t.Helper()
	for _, it := range items {
		av, err := it.MarshalDynamoItem()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.raw.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.Table), Item: av}); err != nil {
			t.Fatalf("put %s %s: %v", it.PK, it.SK, err)
		}
	}
}

// PutAttrs writes one item as DynamoDB holds it, past the store's
// protocol, as Put does.
func (e *Env) PutAttrs(t testing.TB, av map[string]types.AttributeValue) {
	t.Helper()
	if _, err := e.raw.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.Table), Item: av}); err != nil {
		t.Fatalf("put %v: %v", av[store.AttrSK], err)
	}
}

// Delete removes one item by its key, past the store's protocol: what a
// table written before some record existed lacks.
func (e *Env) Delete(t testing.TB, pk, sk string) {
	t.Helper()
	key := map[string]types.AttributeValue{store.AttrPK: &types.AttributeValueMemberS{Value: pk}, store.AttrSK: &types.AttributeValueMemberS{Value: sk}}
	if _, err := e.raw.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(e.Table), Key: key}); err != nil {
		t.Fatalf("delete %s %s: %v", pk, sk, err)
	}
}

// Dump returns every item of the table, sorted by key. It Scans, which only
// tests may do: to prove a request changed nothing, or to inspect all keys.
func (e *Env) Dump(t testing.TB) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(e.raw, &dynamodb.ScanInput{TableName: aws.String(e.Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		out = append(out, page.Items...)
	}
	key := func(it map[string]types.AttributeValue) string {
		pk, _ := it[store.AttrPK].(*types.AttributeValueMemberS)
		sk, _ := it[store.AttrSK].(*types.AttributeValueMemberS)
		return pk.Value + "\x00" + sk.Value
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// SyncBuffer collects output (log lines) written by concurrent goroutines.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
