package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// revision is version v of a document restated often: every fifth version
// moves its as-of date back a quarter, every fourth has no capital
// activity, and POS_2 is reported by the even versions only.
func revision(v int) fund.Document {
	d := fund.Document{ID: "H1", CreatedBy: fmt.Sprintf("admin-%d", v%3),
		DocumentFields: fund.DocumentFields{FundID: "F1", Kind: fund.KindCapitalCallNotice, Title: fmt.Sprintf("Call no. 4, revision %d", v), AsOf: fund.MustDate("2025-06-30")}}
	if v%5 == 0 {
		d.AsOf = fund.MustDate("2025-03-31")
	}
	if v%4 != 0 {
		d.CapitalActivity = &fund.CapitalActivity{Amount: fund.MustMoney(fmt.Sprintf("%d.50", 1000+v)),
			ActivityDetails: fund.ActivityDetails{Description: fmt.Sprintf("call, revision %d", v)}}
	}
	d.Positions = append(d.Positions, fund.Position{ID: "POS_1", InvestorID: "INV_1", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney(fmt.Sprintf("%d.00", 100+v))}})
	if v%2 == 0 {
		d.Positions = append(d.Positions, fund.Position{ID: "POS_2", InvestorID: "INV_2", CapitalCall: &fund.CapitalCallItem{Amount: fund.MustMoney("7.00")}})
	}
	return d
}

// historyAnswers is every read of a document's history, as text with the
// commit IDs reduced to their version: the overview, every page of its
// capital (3 to a page) and of its versions (3 to a page; also between
// dates), each version whole, a position as of several dates, and the
// records the export reads of it.
func historyAnswers(t *testing.T, s *store.Store, doc string) string {
	t.Helper()
	var b strings.Builder
	out := func(what string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		fmt.Fprintf(&b, "%s: %s\n", what, asJSON(t, v))
	}
	snap, err := s.Overview(ctx, doc)
	out("overview", snap, err)
	var key store.PageKey
	for page := 1; ; page++ {
		c, next, err := s.Capital(ctx, doc, 3, key)
		out(fmt.Sprintf("capital page %d", page), c, err)
		if key = next; next == nil {
			break
		}
	}
	for _, dates := range [][2]string{{}, {"2025-03-31", "2025-03-31"}, {"2025-04-01", ""}, {"", "2025-05-01"}} {
		var from, to fund.Date
		if dates[0] != "" {
			from = fund.MustDate(dates[0])
		}
		if dates[1] != "" {
			to = fund.MustDate(dates[1])
		}
		// Between dates, a page may hold fewer than its limit (those the
		// dates leave out were read): the pages together are the answer.
		var key store.PageKey
		var all []fund.DocumentHeader
		for page := 1; ; page++ {
			hs, next, err := s.HistoryPage(ctx, doc, from, to, 3, key)
			if len(hs) > 3 {
				t.Fatalf("versions %v page %d holds %d records, limit 3", dates, page, len(hs))
			}
			if from.IsZero() && to.IsZero() {
				out(fmt.Sprintf("versions page %d", page), hs, err)
			}
			all = append(all, hs...)
			if key = next; next == nil {
				break
			}
		}
		out(fmt.Sprintf("versions %v", dates), all, nil)
	}
	h, err := s.LatestDocument(ctx, doc)
	out("latest", h, err)
	for n := 1; n <= h.Version+1; n++ {
		d, err := s.Version(ctx, doc, n)
		if n > h.Version {
			if fund.ErrorCode(err) != fund.ENOTFOUND {
				t.Fatalf("version %d of %d: %v, want ENOTFOUND", n, h.Version, err)
			}
			continue
		}
		out(fmt.Sprintf("version %d", n), d, err)
	}
	for _, asOf := range []string{"2025-01-01", "2025-04-30", "2025-06-30"} {
		for _, before := range []int{h.Version + 1, h.Version, 6, 2} {
			items, err := s.PositionAsOf(ctx, doc, "POS_1", fund.MustDate(asOf), before)
			out(fmt.Sprintf("POS_1 as of %s before %d", asOf, before), items, err)
		}
	}
	recs, err := s.DocumentRecords(ctx, doc, fundtest.Clock)
	out("records", recs, err)
	return commitIDs.ReplaceAllString(b.String(), "$1-commit")
}

