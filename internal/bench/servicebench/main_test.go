package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/multitest"
)

// TestMain runs the tests on the shared DynamoDB Local, with a fundsvc
// binary built once (multitest.Binary).
func TestMain(m *testing.M) { os.Exit(multitest.Main(m)) }

// TestATinyRunReportsEveryComparison is the bench's smoke test: a run on a
// tiny dataset, against the test DynamoDB Local and a freshly built
// fundsvc, must measure every route against its raw baseline, write the
// report between its markers and answer every request of the sustained
// load, so the bench cannot rot unnoticed until the next `make bench`.
func TestATinyRunReportsEveryComparison(t *testing.T) {
	bin := multitest.Binary(t)
	doc := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := os.WriteFile(doc, []byte("# Benchmarks\n\n<!-- servicebench:begin -->\nlast run\n<!-- servicebench:end -->\n\nAfter.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-fundsvc", bin, "-out", doc,
		"-docs=3", "-positions=4", "-restated=0.34", "-ingest=5",
		"-requests=20", "-duration=3s", "-warmup=2", "-slices=2", "-concurrency=2",
		"-sustain=2s", "-sustain-concurrency=2"})
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
	if strings.Contains(report, "last run") || !strings.HasSuffix(report, "<!-- servicebench:end -->\n\nAfter.\n") {
		t.Errorf("the report did not replace the text between the markers:\n%s", report)
	}
	if !strings.Contains(out.String(), "| measurement | concurrency |") {
		t.Errorf("the report was not written to out:\n%s", out.String())
	}

	// Each comparison at concurrency 1 and 2, with a figure on both sides.
	figure := `[0-9.]+ ms`
	for _, name := range []string{"document overview", "position across documents", "position summary", "fund documents", "ingest, 5 positions"} {
		for _, conc := range []int{1, 2} {
			row := regexp.MustCompile(fmt.Sprintf(`(?m)^\| %s \| %d \| %s \| %s \| %s \| %s \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \((p50|req/s)\) \|$`,
				regexp.QuoteMeta(name), conc, figure, figure, figure, figure))
			if !row.MatchString(report) {
				t.Errorf("no measured row for %s at concurrency %d in:\n%s", name, conc, report)
			}
		}
	}
	for _, want := range []string{
		"- ingest, 5 positions: req/s API ÷ raw",
		"Sustained mixed load: ",
		"- 5xx answers: 0.",
		"lost: 0;",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "Failed requests") {
		t.Errorf("requests failed:\n%s", report)
	}
}
