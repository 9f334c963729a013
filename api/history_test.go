package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// restatedCall is revision v of a capital call notice of one position with
// a capital activity: what a restatement changes is its title and amounts.
func restatedCall(id string, v int) fund.Document {
	amount := fund.MustMoney(fmt.Sprintf("%d.00", 100_000+v))
	return fund.Document{ID: id, CreatedBy: "admin@example.com",
		DocumentFields: fund.DocumentFields{FundID: "FUND_H", Kind: fund.KindCapitalCallNotice, Title: fmt.Sprintf("Capital call notice no. 7, revision %d", v),
			AsOf: fund.MustDate("2025-06-30"), Currency: "USD"},
		CapitalActivity: &fund.CapitalActivity{Amount: amount, Status: fund.StatusCompleted,
			ActivityDetails: fund.ActivityDetails{ActivityDate: fund.MustDate("2025-07-15"), Description: "Call no. 7"}},
		Positions: []fund.Position{{ID: "POS_H1", InvestorID: "INV_H1", CapitalCall: &fund.CapitalCallItem{Amount: amount}}}}
}

// putVersions stores versions 1 to n of doc through the store's write
// plan (store.Store.WritePlanAfter, each after the head the one before
// commits): the commits of versions 1 to n-1 are sent as plain puts, 25 to
// a BatchWriteItem (each key holding its last version's item, as after
// those commits), then version n's whole plan, conditions and all, as
// Restate sends it. So the table holds every version's history records,
// events and the head, latest view and fund items of version n as the
// commits write them, in seconds rather than the minute 1,000 Restates
// take; what it lacks is the earlier versions' own partitions and latest
// views, which no read of these tests reads.
func putVersions(t *testing.T, env *fundtest.Env, doc string, n int) {
	t.Helper()
	ctx := context.Background()
	client := dynamodb.NewFromConfig(dynamotest.Shared().Config())
	var head *store.Item
	var final store.Plan
	last := map[[2]string]map[string]types.AttributeValue{}
	for v := 1; v <= n; v++ {
		p, err := env.Store.WritePlanAfter(restatedCall(doc, v), head)
		if err != nil {
			t.Fatal(err)
		}
		commit := p.Commit.TransactItems
		var h store.Item
		if err := h.UnmarshalDynamoItem(commit[0].Put.Item); err != nil || h.SK != store.HeadSK || h.Version != v {
			t.Fatalf("version %d: the commit's first put is %+v (%v), want its head", v, h, err)
		}
		head = &h
		if v == n {
			final = p
			break
		}
		for _, ti := range commit {
			if ti.Put == nil {
				t.Fatalf("version %d: the commit holds %+v, which a batch cannot send", v, ti)
			}
			pk := ti.Put.Item[store.AttrPK].(*types.AttributeValueMemberS).Value
			sk := ti.Put.Item[store.AttrSK].(*types.AttributeValueMemberS).Value
			last[[2]string{pk, sk}] = ti.Put.Item
		}
	}
	var reqs []types.WriteRequest
	flush := func() {
		in := &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{env.Table: reqs}}
		for len(in.RequestItems) > 0 {
			out, err := client.BatchWriteItem(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			in.RequestItems = out.UnprocessedItems
		}
		reqs = nil
	}
	for _, item := range last {
		if reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}); len(reqs) == 25 {
			flush()
		}
	}
	if len(reqs) > 0 {
		flush()
	}
	// Version n's commit is conditional on the head the batches put.
	sendPlan(t, client, final)
}

