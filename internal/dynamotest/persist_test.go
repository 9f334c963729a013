package dynamotest

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fundsvc/fundsvc/internal/harness"
)

func TestStartPersistentKillRestart(t *testing.T) {
	t.Parallel()
	dir := DataDir(t) // removed after the server has stopped (cleanups run last-in first-out)
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartPersistent(t.Context(), dir, port, ShortLivedJVM...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	if want := "http://127.0.0.1:" + itoa(port); s.Endpoint() != want {
		t.Fatalf("Endpoint() = %s, want %s", s.Endpoint(), want)
	}

	// One client for the whole test: it must keep working across restarts.
	client := dynamodb.NewFromConfig(s.Config(func(cfg *aws.Config) { cfg.RetryMaxAttempts = 2 }))
	ctx := t.Context()
	const table = "persist"
	createTableNoCleanup(t, client, table)
	if err := putItem(ctx, client, table, "DOC#1", "ITEM#A"); err != nil {
		t.Fatal(err)
	}
	pid := s.cmd.Process.Pid

	s.Kill()
	s.Kill() // a second Kill must not block or panic

	t.Run("Kill leaves no process of the server behind", func(t *testing.T) {
		if harness.ProcessGroupExists(pid) {
			t.Errorf("process group %d still exists after Kill", pid)
		}
	})
	t.Run("Kill closes the endpoint", func(t *testing.T) {
		if conn, err := net.DialTimeout("tcp", hostOf(t, s), time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Kill", hostOf(t, s))
		}
		if err := putItem(ctx, client, table, "DOC#1", "ITEM#B"); err == nil {
			t.Error("PutItem to a killed server succeeded")
		}
	})

	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Run("Restart keeps the endpoint and the data", func(t *testing.T) {
		if want := "http://127.0.0.1:" + itoa(port); s.Endpoint() != want {
			t.Errorf("Endpoint() = %s, want %s", s.Endpoint(), want)
		}
		if err := getItem(ctx, client, table, "DOC#1", "ITEM#A"); err != nil {
			t.Errorf("item written before the kill: %v", err)
		}
		if err := putItem(ctx, client, table, "DOC#1", "ITEM#C"); err != nil {
			t.Errorf("PutItem after Restart: %v", err)
		}
	})

	t.Run("Restart of a running server kills it first", func(t *testing.T) {
		old := s.cmd.Process.Pid
		if err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		if harness.ProcessGroupExists(old) {
			t.Errorf("process group %d of the previous process still exists", old)
		}
		if err := getItem(ctx, client, table, "DOC#1", "ITEM#C"); err != nil {
			t.Errorf("item written before the restart: %v", err)
		}
	})

	t.Run("Stop leaves no process behind", func(t *testing.T) {
		pid := s.cmd.Process.Pid
		s.Stop()
		s.Stop()
		s.Kill() // after Stop: nothing to do
		if harness.ProcessGroupExists(pid) {
			t.Errorf("process group %d still exists after Stop", pid)
		}
	})
}

func TestStartPersistentRejectsAMissingDirectory(t *testing.T) {
	t.Parallel()
	_, err := StartPersistent(t.Context(), t.TempDir()+"/missing", 0)
	if err == nil {
		t.Fatal("StartPersistent with a missing data directory succeeded")
	}
}

func TestRestartNeedsAPersistentServer(t *testing.T) {
	t.Parallel()
	if err := Shared().Restart(t.Context()); err == nil {
		t.Fatal("Restart of an in-memory (or attached) server succeeded")
	}
}

func TestWriteHook(t *testing.T) {
	t.Parallel()
	var hook WriteHook
	client := newClient(WithAPIOptions(hook.APIOption()))
	plain := newClient()
	table := UniqueName(t, "hook")
	ctx := t.Context()
	createTable(t, client, table)

	t.Run("runs f just before the k-th write, which is not sent yet", func(t *testing.T) {
		var stored []bool // per call of f: was the write it precedes already stored?
		hook.OnWrite(3, func() {
			stored = append(stored, getItem(ctx, plain, table, "DOC#1", "ITEM#3") == nil)
		})
		for i := 1; i <= 4; i++ {
			if i == 2 { // reads neither count nor fire
				_ = getItem(ctx, client, table, "DOC#1", "ITEM#1")
			}
			if err := putItem(ctx, client, table, "DOC#1", "ITEM#"+itoa(i)); err != nil {
				t.Fatal(err)
			}
			if got, want := hook.Fired(), i >= 3; got != want {
				t.Errorf("after write %d: Fired() = %v, want %v", i, got, want)
			}
		}
		if len(stored) != 1 || stored[0] {
			t.Errorf("f ran %d times (want 1); write 3 already stored when it ran: %v", len(stored), stored)
		}
	})

	t.Run("counts only the named operation with OnWriteOp", func(t *testing.T) {
		before := hook.Writes()
		fired := 0
		hook.OnWriteOp("DeleteItem", 2, func() { fired = hook.Writes() - before })
		for i := 1; i <= 2; i++ {
			if err := putItem(ctx, client, table, "DOC#2", "ITEM#"+itoa(i)); err != nil {
				t.Fatal(err)
			}
			if _, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("DOC#2", "ITEM#"+itoa(i))}); err != nil {
				t.Fatal(err)
			}
		}
		if fired != 4 {
			t.Errorf("f ran before write %d of the four, want the second DeleteItem (write 4)", fired)
		}
	})

	t.Run("counts only the writes OnWriteWhere's match accepts", func(t *testing.T) {
		var seen []string
		hook.OnWriteWhere(func(op string, input any) bool {
			in, ok := input.(*dynamodb.PutItemInput)
			return ok && in.Item["SK"].(*types.AttributeValueMemberS).Value == "MATCH"
		}, 2, func() { seen = append(seen, "f") })
		for _, sk := range []string{"MATCH", "OTHER", "OTHER", "MATCH", "MATCH"} {
			if err := putItem(ctx, client, table, "DOC#5", sk); err != nil {
				t.Fatal(err)
			}
			seen = append(seen, sk)
		}
		if want := []string{"MATCH", "OTHER", "OTHER", "f", "MATCH", "MATCH"}; !slices.Equal(seen, want) {
			t.Errorf("f ran at %v, want %v", seen, want)
		}
	})

	t.Run("holds writes that start while f runs until it returns", func(t *testing.T) {
		release := make(chan struct{})
		entered := make(chan struct{})
		hook.OnWrite(1, func() {
			close(entered)
			<-release
		})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = putItem(ctx, client, table, "DOC#3", "ITEM#1") // runs f
		}()
		<-entered
		second := make(chan error, 1)
		go func() { second <- putItem(ctx, client, table, "DOC#3", "ITEM#2") }()
		select {
		case err := <-second:
			t.Errorf("a write finished while f was running (err %v)", err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := getItem(ctx, client, table, "DOC#3", "ITEM#1"); err == nil {
			t.Error("reads are held too, or the write f precedes was sent")
		}
		close(release)
		wg.Wait()
		if err := <-second; err != nil {
			t.Errorf("held write: %v", err)
		}
	})

	t.Run("lets everything through once disarmed", func(t *testing.T) {
		fired := false
		hook.OnWrite(1, func() { fired = true })
		hook.Disarm()
		if err := putItem(ctx, client, table, "DOC#4", "ITEM#1"); err != nil {
			t.Fatal(err)
		}
		if fired {
			t.Error("f ran after Disarm")
		}
	})
}

