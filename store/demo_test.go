package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
	"github.com/guregu/dynamo/v2"
)

// TestResetDemoRestoresTheDemo: on DynamoDB Local, a write made after
// seeding is gone after ResetDemo and the demo is back whole, while a store
// that does not talk to a loopback endpoint is refused and changes nothing.
func TestResetDemoRestoresTheDemo(t *testing.T) {
	ctx := context.Background()
	e := fundtest.New(t)
	demo := len(fund.DemoVersions())
	if n, err := e.Store.SeedDemo(ctx); err != nil || n != demo {
		t.Fatalf("seed: %d versions, %v; want %d", n, err, demo)
	}
	// What the tour (docs/tour.md) writes: a new document with a new position,
	// and a restatement of a demo document.
	extra := fund.Document{ID: "DOC008",
		Positions: []fund.Position{{ID: "POSITION_9", InvestorID: "INVESTOR_9",
			Distribution: &fund.DistributionItem{Amount: fund.MustMoney("1000.00"), Status: fund.StatusCompleted, DistributionDetails: fund.DistributionDetails{PaymentDate: fund.MustDate("2026-02-20")}}}}, DocumentFields: fund.DocumentFields{FundID: "FUND_A", Kind: fund.KindDistributionNotice, Title: "Distribution notice no. 3", AsOf: fund.MustDate("2026-02-16"), Currency: "USD"},
	}
	if _, err := e.Store.Restate(ctx, extra, nil); err != nil {
		t.Fatal(err)
	}
	var restated fund.Document
	for _, d := range fund.DemoVersions() {
		if d.ID == "DOC002" {
			restated = d
		}
	}
	restated.Title += " (corrected)"
	if _, err := e.Store.Restate(ctx, restated, nil); err != nil {
		t.Fatal(err)
	}

	t.Run("a store that does not talk to a loopback endpoint is refused", func(t *testing.T) {
		for _, c := range []struct {
			name string
			s    *store.Store
			why  string
		}{
			{"AWS itself", store.NewStore(store.NewDB(aws.Config{Region: "us-east-1"}), e.Table), "talks to AWS"},
			{"an AWS endpoint", store.NewStore(store.NewDB(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String("https://dynamodb.us-east-1.amazonaws.com")}), e.Table), "not a loopback address"},
			{"another host", store.NewStore(store.NewDB(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String("http://10.0.0.5:8000")}), e.Table), "not a loopback address"},
			// The local table itself, through a client NewDB did not make:
			// its endpoint cannot be known, so nothing may be deleted.
			{"a client not made by NewDB", store.NewStore(dynamo.New(dynamotest.Shared().Config()), e.Table), "not made by store.NewDB"},
		} {
			n, err := c.s.ResetDemo(ctx)
			if fund.ErrorCode(err) != fund.EINVALID || n != 0 || !strings.Contains(err.Error(), c.why) {
				t.Errorf("%s: %d versions, %v; want EINVALID saying %q", c.name, n, err, c.why)
			}
		}
		if h, err := e.Store.As(fund.Operator).LatestDocument(ctx, "DOC008"); err != nil || h.Version != 1 {
			t.Fatalf("after the refusals DOC008 is %+v, %v: the table was changed", h, err)
		}
	})

	t.Run("a reset forgets the writes and brings the demo back", func(t *testing.T) {
		if n, err := e.Store.ResetDemo(ctx); err != nil || n != demo {
			t.Fatalf("reset: %d versions, %v; want %d", n, err, demo)
		}
		if _, err := e.Store.As(fund.Operator).LatestDocument(ctx, "DOC008"); fund.ErrorCode(err) != fund.ENOTFOUND {
			t.Errorf("DOC008 after the reset: %v, want not found", err)
		}
		for doc, want := range map[string]struct {
			version int
			title   string
		}{
			"DOC001": {2, "Capital call notice no. 1, due 2025-08-01"},
			"DOC002": {1, "Distribution notice no. 1, paid 2025-09-15: recallable return of capital"},
			"DOC007": {2, "Q4 2025 capital account statements (restated: Company B revalued)"},
		} {
			if h, err := e.Store.As(fund.Operator).LatestDocument(ctx, doc); err != nil || h.Version != want.version || h.Title != want.title {
				t.Errorf("%s after the reset: %+v, %v; want version %d titled %q", doc, h, err, want.version, want.title)
			}
		}
		regs, _, err := e.Store.FundPositions(ctx, "FUND_A", 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range regs {
			ids = append(ids, r.PositionID)
		}
		if strings.Join(ids, ",") != "POSITION_1,POSITION_2,POSITION_3" {
			t.Errorf("FUND_A's positions after the reset: %v", ids)
		}
		// The new table's change index holds the demo's documents alone
		// (every write is at fundtest's clock).
		changes, err := e.Store.ChangedSince(ctx, fundtest.Clock.Add(-time.Second), fundtest.Clock.Add(time.Second))
		if err != nil || len(changes) != 7 {
			t.Errorf("the change index after the reset: %d documents, %v; want the demo's 7", len(changes), err)
		}
		if n, err := e.Store.SeedDemo(ctx); err != nil || n != 0 {
			t.Errorf("seeding again after the reset: %d versions, %v; want none", n, err)
		}
	})
}
