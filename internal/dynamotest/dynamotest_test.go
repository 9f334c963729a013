package dynamotest

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fundsvc/fundsvc/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// newClient returns a DynamoDB client for the shared server with opts applied.
func newClient(opts ...func(*aws.Config)) *dynamodb.Client {
	return dynamodb.NewFromConfig(Shared().Config(opts...))
}

// createTable creates a table keyed by PK (string) and SK (string) and
// deletes it when the test ends.
func createTable(t *testing.T, client *dynamodb.Client, name string) {
	t.Helper()
	ctx := t.Context()
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		},
	})
	if err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	t.Cleanup(func() {
		// A client without the test's middleware, so cleanup neither counts
		// nor fails.
		_, err := newClient().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Errorf("delete table %s: %v", name, err)
		}
	})
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: pk},
		"SK": &types.AttributeValueMemberS{Value: sk},
	}
}

func putItem(ctx context.Context, client *dynamodb.Client, table, pk, sk string) error {
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: key(pk, sk)})
	return err
}

func TestCounter(t *testing.T) {
	t.Parallel()
	var counter Counter
	client := newClient(WithAPIOptions(counter.APIOption()))
	table := UniqueName(t, "counter")
	ctx := t.Context()

	createTable(t, client, table)
	if err := putItem(ctx, client, table, "DOC#1", "DOCUMENT#LATEST"); err != nil {
		t.Fatal(err)
	}
	out, err := client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "DOC#1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 {
		t.Fatalf("Query returned %d items, want 1", len(out.Items))
	}

	t.Run("records each operation once, in call order", func(t *testing.T) {
		want := []string{"CreateTable", "PutItem", "Query"}
		if got := counter.Ops(); !slices.Equal(got, want) {
			t.Errorf("Ops() = %v, want %v", got, want)
		}
	})
	t.Run("counts by operation name", func(t *testing.T) {
		for op, want := range map[string]int{"CreateTable": 1, "PutItem": 1, "Query": 1, "Scan": 0, "GetItem": 0} {
			if got := counter.Count(op); got != want {
				t.Errorf("Count(%q) = %d, want %d", op, got, want)
			}
		}
	})
	t.Run("forgets everything on Reset", func(t *testing.T) {
		counter.Reset()
		if got := counter.Ops(); len(got) != 0 {
			t.Errorf("Ops() after Reset = %v, want none", got)
		}
		if _, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("DOC#1", "DOCUMENT#LATEST")}); err != nil {
			t.Fatal(err)
		}
		if got, want := counter.Ops(), []string{"GetItem"}; !slices.Equal(got, want) {
			t.Errorf("Ops() = %v, want %v", got, want)
		}
	})
}

func TestFaultInjector(t *testing.T) {
	t.Parallel()
	var faults FaultInjector
	client := newClient(WithAPIOptions(faults.APIOption()))
	table := UniqueName(t, "faults")
	ctx := t.Context()
	createTable(t, client, table)

	const k = 2
	faults.FailAfterWrites(k)
	for i := range k {
		if err := putItem(ctx, client, table, "DOC#1", "ITEM#"+string(rune('A'+i))); err != nil {
			t.Fatalf("write %d of %d allowed: %v", i+1, k, err)
		}
	}

	t.Run("fails every write after the first k with ErrInjected", func(t *testing.T) {
		writes := map[string]func() error{
			"PutItem": func() error { return putItem(ctx, client, table, "DOC#1", "ITEM#C") },
			"UpdateItem": func() error {
				_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
					TableName:                 aws.String(table),
					Key:                       key("DOC#1", "ITEM#A"),
					UpdateExpression:          aws.String("SET Amount = :a"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberN{Value: "1"}},
				})
				return err
			},
			"DeleteItem": func() error {
				_, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("DOC#1", "ITEM#A")})
				return err
			},
			"BatchWriteItem": func() error {
				_, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
					table: {{PutRequest: &types.PutRequest{Item: key("DOC#1", "ITEM#D")}}},
				}})
				return err
			},
			"TransactWriteItems": func() error {
				_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Put: &types.Put{TableName: aws.String(table), Item: key("DOC#1", "ITEM#E")}},
				}})
				return err
			},
		}
		for op, write := range writes {
			if err := write(); !errors.Is(err, ErrInjected) {
				t.Errorf("%s: err = %v, want ErrInjected", op, err)
			}
		}
		if got := faults.Writes(); got != k {
			t.Errorf("Writes() = %d, want %d", got, k)
		}
	})

	t.Run("sends no failed write to the server", func(t *testing.T) {
		out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		var sks []string
		for _, item := range out.Items {
			sks = append(sks, item["SK"].(*types.AttributeValueMemberS).Value)
			if _, ok := item["Amount"]; ok {
				t.Errorf("item %v was updated", item["SK"])
			}
		}
		slices.Sort(sks)
		if want := []string{"ITEM#A", "ITEM#B"}; !slices.Equal(sks, want) {
			t.Errorf("stored items %v, want %v", sks, want)
		}
	})

	t.Run("lets reads through", func(t *testing.T) {
		got, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("DOC#1", "ITEM#A"), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatalf("GetItem: %v", err)
		}
		if got.Item == nil {
			t.Error("GetItem found no item ITEM#A")
		}
		_, err = client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(table),
			KeyConditionExpression:    aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "DOC#1"}},
		})
		if err != nil {
			t.Errorf("Query: %v", err)
		}
	})

	t.Run("lets writes through again once disarmed", func(t *testing.T) {
		faults.Disarm()
		if err := putItem(ctx, client, table, "DOC#1", "ITEM#C"); err != nil {
			t.Fatalf("PutItem after Disarm: %v", err)
		}
		if got := faults.Writes(); got != k+1 {
			t.Errorf("Writes() = %d, want %d", got, k+1)
		}
	})
}

func TestFaultInjectorErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	var faults FaultInjector
	const attempts = 5
	client := newClient(WithAPIOptions(faults.APIOption()), func(cfg *aws.Config) {
		cfg.Retryer = func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = attempts
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		}
	})
	table := UniqueName(t, "faults")
	createTable(t, client, table)

	faults.FailAfterWrites(0)
	err := putItem(t.Context(), client, table, "DOC#1", "ITEM#A")
	if !errors.Is(err, ErrInjected) {
		t.Fatalf("err = %v, want ErrInjected", err)
	}

	t.Run("fails the operation on its first attempt", func(t *testing.T) {
		if got := faults.Injected(); got != 1 {
			t.Errorf("requests failed = %d, want 1 (a retryer allowing %d attempts retried it)", got, attempts)
		}
	})
	t.Run("is classified not retryable by the SDK's default checks", func(t *testing.T) {
		if got := retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err); got != aws.FalseTernary {
			t.Errorf("IsErrorRetryable(%v) = %v, want false", err, got)
		}
	})
}

func TestStop(t *testing.T) {
	t.Parallel()
	s, err := Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pid := s.cmd.Process.Pid
	if !harness.ProcessGroupExists(pid) {
		t.Fatalf("process group %d of a running server not found", pid)
	}
	s.Stop()
	s.Stop() // a second Stop must not block or panic

	t.Run("leaves no process of the server behind", func(t *testing.T) {
		if harness.ProcessGroupExists(pid) {
			t.Errorf("process group %d still exists after Stop", pid)
		}
	})
	t.Run("closes the endpoint", func(t *testing.T) {
		u, err := url.Parse(s.Endpoint())
		if err != nil {
			t.Fatal(err)
		}
		if conn, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Stop", u.Host)
		}
	})
}

func TestFindJar(t *testing.T) {
	t.Parallel()
	_, err := findJar(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "make tools") {
		t.Errorf("findJar in a checkout without tools: err = %v, want one that says to run `make tools`", err)
	}
}

func TestUniqueName(t *testing.T) {
	t.Parallel()
	valid := func(name string) bool {
		return len(name) >= 3 && len(name) <= 255 && tableNameChars(name) == name
	}
	t.Run("differs on every call", func(t *testing.T) {
		a, b := UniqueName(t, "fund"), UniqueName(t, "fund")
		if a == b {
			t.Errorf("two calls both returned %q", a)
		}
		if !strings.HasPrefix(a, "fund-TestUniqueName_differs_on_every_call-") {
			t.Errorf("name %q does not start with the prefix and test name", a)
		}
	})
	t.Run("replaces characters DynamoDB rejects: /*ü", func(t *testing.T) {
		if name := UniqueName(t, "a b"); !valid(name) {
			t.Errorf("invalid table name %q", name)
		}
	})
	t.Run("stays within 255 characters "+strings.Repeat("x", 300), func(t *testing.T) {
		if name := UniqueName(t, strings.Repeat("p", 100)); !valid(name) {
			t.Errorf("invalid table name %q (%d characters)", name, len(name))
		}
	})
}
