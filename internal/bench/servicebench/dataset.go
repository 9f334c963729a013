package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/guregu/dynamo/v2/dynamodbiface"
	"golang.org/x/sync/errgroup"
)

// docsPerFund is how many documents of the dataset share one fund and so
// one set of positions: a position has items in every document of its fund.
const docsPerFund = 20

// docSpec says which document to generate; makeDocument turns it into any
// version of that document.
type docSpec struct {
	id, fundID string
	seq        int    // the document's place in its fund: sets its kind and as-of date
	posPrefix  string // position i is <posPrefix><i>, held by investor INV_<i>
	positions  int
}

// dataset is the loaded part of the table: documents of funds of
// docsPerFund, every position in each of its fund's documents, a fraction
// restated twice.
type dataset struct {
	docs, positions int
	restated        float64
	name            string // the table's name; empty for one derived from the parameters
}

func (ds dataset) funds() int { return (ds.docs + docsPerFund - 1) / docsPerFund }

// table names what the loader wrote, so a table that exists was loaded
// with these parameters.
func (ds dataset) table() string {
	if ds.name != "" {
		return ds.name
	}
	return fmt.Sprintf("servicebench-v1-%d-%d-%d", ds.docs, ds.positions, int(ds.restated*1000+0.5))
}

func (ds dataset) doc(i int) docSpec {
	f := i / docsPerFund
	return docSpec{id: fmt.Sprintf("DOC_%06d", i), fundID: fundID(f), seq: i % docsPerFund,
		posPrefix: fmt.Sprintf("P%04d_", f), positions: ds.positions}
}

func fundID(f int) string { return fmt.Sprintf("FUND_%04d", f) }

func (ds dataset) positionID(f, p int) string { return fmt.Sprintf("P%04d_%04d", f, p) }

// isRestated spreads the restated fraction evenly over the documents.
func (ds dataset) isRestated(i int) bool {
	return int(float64(i+1)*ds.restated) > int(float64(i)*ds.restated)
}

func (ds dataset) restatedCount() int {
	n := 0
	for i := range ds.docs {
		if ds.isRestated(i) {
			n++
		}
	}
	return n
}

// versions is how many versions document i has once loaded.
func (ds dataset) versions(i int) int {
	if ds.isRestated(i) {
		return 3
	}
	return 1
}

// load writes the dataset through the store, as the service writes it,
// eight documents at a time.
func (ds dataset) load(ctx context.Context, store *store.Store) error {
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range ds.docs {
		g.Go(func() error {
			spec := ds.doc(i)
			for v := 1; v <= ds.versions(i); v++ {
				if _, err := store.Restate(gctx, makeDocument(spec, v), nil); err != nil {
					return fmt.Errorf("load %s version %d: %w", spec.id, v, err)
				}
			}
			if n := done.Add(1); n%200 == 0 {
				fmt.Printf("  %d/%d documents\n", n, ds.docs)
			}
			return nil
		})
	}
	return g.Wait()
}

// markerKey is the item that says a table's load finished. It is not an
// entity of the service; no route reads it.
var markerKey = map[string]types.AttributeValue{
	store.AttrPK: &types.AttributeValueMemberS{Value: "SERVICEBENCH"},
	store.AttrSK: &types.AttributeValueMemberS{Value: "LOADED"},
}

func markLoaded(ctx context.Context, client dynamodbiface.DynamoDBAPI, table string) error {
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: markerKey})
	if err != nil {
		return fmt.Errorf("mark %s loaded: %w", table, err)
	}
	return nil
}

func loaded(ctx context.Context, client dynamodbiface.DynamoDBAPI, table string) bool {
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: markerKey, ConsistentRead: aws.Bool(true)})
	return err == nil && out.Item != nil
}

// ensureLoaded reuses the dataset's table if an earlier run loaded it
// completely, and loads it afresh otherwise.
func ensureLoaded(ctx context.Context, client dynamodbiface.DynamoDBAPI, store *store.Store, ds dataset) error {
	table := ds.table()
	if loaded(ctx, client, table) {
		fmt.Printf("reusing %s\n", table)
		return nil
	}
	_, _ = client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	if err := store.CreateTable(ctx); err != nil {
		return err
	}
	start := time.Now()
	fmt.Printf("loading %d documents of %d positions into %s\n", ds.docs, ds.positions, table)
	if err := ds.load(ctx, store); err != nil {
		return err
	}
	if err := markLoaded(ctx, client, table); err != nil {
		return err
	}
	fmt.Printf("loaded %s in %s\n", table, time.Since(start).Round(time.Second))
	return nil
}

