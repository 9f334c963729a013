package export_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/s3test"
	"github.com/shopspring/decimal"
)

// money is a random amount with 0 to 4 decimal places.
func money(r *rand.Rand, max int64) fund.Money {
	scale := r.IntN(5)
	s := fmt.Sprint(r.Int64N(max))
	if scale > 0 {
		s += fmt.Sprintf(".%0*d", scale, r.IntN(pow10(scale)))
	}
	return fund.MustMoney(s)
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

// loadPortfolio writes, through the REST API, documents of three funds in
// two currencies: restatements that change amounts and drop positions,
// line items, stated transaction lines, recallable and withheld amounts,
// capital account statements, and one document with the largest and the
// most precise amounts the API accepts.
func loadPortfolio(t *testing.T, s *service, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	funds := []struct{ id, currency string }{{"FUND_A", "USD"}, {"FUND_B", "EUR"}, {"FUND_C", "USD"}}
	kinds := []string{"capital_call_notice", "distribution_notice", "capital_account_statement"}
	statuses := []string{"pending", "completed"}
	for d := 0; d < 12; d++ {
		f := funds[d%len(funds)]
		id := fmt.Sprintf("DOC_%02d", d)
		versions := 1 + []int{2, 0, 1, 0}[d%4]
		for v := 1; v <= versions; v++ {
			var positions []map[string]any
			for inv := 1; inv <= 5; inv++ {
				if r.IntN(4) == 0 {
					continue // not in this version
				}
				p := map[string]any{"positionId": fmt.Sprintf("P_%s_%d", f.id, inv), "investorId": fmt.Sprintf("INV_%d", inv)}
				if r.IntN(3) > 0 {
					call := map[string]any{"status": statuses[r.IntN(2)], "dueDate": "2026-03-31"}
					switch r.IntN(3) {
					case 0:
						a, b, c := money(r, 1e6), money(r, 1e4), money(r, 1e3)
						call["investment"], call["managementFee"], call["fundExpenses"] = a, b, c
						call["amount"] = fund.Sum(a, b, c)
					case 1:
						a, b := money(r, 1e6), money(r, 1e4)
						call["transactions"] = []map[string]any{{"transactionType": "investment", "amount": a},
							{"transactionType": "management_fee_outside_commitment", "amount": b}}
						call["amount"] = fund.Sum(a, b)
					default:
						call["amount"] = money(r, 1e7)
					}
					p["capitalCall"] = call
				}
				if r.IntN(2) == 0 {
					roc, gain, inc := money(r, 1e6), money(r, 1e5), money(r, 1e4)
					p["distribution"] = map[string]any{
						"amount": fund.Sum(roc, gain, inc), "status": statuses[r.IntN(2)], "paymentDate": "2026-02-15",
						"returnOfCapital": roc, "realizedGain": gain, "income": inc, "recallable": roc, "withholding": inc,
					}
				}
				if kinds[d%len(kinds)] == "capital_account_statement" && r.IntN(3) > 0 {
					begin, in, gain := money(r, 1e7), money(r, 1e6), money(r, 1e6)
					p["capitalAccount"] = map[string]any{"periodStart": fmt.Sprintf("2025-%02d-01", 1+d%12),
						"beginningNav": begin, "contributions": in, "netUnrealizedGainLoss": gain, "endingNav": fund.Sum(begin, in, gain)}
				}
				if r.IntN(3) > 0 || len(p) == 2 {
					u := money(r, 1e7)
					p["unfundedCommitment"] = map[string]any{"amount": u, "commitment": u.Add(money(r, 1e7))}
				}
				positions = append(positions, p)
			}
			if len(positions) == 0 {
				positions = append(positions, map[string]any{"positionId": fmt.Sprintf("P_%s_1", f.id), "investorId": "INV_1",
					"unfundedCommitment": map[string]any{"amount": "1.00"}})
			}
			body := map[string]any{
				"fundId": f.id, "kind": kinds[d%len(kinds)], "title": fmt.Sprintf("%s version %d", id, v),
				"asOf": fmt.Sprintf("2026-%02d-01", 1+d%12), "currency": f.currency, "positions": positions,
			}
			if d%2 == 0 {
				body["capitalActivity"] = map[string]any{"amount": money(r, 1e8), "status": "completed", "activityDate": "2026-01-15", "description": "activity"}
			}
			s.call(t, http.MethodPut, "/v1/documents/"+id, body, 0)
		}
	}
	// With an Idempotency-Key, so the table also holds an idempotency
	// record: not an entity, and one the export must pass over.
	s.call(t, http.MethodPut, "/v1/documents/DOC_EXTREME", extremeDocument, 0, "Idempotency-Key", fmt.Sprintf("extreme-%d", seed))
}

// extremeDocument holds the largest and the most precise amounts the API
// accepts, the most negative capital activity, the earliest and the latest
// dates, and the date that is 0 days from 1970-01-01.
var extremeDocument = map[string]any{
	"fundId": "FUND_A", "kind": "capital_account_statement", "title": "limits", "asOf": "1900-01-01", "currency": "USD",
	"capitalActivity": map[string]any{"amount": "-999999999999999.9999", "status": "pending", "activityDate": "2026-06-30", "description": "most negative"},
	"positions": []map[string]any{
		{"positionId": "P_FUND_A_1", "investorId": "INV_1",
			"capitalCall":        map[string]any{"amount": "999999999999999.9999", "status": "pending", "dueDate": "1970-01-01"},
			"distribution":       map[string]any{"amount": "0.0001", "status": "completed", "paymentDate": "9999-12-31", "withholding": "0.0001"},
			"unfundedCommitment": map[string]any{"amount": "999999999999999.9999", "commitment": "999999999999999.9999"}},
	},
}

// TestSnapshotMatchesAPI exports documents written through the REST API to
// MinIO, reads every object back, and has DuckDB, whose Parquet reader is
// not ours, total what was called, distributed and unfunded per fund and
// per investor and count each dataset: every figure must equal, exactly,
// what the REST API answers for the same data; the datasets of every
// version, what it answers of each version (/versions/{n}).
func TestSnapshotMatchesAPI(t *testing.T) {
	s := newService(t)
	loadPortfolio(t, s, 7)

	minio := s3test.Shared(t)
	client := minio.Client()
	bucket := minio.NewBucket(t)
	sink, err := export.OpenSink("s3://"+bucket+"/lake/fundsvc", client)
	if err != nil {
		t.Fatal(err)
	}
	m := runExport(t, s.Env, sink, func(c *export.Config) {
		c.TargetFileBytes = 1 << 10 // several files per dataset
		c.MemoryRows = 40           // and a sort that spills
		c.PageItems = 9             // and many Scan requests per segment
	})
	root := mirror(t, client, bucket)
	setup := views(t, root, bucket+"/lake/fundsvc")

	// What the REST API says.
	want := map[string]decimal.Decimal{}
	add := func(metric, key string, amount any) {
		d := decimal.RequireFromString(amount.(string))
		want[metric+"|"+key] = want[metric+"|"+key].Add(d)
	}
	count := func(dataset string, n int) {
		want["count|"+dataset] = want["count|"+dataset].Add(decimal.NewFromInt(int64(n)))
	}
	investors := map[string]bool{}
	for _, f := range []string{"FUND_A", "FUND_B", "FUND_C"} {
		docs := s.all(t, "/v1/funds/"+f+"/documents")
		count("documents", len(docs))
		count("positions", len(s.all(t, "/v1/funds/"+f+"/positions")))
		for _, doc := range docs {
			id := doc["documentId"].(string)
			versions := s.call(t, http.MethodGet, "/v1/documents/"+id+"/versions", nil, http.StatusOK)
			count("document_versions", len(versions["versions"].([]any)))
			// Every version's items, for the datasets of every version.
			for _, v := range versions["versions"].([]any) {
				n := int(v.(map[string]any)["version"].(float64))
				whole := s.call(t, http.MethodGet, fmt.Sprintf("/v1/documents/%s/versions/%d", id, n), nil, http.StatusOK)
				for _, p := range whole["positions"].([]any) {
					for field, dataset := range map[string]string{"capitalCall": "capital_call_versions", "distribution": "distribution_versions",
						"unfundedCommitment": "unfunded_commitment_versions", "capitalAccount": "capital_account_versions"} {
						it, ok := p.(map[string]any)[field].(map[string]any)
						if !ok {
							continue
						}
						count(dataset, 1)
						amount := it["amount"]
						if field == "capitalAccount" {
							amount = it["endingNav"]
						}
						add(dataset, f, amount)
						if field == "capitalCall" || field == "distribution" {
							add("transaction_line_versions", f, amount) // an item's typed lines add up to its amount
						}
					}
				}
				// The typed lines the version's calls and distributions state
				// or map to.
				var parsed struct {
					Positions []fund.Position `json:"positions"`
				}
				if b, err := json.Marshal(whole); err != nil || json.Unmarshal(b, &parsed) != nil {
					t.Fatalf("version %d of %s: %v", n, id, err)
				}
				for _, it := range (&fund.Document{Positions: parsed.Positions}).Items() {
					count("transaction_line_versions", len(it.TypedLines()))
				}
			}
			o := s.call(t, http.MethodGet, "/v1/documents/"+id+"?limit=1000&transactions=all", nil, http.StatusOK)
			if ca, ok := o["capitalActivities"].(map[string]any); ok && ca["latest"] != nil {
				count("capital_activities", 1)
				add("activity", f, ca["latest"].(map[string]any)["amount"])
			}
			for _, p := range o["positions"].(map[string]any) {
				p := p.(map[string]any)
				investors[p["investorId"].(string)] = true
				for field, metric := range map[string]string{"capitalCalls": "called", "distributions": "distributed", "unfundedCommitments": "unfunded", "capitalAccounts": "ending_nav"} {
					items, _ := p[field].([]any)
					count(map[string]string{"called": "capital_calls", "distributed": "distributions", "unfunded": "unfunded_commitments", "ending_nav": "capital_accounts"}[metric], len(items))
					for _, it := range items {
						add(metric+"_fund", f, it.(map[string]any)["amount"])
						// The typed lines the answer lists, stated or mapped.
						lines, _ := it.(map[string]any)["transactions"].([]any)
						count("transaction_lines", len(lines))
						for _, l := range lines {
							l := l.(map[string]any)
							add("typed_fund", f+" "+l["transactionType"].(string)+" "+l["unfundedEffect"].(string), l["amount"])
						}
					}
				}
			}
		}
	}
	// Every fund and every investor, as the API lists them.
	count("funds", len(s.all(t, "/v1/funds")))
	count("investors", len(s.all(t, "/v1/investors")))
	for inv := range investors {
		for _, pos := range s.all(t, "/v1/investors/"+inv+"/positions") {
			for _, it := range s.all(t, "/v1/positions/"+pos["positionId"].(string)) {
				metric := map[string]string{"capital_call": "called", "distribution": "distributed", "unfunded_commitment": "unfunded", "capital_account": "ending_nav"}[it["itemType"].(string)]
				add(metric+"_investor", inv, it["amount"])
			}
		}
	}

	// What DuckDB reads.
	var sql []string
	for _, name := range export.Datasets {
		sql = append(sql, fmt.Sprintf("SELECT 'count', '%s', count(*)::VARCHAR FROM %s", name, name))
	}
	for table, metric := range map[string]string{"capital_calls": "called", "distributions": "distributed", "unfunded_commitments": "unfunded"} {
		sql = append(sql,
			fmt.Sprintf("SELECT '%s_fund', fund_id, sum(amount)::VARCHAR FROM %s GROUP BY fund_id", metric, table),
			fmt.Sprintf("SELECT '%s_investor', investor_id, sum(amount)::VARCHAR FROM %s GROUP BY investor_id", metric, table))
	}
	sql = append(sql, "SELECT 'activity', fund_id, sum(amount)::VARCHAR FROM capital_activities GROUP BY fund_id",
		"SELECT 'ending_nav_fund', fund_id, sum(ending_nav)::VARCHAR FROM capital_accounts GROUP BY fund_id",
		"SELECT 'ending_nav_investor', investor_id, sum(ending_nav)::VARCHAR FROM capital_accounts GROUP BY investor_id",
		"SELECT 'typed_fund', fund_id || ' ' || transaction_type || ' ' || unfunded_effect, sum(amount)::VARCHAR FROM transaction_lines GROUP BY ALL",
		"SELECT 'capital_account_versions', fund_id, sum(ending_nav)::VARCHAR FROM capital_account_versions GROUP BY fund_id")
	for _, table := range []string{"capital_call_versions", "distribution_versions", "unfunded_commitment_versions", "transaction_line_versions"} {
		sql = append(sql, fmt.Sprintf("SELECT '%s', fund_id, sum(amount)::VARCHAR FROM %s GROUP BY fund_id", table, table))
	}
	got := map[string]decimal.Decimal{}
	for _, row := range duck(t, setup, strings.Join(sql, " UNION ALL ")) {
		got[row[0]+"|"+row[1]] = decimal.RequireFromString(row[2])
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
		if !want[k].Equal(got[k]) {
			t.Errorf("%s: DuckDB reads %s, the API says %s", k, got[k], want[k])
		}
	}
	for _, k := range []string{"count|capital_accounts", "count|transaction_lines", "typed_fund|FUND_A management_fee_outside_commitment none", "typed_fund|FUND_B recallable_return_of_capital increases",
		"count|capital_account_versions", "count|transaction_line_versions"} {
		if want[k].Sign() == 0 {
			t.Errorf("%s: the portfolio has none, so nothing of it was compared", k)
		}
	}
	if len(sorted) < 30 {
		t.Fatalf("only %d figures compared: %v", len(sorted), sorted)
	}
	for _, name := range export.Datasets {
		d, _ := m.Dataset(name)
		if w := want["count|"+name]; w.IntPart() != d.Rows {
			t.Errorf("manifest: %s has %d rows, want %s", name, d.Rows, w)
		}
	}
	if d, _ := m.Dataset("capital_calls"); len(d.Files) < 2 {
		t.Errorf("capital_calls: %d files; a 1 KiB target should have rolled", len(d.Files))
	}
}

// TestLimitsExportExactly reads back, through DuckDB, the largest and the
// most precise amounts the API accepts, and its extreme dates, through a
// sort that spills every row to disk.
func TestLimitsExportExactly(t *testing.T) {
	s := newService(t)
	s.call(t, http.MethodPut, "/v1/documents/DOC_EXTREME", extremeDocument, http.StatusCreated)
	sink, dir := dirSink(t)
	runExport(t, s.Env, sink, func(c *export.Config) { c.MemoryRows = 1 })
	got := duck(t, views(t, dir, ""), `
		SELECT 'call', amount::VARCHAR, typeof(amount) FROM capital_calls
		UNION ALL SELECT 'distribution', amount::VARCHAR, typeof(amount) FROM distributions
		UNION ALL SELECT 'withholding', withholding::VARCHAR, typeof(withholding) FROM distributions
		UNION ALL SELECT 'unfunded', amount::VARCHAR, typeof(amount) FROM unfunded_commitments
		UNION ALL SELECT 'commitment', commitment::VARCHAR, typeof(commitment) FROM unfunded_commitments
		UNION ALL SELECT 'activity', amount::VARCHAR, typeof(amount) FROM capital_activities
		UNION ALL SELECT 'as of', as_of::VARCHAR, typeof(as_of) FROM documents
		UNION ALL SELECT 'due date', due_date::VARCHAR, typeof(due_date) FROM capital_calls
		UNION ALL SELECT 'payment date', payment_date::VARCHAR, typeof(payment_date) FROM distributions
		UNION ALL SELECT 'first as of', first_as_of::VARCHAR, typeof(first_as_of) FROM positions
		UNION ALL SELECT 'last as of', last_as_of::VARCHAR, typeof(last_as_of) FROM positions
		ORDER BY 1`)
	want := [][]string{
		{"activity", "-999999999999999.9999", "DECIMAL(19,4)"},
		{"as of", "1900-01-01", "DATE"},
		{"call", "999999999999999.9999", "DECIMAL(19,4)"},
		{"commitment", "999999999999999.9999", "DECIMAL(19,4)"},
		{"distribution", "0.0001", "DECIMAL(19,4)"},
		{"due date", "1970-01-01", "DATE"},
		{"first as of", "1900-01-01", "DATE"},
		{"last as of", "1900-01-01", "DATE"},
		{"payment date", "9999-12-31", "DATE"},
		{"unfunded", "999999999999999.9999", "DECIMAL(19,4)"},
		{"withholding", "0.0001", "DECIMAL(19,4)"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read back\n%v\nwant\n%v", got, want)
	}
}
