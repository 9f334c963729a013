package export_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/duckdbtest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// knownAtParams is the params line of the query of docs/export.md, "As
// known at an instant", which the test replaces with each case's.
var knownAtParams = regexp.MustCompile(`SELECT '[^']*' AS position_id, DATE '[^']*' AS as_of_date,\s*TIMESTAMP '[^']*' AS known_at, '[^']*' AS snapshot`)

// knownAtSQL is that query, for one position, date and instant.
func knownAtSQL(t *testing.T, position, asOf string, at time.Time) string {
	t.Helper()
	b, err := os.ReadFile("../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## As known at an instant")
	if !ok {
		t.Fatal(`docs/export.md has no section "As known at an instant"`)
	}
	_, query, ok := strings.Cut(section, "```sql\n")
	if !ok {
		t.Fatal(`docs/export.md, "As known at an instant", has no sql block`)
	}
	query, _, _ = strings.Cut(query, "```")
	if n := len(knownAtParams.FindAllString(query, -1)); n != 1 {
		t.Fatalf("the documented query has %d params lines like %s, want 1", n, knownAtParams)
	}
	params := fmt.Sprintf("SELECT '%s' AS position_id, DATE '%s' AS as_of_date, TIMESTAMP '%s' AS known_at, '%s' AS snapshot",
		position, asOf, at.UTC().Format("2006-01-02 15:04:05.000"), snapshotDate)
	return strings.TrimSuffix(strings.TrimSpace(knownAtParams.ReplaceAllLiteralString(query, params)), ";")
}

// knownAtSteps are the writes of TestKnownAtSQLMatchesTheAPIsAnswers, in
// order, one commit each: a PUT (a restatement when the ID was written
// before) or, with no body, a void. On 2026-06-30, P1's figures move so:
//
//  1. CALL_1 (as of 2026-01-15): P1 is called 1,000, paid 2026-01-20 (its
//     unfunded commitment 9,100 after it); P2 500, paid;
//  2. STMT_Q1 (as of 2026-03-31): P1's NAV is 1,100, rolled forward;
//  3. DIST_1 (as of 2026-05-15): P1 is distributed 400, P2 100, paid
//     2026-05-20: P1's NAV is 700;
//  4. STMT_Q1 restated: P1's NAV at Q1 is 1,150, so 750;
//  5. CALL_1 restated to as of 2026-07-15, P1 called 1,200: on
//     2026-06-30, CALL_1 counts at version 1 (the 1,000), on 2026-12-31 at
//     version 2;
//  6. DIST_1 restated without P1, and to as of 2026-07-10: P1's
//     distribution is withdrawn, at every date (its version 1, dated
//     before 2026-06-30, does not count for P1 either); P2's counts at
//     version 1 on 2026-06-30, at version 2 on 2026-12-31;
//  7. STMT_Q1 voided: P1 has no statement, so no NAV;
//  8. CALL_1 restated without P1: no document reports P1 any more (404).
var knownAtSteps = []struct {
	id   string
	body map[string]any // nil: void
}{
	{"CALL_1", knownAtDoc("capital_call_notice", "2026-01-15",
		withUnfunded(pos("P1", "INV_1", "capitalCall", map[string]any{"amount": "1000", "status": "completed", "dueDate": "2026-01-20", "investment": "900", "managementFee": "100"}), "9100"),
		pos("P2", "INV_2", "capitalCall", map[string]any{"amount": "500", "status": "completed", "dueDate": "2026-01-20"}))},
	{"STMT_Q1", knownAtDoc("capital_account_statement", "2026-03-31",
		pos("P1", "INV_1", "capitalAccount", statement("2026-01-01", "0", "1000", "100", "1100")))},
	{"DIST_1", knownAtDoc("distribution_notice", "2026-05-15",
		pos("P1", "INV_1", "distribution", map[string]any{"amount": "400", "status": "completed", "paymentDate": "2026-05-20", "returnOfCapital": "300", "realizedGain": "100"}),
		pos("P2", "INV_2", "distribution", map[string]any{"amount": "100", "status": "completed", "paymentDate": "2026-05-20"}))},
	{"STMT_Q1", knownAtDoc("capital_account_statement", "2026-03-31",
		pos("P1", "INV_1", "capitalAccount", statement("2026-01-01", "0", "1000", "150", "1150")))},
	{"CALL_1", knownAtDoc("capital_call_notice", "2026-07-15",
		withUnfunded(pos("P1", "INV_1", "capitalCall", map[string]any{"amount": "1200", "status": "completed", "dueDate": "2026-07-20"}), "8800"),
		pos("P2", "INV_2", "capitalCall", map[string]any{"amount": "500", "status": "completed", "dueDate": "2026-01-20"}))},
	{"DIST_1", knownAtDoc("distribution_notice", "2026-07-10",
		pos("P2", "INV_2", "distribution", map[string]any{"amount": "100", "status": "completed", "paymentDate": "2026-05-20"}))},
	{"STMT_Q1", nil},
	{"CALL_1", knownAtDoc("capital_call_notice", "2026-07-15",
		pos("P2", "INV_2", "capitalCall", map[string]any{"amount": "500", "status": "completed", "dueDate": "2026-01-20"}))},
}

