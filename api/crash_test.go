package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
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
	e := newCrashInstance(t, ddb)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := e.Store.CreateTable(ctx); err != nil {
		t.Fatalf("create table: %v", err)
	}
	return e
}

// another is another API over e's table and DynamoDB Local, as another
// process of the service would be: a store of its own, with a Counter and a
// WriteHook of its own.
func (e *crashEnv) another(t *testing.T) *crashEnv {
	t.Helper()
	return newCrashInstance(t, e.ddb)
}

// newCrashInstance is the store and the API of newCrashServer, on ddb.
func newCrashInstance(t *testing.T, ddb *dynamotest.Server) *crashEnv {
	t.Helper()
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

	s := startAPI(t, env, func(o *api.Options) {
		o.MaxBodyBytes = 16 << 20
		// Restatements wait at their kill points until every other one
		// has reached its own (see TestRestatementSurvivesDynamoDBBeingKilled),
		// well within this.
		o.RequestTimeout = 2 * time.Minute
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
// it and while materializing the latest view (five documents in two
// rounds, each restatement held at its point until its round's kill).
// After each restart every document reads at exactly one complete version
// — the previous one if the flip was not reached, the new one if it was —
// and repeating the request with the same Idempotency-Key completes the
// new version, without adding another.
func TestRestatementSurvivesDynamoDBBeingKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts DynamoDB Local and ingests many 150-position documents")
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

	// The points are restated in rounds, one restatement a document in
	// each: crashDocs big documents (BIG, at version 2 now, and more, each
	// with an API of its own: a store, Counter and WriteHook of its own, on
	// the same table, as other processes of the service would be). In a round every document's
	// restatement runs at once, each held just before its kill point; once
	// every one is held there, DynamoDB Local is killed and they go on
	// against the dead server. So each meets the kill exactly at its point,
	// with its own writes before the point answered and stored (Kill
	// settles them) and the held write and every later one failing, as when
	// it runs alone; one restart serves the round. Every restatement killed
	// starts from version 2 or later, so it also deletes the tombstones of
	// the positions the version before dropped, as the later restatements
	// do in production.
	const crashDocs = 5
	auth := "Bearer " + token(t, adminOfAll)
	docs, envs := []string{doc}, []*crashEnv{s}
	for j := 1; j < crashDocs; j++ {
		docs, envs = append(docs, fmt.Sprintf("BIG%d", j+1)), append(envs, s.another(t))
	}
	began := time.Now()
	// Two at a time: each takes less than its share of the CPU and
	// finishes well within the request timeout, however loaded the machine.
	inParallel(t, crashDocs-1, 2, func(i int) error {
		j := i + 1 // BIG is at version 2 already
		for n, want := range []int{http.StatusCreated, http.StatusOK} {
			r, err := envs[j].putBig(auth, docs[j], n+1, fmt.Sprintf("%s-v%d", docs[j], n+1))
			if err == nil && r.Status != want {
				err = fmt.Errorf("version %d: %d %s", n+1, r.Status, crashHead(r.Body))
			}
			if err != nil {
				return fmt.Errorf("%s: %w", docs[j], err)
			}
		}
		return nil
	})
	t.Logf("versions 1 and 2 of the %d other documents were written in %v", crashDocs-1, time.Since(began).Round(time.Millisecond))

	version := 2 // of every document, before each round
	for first := 0; first < len(points); first += crashDocs {
		var cases []*crashCase
		for i := first; i < min(first+crashDocs, len(points)); i++ {
			p, j := points[i], i-first
			c := &crashCase{crashPoint: p, label: fmt.Sprintf("%02d killed %s", i+1, p.name), doc: docs[j], e: envs[j]}
			if p.match == nil {
				c.label += fmt.Sprintf(" (before write %d; the flip is write %d)", p.k, flip)
			}
			cases = append(cases, c)
		}
		if !crashRound(t, s, cases, auth, version, demo) {
			return // the documents' state is unknown from here on
		}
		version++
	}

	// Every version, also the ones restated while the database died, stays
	// readable whole, and each document lists exactly its versions.
	for _, d := range docs {
		checkEveryBigVersion(t, s.testServer, d, version)
		var versions struct {
			Latest   struct{ Version int }   `json:"latest"`
			Versions []struct{ Version int } `json:"versions"`
		}
		getJSON(t, s.testServer, "/v1/documents/"+d+"/versions?limit=1000", &versions)
		if versions.Latest.Version != version || len(versions.Versions) != version {
			t.Errorf("%s lists version %d and %d versions, want %d and %d: %+v", d, versions.Latest.Version, len(versions.Versions), version, version, versions)
		}
	}
}

// crashCase is one crash point of TestRestatementSurvivesDynamoDBBeingKilled:
// the document it restates, the API it restates it through, and what the
// restatement met.
type crashCase struct {
	crashPoint
	label        string
	doc          string
	e            *crashEnv
	killedBefore string // the operation the hook held at the kill
	r            response
	err          error
}

// crashRound restates each case's document from version committed to the
// next at once, kills DynamoDB Local once every restatement is held at its
// case's kill point, restarts it, and checks each document (in a subtest
// named by its case), then repeats the restatement to completion. It
// reports whether every check passed.
func crashRound(t *testing.T, s *crashEnv, cases []*crashCase, auth string, committedBefore int, demo map[string]string) bool {
	t.Helper()
	restated := committedBefore + 1
	key := func(c *crashCase) string { return fmt.Sprintf("%s-v%d", c.doc, restated) }
	held := make(chan *crashCase, len(cases))
	answered := make(chan *crashCase, len(cases))
	killed := make(chan struct{})
	var kill sync.Once
	killAndRelease := func() { kill.Do(func() { s.ddb.Kill(); close(killed) }) }
	defer killAndRelease() // a round that fails first must not leave requests held
	for _, c := range cases {
		c.e.Counter.Reset()
		c.e.hook.OnWriteWhere(c.match, c.k, func() {
			ops := c.e.Counter.Ops()
			c.killedBefore = ops[len(ops)-1]
			held <- c
			<-killed
		})
		go func() {
			c.r, c.err = c.e.putBig(auth, c.doc, restated, key(c))
			answered <- c
		}()
	}
	began := time.Now()
	timeout := time.After(2 * time.Minute)
	for range cases {
		select {
		case <-held:
		case c := <-answered:
			t.Fatalf("%s: the restatement finished without reaching the kill point: %v %d %s", c.label, c.err, c.r.Status, crashHead(c.r.Body))
		case <-timeout:
			t.Fatal("the restatements did not all reach their kill points within two minutes")
		}
	}
	t.Logf("the %d restatements reached their kill points in %v", len(cases), time.Since(began).Round(time.Millisecond))
	killAndRelease()
	for range cases {
		select {
		case <-answered:
		case <-timeout:
			t.Fatal("the restatements did not all answer within two minutes of their start")
		}
	}
	for _, c := range cases {
		c.e.hook.Disarm()
		if c.err != nil {
			t.Fatalf("%s: %v", c.label, c.err)
		}
		if c.r.Status < 500 {
			t.Fatalf("%s: restatement whose database was killed: want a 5xx, got %d %s", c.label, c.r.Status, crashHead(c.r.Body))
		}
		t.Logf("%s: killed before %s; the request answered %d", c.label, c.killedBefore, c.r.Status)
	}

	began = time.Now()
	if err := s.ddb.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.waitReady(t)
	t.Logf("DynamoDB Local restarted and /readyz answered in %v", time.Since(began).Round(time.Millisecond))
	s.checkDemo(t, demo)

	passed := true
	for _, c := range cases {
		ok := t.Run(c.label, func(t *testing.T) {
			put := func() response {
				t.Helper()
				r, err := c.e.putBig(auth, c.doc, restated, key(c))
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			var latest struct{ Version int }
			getJSON(t, c.e.testServer, "/v1/documents/"+c.doc+"/versions/latest", &latest)
			committed := committedBefore
			if c.afterFlip {
				committed = restated
			}
			if latest.Version != committed {
				t.Fatalf("after the restart the document is at version %d; the kill came %s the flip, so want %d",
					latest.Version, map[bool]string{true: "after", false: "before"}[c.afterFlip], committed)
			}
			checkBig(t, c.e.testServer, c.doc, committed, committedBefore)

			// The dead request's claim on the key holds for its lease, then
			// the same request runs again and completes the new version.
			began := time.Now()
			deadline := time.Now().Add(time.Minute)
			r := put()
			for ; r.Status == http.StatusConflict; r = put() {
				if time.Now().After(deadline) {
					t.Fatalf("the Idempotency-Key is still locked a minute after the restart: %s", r.Body)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if r.Status != http.StatusOK || r.Header.Get("ETag") != fmt.Sprintf(`"%d"`, restated) || r.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("repeated request: want 200 with ETag \"%d\", not replayed; got %d ETag %s replayed %q: %s",
					restated, r.Status, r.Header.Get("ETag"), r.Header.Get("Idempotent-Replayed"), crashHead(r.Body))
			}
			t.Logf("the repeated request completed version %d in %v", restated, time.Since(began).Round(time.Millisecond))
			checkBig(t, c.e.testServer, c.doc, restated, restated)
			if r := c.e.do(t, http.MethodGet, fmt.Sprintf("/v1/documents/%s/versions/%d", c.doc, restated+1), nil); r.Status != http.StatusNotFound {
				t.Fatalf("version %d: want 404, got %d %s", restated+1, r.Status, crashHead(r.Body))
			}

			// And once more: now the key replays the completed response.
			again := put()
			if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, r.Body) {
				t.Fatalf("third request with the key: want the replay of the second; got %d replayed %q: %s",
					again.Status, again.Header.Get("Idempotent-Replayed"), crashHead(again.Body))
			}
		})
		if !ok {
			t.Logf("%s: server log (tail):\n%s", c.label, crashTail(c.e.logs.String(), 4000))
			passed = false
		}
	}
	s.checkDemo(t, demo)
	return passed
}

// inParallel runs f(0) to f(count-1), n at a time, each in a goroutine of
// its own, and fails t with the first error.
func inParallel(t *testing.T, count, n int, f func(int) error) {
	t.Helper()
	errs := make(chan error, count)
	slots := make(chan struct{}, n)
	for i := range count {
		go func() {
			slots <- struct{}{}
			errs <- f(i)
			<-slots
		}()
	}
	var first error
	for range count {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		t.Fatal(first)
	}
}

// putBig puts version n of the big document doc with an Idempotency-Key
// and the Authorization auth. Unlike do, it may run in any goroutine: it
// returns an error rather than failing a test.
func (e *crashEnv) putBig(auth, doc string, n int, key string) (response, error) {
	body, _ := bigVersionOf(doc, n)
	b, err := json.Marshal(body)
	if err != nil {
		return response{}, err
	}
	req, err := http.NewRequest(http.MethodPut, e.URL+"/v1/documents/"+doc, bytes.NewReader(b))
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	req.Header.Set("Idempotency-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("PUT %s version %d: %w", doc, n, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return response{}, err
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: out}, nil
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
