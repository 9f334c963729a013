package export_test

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/export"
	"github.com/shopspring/decimal"
)

// performanceDate is the date the SQL of docs/export.md values on.
const performanceDate = "2026-06-30"

// performanceDocuments are hand-worked positions, as a list of PUTs in
// order (a repeated ID is a restatement). On 2026-06-30:
//
//   - P1 (FUND_P, USD, INV_1): a completed call with legacy lines (900
//     investment, 100 fee), the Q1 statement restated (ending NAV 1,100 →
//     1,150), a stated call after it still pending (250 investment, 50 fee
//     outside commitment), a legacy distribution with a recallable part
//     (400), a stated one returning 50 of excess capital plus 30 of carry
//     (excluded), a pending call due after the date and a document dated
//     after it: called 1,000 + 300 + 700 = 2,000, paid-in 1,000 (the
//     pending calls are called and outstanding, 1,000, not paid in),
//     returned 50, distributed 400, NAV rolled forward by the cash after
//     the statement 1,150 − 50 − 400 = 700; the multiples divide by 1,000
//     − 50 = 950: DPI 400 ÷ 950 = 0.421053, TVPI 1,100 ÷ 950 = 1.157895,
//     RVPI 0.736842;
//   - P2 (INV_2): no statement; a completed call of 500 restated to 600,
//     and a pending one of 100: called 700, paid-in 600, outstanding 100;
//     distributed 120: no NAV, DPI 120 ÷ 600 = 0.2;
//   - P3 (INV_3): a stated call of 2,000 (200 outside commitment) and two
//     statements ending on the date (2,000 then, written later, 2,100): NAV
//     2,100 from the later one, TVPI 1.05;
//   - P4 (INV_4): only a document dated after the date: no paid-in, no NAV;
//     FUND_P's pool is therefore incomplete, its DPI 520 distributed ÷
//     (3,600 paid in − 50 returned) = 0.146479;
//   - P5 (FUND_Q, EUR, INV_1) and P6 (INV_6): statements at Q1 and later
//     flows: FUND_Q's pool has every NAV, 4,015.4322 + 3,000 = 7,015.4322,
//     rolled forward; TVPI 8,250 ÷ 7,500 = 1.1; DPI 1,234.5678 ÷ 7,500 =
//     0.164609;
//   - P7 (FUND_R, USD, INV_6): 0.0001 distributed on 40 paid in: DPI
//     0.0000025, an exact half, rounds away from zero to 0.000003.
var performanceDocuments = []map[string]any{
	doc("CALL_01", "FUND_P", "USD", "capital_call_notice", "2026-01-15",
		pos("P1", "INV_1", "capitalCall", map[string]any{"amount": "1000", "status": "completed", "dueDate": "2026-01-20", "investment": "900", "managementFee": "100"}),
		pos("P2", "INV_2", "capitalCall", map[string]any{"amount": "500", "status": "completed", "dueDate": "2026-01-20"}),
		pos("P3", "INV_3", "capitalCall", map[string]any{"amount": "2000", "status": "completed", "dueDate": "2026-01-20", "transactions": []map[string]any{
			{"transactionType": "investment", "amount": "1800"}, {"transactionType": "management_fee_outside_commitment", "amount": "200"}}})),
	// The restatement of CALL_01: P2's call is 600.
	doc("CALL_01", "FUND_P", "USD", "capital_call_notice", "2026-01-15",
		pos("P1", "INV_1", "capitalCall", map[string]any{"amount": "1000", "status": "completed", "dueDate": "2026-01-20", "investment": "900", "managementFee": "100"}),
		pos("P2", "INV_2", "capitalCall", map[string]any{"amount": "600", "status": "completed", "dueDate": "2026-01-20"}),
		pos("P3", "INV_3", "capitalCall", map[string]any{"amount": "2000", "status": "completed", "dueDate": "2026-01-20", "transactions": []map[string]any{
			{"transactionType": "investment", "amount": "1800"}, {"transactionType": "management_fee_outside_commitment", "amount": "200"}}})),
	doc("STMT_Q1", "FUND_P", "USD", "capital_account_statement", "2026-03-31",
		pos("P1", "INV_1", "capitalAccount", statement("2026-01-01", "0", "1000", "100", "1100")),
		pos("P3", "INV_3", "capitalAccount", statement("2026-01-01", "0", "2000", "-100", "1900"))),
	// The restatement of STMT_Q1: P1 gained 150, not 100.
	doc("STMT_Q1", "FUND_P", "USD", "capital_account_statement", "2026-03-31",
		pos("P1", "INV_1", "capitalAccount", statement("2026-01-01", "0", "1000", "150", "1150")),
		pos("P3", "INV_3", "capitalAccount", statement("2026-01-01", "0", "2000", "-100", "1900"))),
	doc("CALL_02", "FUND_P", "USD", "capital_call_notice", "2026-04-10",
		pos("P1", "INV_1", "capitalCall", map[string]any{"amount": "300", "status": "pending", "dueDate": "2026-04-20", "transactions": []map[string]any{
			{"transactionType": "investment", "amount": "250"}, {"transactionType": "management_fee_outside_commitment", "amount": "50"}}})),
	doc("DIST_01", "FUND_P", "USD", "distribution_notice", "2026-05-15",
		pos("P1", "INV_1", "distribution", map[string]any{"amount": "400", "status": "completed", "paymentDate": "2026-05-20",
			"returnOfCapital": "300", "realizedGain": "100", "recallable": "200"}),
		pos("P2", "INV_2", "distribution", map[string]any{"amount": "120", "status": "completed", "paymentDate": "2026-05-20"})),
	doc("DIST_02", "FUND_P", "USD", "distribution_notice", "2026-06-01",
		pos("P1", "INV_1", "distribution", map[string]any{"amount": "80", "status": "completed", "transactions": []map[string]any{
			{"transactionType": "return_of_excess_capital_investments", "amount": "50"}, {"transactionType": "carry", "amount": "30"}}})),
	doc("STMT_Q2A", "FUND_P", "USD", "capital_account_statement", "2026-06-30",
		pos("P3", "INV_3", "capitalAccount", statement("2026-04-01", "1900", "", "100", "2000"))),
	doc("STMT_Q2B", "FUND_P", "USD", "capital_account_statement", "2026-06-30",
		pos("P3", "INV_3", "capitalAccount", statement("2026-04-01", "1900", "", "200", "2100"))),
	doc("CALL_03", "FUND_P", "USD", "capital_call_notice", "2026-06-20",
		pos("P1", "INV_1", "capitalCall", map[string]any{"amount": "700", "status": "pending", "dueDate": "2026-07-15"}),
		pos("P2", "INV_2", "capitalCall", map[string]any{"amount": "100", "status": "pending", "dueDate": "2026-06-25"})),
	doc("LATE_01", "FUND_P", "USD", "capital_call_notice", "2026-09-30",
		pos("P1", "INV_1", "capitalCall", map[string]any{"amount": "999", "status": "pending", "dueDate": "2026-10-01"}),
		pos("P4", "INV_4", "capitalCall", map[string]any{"amount": "1000", "status": "pending", "dueDate": "2026-10-01"})),

	doc("Q_CALL", "FUND_Q", "EUR", "capital_call_notice", "2026-02-01",
		pos("P5", "INV_1", "capitalCall", map[string]any{"amount": "5000", "status": "completed", "dueDate": "2026-02-10"}),
		pos("P6", "INV_6", "capitalCall", map[string]any{"amount": "2500", "status": "completed", "dueDate": "2026-02-10"})),
	doc("Q_STMT", "FUND_Q", "EUR", "capital_account_statement", "2026-03-31",
		pos("P5", "INV_1", "capitalAccount", statement("2026-01-01", "0", "5000", "250", "5250")),
		pos("P6", "INV_6", "capitalAccount", statement("2026-01-01", "0", "2500", "500", "3000"))),
	doc("Q_DIST", "FUND_Q", "EUR", "distribution_notice", "2026-06-15",
		pos("P5", "INV_1", "distribution", map[string]any{"amount": "1234.5678", "status": "completed", "paymentDate": "2026-06-20"})),

	doc("R_CALL", "FUND_R", "USD", "capital_call_notice", "2026-02-01",
		pos("P7", "INV_6", "capitalCall", map[string]any{"amount": "40", "status": "completed", "dueDate": "2026-02-10"})),
	doc("R_DIST", "FUND_R", "USD", "distribution_notice", "2026-03-01",
		pos("P7", "INV_6", "distribution", map[string]any{"amount": "0.0001", "status": "completed"})),
}

