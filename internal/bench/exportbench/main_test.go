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

// TestATinyRunReportsEverySize is the bench's smoke test: a run on two tiny
// tables, against the test DynamoDB Local and a freshly built fundsvc, must
// load them, Scan them, export them and report a row for each size and the
// memory comparison between the markers, so the bench cannot rot unnoticed
// until the next `make bench-export`.
func TestATinyRunReportsEverySize(t *testing.T) {
	bin := multitest.Binary(t)
	// The fundsvc the bench runs reads no stack file: a run from a checkout
	// where make run wrote .data/stack.env measured make run's settings.
	multitest.PoisonStackFile(t)
	doc := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := os.WriteFile(doc, []byte("# Benchmarks\n\n<!-- exportbench:begin -->\nlast run\n<!-- exportbench:end -->\n\nAfter.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-fundsvc", bin, "-out", doc, "-items=200,400", "-items-per-doc=50", "-rounds=1", "-segments=2"})
	if err != nil {
		t.Fatal(err)
	}
	o.tablePrefix = dynamotest.UniqueName(t, "exportbench")
	db := dynamotest.Shared()
	t.Cleanup(func() {
		client := dynamodb.NewFromConfig(db.Config())
		for _, items := range []int{200, 400} {
			table := fmt.Sprintf("%s-v1-%d-%d", o.tablePrefix, items, o.perDoc)
			_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
		}
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
	if strings.Contains(report, "last run") || !strings.HasSuffix(report, "<!-- exportbench:end -->\n\nAfter.\n") {
		t.Errorf("the report did not replace the text between the markers:\n%s", report)
	}
	if !strings.Contains(out.String(), "| items | documents |") {
		t.Errorf("the report was not written to out:\n%s", out.String())
	}

	// A row per size: the items the raw Scan counted (the documents' items
	// and the load marker), the documents, both rates, their ratio and the
	// export's peak RSS, all measured.
	rows := regexp.MustCompile(`(?m)^\| (\d+) \| (\d+) \| (\d+) \| (\d+) \| ([0-9.]+) \| (\d+) MB \|$`).FindAllStringSubmatch(report, -1)
	if len(rows) != 2 {
		t.Fatalf("%d rows of figures, want 2 (one per size):\n%s", len(rows), report)
	}
	for i, want := range []struct{ docs, minItems int }{{4, 150}, {8, 300}} {
		var items, docs, rawRate, expRate, rss int
		var ratio float64
		if _, err := fmt.Sscan(strings.Join(rows[i][1:], " "), &items, &docs, &rawRate, &expRate, &ratio, &rss); err != nil {
			t.Fatal(err)
		}
		if docs != want.docs || items < want.minItems || rawRate <= 0 || expRate <= 0 || ratio <= 0 || rss <= 0 {
			t.Errorf("row %d: %d items, %d documents, raw %d/s, export %d/s, ratio %.2f, %d MB; want %d documents of at least %d items, every figure positive",
				i, items, docs, rawRate, expRate, ratio, rss, want.docs, want.minItems)
		}
	}
	if !regexp.MustCompile(`Peak RSS at \d+ items is [0-9.]+× the peak at \d+ items`).MatchString(report) {
		t.Errorf("no memory comparison between the sizes:\n%s", report)
	}

	// A row per size for the incremental export: one document changed (1%
	// of 4 or 8, at least one), both runs timed, nothing scanned by the
	// incremental one, and the capacity both consumed, read and written.
	inc := regexp.MustCompile(`(?m)^\| (\d+) \| (\d+) \| ([0-9.]+) s \| ([0-9.]+) s \| ([0-9.]+) \| (\d+) \| ([0-9.]+) / ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) / ([0-9.]+) \| ([0-9.]+) \|$`).FindAllStringSubmatch(report, -1)
	if len(inc) != 2 {
		t.Fatalf("%d rows of incremental figures, want 2 (one per size):\n%s", len(inc), report)
	}
	for i, row := range inc {
		var items, changed, scanned int
		var full, incr, ratio, fullRead, fullWrite, fullMin, incRead, incWrite, incMin float64
		if _, err := fmt.Sscan(strings.Join(row[1:], " "), &items, &changed, &full, &incr, &ratio, &scanned, &fullRead, &fullWrite, &fullMin, &incRead, &incWrite, &incMin); err != nil {
			t.Fatal(err)
		}
		if changed != 1 || scanned != 0 || full <= 0 || incr <= 0 || ratio <= 0 || fullRead <= 0 || fullWrite <= 0 || incRead <= 0 || incRead >= fullRead {
			t.Errorf("incremental row %d: %s; want one document changed, nothing scanned, both times positive, and read units above zero, fewer for the incremental run",
				i, row[0])
		}
		// A Scan's pages cost what the rules give for them; the
		// incremental run reads the changed document and the change index.
		if fullMin <= 0 || fullRead < fullMin || incMin <= 0 || incRead < incMin || incMin >= fullMin {
			t.Errorf("incremental row %d: %s; want minimums above zero, each run at or above its minimum, the changed document's below the Scan's", i, row[0])
		}
	}
	if n := len(regexp.MustCompile(`(?m)^Incremental ÷ full at \d+ items, by round: [0-9.]+ \(target: at most 0\.10\)\.$`).FindAllString(report, -1)); n != 2 {
		t.Errorf("%d lines of the incremental ratio by round, want one per size:\n%s", n, report)
	}
}