// makeDocument returns one revision of a document's content (the loader
// makes revision n its version n). Amounts depend on the document, the
// position and the revision, so a restatement changes them;
// every position has a capital call, a distribution and an unfunded
// commitment, with ILPA line items on most of them.
func makeDocument(s docSpec, revision int) fund.Document {
	kinds := []fund.Kind{fund.KindCapitalCallNotice, fund.KindCapitalCallNotice, fund.KindDistributionNotice, fund.KindCapitalAccountStatement}
	kind := kinds[s.seq%len(kinds)]
	asOf := time.Date(2021, 1, 15, 0, 0, 0, 0, time.UTC).AddDate(0, s.seq*2, 0)
	d := fund.Document{
		ID: s.id, DocumentFields: fund.DocumentFields{FundID: s.fundID, Kind: kind, Currency: "USD", Title: fmt.Sprintf("%s %d of %s (revision %d)", kindTitle[kind], s.seq+1, s.fundID, revision), AsOf: fund.MustDate(asOf.Format(time.DateOnly))},
	}
	var called int64
	for p := range s.positions {
		pos := makePosition(s, p, revision, asOf)
		called += pos.called
		d.Positions = append(d.Positions, pos.Position)
	}
	status := fund.StatusCompleted
	if s.seq%5 == 4 {
		status = fund.StatusPending
	}
	d.CapitalActivity = &fund.CapitalActivity{Amount: money(called), Status: status, ActivityDetails: fund.ActivityDetails{ActivityDate: d.AsOf, Description: fmt.Sprintf("%s, %d positions", kindTitle[kind], s.positions)}}
	return d
}

var kindTitle = map[fund.Kind]string{
	fund.KindCapitalCallNotice:       "Capital call notice",
	fund.KindDistributionNotice:      "Distribution notice",
	fund.KindCapitalAccountStatement: "Capital account statement",
}

type generatedPosition struct {
	fund.Position
	called int64 // the capital call's amount, in ten-thousandths
}

// makePosition draws a position's items from a generator seeded by the
// position and the document, so every run generates the same dataset.
// Amounts are in ten-thousandths of a dollar: most are whole cents, some
// carry four decimals, as converted amounts do.
func makePosition(s docSpec, p, revision int, asOf time.Time) generatedPosition {
	id := fmt.Sprintf("%s%04d", s.posPrefix, p)
	rng := rand.New(rand.NewPCG(hash(id), hash(s.id)^uint64(revision)))
	// The commitment belongs to the position, the same in every document.
	commitment := int64(250+rand.New(rand.NewPCG(hash(id), 0)).IntN(24750)) * 1000 * 10000
	cents := func(x int64) int64 { return x / 100 * 100 }
	amount := func(lo, hi float64) int64 {
		x := int64(float64(commitment) * (lo + (hi-lo)*rng.Float64()))
		if rng.IntN(10) != 0 {
			x = cents(x)
		}
		return x
	}
	date := func(days int) fund.Date { return fund.MustDate(asOf.AddDate(0, 0, days).Format(time.DateOnly)) }
	status := func(completed float64) fund.Status {
		if rng.Float64() < completed {
			return fund.StatusCompleted
		}
		return fund.StatusPending
	}

	call := &fund.CapitalCallItem{Amount: money(amount(0.01, 0.08)), Status: status(0.7), CallDetails: fund.CallDetails{DueDate: date(30)}}
	called := call.Amount
	if rng.IntN(10) < 7 {
		total := mustUnits(called)
		fee, expenses := cents(total*15/1000), cents(total*4/1000)
		call.Investment, call.ManagementFee, call.FundExpenses = ptr(money(total-fee-expenses)), ptr(money(fee)), ptr(money(expenses))
	}
	dist := &fund.DistributionItem{Amount: money(amount(0, 0.05)), Status: status(0.8), DistributionDetails: fund.DistributionDetails{PaymentDate: date(15)}}
	if rng.IntN(10) < 6 {
		total := mustUnits(dist.Amount)
		roc, gain := cents(total/2), cents(total*35/100)
		dist.ReturnOfCapital, dist.RealizedGain, dist.Income = ptr(money(roc)), ptr(money(gain)), ptr(money(total-roc-gain))
		dist.Recallable, dist.Withholding = ptr(money(cents(roc/5))), ptr(money(cents(total/100)))
	}
	// What remains unfunded shrinks along the fund's documents.
	unfunded := commitment * int64(max(1, docsPerFund+5-s.seq)) / (docsPerFund + 5)
	uc := &fund.UnfundedCommitmentItem{Amount: money(cents(unfunded)), Status: fund.StatusActive}
	if rng.IntN(10) < 8 {
		uc.Commitment = ptr(money(commitment))
	}
	return generatedPosition{
		Position: fund.Position{ID: id, InvestorID: fmt.Sprintf("INV_%04d", p),
			CapitalCall: call, Distribution: dist, UnfundedCommitment: uc},
		called: mustUnits(called),
	}
}

// money formats ten-thousandths as an amount with four decimals.
func money(units int64) fund.Money {
	return fund.MustMoney(fmt.Sprintf("%d.%04d", units/10000, units%10000))
}

// mustUnits is the inverse of money.
func mustUnits(m fund.Money) int64 {
	return m.Decimal().Shift(4).IntPart()
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func ptr[T any](v T) *T { return &v }
