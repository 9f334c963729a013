package store_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/guregu/dynamo/v2"
)

// TestConsumedCapacityOfEveryOperation sends each DynamoDB operation the
// store uses through NewDB's client, with inputs that ask for no consumed
// capacity, and checks that DynamoDB Local answers each with the units
// DynamoDB's rules give for the items' sizes (4 KB per read unit, halved
// for eventually consistent reads; 1 KB per write unit; each index the
// item is in written again; transactions twice), and that Consumed sums
// them per operation. So the figures of the benchmarks are DynamoDB's own
// accounting, not an estimate.
func TestConsumedCapacityOfEveryOperation(t *testing.T) {
	db := store.NewDB(dynamotest.Shared().Config())
	s := store.NewStore(db, dynamotest.UniqueName(t, "capacity"))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	c := db.Client()
	tbl := aws.String(s.TableName())
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{store.AttrPK: str(pk), store.AttrSK: str(sk)}
	}
	// An item of about kb kilobytes, in GSI2 as well as the table.
	item := func(pk, sk string, bytes int) map[string]types.AttributeValue {
		it := key(pk, sk)
		it["Pad"] = str(strings.Repeat("x", bytes))
		it[store.AttrGSI2PK], it[store.AttrGSI2SK] = str("G"+pk), str(sk)
		if n := store.ItemSize(it); n < bytes || n > bytes+64 {
			t.Fatalf("ItemSize of an item padded with %d bytes: %d", bytes, n)
		}
		return it
	}
	steps := []struct {
		name string
		op   string
		want store.Capacity
		send func() error
	}{
		{"a put of a 2.5 KB item writes 3 units to the table and 3 to the index", "PutItem", store.Capacity{Write: 6}, func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: item("A", "1", 2500)})
			return err
		}},
		{"a strongly consistent get of it reads one unit", "GetItem", store.Capacity{Read: 1}, func() error {
			_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: tbl, Key: key("A", "1"), ConsistentRead: aws.Bool(true)})
			return err
		}},
		{"an eventually consistent get reads half a unit", "GetItem", store.Capacity{Read: 0.5}, func() error {
			_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: tbl, Key: key("A", "1")})
			return err
		}},
		{"a batch of two 3 KB puts writes 3 units per item to the table and the index", "BatchWriteItem", store.Capacity{Write: 12}, func() error {
			_, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.TableName(): {
				{PutRequest: &types.PutRequest{Item: item("A", "2", 3000)}}, {PutRequest: &types.PutRequest{Item: item("A", "3", 3000)}}}}})
			return err
		}},
		{"a strongly consistent query of the three (8.5 KB together) reads 3 units", "Query", store.Capacity{Read: 3}, func() error {
			_, err := c.Query(ctx, &dynamodb.QueryInput{TableName: tbl, KeyConditionExpression: aws.String("PK = :p"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": str("A")}, ConsistentRead: aws.Bool(true)})
			return err
		}},
		{"a query of the index, eventually consistent, reads half as much", "Query", store.Capacity{Read: 1.5}, func() error {
			_, err := c.Query(ctx, &dynamodb.QueryInput{TableName: tbl, IndexName: aws.String(store.IndexGSI2), KeyConditionExpression: aws.String("GSI2PK = :p"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": str("GA")}})
			return err
		}},
		{"a scan of the table, eventually consistent, reads 1.5 units", "Scan", store.Capacity{Read: 1.5}, func() error {
			_, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: tbl})
			return err
		}},
		{"a batch get rounds each item up to 4 KB on its own", "BatchGetItem", store.Capacity{Read: 1}, func() error {
			_, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{s.TableName(): {Keys: []map[string]types.AttributeValue{key("A", "1"), key("A", "2")}}}})
			return err
		}},
		{"a transaction of a 0.5 KB and a 1.5 KB put writes twice 3 units, to the table and the index", "TransactWriteItems", store.Capacity{Write: 12}, func() error {
			_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: tbl, Item: item("B", "1", 500)}}, {Put: &types.Put{TableName: tbl, Item: item("B", "2", 1500)}}}})
			return err
		}},
		{"a transactional get reads twice", "TransactGetItems", store.Capacity{Read: 2}, func() error {
			_, err := c.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{{Get: &types.Get{TableName: tbl, Key: key("B", "1")}}}})
			return err
		}},
		{"an update of a small item writes one unit to the table and one to the index", "UpdateItem", store.Capacity{Write: 2}, func() error {
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tbl, Key: key("B", "1"), UpdateExpression: aws.String("SET X = :x"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":x": str("y")}})
			return err
		}},
		{"a delete of it, the same", "DeleteItem", store.Capacity{Write: 2}, func() error {
			_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tbl, Key: key("B", "1")})
			return err
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := s.Consumed()
			if err := st.send(); err != nil {
				t.Fatal(err)
			}
			got := s.Consumed().Sub(before)
			if len(got) != 1 || got[st.op] != st.want {
				t.Errorf("consumed %v, want %s: %+v", got, st.op, st.want)
			}
		})
	}
}

