package store_test

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// streamed is what one Committed call yielded, by record type.
type streamed struct {
	heads      map[string]store.CommitHead
	versions   []store.DocumentVersion
	commits    []store.VersionCommit
	activities []store.ActivityVersion
	items      []store.VersionItem
	registry   []store.RegisteredPosition
	pages      []store.Page
}

func streamAll(t *testing.T, s *store.Store, opts store.ScanOptions) streamed {
	t.Helper()
	var mu sync.Mutex
	out := streamed{heads: map[string]store.CommitHead{}}
	opts.OnPage = func(p store.Page) {
		mu.Lock()
		defer mu.Unlock()
		out.pages = append(out.pages, p)
	}
	err := s.Committed(ctx, opts, func(rec store.Record) error {
		mu.Lock()
		defer mu.Unlock()
		switch r := rec.(type) {
		case store.CommitHead:
			if _, dup := out.heads[r.DocumentID]; dup {
				t.Errorf("document %s has two heads", r.DocumentID)
			}
			out.heads[r.DocumentID] = r
		case store.DocumentVersion:
			out.versions = append(out.versions, r)
		case store.VersionCommit:
			out.commits = append(out.commits, r)
		case store.ActivityVersion:
			out.activities = append(out.activities, r)
		case store.VersionItem:
			out.items = append(out.items, r)
		case store.RegisteredPosition:
			out.registry = append(out.registry, r)
		default:
			t.Errorf("unexpected record %T", rec)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// itemsOf are the streamed position items of one commit of a document, as
// "kind position amount", sorted.
func (s streamed) itemsOf(doc, commitID string) []string {
	var out []string
	for _, it := range s.items {
		if it.DocumentID == doc && it.CommitID == commitID {
			out = append(out, fmt.Sprintf("%s %s %s", it.Kind, it.PositionID, it.Amount))
		}
	}
	sort.Strings(out)
	return out
}

func wantItems(d fund.Document) []string {
	var out []string
	for _, it := range d.Items() {
		out = append(out, fmt.Sprintf("%s %s %s", it.Kind, it.PositionID, it.Amount))
	}
	sort.Strings(out)
	return out
}

// TestCommittedStreamsEveryCommittedRecordOnce streams a table of two
// documents, one restated with a position dropped, over three segments of
// two-item pages: each document has one head, whole at its latest version,
// counting that version's items, with its commit instant; every history
// record, every version's commit (its event's instant) and every version's
// items come once, with their commit, and nothing of the latest view; the
// pages cover the table exactly, in Scan requests only.
func TestCommittedStreamsEveryCommittedRecordOnce(t *testing.T) {
	e := fundtest.New(t)
	d1 := doc("D1", "F1", 100, "POS_1", "POS_2", "POS_3")
	d1.CapitalActivity = &fund.CapitalActivity{Amount: fund.MustMoney("303.00"), Status: fund.StatusPending}
	v1, err := e.Store.Restate(ctx, d1, nil)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := e.Store.Restate(ctx, doc("D1", "F1", 200, "POS_2", "POS_4"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two positions with two items each: the latest view lists them by
	// kind, then position, so a position's items are apart.
	d2 := doc("D2", "F2", 300, "POS_5", "POS_6")
	for i := range d2.Positions {
		d2.Positions[i].Distribution = &fund.DistributionItem{Amount: fund.MustMoney(fmt.Sprintf("%d.00", 10+i))}
	}
	other, err := e.Store.Restate(ctx, d2, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := len(e.Dump(t))
	e.Counter.Reset()

	got := streamAll(t, e.Store, store.ScanOptions{Segments: 3, PageItems: 2})

	for _, d := range []fund.Document{v2, other} {
		h, ok := got.heads[d.ID]
		if !ok {
			t.Fatalf("no head of %s", d.ID)
		}
		if h.Version != d.Version || h.CommitID != d.CommitID || h.FundID != d.FundID || !h.Whole {
			t.Errorf("head of %s: %+v, want version %d, commit %s, whole", d.ID, h, d.Version, d.CommitID)
		}
		dists := 0
		for _, p := range d.Positions {
			if p.Distribution != nil {
				dists++
			}
		}
		if n := len(d.Positions); !h.Complete(fund.CapitalCall, n) || h.Complete(fund.CapitalCall, n-1) ||
			!h.Complete(fund.Distribution, dists) || !h.Complete(fund.UnfundedCommitment, 0) {
			t.Errorf("head of %s (%+v) does not vouch for exactly its %d capital calls and %d distributions", d.ID, h, n, dists)
		}
		if g, w := got.itemsOf(d.ID, d.CommitID), wantItems(d); !slices.Equal(g, w) {
			t.Errorf("items of %s version %d: %v, want %v", d.ID, d.Version, g, w)
		}
	}
	if g, w := got.itemsOf("D1", v1.CommitID), wantItems(v1); !slices.Equal(g, w) {
		t.Errorf("items of D1 version 1: %v, want %v", g, w)
	}
	if len(got.items) != len(v1.Items())+len(v2.Items())+len(other.Items()) {
		t.Errorf("%d position items streamed, want the versions' %d and none of the latest view",
			len(got.items), len(v1.Items())+len(v2.Items())+len(other.Items()))
	}

	var versions []string
	for _, v := range got.versions {
		versions = append(versions, fmt.Sprintf("%s v%d %s", v.ID, v.Version, v.CommitID))
	}
	sort.Strings(versions)
	if want := []string{"D1 v1 " + v1.CommitID, "D1 v2 " + v2.CommitID, "D2 v1 " + other.CommitID}; !slices.Equal(versions, want) {
		t.Errorf("document versions %v, want %v", versions, want)
	}
	if len(got.activities) != 1 || got.activities[0].Version != 1 || !got.activities[0].Amount.Equal(fund.MustMoney("303")) {
		t.Errorf("capital activities %+v, want version 1's 303.00", got.activities)
	}
	var registry []string
	for _, p := range got.registry {
		registry = append(registry, p.FundID+" "+p.PositionID+" "+p.InvestorID)
	}
	sort.Strings(registry)
	if want := []string{"F1 POS_1 INV_1", "F1 POS_2 INV_2", "F1 POS_3 INV_3", "F1 POS_4 INV_4", "F2 POS_5 INV_5", "F2 POS_6 INV_6"}; !slices.Equal(registry, want) {
		t.Errorf("registered positions %v, want %v", registry, want)
	}

	items := 0
	for _, p := range got.pages {
		if p.Items > 2 {
			t.Errorf("a page of %d items, want at most PageItems 2", p.Items)
		}
		items += p.Items
	}
	if items != total {
		t.Errorf("the pages hold %d items, the table %d", items, total)
	}
	if ops := e.Counter.Ops(); e.Counter.Count("Scan") != len(got.pages) || len(ops) != len(got.pages) {
		t.Errorf("%d pages made the requests %v, want one Scan each", len(got.pages), ops)
	}
	// After the count of requests: each event is read by key.
	var commits []string
	for _, c := range got.commits {
		commits = append(commits, fmt.Sprintf("%s %s v%d", c.FundID, c.DocumentID, c.Version))
		ev, err := e.Store.Event(ctx, c.DocumentID, c.Version)
		if err != nil || !ev.Timestamp.Equal(c.CommittedAt) || c.CommittedAt.IsZero() {
			t.Errorf("commit %+v: its event says %v (%v)", c, ev.Timestamp, err)
		}
		if h := got.heads[c.DocumentID]; h.Version == c.Version && !h.CommittedAt.Equal(c.CommittedAt) {
			t.Errorf("head of %s committed at %v, its version's event at %v", c.DocumentID, h.CommittedAt, c.CommittedAt)
		}
	}
	sort.Strings(commits)
	if want := []string{"F1 D1 v1", "F1 D1 v2", "F2 D2 v1"}; !slices.Equal(commits, want) {
		t.Errorf("commits %v, want %v", commits, want)
	}
}

// TestAHeadWhoseLatestViewIsBehindIsNotWhole commits a restatement whose
// writer dies before it materializes the latest view: the head names the
// new version, but the latest view cannot vouch for its items, so the head
// is not whole, and CommitItems reads them from the version partition
// with one Query.
func TestAHeadWhoseLatestViewIsBehindIsNotWhole(t *testing.T) {
	e := fundtest.New(t)
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1", "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	next := doc("D1", "F1", 500, "POS_1", "POS_2", "POS_3")
	var head fund.DocumentHeader
	for k := 0; k < 100 && head.Version != 2; k++ {
		e.Faults.FailAfterWrites(k)
		_, err := e.Store.Restate(ctx, next, nil)
		e.Faults.Disarm()
		if err == nil {
			t.Fatalf("the restatement succeeded with every write after the %d-th failing", k)
		}
		if head, err = e.Store.As(fund.Operator).LatestDocument(ctx, "D1"); err != nil {
			t.Fatal(err)
		}
	}
	if head.Version != 2 {
		t.Fatal("no restatement committed")
	}

	got := streamAll(t, e.Store, store.ScanOptions{Segments: 2})
	h := got.heads["D1"]
	if h.Version != 2 || h.CommitID != head.CommitID || h.Whole || h.Complete(fund.CapitalCall, 3) {
		t.Fatalf("head %+v: want version 2, commit %s, not whole", h, head.CommitID)
	}
	e.Counter.Reset()
	items, err := e.Store.CommitItems(ctx, h.DocumentID, h.CommitID, fund.CapitalCall)
	if err != nil {
		t.Fatal(err)
	}
	var amounts []string
	for _, it := range items {
		if it.CommitID != head.CommitID || it.DocumentVersion != 2 {
			t.Errorf("re-read item %+v is not of version 2", it)
		}
		amounts = append(amounts, it.PositionID+" "+it.Amount.String())
	}
	if want := []string{"POS_1 500.00", "POS_2 501.00", "POS_3 502.00"}; !slices.Equal(amounts, want) {
		t.Errorf("re-read %v, want %v", amounts, want)
	}
	if ops := e.Counter.Ops(); !slices.Equal(ops, []string{"Query"}) {
		t.Errorf("the re-read made %v, want one Query", ops)
	}
}

// TestDocumentRecordsAreWhatAScanYieldsOfTheLatestVersion writes a
// document in three versions a minute apart (the latter two with a
// capital activity and a distribution), then reads it with
// DocumentRecords since an instant between the first and the second
// commits, and since one after the third: the records are exactly those a
// Scan yields of it from the first version committed at or after that
// instant (the head, whole, counting the latest version's items, with
// ItemsFrom that version; every history record; the commits of those
// versions and of the one before them; the latest version's capital
// activity; those versions' position items, not the earlier ones'), in a
// Query of the history, one of the events and one per version read. A
// document never written is ENOTFOUND.
func TestDocumentRecordsAreWhatAScanYieldsOfTheLatestVersion(t *testing.T) {
	e := fundtest.New(t)
	at := fundtest.Clock
	e.Store.Now = func() time.Time { return at }
	d := doc("D1", "F1", 100, "POS_1", "POS_2", "POS_3")
	d.CapitalActivity = &fund.CapitalActivity{Amount: fund.MustMoney("303.00"), Status: fund.StatusPending}
	if _, err := e.Store.Restate(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	at = at.Add(time.Minute)
	d = doc("D1", "F1", 200, "POS_2", "POS_4")
	d.CapitalActivity = &fund.CapitalActivity{Amount: fund.MustMoney("404.00"), Status: fund.StatusCompleted}
	d.Positions[1].Distribution = &fund.DistributionItem{Amount: fund.MustMoney("7.00")}
	v2, err := e.Store.Restate(ctx, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	at = at.Add(time.Minute)
	d = doc("D1", "F1", 300, "POS_2")
	d.CapitalActivity = &fund.CapitalActivity{Amount: fund.MustMoney("505.00"), Status: fund.StatusCompleted}
	v3, err := e.Store.Restate(ctx, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Restate(ctx, doc("D2", "F1", 300, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	scanned := streamAll(t, e.Store, store.ScanOptions{Segments: 2})

	for _, c := range []struct {
		name    string
		since   time.Time
		from    int // the first version whose items are read
		queries int
	}{
		{"since between versions 1 and 2", fundtest.Clock.Add(30 * time.Second), 2, 4},
		{"since after version 3", at.Add(time.Second), 3, 3},
	} {
		h := scanned.heads["D1"]
		if !h.Whole || h.Version != 3 || !h.CommittedAt.Equal(at) {
			t.Fatalf("the Scan read the head %+v, want a whole version 3 committed at %v", h, at)
		}
		h.ItemsFrom = c.from
		want := []string{fmt.Sprintf("%+v", h)}
		for _, v := range scanned.versions {
			if v.ID == "D1" {
				want = append(want, fmt.Sprintf("%+v", v))
			}
		}
		for _, cm := range scanned.commits {
			if cm.DocumentID == "D1" && cm.Version >= c.from-1 {
				want = append(want, fmt.Sprintf("%+v", cm))
			}
		}
		for _, a := range scanned.activities {
			if a.DocumentID == "D1" && a.Version == v3.Version {
				want = append(want, fmt.Sprintf("%+v", a))
			}
		}
		for _, it := range scanned.items {
			if it.DocumentID == "D1" && (it.CommitID == v3.CommitID || c.from <= 2 && it.CommitID == v2.CommitID) {
				want = append(want, fmt.Sprintf("%+v", it))
			}
		}
		sort.Strings(want)

		e.Counter.Reset()
		recs, err := e.Store.DocumentRecords(ctx, "D1", c.since)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, fmt.Sprintf("%+v", r))
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: DocumentRecords:\n%s\nwant the Scan's:\n%s", c.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if ops := e.Counter.Ops(); len(ops) != c.queries || e.Counter.Count("Query") != c.queries {
			t.Errorf("%s: DocumentRecords made %v, want %d Queries", c.name, ops, c.queries)
		}
	}

	if _, err := e.Store.DocumentRecords(ctx, "D9", fundtest.Clock); fund.ErrorCode(err) != fund.ENOTFOUND {
		t.Errorf("a document never written: %v, want not found", err)
	}
}

// TestScanPlanIsTheStreamsRequests checks the plan a benchmark's raw Scan
// copies: one strongly consistent request per segment, limited to the
// default page.
func TestScanPlanIsTheStreamsRequests(t *testing.T) {
	e := fundtest.New(t)
	plan := e.Store.ScanPlan(store.ScanOptions{Segments: 3})
	if len(plan) != 3 {
		t.Fatalf("%d requests, want 3", len(plan))
	}
	for i, in := range plan {
		if *in.TableName != e.Table || !*in.ConsistentRead || *in.Segment != int32(i) || *in.TotalSegments != 3 ||
			*in.Limit != int32(store.DefaultPageItems(3)) || in.ProjectionExpression != nil || in.FilterExpression != nil {
			t.Errorf("segment %d: %+v", i, in)
		}
	}
}

// TestFindPosition reads a registered position by key, and finds none for
// a position of another investor or one never registered.
func TestFindPosition(t *testing.T) {
	e := fundtest.New(t)
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1"), nil); err != nil {
		t.Fatal(err)
	}
	var reads []string
	p, found, err := e.Store.FindPosition(ctx, "F1", "POS_1", "INV_1", func(k string) { reads = append(reads, k) })
	if err != nil || !found || p.InvestorID != "INV_1" || p.RegisteredAt.IsZero() || len(reads) != 1 {
		t.Errorf("registered position: %+v found %v, reads %v (%v)", p, found, reads, err)
	}
	for _, c := range [][3]string{{"F1", "POS_1", "INV_9"}, {"F1", "POS_9", "INV_1"}} {
		if _, found, err := e.Store.FindPosition(ctx, c[0], c[1], c[2], nil); err != nil || found {
			t.Errorf("%v: found %v (%v), want not found", c, found, err)
		}
	}
}

// TestExportLeaseHasOneHolder takes, renews and releases a date's lease as
// two runs would: the second is told who holds it until it ends, renewals
// and releases of a run that does not hold it change nothing, and a lease
// that ended is taken over.
func TestExportLeaseHasOneHolder(t *testing.T) {
	e := fundtest.New(t)
	date := fund.MustDate("2026-11-22")
	now := time.Now().UTC().Truncate(time.Millisecond)
	if holder, err := e.Store.TakeExportLease(ctx, date, "a", "run-a", now, now.Add(time.Minute)); err != nil || holder != nil {
		t.Fatalf("take a free lease: held by %+v (%v)", holder, err)
	}
	holder, err := e.Store.TakeExportLease(ctx, date, "b", "run-b", now, now.Add(time.Minute))
	if err != nil || holder == nil || holder.RunID != "run-a" || !holder.Until.Equal(now.Add(time.Minute)) {
		t.Fatalf("take a held lease: holder %+v (%v), want run-a until %s", holder, err, now.Add(time.Minute))
	}
	if err := e.Store.RenewExportLease(ctx, date, "b", now.Add(time.Hour)); !errors.Is(err, store.ErrLeaseNotHeld) {
		t.Errorf("renew by a run that does not hold it: %v, want ErrLeaseNotHeld", err)
	}
	if err := e.Store.ReleaseExportLease(ctx, date, "b"); err != nil {
		t.Errorf("release by a run that does not hold it: %v", err)
	}
	if err := e.Store.RenewExportLease(ctx, date, "a", now.Add(2*time.Minute)); err != nil {
		t.Errorf("renew by the holder: %v", err)
	}
	if l, err := e.Store.ExportLease(ctx, date); err != nil || l == nil || l.Owner != "a" || !l.Until.Equal(now.Add(2*time.Minute)) {
		t.Errorf("lease after the renewal: %+v (%v), want a's until %s", l, err, now.Add(2*time.Minute))
	}
	later := now.Add(3 * time.Minute) // a's lease has ended by b's clock
	if holder, err := e.Store.TakeExportLease(ctx, date, "b", "run-b", later, later.Add(time.Minute)); err != nil || holder != nil {
		t.Fatalf("take an ended lease: held by %+v (%v)", holder, err)
	}
	if err := e.Store.RenewExportLease(ctx, date, "a", later.Add(time.Hour)); !errors.Is(err, store.ErrLeaseNotHeld) {
		t.Errorf("renew by the run whose lease was taken over: %v, want ErrLeaseNotHeld", err)
	}
	if err := e.Store.ReleaseExportLease(ctx, date, "b"); err != nil {
		t.Fatal(err)
	}
	if l, err := e.Store.ExportLease(ctx, date); err != nil || l != nil {
		t.Errorf("lease after its release: %+v (%v), want none", l, err)
	}
}
