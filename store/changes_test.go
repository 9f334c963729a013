package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// at is an instant on a day of January 2026.
func at(day, hour, min, sec, nsec int) time.Time {
	return time.Date(2026, 1, day, hour, min, sec, nsec, time.UTC)
}

// commitAt restates d with the store's clock at t.
func commitAt(t *testing.T, s *store.Store, d fund.Document, when time.Time) fund.Document {
	t.Helper()
	s.Now = func() time.Time { return when }
	got, err := s.Restate(ctx, d, nil)
	if err != nil {
		t.Fatalf("commit %s at %s: %v", d.ID, when, err)
	}
	return got
}

// changesOf renders changes as "doc@version@instant", in order.
func changesOf(cs []store.Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s@%d@%s", c.DocumentID, c.Version, c.CommittedAt.Format(time.RFC3339Nano)))
	}
	return strings.Join(out, " ")
}

// changedSince asks until the answer is want (GSI1 is eventually
// consistent), within a deadline, and returns the last answer.
func changedSince(t *testing.T, s *store.Store, since, until time.Time, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs, err := s.ChangedSince(ctx, since, until)
		if err != nil {
			t.Fatalf("changed since %s until %s: %v", since, until, err)
		}
		if got := changesOf(cs); got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestChangedSinceFindsEachDocumentsLatestCommitInThePeriod(t *testing.T) {
	e := fundtest.New(t)
	e.Store.ChangeShards = 3
	since, until := at(10, 12, 0, 0, 0), at(12, 12, 0, 0, 0)
	commitAt(t, e.Store, doc("AT_SINCE", "F1", 1, "POS_1"), since) // excluded: since is exclusive
	commitAt(t, e.Store, doc("DAY1", "F1", 1, "POS_1"), since.Add(time.Nanosecond))
	commitAt(t, e.Store, doc("MIDNIGHT", "F1", 1, "POS_1"), at(11, 0, 0, 0, 0))
	commitAt(t, e.Store, doc("TWICE", "F1", 1, "POS_1"), at(10, 13, 0, 0, 0))
	commitAt(t, e.Store, doc("TWICE", "F1", 2, "POS_1"), at(12, 1, 0, 0, 0)) // only the latest commit
	commitAt(t, e.Store, doc("AT_UNTIL", "F1", 1, "POS_1"), until)           // included: until is inclusive
	commitAt(t, e.Store, doc("AFTER", "F1", 1, "POS_1"), until.Add(time.Nanosecond))
	commitAt(t, e.Store, doc("MOVED_ON", "F1", 1, "POS_1"), at(11, 9, 0, 0, 0))
	commitAt(t, e.Store, doc("MOVED_ON", "F1", 2, "POS_1"), at(13, 9, 0, 0, 0)) // its latest commit is after until
	commitAt(t, e.Store, doc("BEFORE", "F1", 1, "POS_1"), at(9, 23, 59, 59, 0))

	want := "DAY1@1@2026-01-10T12:00:00.000000001Z MIDNIGHT@1@2026-01-11T00:00:00Z TWICE@2@2026-01-12T01:00:00Z AT_UNTIL@1@2026-01-12T12:00:00Z"
	if got := changedSince(t, e.Store, since, until, want); got != want {
		t.Fatalf("changes in (%s, %s]:\n got %s\nwant %s", since, until, got, want)
	}
	shards := map[int]bool{}
	for _, d := range []string{"DAY1", "MIDNIGHT", "TWICE", "AT_UNTIL"} {
		shards[store.ChangeShard(d, 3)] = true
	}
	if len(shards) < 2 {
		t.Fatalf("the documents found all lie in shard %v; the test proves nothing about shards", shards)
	}

	t.Run("it costs the shard count's read and a Query per day and shard, nothing else", func(t *testing.T) {
		e.Counter.Reset()
		if _, err := e.Store.ChangedSince(ctx, since, until); err != nil {
			t.Fatal(err)
		}
		wantOps := []string{"GetItem"}
		for range 3 * 3 { // three days (the 10th to the 12th), three shards
			wantOps = append(wantOps, "Query")
		}
		got := e.Counter.Ops()
		slices.Sort(got)
		if !slices.Equal(got, wantOps) {
			t.Fatalf("made %v, want %v", got, wantOps)
		}
	})

	t.Run("an empty period asks nothing; a zero instant is refused", func(t *testing.T) {
		e.Counter.Reset()
		if cs, err := e.Store.ChangedSince(ctx, until, since); err != nil || len(cs) != 0 || len(e.Counter.Ops()) != 0 {
			t.Fatalf("until before since: %v %v, made %v", cs, err, e.Counter.Ops())
		}
		if _, err := e.Store.ChangedSince(ctx, time.Time{}, until); fund.ErrorCode(err) != fund.EINVALID {
			t.Fatalf("zero since: %v, want EINVALID", err)
		}
	})
}

// TestChangedSinceFindsCommitsOfALargerShardCount: a process that indexes
// over more shards records its count in the table, and a process
// configured with fewer still queries them all.
func TestChangedSinceFindsCommitsOfALargerShardCount(t *testing.T) {
	e := fundtest.New(t)
	e.Store.ChangeShards = 1
	wider := store.NewStore(store.NewDB(dynamotest.Shared().Config()), e.Table)
	wider.ChangeShards = 16
	day := at(20, 8, 0, 0, 0)
	commitAt(t, e.Store, doc("NARROW", "F1", 1, "POS_1"), day)
	var far []string
	for i := 0; len(far) < 3; i++ {
		id := fmt.Sprintf("WIDE_%d", i)
		if store.ChangeShard(id, 16) == 0 {
			continue // in shard 0, which the narrow store would query anyway
		}
		far = append(far, id)
		commitAt(t, wider, doc(id, "F1", 1, "POS_1"), day.Add(time.Duration(len(far))*time.Minute))
	}
	want := "NARROW@1@2026-01-20T08:00:00Z " + far[0] + "@1@2026-01-20T08:01:00Z " + far[1] + "@1@2026-01-20T08:02:00Z " + far[2] + "@1@2026-01-20T08:03:00Z"
	if got := changedSince(t, e.Store, day.Add(-time.Hour), day.Add(time.Hour), want); got != want {
		t.Fatalf("the one-shard store finds\n %s\nwant\n %s", got, want)
	}
	e.Counter.Reset()
	if _, err := e.Store.ChangedSince(ctx, day.Add(-time.Hour), day.Add(time.Hour)); err != nil || e.Counter.Count("Query") != 16 {
		t.Fatalf("the one-shard store made %d Queries of one day (%v), want the 16 shards recorded", e.Counter.Count("Query"), err)
	}
	// The record only grows: a narrow store's commit does not lower it.
	commitAt(t, e.Store, doc("NARROW_AGAIN", "F1", 1, "POS_1"), day)
	e.Counter.Reset()
	if _, err := e.Store.ChangedSince(ctx, day.Add(-time.Hour), day.Add(time.Hour)); err != nil || e.Counter.Count("Query") != 16 {
		t.Fatalf("after a narrow commit: %d Queries (%v), want 16", e.Counter.Count("Query"), err)
	}
}

// TestADaysChangesSpreadOverEveryShard: the change index of many documents
// committed on one day spreads over every shard, so no index partition is
// hot however busy the day.
func TestADaysChangesSpreadOverEveryShard(t *testing.T) {
	e := fundtest.New(t)
	const docs, shards = 48, 8
	for i := range docs {
		commitAt(t, e.Store, doc(fmt.Sprintf("DOC_%03d", i), "F1", 1, "POS_1"), at(15, 9, i, 0, 0))
	}
	perPartition := map[string]int{}
	for _, it := range e.Dump(t) {
		if typ, _ := it["Type"].(*types.AttributeValueMemberS); typ == nil || typ.Value != store.TypeHead {
			continue
		}
		pk, _ := it[store.AttrGSI1PK].(*types.AttributeValueMemberS)
		if pk == nil {
			t.Fatalf("head %v has no change-index key", it[store.AttrPK])
		}
		perPartition[pk.Value]++
	}
	if len(perPartition) != shards {
		t.Fatalf("%d documents of one day fill %d index partitions %v, want all %d shards", docs, len(perPartition), perPartition, shards)
	}
	for shard := range shards {
		pk := store.ChangesGSI1PK(at(15, 0, 0, 0, 0), shard)
		if n := perPartition[pk]; n == 0 || n > docs/2 {
			t.Errorf("partition %s holds %d of %d heads", pk, n, docs)
		}
	}
	cs, err := e.Store.ChangedSince(ctx, at(15, 0, 0, 0, 0), at(16, 0, 0, 0, 0))
	if err != nil || len(cs) != docs {
		t.Fatalf("found %d of %d changes: %v", len(cs), docs, err)
	}
}

// TestCommitsAreStampedByDynamoDBsClock commits through two stores on one
// table whose machines' clocks are ten minutes apart, each corrected to
// DynamoDB's (store.Store.TableClock; DynamoDB Local's clock is this
// machine's): both commits are stamped within the measurement's bounds
// (a second and a round trip) of the moment they were made, the machine
// that agrees with DynamoDB exactly, and the change index lists both in
// the minutes around them. Stamped by the skewed clock as it is, the
// second commit would lie ten minutes back.
func TestCommitsAreStampedByDynamoDBsClock(t *testing.T) {
	e := fundtest.New(t)
	e.Store.Now = e.Store.TableClock(time.Now)
	behind := store.NewStore(store.NewDB(dynamotest.Shared().Config()), e.Table)
	behind.Now = behind.TableClock(func() time.Time { return time.Now().Add(-10 * time.Minute) })

	before := time.Now()
	a, err := e.Store.Restate(ctx, doc("DOC_A", "FUND_A", 1, "POS_1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := behind.Restate(ctx, doc("DOC_B", "FUND_A", 1, "POS_2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if a.CreatedAt.Before(before.Truncate(time.Millisecond)) || a.CreatedAt.After(after) {
		t.Errorf("the machine whose clock agrees stamped %s, outside [%s, %s]", a.CreatedAt, before, after)
	}
	slack := time.Second + after.Sub(before)
	if b.CreatedAt.Before(before.Add(-slack)) || b.CreatedAt.After(after.Add(slack)) {
		t.Errorf("the machine ten minutes behind stamped %s, outside [%s, %s] and its slack %s", b.CreatedAt, before, after, slack)
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		cs, err := e.Store.ChangedSince(ctx, before.Add(-store.ChangeSettleMargin), after.Add(slack))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]time.Time{}
		for _, c := range cs {
			got[c.DocumentID] = c.CommittedAt
		}
		ca, okA := got["DOC_A"]
		cb, okB := got["DOC_B"]
		if okA && okB {
			if ca.Before(a.CreatedAt) || cb.Before(b.CreatedAt) || cb.Before(before.Add(-slack)) {
				t.Errorf("commit instants %s and %s, created at %s and %s, made after %s", ca, cb, a.CreatedAt, b.CreatedAt, before)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the change index lists %v in the minutes around the two commits, want DOC_A and DOC_B", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
