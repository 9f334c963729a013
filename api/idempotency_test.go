package api_test

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

func smallDocument(title string) map[string]any {
	return map[string]any{"fundId": "FUND_A", "kind": "capital_call_notice", "title": title, "asOf": "2025-11-30",
		"positions": []any{map[string]any{"positionId": "POSITION_1", "investorId": "INVESTOR_1", "capitalCall": map[string]any{"amount": "10.00"}}}}
}

func TestIdempotencyKeyReplaysTheFirstResponse(t *testing.T) {
	s := newServer(t, true)
	first := s.do(t, http.MethodPut, "/v1/documents/DOC_IDEM", smallDocument("first"), "Idempotency-Key", "key-1")
	if first.Status != http.StatusCreated {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	before := s.Dump(t)

	t.Run("a repeat returns the stored response byte for byte and writes nothing", func(t *testing.T) {
		again := s.do(t, http.MethodPut, "/v1/documents/DOC_IDEM", smallDocument("first"), "Idempotency-Key", "key-1")
		if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) || again.Header.Get("ETag") != first.Header.Get("ETag") ||
			again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %q %s\nfirst: %d %q %s", again.Status, again.Header.Get("ETag"), again.Body, first.Status, first.Header.Get("ETag"), first.Body)
		}
		if after := s.Dump(t); !reflect.DeepEqual(before, after) {
			t.Fatal("the replay wrote to the table")
		}
	})
	t.Run("the same key with another body is 422 and writes nothing", func(t *testing.T) {
		r := s.do(t, http.MethodPut, "/v1/documents/DOC_IDEM", smallDocument("second"), "Idempotency-Key", "key-1")
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"field":"Idempotency-Key"`) {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if after := s.Dump(t); !reflect.DeepEqual(before, after) {
			t.Fatal("the refused request wrote to the table")
		}
	})
	t.Run("keys belong to one principal: another token's same key runs anew", func(t *testing.T) {
		other := token(t, api.Principal{Subject: "other-admin", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
		r := s.do(t, http.MethodPut, "/v1/documents/DOC_IDEM", smallDocument("first"), "Idempotency-Key", "key-1", "Authorization", "Bearer "+other)
		if r.Status != http.StatusOK || r.Header.Get("ETag") != `"2"` || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("got %d ETag %s replayed %q", r.Status, r.Header.Get("ETag"), r.Header.Get("Idempotent-Replayed"))
		}
	})
	t.Run("a stored answer survives a restart of the service", func(t *testing.T) {
		restarted := startAPI(t, s.Env, nil)
		again := restarted.do(t, http.MethodPut, "/v1/documents/DOC_IDEM", smallDocument("first"), "Idempotency-Key", "key-1")
		if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) {
			t.Fatalf("after restart: %d %s", again.Status, again.Body)
		}
	})
	t.Run("a refused request is stored too and replayed", func(t *testing.T) {
		bad := smallDocument("bad")
		bad["asOf"] = "2025-02-30"
		r1 := s.do(t, http.MethodPut, "/v1/documents/DOC_IDEM", bad, "Idempotency-Key", "key-bad")
		r2 := s.do(t, http.MethodPut, "/v1/documents/DOC_IDEM", bad, "Idempotency-Key", "key-bad")
		if r1.Status != http.StatusBadRequest || r2.Status != r1.Status || !bytes.Equal(r1.Body, r2.Body) || r2.Header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("got %d %s then %d %s", r1.Status, r1.Body, r2.Status, r2.Body)
		}
	})
	t.Run("a key that is not printable ASCII or too long is 400", func(t *testing.T) {
		for _, k := range []string{"has space", strings.Repeat("k", 256), "naïve"} {
			if r := s.do(t, http.MethodPut, "/v1/documents/DOC_IDEM", smallDocument("first"), "Idempotency-Key", k); r.Status != http.StatusBadRequest {
				t.Errorf("key %q: %d", k, r.Status)
			}
		}
	})
}

func TestIdempotencyKeyOfAFailedOrRunningRequest(t *testing.T) {
	s := newServer(t, false)
	t.Run("a server-side failure releases the key, so the repeat runs", func(t *testing.T) {
		s.Faults.FailAfterWrites(0)
		r := s.do(t, http.MethodPut, "/v1/documents/DOC_F", smallDocument("x"), "Idempotency-Key", "key-f")
		s.Faults.Disarm()
		if r.Status != http.StatusInternalServerError {
			t.Fatalf("with writes failing: %d %s", r.Status, r.Body)
		}
		r = s.do(t, http.MethodPut, "/v1/documents/DOC_F", smallDocument("x"), "Idempotency-Key", "key-f")
		if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("repeat: %d %s", r.Status, r.Body)
		}
	})
	t.Run("while the first request runs, a repeat is 409; afterwards its 150-position answer replays exactly", func(t *testing.T) {
		body, _ := bigVersion(1)
		done := make(chan response, 1)
		go func() { done <- s.do(t, http.MethodPut, "/v1/documents/BIG_IDEM", body, "Idempotency-Key", "key-big") }()
		// The first request holds the key once it is writing: it registers the fund first.
		deadline := time.Now().Add(30 * time.Second)
		for s.Store.As(fund.Operator).FundMustExist(context.Background(), "FUND_BIG") != nil {
			if time.Now().After(deadline) {
				t.Fatal("the first request never started writing")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if r := s.do(t, http.MethodPut, "/v1/documents/BIG_IDEM", body, "Idempotency-Key", "key-big"); r.Status != http.StatusConflict {
			t.Fatalf("repeat while the first runs: %d %.300s", r.Status, r.Body)
		}
		first := <-done
		if first.Status != http.StatusCreated || len(first.Body) < 20<<10 {
			t.Fatalf("first: %d, %d bytes", first.Status, len(first.Body))
		}
		again := s.do(t, http.MethodPut, "/v1/documents/BIG_IDEM", body, "Idempotency-Key", "key-big")
		if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) {
			t.Fatalf("replay of %d bytes differs", len(first.Body))
		}
	})
}

// TestARepeatAfterALostAnswerAddsNoVersion: the write succeeds but storing
// its answer fails (the process or the store died in between), so the key
// stays claimed; once its lease ends, the same request (with the If-Match
// that held when it committed) must return the version it already wrote,
// neither adding another nor failing its precondition.
func TestARepeatAfterALostAnswerAddsNoVersion(t *testing.T) {
	s := newServer(t, true)
	ss := startAPI(t, s.Env, func(o *api.Options) { o.IdempotencyLease = 50 * time.Millisecond })
	ifMatch := map[string]string{"v2": `"1"`, "v3": `"2"`}
	put := func(title, key string) response {
		if m, ok := ifMatch[title]; ok {
			return ss.do(t, http.MethodPut, "/v1/documents/DOC_LOST", smallDocument(title), "Idempotency-Key", key, "If-Match", m)
		}
		return ss.do(t, http.MethodPut, "/v1/documents/DOC_LOST", smallDocument(title), "Idempotency-Key", key)
	}
	if r := put("v1", "k1"); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	// Learn how many writes a restatement with a key makes; the last two
	// store its answer (the body chunk, then the record).
	before := s.Faults.Writes()
	if r := put("v2", "k2"); r.Status != http.StatusOK {
		t.Fatalf("restate: %d %s", r.Status, r.Body)
	}
	writes := s.Faults.Writes() - before

	s.Faults.FailAfterWrites(writes - 2)
	first := put("v3", "k3")
	s.Faults.Disarm()
	if first.Status != http.StatusOK || first.Header.Get("ETag") != `"3"` {
		t.Fatalf("the write itself should have succeeded: %d %s", first.Status, first.Body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := put("v3", "k3")
		if r.Status == http.StatusConflict && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // the dead request's lease
			continue
		}
		if r.Status != http.StatusOK || r.Header.Get("ETag") != `"3"` || !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("repeat: %d ETag %s, want 200 with the same version 3 and body", r.Status, r.Header.Get("ETag"))
		}
		break
	}
	var latest struct{ Version int }
	getJSON(t, s, "/v1/documents/DOC_LOST/versions/latest", &latest)
	if latest.Version != 3 {
		t.Fatalf("latest version %d after repeating version 3's request, want 3", latest.Version)
	}
}

// instanceWithHook serves the API over env's table through a DynamoDB client
// of its own whose writes hook holds: a second instance of the service, which
// can be stalled or made to panic while the other runs freely.
func instanceWithHook(t *testing.T, env *fundtest.Env, hook *dynamotest.WriteHook, tweak func(*api.Options)) *testServer {
	t.Helper()
	store := store.NewStore(store.NewDB(dynamotest.Shared().Config(dynamotest.WithAPIOptions(hook.APIOption()))), env.Table)
	store.Now = env.Store.Now
	return startAPI(t, env, func(o *api.Options) {
		o.Documents, o.Positions = store, positions.NewAnalytics(store)
		if tweak != nil {
			tweak(o)
		}
	})
}

// waitForLog polls s's log until it holds text.
func waitForLog(t *testing.T, s *testServer, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.logs.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", text, s.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAReplayAfterALeaseTakeoverIsTheRepeatsAnswer: request A (on one
// instance) claims its key and stalls before its first write past its lease;
// the same request B (on another instance) takes the key over and completes;
// another writer restates the document; A resumes, writes and tries to store
// its own, different answer. Every later replay, on either instance, is B's
// stored answer byte for byte.
func TestAReplayAfterALeaseTakeoverIsTheRepeatsAnswer(t *testing.T) {
	env := fundtest.New(t)
	instB := startAPI(t, env, nil)
	hook := &dynamotest.WriteHook{}
	instA := instanceWithHook(t, env, hook, func(o *api.Options) { o.IdempotencyLease = 200 * time.Millisecond })
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	resume := func() { once.Do(func() { close(release) }) }
	t.Cleanup(resume) // before the servers close, which waits for A
	// A's first write is its claim; it stalls just before the second.
	hook.OnWrite(2, func() { close(held); <-release })

	const path, key = "/v1/documents/DOC_TAKEOVER", "key-takeover"
	doneA := make(chan response, 1)
	go func() { doneA <- instA.do(t, http.MethodPut, path, smallDocument("first"), "Idempotency-Key", key) }()
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("request A never reached its first write")
	}

	var b response
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b = instB.do(t, http.MethodPut, path, smallDocument("first"), "Idempotency-Key", key)
		if b.Status != http.StatusConflict || time.Now().After(deadline) {
			break // 409 until A's lease ends
		}
	}
	if b.Status != http.StatusCreated || b.Header.Get("ETag") != `"1"` || b.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the repeat B after A's lease: %d ETag %s %s", b.Status, b.Header.Get("ETag"), b.Body)
	}
	if r := instB.do(t, http.MethodPut, path, smallDocument("second")); r.Status != http.StatusOK {
		t.Fatalf("another writer: %d %s", r.Status, r.Body)
	}

	resume()
	a := <-doneA
	// A no longer owns its key: its commit is refused, so the request that
	// B already carried out is not carried out a second time.
	if a.Status != http.StatusConflict {
		t.Fatalf("the stale request A, whose key was taken over, answered %d, want 409: %s", a.Status, a.Body)
	}
	if r := instA.do(t, http.MethodGet, path, nil); r.Header.Get("ETag") != `"2"` {
		t.Fatalf("after the stale request the document is at %s, want \"2\" (no version added by A)", r.Header.Get("ETag"))
	}
	for i, inst := range []*testServer{instA, instB, instA} {
		r := inst.do(t, http.MethodPut, path, smallDocument("first"), "Idempotency-Key", key)
		if r.Status != b.Status || !bytes.Equal(r.Body, b.Body) || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %d: %d %s\nwant B's %d %s", i, r.Status, r.Body, b.Status, b.Body)
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "ETag", "Location"} {
			if r.Header.Get(h) != b.Header.Get(h) {
				t.Errorf("replay %d: %s %q, B's was %q", i, h, r.Header.Get(h), b.Header.Get(h))
			}
		}
	}
}

// TestAPanicInAnIdempotentWriteReleasesItsKey: a write that panics after its
// key was claimed (here in the commit transaction) is answered 500 by the
// recovery, and its key is released at once: the repeat runs, well within
// the lease, and its answer is the one replayed.
func TestAPanicInAnIdempotentWriteReleasesItsKey(t *testing.T) {
	env := fundtest.New(t)
	hook := &dynamotest.WriteHook{}
	s := instanceWithHook(t, env, hook, func(o *api.Options) { o.IdempotencyLease = time.Hour })
	hook.OnWriteWhere(func(op string, input any) bool {
		tx, ok := input.(*dynamodb.TransactWriteItemsInput)
		if !ok {
			return false
		}
		for _, it := range tx.TransactItems {
			if it.Put == nil {
				continue
			}
			if sk, ok := it.Put.Item[store.AttrSK].(*types.AttributeValueMemberS); ok && sk.Value == store.HeadSK {
				return true
			}
		}
		return false
	}, 1, func() { panic("injected panic in the commit") })

	const path, key = "/v1/documents/DOC_PANIC", "key-panic"
	r := s.do(t, http.MethodPut, path, smallDocument("x"), "Idempotency-Key", key)
	if !hook.Fired() || r.Status != http.StatusInternalServerError || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("the panicking write: fired %v, %d %s %s", hook.Fired(), r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	again := s.do(t, http.MethodPut, path, smallDocument("x"), "Idempotency-Key", key)
	if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the repeat right after the panic: %d %s, want it to run and create version 1", again.Status, again.Body)
	}
	replay := s.do(t, http.MethodPut, path, smallDocument("x"), "Idempotency-Key", key)
	if replay.Status != again.Status || !bytes.Equal(replay.Body, again.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s, want the repeat's %d %s", replay.Status, replay.Body, again.Status, again.Body)
	}
	waitForLog(t, s, "panic in an idempotent request")
}