// toEarlierLayout rewrites a document's history records as a release
// before the version-ordered keys wrote them: under the date-ordered keys
// among the latest view's items, without HistoryByVersion, and its head
// and latest record without the mark and the head without its recent
// versions.
func toEarlierLayout(t *testing.T, e *fundtest.Env, doc string) {
	t.Helper()
	client := dynamodb.NewFromConfig(dynamotest.Shared().Config())
	str := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	out, err := client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(e.Table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("PK = :pk AND SK >= :h"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(store.DocPK(doc)), ":h": str(store.HistoryStart)}})
	if err != nil || len(out.Items) == 0 || out.LastEvaluatedKey != nil {
		t.Fatalf("history of %s: %d records, %v", doc, len(out.Items), err)
	}
	for _, av := range out.Items {
		var it store.Item
		if err := it.UnmarshalDynamoItem(av); err != nil {
			t.Fatal(err)
		}
		newSK := it.SK
		switch it.Type {
		case store.TypeDocument:
			it.SK = store.LegacyDocumentHistorySK(it.AsOf, it.Version)
		case store.TypeCapitalActivity:
			it.SK = store.LegacyActivityHistorySK(it.ActivityDate, it.Version)
		default:
			t.Fatalf("history record %s of type %s", it.SK, it.Type)
		}
		it.HistoryByVersion = false
		e.Put(t, it)
		if _, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.Table),
			Key: map[string]types.AttributeValue{store.AttrPK: str(it.PK), store.AttrSK: str(newSK)}}); err != nil {
			t.Fatal(err)
		}
	}
	for sk, expr := range map[string]string{store.HeadSK: "REMOVE HistoryByVersion, Recent", store.DocumentLatestSK: "REMOVE HistoryByVersion"} {
		if _, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.Table),
			Key: map[string]types.AttributeValue{store.AttrPK: str(store.DocPK(doc)), store.AttrSK: str(sk)}, UpdateExpression: aws.String(expr)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestADocumentOfTheEarlierLayoutReadsTheSameAndTheBackfillMovesIt writes
