package store_test

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
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

// mixedDoc has a capital activity and positions with one to all four
// items, some with line items, typed transaction lines or a capital account
// statement: the store writes only the items a position has.
func mixedDoc(revision int, asOf string) fund.Document {
	m := func(units int) fund.Money { return fund.MustMoney(fmt.Sprintf("%d.%02d", units+revision, revision)) }
	p := func(v fund.Money) *fund.Money { return &v }
	d := fund.Document{ID: "D1",
		CreatedBy:       "plan-test",
		CapitalActivity: &fund.CapitalActivity{Amount: m(1000), Status: fund.StatusPending, ActivityDetails: fund.ActivityDetails{ActivityDate: fund.MustDate(asOf), Description: "call"}}, DocumentFields: fund.DocumentFields{FundID: "F1", Kind: fund.KindCapitalCallNotice, Title: fmt.Sprintf("Call, revision %d", revision), AsOf: fund.MustDate(asOf)},
	}
	for i := range 5 {
		pos := fund.Position{ID: fmt.Sprintf("POS_%d", i), InvestorID: fmt.Sprintf("INV_%d", i)}
		if i%2 == 0 {
			pos.CapitalCall = &fund.CapitalCallItem{Amount: m(100 * i)}
		}
		if i%3 == 0 {
			total := m(20 * i)
			pos.Distribution = &fund.DistributionItem{Amount: total, DistributionDetails: fund.DistributionDetails{DistributionLines: fund.DistributionLines{ReturnOfCapital: p(total)}}}
		}
		if i%2 == 1 || i == 4 {
			pos.UnfundedCommitment = &fund.UnfundedCommitmentItem{Amount: m(500), UnfundedDetails: fund.UnfundedDetails{UnfundedLines: fund.UnfundedLines{Commitment: p(m(900))}}}
		}
		if i%4 == 0 {
			pos.CapitalAccount = statement(m(1000 * i).String())
		}
		switch i {
		case 2:
			pos.CapitalCall.Transactions = []fund.Transaction{
				{Type: "investment", Amount: fund.MustMoney("150.00")}, {Type: "management_fee_inside_commitment", Amount: m(50)}}
		case 3:
			pos.Distribution.Transactions = []fund.Transaction{
				{Type: "recallable_return_of_capital", Amount: fund.MustMoney("10.00")}, {Type: "return_of_capital", Amount: m(50)}}
		}
		d.Positions = append(d.Positions, pos)
	}
	return d
}

// send makes the plan's requests with plain SDK calls, phase by phase.
func send(t *testing.T, client *dynamodb.Client, p store.Plan) {
	t.Helper()
	for _, in := range p.Stage {
		out, err := client.BatchWriteItem(ctx, in)
		if err != nil || len(out.UnprocessedItems) > 0 {
			t.Fatalf("stage: %v (%d tables unprocessed)", err, len(out.UnprocessedItems))
		}
	}
	if _, err := client.TransactWriteItems(ctx, p.Commit); err != nil {
		t.Fatalf("commit: %v", err)
	}
	for _, in := range p.Materialize {
		if _, err := client.TransactWriteItems(ctx, in); err != nil {
			t.Fatalf("materialize: %v", err)
		}
	}
	if _, err := client.UpdateItem(ctx, p.Finish); err != nil {
		t.Fatalf("finish: %v", err)
	}
}

// commitIDs matches the random part of a commit ID ("2-0a1b2c3d4e5f").
var commitIDs = regexp.MustCompile(`\b(\d+)-[0-9a-f]{12}\b`)