// TestWriteHookKillsTheServer is the use WriteHook is made for: the write f
// precedes meets a dead server, the writes before it were stored.
func TestWriteHookKillsTheServer(t *testing.T) {
	t.Parallel()
	s, err := StartPersistent(t.Context(), DataDir(t), 0, ShortLivedJVM...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	var hook WriteHook
	client := dynamodb.NewFromConfig(s.Config(WithAPIOptions(hook.APIOption()), func(cfg *aws.Config) { cfg.RetryMaxAttempts = 2 }))
	ctx := t.Context()
	const table = "hook"
	createTableNoCleanup(t, client, table)

	hook.OnWrite(3, s.Kill)
	var errs []error
	for i := 1; i <= 4; i++ {
		errs = append(errs, putItem(ctx, client, table, "DOC#1", "ITEM#"+itoa(i)))
	}
	if errs[0] != nil || errs[1] != nil || errs[2] == nil || errs[3] == nil {
		t.Fatalf("write errors %v, want the first two to succeed and the others to fail", errs)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false, false} {
		err := getItem(ctx, client, table, "DOC#1", "ITEM#"+itoa(i+1))
		if got := err == nil; got != want {
			t.Errorf("item %d stored: %v (err %v), want %v", i+1, got, err, want)
		}
	}
}

var errNotFound = errors.New("item not found")

// getItem reads an item consistently; errNotFound if it is absent.
func getItem(ctx context.Context, client *dynamodb.Client, table, pk, sk string) error {
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return err
	}
	if out.Item == nil {
		return errNotFound
	}
	return nil
}

// createTableNoCleanup creates a table on a server of the test's own, which
// goes away with its data directory.
func createTableNoCleanup(t *testing.T, client *dynamodb.Client, name string) {
	t.Helper()
	_, err := client.CreateTable(t.Context(), &dynamodb.CreateTableInput{
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
}

func hostOf(t *testing.T, s *Server) string {
	t.Helper()
	u, err := url.Parse(s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestTheScriptsServerRunsTheTestRunJVM holds make test's shared server
// (scripts/with-dynamodb-local.sh's ddb_jvm_opts, which bash cannot take
// from Go) to TestRunJVM's options, Start's.
func TestTheScriptsServerRunsTheTestRunJVM(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "with-dynamodb-local.sh"))
	if err != nil {
		t.Fatal(err)
	}
	want := "\nddb_jvm_opts=(" + strings.Join(TestRunJVM, " ") + ")\n"
	if !strings.Contains(string(b), want) {
		t.Fatalf("scripts/with-dynamodb-local.sh does not set %q", strings.TrimSpace(want))
	}
}