func doc(id, fundID, currency, kind, asOf string, positions ...map[string]any) map[string]any {
	return map[string]any{"documentId": id, "fundId": fundID, "currency": currency, "kind": kind, "title": id,
		"asOf": asOf, "positions": positions}
}

func pos(id, investor, field string, item map[string]any) map[string]any {
	return map[string]any{"positionId": id, "investorId": investor, field: item}
}

// statement is a capital account whose A.1 rolls forward: beginning +
// contributions (none when "") + unrealized gain = ending.
func statement(periodStart, beginning, contributions, gain, ending string) map[string]any {
	s := map[string]any{"periodStart": periodStart, "beginningNav": beginning, "netUnrealizedGainLoss": gain, "endingNav": ending}
	if contributions != "" {
		s["contributions"] = contributions
	}
	return s
}

// performanceSQL is the Athena query of docs/export.md, "Performance in
// SQL", in its DuckDB form: the two changes the section names, each made
// exactly as often as the text says.
func performanceSQL(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Performance in SQL")
	if !ok {
		t.Fatal(`docs/export.md has no section "Performance in SQL"`)
	}
	_, query, ok := strings.Cut(section, "```sql\n")
	if !ok {
		t.Fatal(`docs/export.md, "Performance in SQL", has no sql block`)
	}
	query, _, _ = strings.Cut(query, "```")
	if want := fmt.Sprintf("SELECT DATE '%s' AS as_of_date, '%s' AS snapshot", performanceDate, snapshotDate); !strings.Contains(query, want) {
		t.Fatalf("the documented query's params are not %q", want)
	}
	for _, c := range []struct {
		athena, duckdb string
		n              int
	}{
		{"DECIMAL(38,0)", "HUGEINT", 3},
		{"/ (2 * nullif(p, 0))", "// (2 * nullif(p, 0))", 2},
	} {
		if n := strings.Count(query, c.athena); n != c.n {
			t.Fatalf("the documented query has %q %d times, want %d", c.athena, n, c.n)
		}
		query = strings.ReplaceAll(query, c.athena, c.duckdb)
	}
	return query
}