// TestConsumedCountsTheStoresWrites checks that the store's own requests
// are counted, by operation and kind, with no call site of its own: a
// restatement stages with BatchWriteItem, commits and materializes with
// TransactWriteItems, marks the head with UpdateItem, and reads with
// GetItem, Query or BatchGetItem; an overview reads with Query alone.
func TestConsumedCountsTheStoresWrites(t *testing.T) {
	s := store.NewStore(store.NewDB(dynamotest.Shared().Config()), dynamotest.UniqueName(t, "capacity"))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	d := doc("D1", "F1", 100, "P1", "P2", "P3")
	if _, err := s.Restate(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	before := s.Consumed()
	if _, err := s.Restate(ctx, doc("D1", "F1", 200, "P1", "P2", "P3"), nil); err != nil {
		t.Fatal(err)
	}
	w := s.Consumed().Sub(before)
	for _, op := range []string{"BatchWriteItem", "TransactWriteItems", "UpdateItem"} {
		if w[op].Write <= 0 || w[op].Read != 0 {
			t.Errorf("a restatement consumed %+v in %s, want write units only", w[op], op)
		}
	}
	if w.Total().Read <= 0 {
		t.Errorf("a restatement read nothing: %v", w)
	}

	before = s.Consumed()
	if _, err := s.As(fund.Operator).Overview(ctx, "D1"); err != nil {
		t.Fatal(err)
	}
	r := s.Consumed().Sub(before)
	if len(r) != 1 || r["Query"].Read <= 0 || r["Query"].Write != 0 {
		t.Errorf("an overview consumed %v, want read units of Query alone", r)
	}
	if total := s.Consumed().Total(); total.Read < r["Query"].Read+w.Total().Read || total.Write < w.Total().Write {
		t.Errorf("the total %+v is less than its parts", total)
	}
}

// TestConsumedLeavesTheCallersInputAlone sends one input from several
// goroutines (as the benchmark's raw baseline and any paginator may): the
// middleware asks for consumed capacity on a copy, so the input is never
// written (-race would see it) and still asks for nothing afterwards.
func TestConsumedLeavesTheCallersInputAlone(t *testing.T) {
	db := store.NewDB(dynamotest.Shared().Config())
	s := store.NewStore(db, dynamotest.UniqueName(t, "capacity"))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	in := &dynamodb.GetItemInput{TableName: aws.String(s.TableName()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{store.AttrPK: &types.AttributeValueMemberS{Value: "X"}, store.AttrSK: &types.AttributeValueMemberS{Value: "Y"}}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := db.Client().GetItem(ctx, in); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if in.ReturnConsumedCapacity != "" {
		t.Errorf("the caller's input was changed: ReturnConsumedCapacity %q", in.ReturnConsumedCapacity)
	}
	// A get of an absent item still reads one unit, strongly consistent.
	if got := s.Consumed()["GetItem"]; got != (store.Capacity{Read: 4}) {
		t.Errorf("four gets consumed %+v, want 4 read units", got)
	}
}

// TestConsumedIsEmptyForAStoreOnAnotherClient: a store on a client NewDB
// did not make has no meter, and says so with an empty reading rather
// than a wrong one.
func TestConsumedIsEmptyForAStoreOnAnotherClient(t *testing.T) {
	s := store.NewStore(dynamoNew(), dynamotest.UniqueName(t, "capacity"))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restate(ctx, fund.Document{ID: "D1", DocumentFields: fund.DocumentFields{FundID: "F1", Kind: fund.KindCapitalCallNotice, Title: "t", AsOf: fund.MustDate("2025-06-30")}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Consumed(); len(got) != 0 {
		t.Errorf("Consumed of a store on a plain client: %v, want empty", got)
	}
}

func dynamoNew() *dynamo.DB { return dynamo.New(dynamotest.Shared().Config()) }

func TestItemSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"a string is its name and its UTF-8 bytes", map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "DOC#é"}}, 2 + 6},
		{"a number is a byte per two significant digits, plus one", map[string]types.AttributeValue{"Amount": &types.AttributeValueMemberN{Value: "-00123.4000"}}, 6 + 2 + 1},
		{"an odd count of digits rounds up", map[string]types.AttributeValue{"N": &types.AttributeValueMemberN{Value: "12345"}}, 1 + 3 + 1},
		{"a Boolean and a null are one byte", map[string]types.AttributeValue{"B": &types.AttributeValueMemberBOOL{Value: true}, "Z": &types.AttributeValueMemberNULL{Value: true}}, 2 + 2},
		{"a map is 3 bytes, and a byte, a name and a value per element", map[string]types.AttributeValue{"M": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"ab": &types.AttributeValueMemberS{Value: "xyz"}}}}, 1 + 3 + 1 + 2 + 3},
		{"a list is 3 bytes, and a byte and a value per element", map[string]types.AttributeValue{"L": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "xyz"}, &types.AttributeValueMemberN{Value: "7"}}}}, 1 + 3 + 1 + 3 + 1 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := store.ItemSize(tc.item); got != tc.want {
				t.Errorf("ItemSize = %d, want %d", got, tc.want)
			}
		})
	}
}