// render writes an attribute value in one canonical form, with commit IDs
// reduced to their version, so two tables written at different random
// commit IDs compare equal when they hold the same items.
func render(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + commitIDs.ReplaceAllString(v.Value, "$1-commit")
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprint("BOOL:", v.Value)
	case *types.AttributeValueMemberSS:
		var ss []string
		for _, e := range v.Value {
			ss = append(ss, commitIDs.ReplaceAllString(e, "$1-commit"))
		}
		sort.Strings(ss)
		return "SS:" + strings.Join(ss, ",")
	case *types.AttributeValueMemberM:
		return "M:{" + renderItem(v.Value) + "}"
	case *types.AttributeValueMemberL:
		var parts []string
		for _, e := range v.Value {
			parts = append(parts, render(e))
		}
		return "L:[" + strings.Join(parts, ",") + "]"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func renderItem(it map[string]types.AttributeValue) string {
	var parts []string
	for k, v := range it {
		if b, ok := v.(*types.AttributeValueMemberB); ok && k == "Recent" {
			// The head's recent versions: gzip, the same bytes for the same
			// records. (An event's binary differs: a plan names every
			// position as added.)
			parts = append(parts, k+"=B:"+base64.StdEncoding.EncodeToString(b.Value))
			continue
		}
		parts = append(parts, k+"="+render(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func renderTable(t *testing.T, e *fundtest.Env) []string {
	var out []string
	for _, it := range e.Dump(t) {
		out = append(out, renderItem(it))
	}
	sort.Strings(out)
	return out
}

// difference lists the items of a that b does not hold.
func difference(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func TestAWritePlanSentWithPlainSDKCallsStoresWhatRestateStores(t *testing.T) {
	for _, tc := range []struct{ name, asOf string }{
		{"a restatement of the same date", "2025-06-30"},
		{"a restatement that moves the document to another date", "2025-09-30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Both tables hold version 1 written by Restate; version 2 is
			// written by Restate on one and by its plan on the other.
			byStore, byPlan := fundtest.New(t), fundtest.New(t)
			var v1 fund.Document
			for _, e := range []*fundtest.Env{byStore, byPlan} {
				var err error
				if v1, err = e.Store.Restate(ctx, mixedDoc(1, "2025-06-30"), nil); err != nil {
					t.Fatal(err)
				}
			}
			want, err := byStore.Store.Restate(ctx, mixedDoc(2, tc.asOf), nil)
			if err != nil {
				t.Fatal(err)
			}
			head := readHead(t, byPlan, "D1")
			if head.Version != v1.Version {
				t.Fatalf("head at version %d, want %d", head.Version, v1.Version)
			}
			plan, err := byPlan.Store.WritePlanAfter(mixedDoc(2, tc.asOf), &head)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Document.Version != want.Version || !plan.Document.CreatedAt.Equal(want.CreatedAt) {
				t.Fatalf("plan writes version %d at %s, Restate wrote %d at %s",
					plan.Document.Version, plan.Document.CreatedAt, want.Version, want.CreatedAt)
			}
			send(t, dynamodb.NewFromConfig(dynamotest.Shared().Config()), plan)

			got, wantItems := renderTable(t, byPlan), renderTable(t, byStore)
			if only := difference(got, wantItems); len(only) > 0 {
				t.Errorf("only the plan wrote:\n%s", strings.Join(only, "\n"))
			}
			if only := difference(wantItems, got); len(only) > 0 {
				t.Errorf("only Restate wrote:\n%s", strings.Join(only, "\n"))
			}
			// Ten position items: only those the positions have, two of
			// them statements, two with typed lines.
			items, statements, typed := 0, 0, 0
			for _, it := range got {
				if strings.Contains(it, "GSI2PK=S:POSITION#") {
					items++
				}
				if strings.Contains(it, "GSI2SK=S:CAPITAL_ACCOUNT#") && strings.Contains(it, "EndingUnfundedCommitment=N:650") {
					statements++
				}
				if strings.Contains(it, "GSI2PK=S:POSITION#") && strings.Contains(it, "Transactions=L:[M:{") {
					typed++
				}
			}
			if items != 10 || statements != 2 || typed != 2 {
				t.Errorf("latest view holds %d position items, %d statements, %d with typed lines; want 10, 2, 2", items, statements, typed)
			}
			read, err := byPlan.Store.As(fund.Operator).Version(ctx, "D1", 2)
			if err != nil || read.Title != "Call, revision 2" || len(read.Positions) != 5 {
				t.Fatalf("the store reads the plan's version as %+v, %v", read, err)
			}
			if g, w := asJSON(t, read.Positions), asJSON(t, want.Positions); g != w {
				t.Fatalf("the store reads the plan's positions as\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func TestAWritePlanKeepsDynamoDBLimitsAndWholePositions(t *testing.T) {
	e := fundtest.New(t)
	d := fund.Document{ID: "BIG", DocumentFields: fund.DocumentFields{FundID: "F1", Kind: fund.KindCapitalCallNotice, Title: "Big", AsOf: fund.MustDate("2025-06-30")}}
	for i := range 60 {
		d.Positions = append(d.Positions, fund.Position{ID: fmt.Sprintf("POS_%02d", i), InvestorID: fmt.Sprintf("INV_%02d", i),
			CapitalCall:        &fund.CapitalCallItem{Amount: fund.MustMoney("10")},
			Distribution:       &fund.DistributionItem{Amount: fund.MustMoney("5")},
			UnfundedCommitment: &fund.UnfundedCommitmentItem{Amount: fund.MustMoney("90")}})
	}
	p, err := e.Store.WritePlan(d, &fund.DocumentHeader{Version: 3, DocumentFields: fund.DocumentFields{AsOf: d.AsOf}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Document.Version != 4 || !strings.HasPrefix(p.Document.CommitID, "4-") {
		t.Fatalf("plan writes version %d (commit %s), want 4", p.Document.Version, p.Document.CommitID)
	}

	t.Run("stage puts the document and its 180 items, 25 at most to a request", func(t *testing.T) {
		n := 0
		for _, in := range p.Stage {
			reqs := in.RequestItems[e.Table]
			if len(reqs) == 0 || len(reqs) > 25 || len(in.RequestItems) != 1 {
				t.Fatalf("a stage request holds %d writes to %d tables", len(reqs), len(in.RequestItems))
			}
			n += len(reqs)
		}
		if n != 181 { // no ledger entry: version 3's positions have theirs
			t.Fatalf("stage puts %d items, want 181", n)
		}
	})

	t.Run("commit puts the head on condition that it is still at the previous version", func(t *testing.T) {
		head := p.Commit.TransactItems[0].Put
		if head == nil || head.ConditionExpression == nil || *head.ConditionExpression != "#v = :v" {
			t.Fatalf("first commit item %+v", p.Commit.TransactItems[0])
		}
		if v := head.ExpressionAttributeValues[":v"].(*types.AttributeValueMemberN).Value; v != "3" {
			t.Fatalf("commit is conditional on version %s, want 3", v)
		}
		if sk := head.Item[store.AttrSK].(*types.AttributeValueMemberS).Value; sk != store.HeadSK {
			t.Fatalf("commit's first put is %s, want the head", sk)
		}
	})

	t.Run("materialize checks the head and keeps each position in one transaction of at most 100 items", func(t *testing.T) {
		if len(p.Materialize) != 2 {
			t.Fatalf("%d materialize transactions, want 2 (33 and 27 positions)", len(p.Materialize))
		}
		seen := map[string]int{}
		for i, in := range p.Materialize {
			items := in.TransactItems
			if len(items) > 100 || items[0].ConditionCheck == nil {
				t.Fatalf("transaction %d holds %d items, first %+v", i, len(items), items[0])
			}
			for _, it := range items[1:] {
				pos := it.Put.Item["PositionID"].(*types.AttributeValueMemberS).Value
				if j, ok := seen[pos]; ok && j != i {
					t.Fatalf("position %s is split over transactions %d and %d", pos, j, i)
				}
				seen[pos] = i
			}
		}
		if len(seen) != 60 {
			t.Fatalf("materialize writes %d positions, want 60", len(seen))
		}
	})

	t.Run("a document that breaks a rule has no plan", func(t *testing.T) {
		bad := d
		bad.FundID = "F#1"
		if _, err := e.Store.WritePlan(bad, nil); fund.ErrorCode(err) != fund.EINVALID {
			t.Fatalf("got %v, want EINVALID", err)
		}
	})
}

// readHead reads a document's commit head as the table holds it.
func readHead(t *testing.T, e *fundtest.Env, doc string) store.Item {
	t.Helper()
	out, err := dynamodb.NewFromConfig(dynamotest.Shared().Config()).GetItem(ctx, &dynamodb.GetItemInput{TableName: &e.Table,
		Key: map[string]types.AttributeValue{store.AttrPK: &types.AttributeValueMemberS{Value: store.DocPK(doc)}, store.AttrSK: &types.AttributeValueMemberS{Value: store.HeadSK}}, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		t.Fatalf("read the head of %s: %v", doc, err)
	}
	var h store.Item
	if err := h.UnmarshalDynamoItem(out.Item); err != nil {
		t.Fatal(err)
	}
	return h
}