// sendPlan sends a write plan's requests in order, as Restate does.
func sendPlan(t *testing.T, client *dynamodb.Client, p store.Plan) {
	t.Helper()
	ctx := context.Background()
	for _, in := range p.Stage {
		for len(in.RequestItems) > 0 {
			out, err := client.BatchWriteItem(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			in = &dynamodb.BatchWriteItemInput{RequestItems: out.UnprocessedItems}
		}
	}
	if _, err := client.TransactWriteItems(ctx, p.Commit); err != nil {
		t.Fatalf("commit version %d: %v", p.Document.Version, err)
	}
	for _, in := range p.Materialize {
		if _, err := client.TransactWriteItems(ctx, in); err != nil {
			t.Fatalf("materialize version %d: %v", p.Document.Version, err)
		}
	}
	if _, err := client.UpdateItem(ctx, p.Finish); err != nil {
		t.Fatalf("finish version %d: %v", p.Document.Version, err)
	}
}

// TestHistoryReadsStayBoundedAsVersionsGrow stores one document at 1
// version, one at 200 and one at 1,000 (putVersions) and reads each
// through the API, measuring the read units DynamoDB reports for every
// request (the env's capacity meter): the overview's first page with
// limit=1 of the 1,000-version document costs at most twice what the
// one-version document's does, and so do the first pages of /capital and
// /versions with limit=1; with the default limit (100), a first page costs
// exactly the same at 200 versions as at 1,000. Each answer is checked
// too, so a cheap read cannot be a wrong one.
func TestHistoryReadsStayBoundedAsVersionsGrow(t *testing.T) {
	s := newServer(t, false)
	for id, n := range map[string]int{"ONE": 1, "HUNDRED2": 200, "THOUSAND": 1000} {
		putVersions(t, s.Env, id, n)
	}
	read := func(path string, into any) (float64, []string) {
		t.Helper()
		s.Counter.Reset()
		before := s.Store.Consumed()
		r := s.do(t, http.MethodGet, path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		if err := json.Unmarshal(r.Body, into); err != nil {
			t.Fatal(err)
		}
		return s.Store.Consumed().Sub(before).Total().Read, s.Counter.Ops()
	}
	type header struct {
		Version int
		Status  string
	}
	type activity struct{ Version int }
	var overview struct {
		Version   int
		Documents struct {
			Latest  header
			Earlier []header
		}
		CapitalActivities struct {
			Latest  *activity
			Earlier []activity
		}
		Next string
	}
	var capital struct {
		Version           int
		CapitalActivities struct {
			Latest  *activity
			Earlier []activity
		}
		CapitalCalls []struct{ PositionID string }
		Next         string
	}
	var versions struct {
		Latest   *header
		Versions []header
		Next     string
	}

	t.Run("the overview's first page with limit=1", func(t *testing.T) {
		one, ops := read("/v1/documents/ONE?limit=1", &overview)
		if len(overview.Documents.Earlier) != 0 || len(ops) != 1 {
			t.Fatalf("one version: %+v, %v", overview, ops)
		}
		thousand, ops := read("/v1/documents/THOUSAND?limit=1", &overview)
		t.Logf("overview: %.1f read units at 1 version, %.1f at 1,000 (%v)", one, thousand, ops)
		if thousand > 2*one || len(ops) != 1 || ops[0] != "Query" {
			t.Errorf("the overview of 1,000 versions reads %.1f units with %v; one version %.1f: want at most twice, one Query", thousand, ops, one)
		}
		// The 20 latest earlier versions, each with its capital activity.
		e, a := overview.Documents.Earlier, overview.CapitalActivities.Earlier
		if overview.Version != 1000 || overview.Documents.Latest.Version != 1000 || len(e) != store.OverviewHistory || len(a) != store.OverviewHistory ||
			e[0].Version != 980 || e[19].Version != 999 || e[19].Status != "superseded" || a[0].Version != 980 || a[19].Version != 999 || overview.CapitalActivities.Latest.Version != 1000 {
			t.Errorf("the overview of 1,000 versions: %+v", overview)
		}
	})

	t.Run("the first page of /capital with limit=1", func(t *testing.T) {
		one, _ := read("/v1/documents/ONE/capital?limit=1", &capital)
		if len(capital.CapitalActivities.Earlier) != 0 || capital.Next != "" || len(capital.CapitalCalls) != 1 {
			t.Fatalf("one version: %+v", capital)
		}
		thousand, ops := read("/v1/documents/THOUSAND/capital?limit=1", &capital)
		t.Logf("/capital: %.1f read units at 1 version, %.1f at 1,000 (%v)", one, thousand, ops)
		if thousand > 2*one {
			t.Errorf("/capital of 1,000 versions reads %.1f units with %v; one version %.1f: want at most twice", thousand, ops, one)
		}
		if capital.Version != 1000 || capital.CapitalActivities.Latest.Version != 1000 || len(capital.CapitalActivities.Earlier) != 1 ||
			capital.CapitalActivities.Earlier[0].Version != 999 || capital.Next == "" || len(capital.CapitalCalls) != 1 {
			t.Fatalf("the first page of /capital of 1,000 versions: %+v", capital)
		}
		// Later pages go on below, at the same cost, newest first.
		for want := 998; want > 995; want-- {
			cost, _ := read("/v1/documents/THOUSAND/capital?limit=1&cursor="+capital.Next, &capital)
			if cost > 2*one || len(capital.CapitalActivities.Earlier) != 1 || capital.CapitalActivities.Earlier[0].Version != want ||
				capital.CapitalActivities.Latest != nil || len(capital.CapitalCalls) != 0 || capital.Version != 1000 {
				t.Fatalf("the page of version %d of /capital: %+v, %.1f read units", want, capital, cost)
			}
		}
	})

	t.Run("the first page of /versions with limit=1", func(t *testing.T) {
		one, _ := read("/v1/documents/ONE/versions?limit=1", &versions)
		if len(versions.Versions) != 1 || versions.Next != "" {
			t.Fatalf("one version: %+v", versions)
		}
		thousand, ops := read("/v1/documents/THOUSAND/versions?limit=1", &versions)
		t.Logf("/versions: %.1f read units at 1 version, %.1f at 1,000 (%v)", one, thousand, ops)
		if thousand > 2*one {
			t.Errorf("/versions of 1,000 versions reads %.1f units with %v; one version %.1f: want at most twice", thousand, ops, one)
		}
		if versions.Latest.Version != 1000 || len(versions.Versions) != 1 || versions.Versions[0].Version != 1000 || versions.Versions[0].Status != "latest" || versions.Next == "" {
			t.Fatalf("the first page of /versions of 1,000 versions: %+v", versions)
		}
		read("/v1/documents/THOUSAND/versions?limit=1&cursor="+versions.Next, &versions)
		if len(versions.Versions) != 1 || versions.Versions[0].Version != 999 || versions.Versions[0].Status != "superseded" {
			t.Fatalf("the second page of /versions: %+v", versions)
		}
	})

	t.Run("a read as known at an instant costs the same at 200 versions as at 1,000", func(t *testing.T) {
		// Version 101 of each, read as known at its commit instant: the
		// instant index names it in one Query, where a search over the
		// versions would cost more steps at 1,000 than at 200. (/versions
		// reads the version's record: putVersions writes no earlier
		// version's own partition, which the other routes read.)
		knownAt := func(doc string) string {
			at, err := s.Store.CommitInstants(context.Background(), doc, 101, 101)
			if err != nil || at[101].IsZero() {
				t.Fatalf("the commit instant of %s version 101: %v %v", doc, at, err)
			}
			return at[101].UTC().Format(time.RFC3339Nano)
		}
		at200, at1000 := knownAt("HUNDRED2"), knownAt("THOUSAND")
		for _, route := range []string{"/versions", "/versions?limit=1"} {
			var page struct {
				Version int
				Latest  *header
			}
			sep := "?"
			if strings.Contains(route, "?") {
				sep = "&"
			}
			cost200, ops200 := read("/v1/documents/HUNDRED2"+route+sep+"knownAt="+url.QueryEscape(at200), &page)
			v200 := page
			cost1000, ops1000 := read("/v1/documents/THOUSAND"+route+sep+"knownAt="+url.QueryEscape(at1000), &page)
			t.Logf("GET /v1/documents/{id}%s?knownAt=…: %.1f read units at 200 versions, %.1f at 1,000", route, cost200, cost1000)
			if cost200 != cost1000 || len(ops200) != len(ops1000) {
				t.Errorf("GET /v1/documents/{id}%s?knownAt=… reads %.1f units with %v at 200 versions, %.1f with %v at 1,000", route, cost200, ops200, cost1000, ops1000)
			}
			for _, p := range []struct {
				Version int
				Latest  *header
			}{v200, page} {
				got := p.Version
				if p.Latest != nil {
					got = p.Latest.Version
				}
				if got != 101 {
					t.Errorf("GET /v1/documents/{id}%s?knownAt=…: version %+v, want 101", route, p)
				}
			}
		}
	})

	t.Run("a first page of the default limit costs the same at 200 versions as at 1,000", func(t *testing.T) {
		for _, route := range []string{"", "/capital", "/versions"} {
			var page map[string]any
			at200, ops200 := read("/v1/documents/HUNDRED2"+route, &page)
			at1000, ops1000 := read("/v1/documents/THOUSAND"+route, &page)
			t.Logf("GET /v1/documents/{id}%s: %.1f read units at 200 versions, %.1f at 1,000", route, at200, at1000)
			if at200 != at1000 || len(ops200) != len(ops1000) {
				t.Errorf("GET /v1/documents/{id}%s reads %.1f units with %v at 200 versions, %.1f with %v at 1,000", route, at200, ops200, at1000, ops1000)
			}
			if route != "" && page["next"] == nil {
				t.Errorf("GET /v1/documents/THOUSAND%s has no next page", route)
			}
		}
	})
}
