package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/imports"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// callsFile writes a CSV of n capital call notices of fund FUND_K, each of
// positions positions, and returns its path and the documents' IDs in file
// order.
func callsFile(t *testing.T, n, positions int) (string, []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("documentId,fundId,kind,title,asOf,positionId,investorId,capitalCall.amount\n")
	var ids []string
	for d := 1; d <= n; d++ {
		id := fmt.Sprintf("IMPORT_%02d", d)
		ids = append(ids, id)
		for p := 1; p <= positions; p++ {
			fmt.Fprintf(&b, "%s,FUND_K,capital_call_notice,Call %d,2026-01-15,POSITION_%d,INVESTOR_%d,\"%d,%03d.50\"\n", id, d, p, p, d, p)
		}
	}
	path := filepath.Join(t.TempDir(), "calls.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, ids
}

// TestImportCommand: a file with problems prints each and writes nothing;
// a dry run writes nothing; an import writes every document and says so;
// a refused document makes the command fail with its message, the others
// written; import template writes the template.
func TestImportCommand(t *testing.T) {
	fe := fundtest.New(t)
	getenv := env(t, fe.Table)
	ctx := t.Context()
	path, ids := callsFile(t, 3, 2)
	exists := func(id string) bool {
		_, err := fe.Store.As(fund.Operator).LatestDocument(ctx, id)
		return fund.ErrorCode(err) != fund.ENOTFOUND
	}

	t.Run("a file with problems prints each one and writes nothing", func(t *testing.T) {
		b, _ := os.ReadFile(path)
		bad := strings.ReplaceAll(strings.Replace(string(b), "\"1,001.50\"", "lots", 1), "Call 1,2026-01-15", "Call 1,2026-02-30")
		badPath := filepath.Join(t.TempDir(), "bad.csv")
		if err := os.WriteFile(badPath, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := run(ctx, []string{"import", badPath}, getenv, &out)
		if err == nil || !strings.Contains(err.Error(), "2 problems; nothing was written") {
			t.Fatalf("import of a bad file: %v", err)
		}
		for _, want := range []string{`row 2, E2, column "asOf": `, `row 2, H2, column "capitalCall.amount": `} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("the problems lack %q:\n%s", want, out.String())
			}
		}
		if exists(ids[0]) || exists(ids[1]) {
			t.Error("a file with problems wrote a document")
		}
	})
	t.Run("a dry run writes nothing", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(ctx, []string{"import", "--dry-run", path}, getenv, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "3 documents, 6 positions would be written") || exists(ids[0]) {
			t.Fatalf("dry run printed %q, or wrote", out.String())
		}
	})
	t.Run("an import writes each document and a second one none", func(t *testing.T) {
		for _, want := range []string{"3 created, 0 restated, 0 unchanged, 0 refused", "0 created, 0 restated, 3 unchanged, 0 refused"} {
			var out bytes.Buffer
			if err := run(ctx, []string{"import", "--created-by", "ops-script", path}, getenv, &out); err != nil || !strings.Contains(out.String(), want) {
				t.Fatalf("import printed %q, %v; want %q", out.String(), err, want)
			}
		}
		d, err := fe.Store.As(fund.Operator).LatestDocument(ctx, ids[2])
		if err != nil || d.Version != 1 || d.CreatedBy != "ops-script" {
			t.Fatalf("%s: %+v %v", ids[2], d, err)
		}
		// "3,002.50" in the file: the amount read exactly, separators dropped.
		_, items, err := fe.Store.As(fund.Operator).DocumentPosition(ctx, ids[2], "POSITION_2", "")
		if b, _ := json.Marshal(items); err != nil || !strings.Contains(string(b), `"amount":"3002.50"`) {
			t.Fatalf("%s POSITION_2: %s %v", ids[2], b, err)
		}
	})
	t.Run("a refused document fails the command, the others written", func(t *testing.T) {
		b, _ := os.ReadFile(path)
		// IMPORT_01 exists in FUND_K: moving it to another fund is a
		// conflict; IMPORT_02's amounts change: restated.
		changed := strings.ReplaceAll(strings.Replace(string(b), "IMPORT_01,FUND_K", "IMPORT_01,FUND_L", -1), "\"2,001.50\"", "2001.75")
		p := filepath.Join(t.TempDir(), "changed.csv")
		if err := os.WriteFile(p, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := run(ctx, []string{"import", p}, getenv, &out)
		if err == nil || !strings.Contains(err.Error(), "1 documents refused") {
			t.Fatalf("import with a conflict: %v", err)
		}
		for _, want := range []string{"0 created, 1 restated, 1 unchanged, 1 refused", "  IMPORT_01 (rows 2, 3): "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("the summary lacks %q:\n%s", want, out.String())
			}
		}
		if d, err := fe.Store.As(fund.Operator).LatestDocument(ctx, ids[1]); err != nil || d.Version != 2 {
			t.Errorf("%s after the restatement: %+v %v", ids[1], d, err)
		}
	})
	t.Run("import template writes the template", func(t *testing.T) {
		for _, format := range []string{"csv", "xlsx"} {
			var out, want bytes.Buffer
			if err := run(ctx, []string{"import", "template", "--format", format, "capital_account_statement"}, getenv, &out); err != nil {
				t.Fatal(err)
			}
			if err := imports.WriteTemplate(&want, fund.KindCapitalAccountStatement, format); err != nil {
				t.Fatal(err)
			}
			if format == "csv" && out.String() != want.String() || out.Len() == 0 {
				t.Errorf("%s template: %d bytes, differs from imports.WriteTemplate's", format, out.Len())
			}
			if _, err := imports.Read(t.Context(), &out, format, imports.Limits{}); err != nil {
				t.Errorf("%s template does not read back: %v", format, err)
			}
		}
		if err := run(ctx, []string{"import", "template", "quarterly_letter"}, getenv, &bytes.Buffer{}); err == nil {
			t.Error("an unknown kind's template was written")
		}
	})
}