// TestPerformanceSQLMatchesAPI exports hand-worked positions (statements,
// one restated and two on one date, stated and legacy lines, flows after a
// statement and after the date, a position without a statement and one
// whose documents all come later), runs the SQL that docs/export.md shows
// over the Parquet files in DuckDB, and compares every figure, exactly,
// with what GET /v1/funds/{id}/performance and
// GET /v1/investors/{id}/performance answer for the same date: each
// position's NAV (status and value), paid-in, distributed, DPI, RVPI, TVPI
// and multiples status, and the same pooled per fund and per investor per
// currency, with the positions counted. A few figures are also checked
// against the hand-worked values above.
func TestPerformanceSQLMatchesAPI(t *testing.T) {
	s := newService(t)
	for _, d := range performanceDocuments {
		body := maps.Clone(d)
		delete(body, "documentId") // the path names it
		s.call(t, http.MethodPut, "/v1/documents/"+d["documentId"].(string), body, 0)
	}
	sink, dir := dirSink(t)
	runExport(t, s.Env, sink, nil)

	// What the documented SQL says, over views that carry the partition
	// column Athena's tables have.
	var setup []string
	for _, name := range export.Datasets {
		files := published(t, dir, "", name)
		if len(files) == 0 {
			continue // capital_activities: none here, and the query reads none
		}
		setup = append(setup, fmt.Sprintf("CREATE VIEW %s AS SELECT *, '%s' AS snapshot_date FROM read_parquet(['%s'], hive_partitioning = false)",
			name, snapshotDate, strings.Join(files, "', '")))
	}
	got := map[string]string{}
	fundPositions := map[string]int{}
	investors := map[string]bool{}
	for _, r := range duck(t, setup, performanceSQL(t)) {
		scope, id, currency := r[0], r[1], r[2]
		key := scope + " " + id + " " + currency + " "
		fields := []string{"positions", "positionsWithoutNav", "nav.status", "nav.value", "called", "paidIn", "outstanding", "paidInReturned", "distributed", "dpi", "rvpi", "tvpi", "multiplesStatus"}
		for i, f := range fields {
			if scope == "position" && i < 2 {
				continue // a position's answer has no counts
			}
			got[key+f] = r[3+i]
		}
		switch scope {
		case "fund":
			n, _ := decimal.NewFromString(r[3])
			fundPositions[id] += int(n.IntPart())
		case "investor":
			investors[id] = true
		}
	}

	// What the API answers.
	want := map[string]string{}
	text := func(v any) string {
		switch v := v.(type) {
		case nil:
			return "NULL"
		case string:
			return v
		case float64:
			return fmt.Sprint(v)
		}
		t.Fatalf("unexpected JSON value %v", v)
		return ""
	}
	figures := func(key string, m map[string]any, counts bool) {
		if counts {
			want[key+"positions"] = text(m["positions"])
			want[key+"positionsWithoutNav"] = text(m["positionsWithoutNav"])
		}
		nav := m["nav"].(map[string]any)
		want[key+"nav.status"], want[key+"nav.value"] = text(nav["status"]), text(nav["value"])
		for _, f := range []string{"called", "paidIn", "outstanding", "paidInReturned", "distributed", "dpi", "rvpi", "tvpi", "multiplesStatus"} {
			want[key+f] = text(m[f])
		}
	}
	for fundID, n := range fundPositions {
		a := s.call(t, http.MethodGet, "/v1/funds/"+fundID+"/performance?asOf="+performanceDate, nil, http.StatusOK)
		if got := int(a["positions"].(float64)); got != n {
			t.Errorf("fund %s: the API pools %d positions, the SQL %d", fundID, got, n)
		}
		for _, c := range a["currencies"].([]any) {
			c := c.(map[string]any)
			figures("fund "+fundID+" "+c["currency"].(string)+" ", c, true)
		}
	}
	for inv := range investors {
		a := s.call(t, http.MethodGet, "/v1/investors/"+inv+"/performance?limit=50&asOf="+performanceDate, nil, http.StatusOK)
		for _, p := range a["positions"].([]any) {
			p := p.(map[string]any)
			figures("position "+p["positionId"].(string)+" "+p["currency"].(string)+" ", p, false)
		}
		for _, c := range a["totals"].([]any) {
			c := c.(map[string]any)
			figures("investor "+inv+" "+c["currency"].(string)+" ", c, true)
		}
	}

	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if !sameFigure(got[k], want[k]) {
			t.Errorf("%s: the SQL says %q, the API %q", k, got[k], want[k])
		}
	}

	// The hand-worked figures, so the comparison cannot pass on two equal
	// mistakes.
	for k, v := range map[string]string{
		"position P1 USD nav.status": "rolled_forward", "position P1 USD nav.value": "700",
		"position P1 USD called": "2000", "position P1 USD paidIn": "1000", "position P1 USD outstanding": "1000",
		"position P1 USD paidInReturned": "50", "position P1 USD distributed": "400",
		"position P1 USD dpi": "0.421053", "position P1 USD rvpi": "0.736842", "position P1 USD tvpi": "1.157895",
		"position P2 USD nav.status": "no_statement", "position P2 USD dpi": "0.2", "position P2 USD multiplesStatus": "no_nav",
		"position P2 USD called": "700", "position P2 USD paidIn": "600", "position P2 USD outstanding": "100",
		"position P3 USD nav.status": "statement", "position P3 USD nav.value": "2100", "position P3 USD tvpi": "1.05",
		"position P4 USD paidIn": "0", "position P4 USD multiplesStatus": "no_paid_in",
		"fund FUND_P USD nav.status": "incomplete", "fund FUND_P USD positions": "4", "fund FUND_P USD positionsWithoutNav": "2",
		"fund FUND_P USD dpi": "0.146479", "fund FUND_P USD tvpi": "NULL",
		"fund FUND_Q EUR nav.status": "rolled_forward", "fund FUND_Q EUR nav.value": "7015.4322",
		"fund FUND_Q EUR dpi": "0.164609", "fund FUND_Q EUR tvpi": "1.1",
		"investor INV_1 EUR nav.value": "4015.4322", "investor INV_1 USD nav.value": "700",
		"position P7 USD dpi": "0.000003",
	} {
		if !sameFigure(got[k], v) {
			t.Errorf("%s: the SQL says %q, worked out by hand %s", k, got[k], v)
		}
	}
	if n := len(sorted); n < 100 {
		t.Errorf("only %d figures compared", n)
	}
	for _, inv := range []string{"INV_1", "INV_2", "INV_3", "INV_4", "INV_6"} {
		if !investors[inv] {
			t.Errorf("the SQL has no totals of %s", inv)
		}
	}
	if ids := slices.Sorted(func(yield func(string) bool) {
		for f := range fundPositions {
			if !yield(f) {
				return
			}
		}
	}); fmt.Sprint(ids) != "[FUND_P FUND_Q FUND_R]" {
		t.Errorf("the SQL pools funds %v", ids)
	}
}

// sameFigure compares two figures as exact decimals when both are numbers,
// else as text.
func sameFigure(a, b string) bool {
	x, errA := decimal.NewFromString(a)
	y, errB := decimal.NewFromString(b)
	if errA == nil && errB == nil {
		return x.Equal(y)
	}
	return a == b
}
