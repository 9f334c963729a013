package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

// crashEnv is the API over a DynamoDB Local of the test's own that persists
// its tables to a directory, so it can be killed and restarted with them.
type crashEnv struct {
	*testServer
	ddb  *dynamotest.Server
	hook *dynamotest.WriteHook
}

// newCrashServer starts DynamoDB Local persisting to a temporary directory
// (see dynamotest.DataDir) on a port of its own, a store on it built as fundtest.New builds one
// (plus a WriteHook), and the API over the store. Everything stops when t
// ends.
func newCrashServer(t *testing.T) *crashEnv {
	t.Helper()
	dir := dynamotest.DataDir(t) // removed after DynamoDB Local has stopped
	port, err := dynamotest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ddb, err := dynamotest.StartPersistent(t.Context(), dir, port, dynamotest.ShortLivedJVM...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ddb.Stop)

	env := &fundtest.Env{Counter: &dynamotest.Counter{}, Faults: &dynamotest.FaultInjector{}, Table: "fundsvc"}
	hook := &dynamotest.WriteHook{}
	cfg := ddb.Config(dynamotest.WithAPIOptions(env.Counter.APIOption(), env.Faults.APIOption(), hook.APIOption()),
		// store.NewDB's retry policy allows 8 attempts with exponential
		// backoff: up to a minute per write against a dead server. The SDK
		// caps it at RetryMaxAttempts, wrapping NewDB's retryer. Two still
		// ride out a pooled connection that died with the previous process.
		func(c *aws.Config) { c.RetryMaxAttempts = 2 })
	env.Store = store.NewStore(store.NewDB(cfg), env.Table)
	env.Store.Now = func() time.Time { return fundtest.Clock }
	env.Positions = positions.NewAnalytics(env.Store)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := env.Store.CreateTable(ctx); err != nil {
		t.Fatalf("create table: %v", err)
	}

	s := startAPI(t, env, func(o *api.Options) {
		o.MaxBodyBytes = 16 << 20
		o.RequestTimeout = 30 * time.Second
		// A key whose request died with the database is locked this long.
		o.IdempotencyLease = time.Second
	})
	return &crashEnv{testServer: s, ddb: ddb, hook: hook}
}

// waitReady polls /readyz until it answers 200.
func (e *crashEnv) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r := e.do(t, http.MethodGet, "/readyz", nil)
		if r.Status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still answers %d %s after a minute", r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// crashDemoPaths are the reads of the demo documents that must not change
// while another document's restatements die with the database.
var crashDemoPaths = []string{
	"/v1/documents/DOC001", "/v1/documents/DOC001/capital", "/v1/documents/DOC001/analysis",
	"/v1/documents/DOC001/versions", "/v1/documents/DOC001/versions/1", "/v1/documents/DOC001/versions/latest",
	"/v1/documents/DOC001/positions/POSITION_1",
	"/v1/documents/DOC002", "/v1/documents/DOC002/capital", "/v1/documents/DOC002/analysis",
	"/v1/funds/FUND_A/documents", "/v1/positions/POSITION_1", "/v1/positions/POSITION_2",
	"/v1/investors/INVESTOR_1/positions",
}

func (e *crashEnv) demoSnapshot(t *testing.T) map[string]string {
	t.Helper()
	snap := map[string]string{}
	for _, p := range crashDemoPaths {
		r := e.do(t, http.MethodGet, p, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, r.Status, r.Body)
		}
		snap[p] = bodyWithoutBasis(t, r.Body)
	}
	return snap
}