// the same versions to two tables, one of which has its history rewritten
// as the earlier layout wrote it (records keyed by date among the latest
// view's items, heads without recent versions). Every read of history
// answers the same on both: before any restatement, after one committed
// on the earlier layout (whose records are then of both layouts), and
// after `changes backfill` moved the records. The backfill leaves the
// table exactly as the commits left the other one (its head's recent
// versions included), counts what it moved, and a second run moves
// nothing.
func TestADocumentOfTheEarlierLayoutReadsTheSameAndTheBackfillMovesIt(t *testing.T) {
	keyed, legacy := fundtest.New(t), fundtest.New(t)
	for v := 1; v <= 24; v++ {
		for _, e := range []*fundtest.Env{keyed, legacy} {
			if _, err := e.Store.Restate(ctx, revision(v), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := historyAnswers(t, keyed.Store, "H1")
	toEarlierLayout(t, legacy, "H1")
	if got := historyAnswers(t, legacy.Store, "H1"); got != want {
		t.Fatalf("the earlier layout answers:\n%s\nwhere the version-ordered one answers:\n%s", lineDiff(got, want), lineDiff(want, got))
	}

	// A restatement of this release on the earlier layout adds records
	// keyed by version, without the mark: the document has both.
	for _, e := range []*fundtest.Env{keyed, legacy} {
		if _, err := e.Store.Restate(ctx, revision(25), nil); err != nil {
			t.Fatal(err)
		}
	}
	want = historyAnswers(t, keyed.Store, "H1")
	if got := historyAnswers(t, legacy.Store, "H1"); got != want {
		t.Fatalf("both layouts answer:\n%s\nwhere the version-ordered one answers:\n%s", lineDiff(got, want), lineDiff(want, got))
	}
	if strings.Count(want, "capital page") < 3 || !strings.Contains(want, "versions page 9: ") {
		t.Fatalf("the answers do not page: %s", want)
	}

	// 24 document records and 18 capital activities of the earlier layout.
	p, err := legacy.Store.BackfillChanges(ctx, store.BackfillOptions{})
	if err != nil || p.Moved != 24+18 || p.Documents != 1 {
		t.Fatalf("backfill: %+v, %v; want 42 records moved, 1 document", p, err)
	}
	if got := historyAnswers(t, legacy.Store, "H1"); got != want {
		t.Fatalf("after the backfill:\n%s\nwhere the version-ordered one answers:\n%s", lineDiff(got, want), lineDiff(want, got))
	}
	got, wantItems := renderTable(t, legacy), renderTable(t, keyed)
	if only := difference(got, wantItems); len(only) > 0 {
		t.Errorf("only the backfilled table holds:\n%s", strings.Join(only, "\n"))
	}
	if only := difference(wantItems, got); len(only) > 0 {
		t.Errorf("only the table written in the version-ordered layout holds:\n%s", strings.Join(only, "\n"))
	}
	if p, err := legacy.Store.BackfillChanges(ctx, store.BackfillOptions{}); err != nil || p.Moved != 0 || p.Documents != 0 {
		t.Fatalf("a second backfill: %+v, %v; want nothing moved", p, err)
	}
	if again := renderTable(t, legacy); !slices.Equal(again, got) {
		t.Errorf("a second backfill changed the table")
	}
}

// TestTheScanYieldsAHistoryRecordOnce puts a document's history record
// under both layouts' keys, as a Scan may read it across pages while the
// backfill moves it (the earlier key before the move, the new one after):
// the stream yields each version's records once.
func TestTheScanYieldsAHistoryRecordOnce(t *testing.T) {
	e := fundtest.New(t)
	for v := 1; v <= 3; v++ {
		if _, err := e.Store.Restate(ctx, revision(v), nil); err != nil {
			t.Fatal(err)
		}
	}
	h, err := e.Store.LatestDocument(ctx, "H1")
	if err != nil {
		t.Fatal(err)
	}
	d := revision(2)
	e.Put(t, store.Item{PK: store.DocPK("H1"), SK: store.LegacyDocumentHistorySK(d.AsOf, 2), Type: store.TypeDocument, DocumentID: "H1",
		DocumentFields: d.DocumentFields, Version: 2, CommitID: "2-000000000000", CreatedAt: h.CreatedAt})
	e.Put(t, store.Item{PK: store.DocPK("H1"), SK: store.LegacyActivityHistorySK(fund.MustDate("2025-06-30"), 2), Type: store.TypeCapitalActivity, DocumentID: "H1",
		DocumentFields: fund.DocumentFields{FundID: "F1", AsOf: d.AsOf}, Amount: &d.CapitalActivity.Amount, Version: 2, CreatedAt: h.CreatedAt})
	got := streamAll(t, e.Store, store.ScanOptions{Segments: 1, PageItems: 2})
	var versions, activities []int
	for _, r := range got.versions {
		versions = append(versions, r.Version)
	}
	for _, r := range got.activities {
		activities = append(activities, r.Version)
	}
	slices.Sort(versions)
	slices.Sort(activities)
	if !slices.Equal(versions, []int{1, 2, 3}) || !slices.Equal(activities, []int{1, 2, 3}) {
		t.Fatalf("the stream yields document versions %v and capital activities %v; want each of 1, 2, 3 once", versions, activities)
	}
}

// TestRecentVersionsStayCompact restates a document 30 times with
// realistic, different titles and descriptions: the head then carries its
// version's and 20 earlier versions' records (no more), and stays within
// one read unit (4 KB) with room to spare, so the GetItem of the head that
// authorizes every document route costs what it did before it carried
// them.
func TestRecentVersionsStayCompact(t *testing.T) {
	e := fundtest.New(t)
	for v := 1; v <= 30; v++ {
		d := revision(v)
		d.Title = fmt.Sprintf("Capital call notice no. %d of Fund A: Company %c follow-on, Q%d 2025 management fee and expenses", v, 'A'+v%26, 1+v%4)
		if d.CapitalActivity != nil {
			d.CapitalActivity.Description = fmt.Sprintf("Call no. %d: investment in Company %c (%d%% of commitments), management fee, organisation expenses", v, 'A'+v%26, v)
		}
		if _, err := e.Store.Restate(ctx, d, nil); err != nil {
			t.Fatal(err)
		}
	}
	head := readHead(t, e, "H1")
	av, err := head.MarshalDynamoItem()
	if err != nil {
		t.Fatal(err)
	}
	size := store.ItemSize(av)
	t.Logf("the head is %d bytes, %d of them its recent versions", size, len(head.Recent))
	if size > 2048 || !head.HistoryByVersion {
		t.Errorf("the head takes %d bytes (recent versions %d), marked %v; want at most 2 KB", size, len(head.Recent), head.HistoryByVersion)
	}
	before := e.Store.Consumed()
	if _, err := e.Store.DocumentFund(ctx, "H1"); err != nil {
		t.Fatal(err)
	}
	if read := e.Store.Consumed().Sub(before).Total().Read; read != 1 {
		t.Errorf("the head's GetItem reads %.1f units, want 1", read)
	}
	snap, err := e.Store.Overview(ctx, "H1")
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	for _, h := range snap.History {
		versions = append(versions, h.Version)
		if !strings.HasPrefix(h.Title, fmt.Sprintf("Capital call notice no. %d of", h.Version)) {
			t.Errorf("version %d is titled %q", h.Version, h.Title)
		}
	}
	slices.Sort(versions)
	if len(versions) != store.OverviewHistory || versions[0] != 10 || versions[len(versions)-1] != 29 {
		t.Errorf("the overview lists versions %v, want 10 to 29", versions)
	}
}

// lineDiff lists the lines of a that b does not hold.
func lineDiff(a, b string) string {
	return strings.Join(difference(strings.Split(a, "\n"), strings.Split(b, "\n")), "\n")
}