// importLine is one per-document log line of a child import.
type importLine struct {
	Msg        string `json:"msg"`
	DocumentID string `json:"document_id"`
	Outcome    string `json:"outcome"`
	Version    int    `json:"version"`
	N          int    `json:"n"`
	Total      int    `json:"total"`
}

// startImport starts `fundsvc import --progress log FILE` on table in a
// process of its own and returns it with its stderr's lines as they come.
func startImport(t *testing.T, table, path string) (*exec.Cmd, <-chan importLine, *bytes.Buffer) {
	t.Helper()
	cmd := childProcess(t, table, []string{"FUNDSVC_TABLE", "FUNDSVC_DYNAMODB_ENDPOINT"}, "import", "--progress", "log", path)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan importLine, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var l importLine
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.DocumentID != "" {
				lines <- l
			}
		}
	}()
	return cmd, lines, &stdout
}

// TestImportKilledAndRunAgainWritesEachDocumentOnce: a real fundsvc import
// process is SIGKILLed after its 6th document's log line (of 16); the same import
// run again completes: every document exists at version 1, those the first
// run reported are unchanged, the rest created or, when the first run wrote
// them but was killed before it could report them (it writes
// imports.CommitParallel at a time and reports in file order), unchanged.
func TestImportKilledAndRunAgainWritesEachDocumentOnce(t *testing.T) {
	fe := fundtest.New(t)
	const documents, killAfter = 16, 6
	path, ids := callsFile(t, documents, 10)
	deadline := time.After(60 * time.Second)

	cmd, lines, _ := startImport(t, fe.Table, path)
	first := map[string]bool{}
	for len(first) < killAfter {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the first import ended after %d documents", len(first))
			}
			if l.Outcome != imports.Created || l.Version != 1 || l.Total != documents || l.DocumentID != ids[l.N-1] {
				t.Fatalf("first import: %+v, want document %d of %d created at version 1", l, l.N, documents)
			}
			first[l.DocumentID] = true
		case <-deadline:
			t.Fatalf("timed out waiting for the first import's document %d", killAfter)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for l := range lines { // lines written before the kill took effect
		first[l.DocumentID] = true
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("the first import was not killed: %v", err)
	}
	if len(first) == len(ids) {
		t.Fatal("the first import wrote every document before it was killed: nothing to resume")
	}

	cmd, lines, stdout := startImport(t, fe.Table, path)
	second := map[string]importLine{}
	for l := range lines {
		second[l.DocumentID] = l
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the second import: %v\n%s", err, stdout)
	}
	lost := 0 // written by the first run but not reported by it
	for _, id := range ids {
		l, ok := second[id]
		switch {
		case !ok:
			t.Errorf("%s: no line from the second import", id)
		case first[id] && l.Outcome != imports.Unchanged:
			t.Errorf("%s, written by the first import: %s in the second, want unchanged", id, l.Outcome)
		case !first[id] && l.Outcome == imports.Unchanged:
			lost++
		case !first[id] && l.Outcome != imports.Created:
			t.Errorf("%s, not reported by the first import: %s in the second, want created or unchanged", id, l.Outcome)
		}
		if ok && l.Version != 1 {
			t.Errorf("%s: version %d in the second import, want 1", id, l.Version)
		}
		if d, err := fe.Store.As(fund.Operator).LatestDocument(t.Context(), id); err != nil || d.Version != 1 {
			t.Errorf("%s: latest version %d (%v), want 1", id, d.Version, err)
		}
	}
	want := fmt.Sprintf("%d created, 0 restated, %d unchanged, 0 refused", len(ids)-len(first)-lost, len(first)+lost)
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("the second import's summary %q, want %q", stdout.String(), want)
	}
}