// bodyWithoutBasis is an answer without its basis, whose knownAt names the
// instant of the read: what the demo's reads must keep is everything else.
func bodyWithoutBasis(t *testing.T, body []byte) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, body)
	}
	b, err := json.Marshal(withoutBasis(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// crashPoint is where a restatement loses its database: just before the
// k-th write of the request (its Idempotency-Key claim is write 1), or, if
// match is set, just before the k-th write that match accepts.
type crashPoint struct {
	name      string
	k         int
	match     func(op string, input any) bool
	afterFlip bool // the commit flip was answered before the kill
}

// putsHead reports whether a write is the commit flip: the transaction that
// puts a document's head.
func putsHead(op string, input any) bool {
	in, ok := input.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return false
	}
	for _, it := range in.TransactItems {
		if it.Put != nil && isHeadKey(it.Put.Item) {
			return true
		}
	}
	return false
}

// marksHead reports whether a write is the last of a restatement proper:
// the update that marks the head materialized.
// afterTheFlip matches the writes after the commit flip, so a kill point
// counted from the flip lands there however many writes staging took (a
// loaded machine may add some: a batch's unprocessed items are written
// again). Each crash point needs its own: it remembers the flip.
func afterTheFlip() func(op string, input any) bool {
	flipped := false // the hook calls match under its lock, one write at a time
	return func(op string, input any) bool {
		if putsHead(op, input) {
			flipped = true
			return false
		}
		return flipped
	}
}

func marksHead(op string, input any) bool {
	in, ok := input.(*dynamodb.UpdateItemInput)
	return ok && isHeadKey(in.Key)
}

func isHeadKey(item map[string]types.AttributeValue) bool {
	sk, ok := item[store.AttrSK].(*types.AttributeValueMemberS)
	return ok && sk.Value == store.HeadSK
}

// TestRestatementSurvivesDynamoDBBeingKilled kills DynamoDB Local, which
// persists to a directory, with SIGKILL at ten points of the restatement of
// a 150-position document: while staging, at the commit flip, right after
// it and while materializing the latest view. After each restart every
// document reads at exactly one complete version — the previous one if the
// flip was not reached, the new one if it was — and repeating the request
// with the same Idempotency-Key completes the new version, without adding
// another.
func TestRestatementSurvivesDynamoDBBeingKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts DynamoDB Local ten times and ingests many 150-position documents")
	}
	s := newCrashServer(t)
	if _, err := s.Store.SeedDemo(t.Context()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	demo := s.demoSnapshot(t)

	const doc = "BIG"
	put := func(n int, key string) response {
		body, _ := bigVersion(n)
		return s.do(t, http.MethodPut, "/v1/documents/"+doc, body, "Idempotency-Key", key)
	}
	if r := put(1, "crash-v1"); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}

	// Learn the writes of one restatement: the key's claim (write 1),
	// claiming new positions and staging the version partition, the flip,
	// confirming the claims beside materializing the latest view (both
	// transactions), dropping the claims' fence, marking the head
	// materialized, storing the response.
	s.Counter.Reset()
	base := s.hook.Writes()
	flipAt := make(chan int, 1)
	s.hook.OnWriteWhere(putsHead, 1, func() { flipAt <- s.hook.Writes() - base })
	if r := put(2, "crash-v2"); r.Status != http.StatusOK {
		t.Fatalf("restate: %d %s", r.Status, r.Body)
	}
	s.hook.Disarm()
	var writes []string
	for _, op := range s.Counter.Ops() {
		switch op {
		case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
			writes = append(writes, op)
		}
	}
	var flip int // 1-based, as WriteHook counts
	select {
	case flip = <-flipAt:
	default:
		t.Fatalf("no write put the head: %v", writes)
	}
	materializing := 0 // writes between the flip and the mark
	for _, op := range writes[flip:] {
		if op == "UpdateItem" {
			break
		}
		materializing++
	}
	if writes[0] != "PutItem" || flip < 10 || materializing < 4 || flip+materializing >= len(writes) {
		t.Fatalf("unexpected write sequence (the flip is write %d): %v", flip, writes)
	}
	t.Logf("a restatement makes %d writes: the key's claim, %d claiming and staging writes, the flip (write %d), %d confirming and materializing writes, the mark, %d for the response",
		len(writes), flip-2, flip, materializing, len(writes)-flip-materializing-1)
	checkBig(t, s.testServer, doc, 2, 2)

	points := []crashPoint{
		{name: "at the first staging write", k: 2},
		{name: "a third into staging", k: flip / 3},
		{name: "two thirds into staging", k: 2 * flip / 3},
		{name: "at the last staging write", k: flip - 1},
		{name: "at the commit flip", match: putsHead, k: 1},
		{name: "right after the flip", match: afterTheFlip(), k: 1, afterFlip: true},
		{name: "at the second write after the flip", match: afterTheFlip(), k: 2, afterFlip: true},
		{name: "halfway through confirming and materializing", match: afterTheFlip(), k: materializing / 2, afterFlip: true},
		// Later restatements also delete the tombstones of positions dropped
		// before, so they have a few more transactions than the one measured.
		{name: "late in materializing", match: afterTheFlip(), k: materializing, afterFlip: true},
		{name: "at marking the head materialized", match: marksHead, k: 1, afterFlip: true},
	}
	version := 2
	for i, p := range points {
		next := version + 1
		name := fmt.Sprintf("%02d killed %s", i+1, p.name)
		if p.match == nil {
			name += fmt.Sprintf(" (before write %d; the flip is write %d)", p.k, flip)
		}
		ok := t.Run(name, func(t *testing.T) {
			key := fmt.Sprintf("crash-v%d", next)
			killedAt := make(chan string, 1) // the operation the hook ran before
			kill := func() {
				ops := s.Counter.Ops()
				killedAt <- ops[len(ops)-1]
				s.ddb.Kill()
			}
			s.Counter.Reset()
			s.hook.OnWriteWhere(p.match, p.k, kill)
			began := time.Now()
			r := put(next, key)
			s.hook.Disarm()
			if !s.hook.Fired() {
				t.Fatalf("the restatement finished without reaching the kill point: %d %s", r.Status, r.Body)
			}
			if r.Status < 500 {
				t.Fatalf("restatement whose database was killed: want a 5xx, got %d %s", r.Status, r.Body)
			}
			t.Logf("killed before %s; the request answered %d after %v", <-killedAt, r.Status, time.Since(began).Round(time.Millisecond))

			began = time.Now()
			if err := s.ddb.Restart(t.Context()); err != nil {
				t.Fatal(err)
			}
			s.waitReady(t)
			t.Logf("DynamoDB Local restarted and /readyz answered in %v", time.Since(began).Round(time.Millisecond))

			var latest struct{ Version int }
			getJSON(t, s.testServer, "/v1/documents/"+doc+"/versions/latest", &latest)
			committed := version
			if p.afterFlip {
				committed = next
			}
			if latest.Version != committed {
				t.Fatalf("after the restart the document is at version %d; the kill came %s the flip, so want %d",
					latest.Version, map[bool]string{true: "after", false: "before"}[p.afterFlip], committed)
			}
			checkBig(t, s.testServer, doc, committed, version)
			s.checkDemo(t, demo)

			// The dead request's claim on the key holds for its lease, then
			// the same request runs again and completes version next.
			began = time.Now()
			deadline := time.Now().Add(time.Minute)
			for r = put(next, key); r.Status == http.StatusConflict; r = put(next, key) {
				if time.Now().After(deadline) {
					t.Fatalf("the Idempotency-Key is still locked a minute after the restart: %s", r.Body)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if r.Status != http.StatusOK || r.Header.Get("ETag") != fmt.Sprintf(`"%d"`, next) || r.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("repeated request: want 200 with ETag \"%d\", not replayed; got %d ETag %s replayed %q: %s",
					next, r.Status, r.Header.Get("ETag"), r.Header.Get("Idempotent-Replayed"), crashHead(r.Body))
			}
			t.Logf("the repeated request completed version %d in %v", next, time.Since(began).Round(time.Millisecond))
			checkBig(t, s.testServer, doc, next, next)
			if r := s.do(t, http.MethodGet, fmt.Sprintf("/v1/documents/%s/versions/%d", doc, next+1), nil); r.Status != http.StatusNotFound {
				t.Fatalf("version %d: want 404, got %d %s", next+1, r.Status, crashHead(r.Body))
			}
			s.checkDemo(t, demo)

			// And once more: now the key replays the completed response.
			again := put(next, key)
			if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, r.Body) {
				t.Fatalf("third request with the key: want the replay of the second; got %d replayed %q: %s",
					again.Status, again.Header.Get("Idempotent-Replayed"), crashHead(again.Body))
			}
		})
		if !ok {
			t.Logf("server log (tail):\n%s", crashTail(s.logs.String(), 4000))
			break // the document's state is unknown from here on
		}
		version = next
	}

	// Every version, also the ones restated while the database died, stays
	// readable whole.
	checkEveryBigVersion(t, s.testServer, doc, version)
	var versions struct {
		Latest   struct{ Version int }   `json:"latest"`
		Versions []struct{ Version int } `json:"versions"`
	}
	getJSON(t, s.testServer, "/v1/documents/"+doc+"/versions?limit=1000", &versions)
	if versions.Latest.Version != version || len(versions.Versions) != version {
		t.Errorf("the document lists version %d and %d versions, want %d and %d: %+v", versions.Latest.Version, len(versions.Versions), version, version, versions)
	}
}

// checkDemo asserts the demo documents read exactly as before.
func (e *crashEnv) checkDemo(t *testing.T, want map[string]string) {
	t.Helper()
	for _, p := range crashDemoPaths {
		r := e.do(t, http.MethodGet, p, nil)
		if r.Status != http.StatusOK || bodyWithoutBasis(t, r.Body) != want[p] {
			t.Fatalf("GET %s changed: %d %s\nwant %s", p, r.Status, r.Body, want[p])
		}
	}
}

// crashHead shortens a response body for a failure message.
func crashHead(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// crashTail returns the last n bytes of s (all of it for n <= 0).
func crashTail(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