// withUnfunded gives a position of a call its unfunded commitment after
// the call, of a commitment of 10,000.
func withUnfunded(p map[string]any, amount string) map[string]any {
	p["unfundedCommitment"] = map[string]any{"amount": amount, "commitment": "10000"}
	return p
}

func knownAtDoc(kind, asOf string, positions ...map[string]any) map[string]any {
	return map[string]any{"fundId": "FUND_K", "currency": "USD", "kind": kind, "title": kind, "asOf": asOf, "positions": positions}
}

// knownAtFigures are the figures compared: the SQL's columns, and the
// members of the API's answer they are.
var knownAtFigures = []struct{ column, member string }{
	{"document_count", "documents"},
	{"nav_status", "nav.status"},
	{"nav", "nav.value"},
	{"statement_document_id", "nav.statement.documentId"},
	{"statement_version", "nav.statement.version"},
	{"called", "called"},
	{"paid_in", "paidIn"},
	{"paid_in_returned", "paidInReturned"},
	{"distributed", "distributed"},
}

// TestKnownAtSQLMatchesTheAPIsAnswers writes documents through the API, one
// commit at a time (created, restated, one restatement moving a document's
// as-of date after the date asked, one removing a position from a
// document, and a void), the store's clock moved a minute before each, and
// after each commit records the API's performance answers for two
// positions on two dates (404 included: before the first commit, and after
// the last one removes P1), as they stand at the commit's instant, read
// from its event. After one export, the query of docs/export.md, "As known
// at an instant", run by DuckDB over the snapshot at each commit's instant
// answers exactly what the API answered right after that commit, and a
// millisecond before it what the API answered before it: the figures as
// decimal strings, the NAV's status and statement, the documents counted,
// and no row where the API answered 404; and so does the API itself, asked
// with knownAt set to the same instants. A few figures are also checked
// against the values worked out by hand above, and document_versions'
// instants against the event feed.
func TestKnownAtSQLMatchesTheAPIsAnswers(t *testing.T) {
	s := newService(t)
	clock := &storeClock{t: fundtest.Clock}
	s.Store.Now = clock.now
	// The positions and dates compared; the first also a millisecond
	// before each commit (each DuckDB query costs some 0.1 s).
	cases := []struct{ position, asOf string }{{"P1", "2026-06-30"}, {"P1", "2026-12-31"}, {"P2", "2026-06-30"}}

	// What the API answers now, by case: the figures, or nil for a 404.
	answer := func() []map[string]string {
		out := make([]map[string]string, len(cases))
		for i, c := range cases {
			a := s.callAny(t, http.MethodGet, "/v1/positions/"+c.position+"/performance?asOf="+c.asOf, nil)
			if a == nil {
				continue
			}
			m := map[string]string{}
			for _, f := range knownAtFigures {
				m[f.column] = memberText(t, a, f.member)
			}
			out[i] = m
		}
		return out
	}
	type recorded struct {
		at      time.Time
		answers []map[string]string
	}
	var steps []recorded
	before := answer() // before any commit: the positions do not exist
	for _, st := range knownAtSteps {
		clock.mu.Lock()
		clock.t = clock.t.Add(time.Minute)
		clock.mu.Unlock()
		var v map[string]any
		if st.body == nil {
			v = s.call(t, http.MethodDelete, "/v1/documents/"+st.id, nil, http.StatusOK, "If-Match", "*")
		} else {
			v = s.call(t, http.MethodPut, "/v1/documents/"+st.id, st.body, 0)
		}
		ev, err := s.Store.Event(context.Background(), st.id, int(v["version"].(float64)))
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, recorded{ev.Timestamp, answer()})
	}

	// The hand-worked figures, so that the comparison cannot pass on two
	// equal mistakes.
	for _, w := range []struct {
		step, c       int
		column, value string
	}{
		{1, 0, "nav", "1100"}, {2, 0, "nav", "700"}, {2, 0, "distributed", "400"}, {3, 0, "nav", "750"},
		{4, 0, "called", "1000"}, {4, 1, "called", "1200"}, {4, 1, "nav", "1950"}, {4, 0, "statement_version", "2"},
		{5, 0, "distributed", "0"}, {5, 0, "nav", "1150"}, {6, 0, "nav_status", "no_statement"}, {6, 0, "nav", "NULL"},
		{6, 2, "distributed", "100"}, {4, 2, "document_count", "2"},
	} {
		if got := steps[w.step].answers[w.c][w.column]; !sameFigure(got, w.value) {
			t.Errorf("after step %d, %v: the API answered %s %q, worked out by hand %s", w.step+1, cases[w.c], w.column, got, w.value)
		}
	}
	if before[0] != nil || steps[len(steps)-1].answers[0] != nil || steps[len(steps)-1].answers[2] == nil {
		t.Fatalf("P1 before the first commit %v and after the last %v: want 404s; P2 after the last: %v", before[0], steps[len(steps)-1].answers[0], steps[len(steps)-1].answers[2])
	}

	sink, dir := dirSink(t)
	runExport(t, s.Env, sink, nil)

	// Every instant's query at once: one DuckDB run.
	type query struct {
		label string
		c     int               // the case
		at    time.Time         // the instant asked
		want  map[string]string // nil: no row
	}
	var queries []query
	var sql []string
	add := func(label string, c int, at time.Time, want map[string]string) {
		queries = append(queries, query{label, c, at, want})
		sql = append(sql, fmt.Sprintf("SELECT '%s' AS query_label, * FROM (%s) AS q", label, knownAtSQL(t, cases[c].position, cases[c].asOf, at)))
	}
	for i, st := range steps {
		prev := before
		if i > 0 {
			prev = steps[i-1].answers
		}
		for c := range cases {
			add(fmt.Sprintf("step %d %v at its commit", i+1, cases[c]), c, st.at, st.answers[c])
		}
		add(fmt.Sprintf("step %d %v a millisecond before", i+1, cases[0]), 0, st.at.Add(-time.Millisecond), prev[0])
	}
	// Each dataset as a table of the files the snapshot publishes, with the
	// partition column Athena's tables have, read once.
	setup := []string{"SET TimeZone = 'UTC'"}
	for _, name := range []string{"document_versions", "capital_account_versions", "capital_call_versions", "distribution_versions",
		"transaction_line_versions", "unfunded_commitment_versions"} {
		files := published(t, dir, "", name)
		if len(files) == 0 {
			t.Fatalf("the snapshot has no %s", name)
		}
		setup = append(setup, fmt.Sprintf("CREATE TABLE %s AS SELECT *, '%s' AS snapshot_date FROM read_parquet(['%s'], hive_partitioning = false)",
			name, snapshotDate, strings.Join(files, "', '")))
	}
	res := duckResult(t, setup, strings.Join(sql, "\nUNION ALL BY NAME\n"))
	got := map[string]map[string]string{}
	for _, r := range res {
		label := r["query_label"]
		if got[label] != nil {
			t.Errorf("%s: the query answers more than one row", label)
		}
		got[label] = r
	}
	compared := 0
	for _, q := range queries {
		g := got[q.label]
		switch {
		case q.want == nil && g == nil:
		case q.want == nil:
			t.Errorf("%s: the API answered 404, the query %v", q.label, g)
		case g == nil:
			t.Errorf("%s: the query answers no row, the API %v", q.label, q.want)
		default:
			for _, f := range knownAtFigures {
				compared++
				if !sameFigure(g[f.column], q.want[f.column]) {
					t.Errorf("%s: %s: the query says %q, the API said %q", q.label, f.column, g[f.column], q.want[f.column])
				}
			}
		}
	}
	if compared < 150 {
		t.Errorf("only %d figures compared", compared)
	}

	// The API's own answers as known at the same instants are the ones it
	// gave then: what the query was compared with is what knownAt answers.
	for _, q := range queries {
		a := s.callAny(t, http.MethodGet, fmt.Sprintf("/v1/positions/%s/performance?asOf=%s&knownAt=%s",
			cases[q.c].position, cases[q.c].asOf, url.QueryEscape(q.at.UTC().Format(time.RFC3339Nano))), nil)
		switch {
		case a == nil && q.want == nil:
		case a == nil || q.want == nil:
			t.Errorf("%s: with knownAt the API answers %v, it answered %v then", q.label, a != nil, q.want)
		default:
			for _, f := range knownAtFigures {
				if got := memberText(t, a, f.member); !sameFigure(got, q.want[f.column]) {
					t.Errorf("%s: %s: with knownAt the API answers %q, it answered %q then", q.label, f.member, got, q.want[f.column])
				}
			}
		}
	}

	// document_versions' instants are the feed's.
	rows := duck(t, setup, `SELECT document_id, version::VARCHAR, strftime(committed_at, '%Y-%m-%dT%H:%M:%S.%gZ'),
		coalesce(strftime(superseded_at, '%Y-%m-%dT%H:%M:%S.%gZ'), 'NULL') FROM document_versions ORDER BY 1, 2`)
	commits := map[string]map[int]time.Time{}
	for _, st := range knownAtSteps {
		commits[st.id] = map[int]time.Time{}
	}
	for id := range commits {
		for v := 1; ; v++ {
			ev, err := s.Store.Event(context.Background(), id, v)
			if err != nil {
				break
			}
			commits[id][v] = ev.Timestamp
		}
	}
	n := 0
	for _, id := range slices.Sorted(maps.Keys(commits)) {
		n += len(commits[id])
	}
	if len(rows) != n {
		t.Fatalf("document_versions holds %d rows, the feed %d versions", len(rows), n)
	}
	for _, r := range rows {
		var v int
		fmt.Sscan(r[1], &v)
		want, next := commits[r[0]][v], "NULL"
		if at, ok := commits[r[0]][v+1]; ok {
			next = at.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		if r[2] != want.UTC().Format("2006-01-02T15:04:05.000Z") || r[3] != next {
			t.Errorf("%s version %d: committed at %s, superseded at %s; the feed says %s and %s", r[0], v, r[2], r[3], want, next)
		}
	}
}

