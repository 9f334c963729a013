package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/multitest"
	"github.com/fundsvc/fundsvc/store"
)

// TestMain runs the tests on the shared DynamoDB Local, with a fundsvc
// binary built once (multitest.Binary); run by startFloor, it serves the
// floor instead, as the bench's own binary does.
func TestMain(m *testing.M) {
	serveFloorIfAsked()
	os.Exit(multitest.Main(m))
}

// TestATinyRunReportsEveryComparison is the bench's smoke test: a run on a
// tiny dataset, against the test DynamoDB Local and a freshly built
// fundsvc, must measure every route against its raw baseline, write the
// report between its markers and answer every request of the sustained
// load, so the bench cannot rot unnoticed until the next `make bench`.
func TestATinyRunReportsEveryComparison(t *testing.T) {
	bin := multitest.Binary(t)
	// The fundsvc the bench runs reads no stack file: a run from a checkout
	// where make run wrote .data/stack.env measured make run's settings.
	multitest.PoisonStackFile(t)
	doc := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := os.WriteFile(doc, []byte("# Benchmarks\n\n<!-- servicebench:begin -->\nlast run\n<!-- servicebench:end -->\n\nAfter.\n\n<!-- servicebench-cost:begin -->\nlast cost\n<!-- servicebench-cost:end -->\n\nEnd.\n\n<!-- servicebench-history:begin -->\nlast history\n<!-- servicebench-history:end -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-fundsvc", bin, "-out", doc,
		"-docs=3", "-positions=4", "-restated=0.34", "-ingest=5",
		"-requests=20", "-duration=3s", "-warmup=2", "-slices=2", "-concurrency=2",
		"-sustain=2s", "-sustain-concurrency=2", "-history=8", "-import-rows=12", "-import-documents=3"})
	if err != nil {
		t.Fatal(err)
	}
	o.ds.name = dynamotest.UniqueName(t, "servicebench")
	db := dynamotest.Shared()
	t.Cleanup(func() {
		_, _ = dynamodb.NewFromConfig(db.Config()).DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(o.ds.table())})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := bench(ctx, o, db, &out); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	t.Logf("report:\n%s", report)
	if strings.Contains(report, "last run") || strings.Contains(report, "last cost") || strings.Contains(report, "last history") ||
		!strings.Contains(report, "<!-- servicebench:end -->\n\nAfter.\n\n<!-- servicebench-cost:begin -->") || !strings.Contains(report, "<!-- servicebench-cost:end -->\n\nEnd.\n\n<!-- servicebench-history:begin -->") || !strings.HasSuffix(report, "<!-- servicebench-history:end -->\n") {
		t.Errorf("the report did not replace the text between the markers:\n%s", report)
	}
	if !strings.Contains(out.String(), "| measurement | concurrency |") {
		t.Errorf("the report was not written to out:\n%s", out.String())
	}

	// The import's files, CSV and XLSX, each dry run and committed.
	for _, format := range []string{"csv", "xlsx"} {
		if !regexp.MustCompile(`(?m)^\| ` + format + ` \| [0-9]+ \| [0-9]+ ms \| [0-9]+ ms \| 3 created \| [0-9.]+ MiB \| [0-9.]+ MiB \| [0-9.]+ MiB \|$`).MatchString(report) {
			t.Errorf("no import row for %s in:\n%s", format, report)
		}
	}

	// Each comparison at concurrency 1 and 2, with a figure on both sides.
	figure := `[0-9.]+ ms`
	for _, name := range []string{"document overview", "position across documents", floorName, "position summary", "fund documents", "ingest, 5 positions", "ingest, 5 new positions"} {
		for _, conc := range []int{1, 2} {
			row := regexp.MustCompile(fmt.Sprintf(`(?m)^\| %s \| %d \| %s \| %s \| %s \| %s \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \(p50\) \|$`,
				regexp.QuoteMeta(name), conc, figure, figure, figure, figure))
			if !row.MatchString(report) {
				t.Errorf("no measured row for %s at concurrency %d in:\n%s", name, conc, report)
			}
		}
	}
	// The ingest ran with a webhook endpoint subscribed, and the receiver
	// got the event of every acknowledged timed API write.
	if m := regexp.MustCompile(`(?m)^\| all \| – \| ([0-9]+) \| ([0-9]+) \| 0 \| -?[0-9.]+ ms \| -?[0-9.]+ ms \|$`).FindStringSubmatch(report); m == nil || m[1] != m[2] || m[1] == "0" {
		t.Errorf("no commit-to-delivery row with every write delivered (%v) in:\n%s", m, report)
	}
	// The position read's items were answered from its memo after each
	// position's first read.
	if m := regexp.MustCompile(`- the position read answered ([0-9]+) of its ([0-9]+) items `).FindStringSubmatch(report); m == nil || m[1] == "0" || m[1] == m[2] {
		t.Errorf("no memo line with some items, not all, answered from the memo (%v) in:\n%s", m, report)
	}
	for _, want := range []string{
		"- commit to delivery p50 under 1 s: p50 ",
		"- ingest, 5 positions: p50 API ÷ raw ",
		"(target: at most 2.00)",
		"ingest, 5 positions: the least the table allows (BatchWriteItem of the version's position items) consumed ",
		"- the floor of the position read: a bare server that makes its Query and answers ",
		"Sustained mixed load: ",
		"- 5xx answers: 0.",
		"lost: 0;",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	// The cost table, between markers of its own: each route's units on
	// both sides, beside the minimum, reads reading and ingests writing.
	u := `[0-9]+(\.[0-9]+)?`
	for _, tc := range []struct{ name, row string }{
		{"document overview", fmt.Sprintf(`%s \| 0 \| %s \| 0 \| %s \| 0 \|`, u, u, u)},
		{"position across documents", fmt.Sprintf(`%s \| 0 \| %s \| 0 \| %s \| 0 \|`, u, u, u)},
		{"position summary", fmt.Sprintf(`%s \| 0 \| %s \| 0 \| %s \| 0 \|`, u, u, u)},
		{"fund documents", fmt.Sprintf(`%s \| 0 \| %s \| 0 \| %s \| 0 \|`, u, u, u)},
		{"ingest, 5 positions", fmt.Sprintf(`%s \| %s \| 0 \| %s \| 0 \| %s \|`, u, u, u, u)},
	} {
		row := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(tc.name) + ` \| ` + tc.row + ` [0-9]+ \| [0-9.]+ \| [0-9.]+ \|$`)
		if m := row.FindString(report); m == "" || strings.Contains(m, "| 0 | 0 |") && !strings.HasPrefix(tc.name, "ingest") {
			t.Errorf("no cost row for %s in:\n%s", tc.name, report)
		}
	}
	if i, j := strings.Index(report, "<!-- servicebench-cost:begin -->"), strings.Index(report, "<!-- servicebench-cost:end -->"); i < 0 || j < i ||
		!strings.Contains(report[i:j], "| operation | API read |") || !strings.Contains(report[i:j], "| **total** |") {
		t.Errorf("the cost tables are not between their markers:\n%s", report)
	}
	// The history table: the overview's read units at 1 and 8 versions,
	// within twice each other.
	if m := regexp.MustCompile(`(?m)^\| overview, limit=1 \| (\S+) \| (\S+) \| ([0-9.]+) \|$`).FindStringSubmatch(report); m == nil {
		t.Errorf("no history row in:\n%s", report)
	} else if r, _ := strconv.ParseFloat(m[3], 64); r <= 0 || r > 2 {
		t.Errorf("the overview at 8 versions reads %s units against %s at 1 version: want at most twice", m[2], m[1])
	}
	// A raw read is the minimum: DynamoDB Local charged the Query what
	// DynamoDB's rules give for the items' sizes (store.ItemSize).
	for _, name := range []string{"document overview", "position summary"} {
		m := regexp.MustCompile(`(?m)^\| ` + name + ` \| \S+ \| 0 \| (\S+) \| 0 \| (\S+) \| 0 \|`).FindStringSubmatch(report)
		if m == nil || m[1] != m[2] {
			t.Errorf("%s: raw and minimum read units differ: %v", name, m)
		}
	}
	// DynamoDB Local reports no more for the raw writes than the rules
	// give for the plan's items (less for transactions: see
	// docs/benchmarks.md), and the cost model uses the rules' figure.
	m := regexp.MustCompile(`ingest, 5 positions: .* The raw writes \(the store's write plan\) priced by the rules come to (\S+) write units, DynamoDB Local reported (\S+); the API's writes so corrected: (\S+), [0-9.]+ times the least;`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no priced raw writes in:\n%s", report)
	}
	byRule, _ := strconv.ParseFloat(m[1], 64)
	reported, _ := strconv.ParseFloat(m[2], 64)
	if reported <= 0 || reported > byRule {
		t.Errorf("raw writes: %v by the rules, %v reported", byRule, reported)
	}
	// Where an ingest's version spent its time: every phase a restatement
	// of registered positions goes through sent requests.
	for _, phase := range []store.Phase{store.PhaseRead, store.PhaseStage, store.PhaseCommit, store.PhaseMaterialize, store.PhaseFinish} {
		if !regexp.MustCompile(`(?m)^\| ` + string(phase) + ` \| [0-9.]+ \| [1-9][0-9]* \| [0-9]+ \| [0-9.]+ \|$`).MatchString(report) {
			t.Errorf("no phase row for %s with requests in:\n%s", phase, report)
		}
	}
	// A first version claims and registers every position: its phases
	// include the claims and their confirmation, and its cost row the
	// API's write units beside the least's.
	if i := strings.Index(report, "Where a version of ingest, 5 new positions spends"); i < 0 {
		t.Errorf("no phases of a first version in:\n%s", report)
	} else {
		section := report[i:]
		if j := strings.Index(section[1:], "Where a version of"); j >= 0 {
			section = section[:j+1]
		}
		for _, phase := range []store.Phase{store.PhaseClaim, store.PhaseConfirm} {
			if !regexp.MustCompile(`(?m)^\| ` + string(phase) + ` \| [0-9.]+ \| [1-9][0-9]* \| [1-9][0-9]* \| [0-9.]+ \|$`).MatchString(section) {
				t.Errorf("no %s phase with requests and items in the first version's phases:\n%s", phase, section)
			}
		}
	}
	if !regexp.MustCompile(`(?m)^\| ingest, 5 new positions \| [0-9.]+ \| [1-9][0-9.]* \| – \|`).MatchString(report) ||
		!regexp.MustCompile(`- ingest, 5 new positions: the least the table allows consumed [1-9][0-9.]* write units; DynamoDB Local reported [1-9][0-9.]* for the API's writes`).MatchString(report) {
		t.Errorf("no cost of a first version in:\n%s", report)
	}
	if strings.Contains(report, "Failed requests") {
		t.Errorf("requests failed:\n%s", report)
	}
}