// callAny sends a GET and decodes its answer; nil for a 404, which the
// routes answer for a position no document reports. Any other status but
// 200 fails t.
func (s *service) callAny(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	switch res.StatusCode {
	case http.StatusNotFound:
		return nil
	case http.StatusOK:
	default:
		t.Fatalf("%s %s: status %d: %s", method, path, res.StatusCode, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return out
}

// memberText is the member at a dotted path of a JSON answer as text:
// NULL when absent, an array's length.
func memberText(t *testing.T, a map[string]any, path string) string {
	t.Helper()
	var v any = a
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "NULL"
		}
		v = m[k]
	}
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	case float64:
		return fmt.Sprint(v)
	case []any:
		return fmt.Sprint(len(v))
	}
	t.Fatalf("%s: unexpected JSON value %v", path, v)
	return ""
}

// duckResult runs sql over setup and returns its rows by column name, NULL
// as "NULL".
func duckResult(t *testing.T, setup []string, sql string) []map[string]string {
	t.Helper()
	res, err := duckdbtest.Query(context.Background(), sql, setup...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]string, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = map[string]string{}
		for j, v := range r {
			out[i][res.Columns[j]] = "NULL"
			if v != nil {
				out[i][res.Columns[j]] = *v
			}
		}
	}
	return out
}
