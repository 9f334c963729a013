package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// bigPosition is what version n of the big document reports for a position.
type bigPosition struct {
	Investor, Call, Dist, Unfunded string // amounts as the API prints them; "" if absent
}

// bigSize is the positions of a big document: some 350 items, over three
// times DynamoDB's 100-item transaction limit, so staging takes many
// batches and the latest view several transactions.
const bigSize = 150

// bigVersion returns the request body of version n of the 150-position
// document BIG and what it reports per position. Each version drops the
// first 100 positions of the previous one, adds 100 new ones and changes
// every amount, so any mix of two versions is visible in every figure.
func bigVersion(n int) (map[string]any, map[string]bigPosition) { return bigVersionOf("BIG", n) }

// bigVersionOf is bigVersion of the big document doc. BIG is in fund
// FUND_BIG with positions P00000, P00001, …; any other doc is in fund
// FUND_<doc> with positions <doc>_P00000, …, and investors to match, so big
// documents of different IDs share no fund, position or investor.
func bigVersionOf(doc string, n int) (map[string]any, map[string]bigPosition) {
	want := map[string]bigPosition{}
	var ps []map[string]any
	for i := 0; i < bigSize; i++ {
		g := 100*(n-1) + i // global position number
		id := bigPositionID(doc, g)
		p := bigPosition{Investor: bigIDPrefix(doc) + fmt.Sprintf("I%05d", g),
			Call: fmt.Sprintf("%d.%02d", 1000*n+g, n), Unfunded: fmt.Sprintf("%d.00", 90000-n)}
		body := map[string]any{"positionId": id, "investorId": p.Investor,
			"capitalCall": map[string]any{"amount": p.Call}, "unfundedCommitment": map[string]any{"amount": p.Unfunded}}
		if i%3 == 0 {
			p.Dist = fmt.Sprintf("%d.50", n*10+g)
			body["distribution"] = map[string]any{"amount": p.Dist}
		}
		want[id] = p
		ps = append(ps, body)
	}
	return map[string]any{"fundId": bigFund(doc), "kind": "capital_account_statement", "title": fmt.Sprintf("Statement v%d", n),
		"asOf": fmt.Sprintf("2025-%02d-28", n), "capitalActivity": map[string]any{"amount": fmt.Sprintf("%d.00", 1000000*n)}, "positions": ps}, want
}

// bigFund is the fund of the big document doc.
func bigFund(doc string) string { return "FUND_" + doc }

// bigIDPrefix begins the position and investor IDs of the big document doc.
func bigIDPrefix(doc string) string {
	if doc == "BIG" {
		return ""
	}
	return doc + "_"
}

// bigPositionID is the ID of global position number g of the big document
// doc.
func bigPositionID(doc string, g int) string { return bigIDPrefix(doc) + fmt.Sprintf("P%05d", g) }

// TestInterruptedRestatementNeverMixesVersions restates a 150-position
// document (far over DynamoDB's 100-item transaction limit) and kills the
// write part-way at points before, at and after the commit flip. Each time,
// every endpoint shows one complete version — the previous one until the
// flip, the new one after it — and repeating the request completes the new
// version.
func TestInterruptedRestatementNeverMixesVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests several 150-position documents")
	}
	s := newServer(t, false)
	const doc = "BIG"
	put := func(n int) response {
		body, _ := bigVersion(n)
		return s.do(t, http.MethodPut, "/v1/documents/"+doc, body)
	}
	if r := put(1); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}

	// Learn the order of writes of one restatement: staging, then the one
	// transaction that flips the head, then the latest view.
	s.Counter.Reset()
	if r := put(2); r.Status != http.StatusOK {
		t.Fatalf("restate: %d %s", r.Status, r.Body)
	}
	var writes []string
	for _, op := range s.Counter.Ops() {
		if op != "GetItem" && op != "Query" && op != "BatchGetItem" {
			writes = append(writes, op)
		}
	}
	// The flip is the first transaction after staging's first batch write
	// (new position IDs are claimed in transactions before staging).
	firstBatch := slices.Index(writes, "BatchWriteItem")
	flip := -1
	for i := firstBatch + 1; firstBatch >= 0 && i < len(writes); i++ {
		if writes[i] == "TransactWriteItems" {
			flip = i
			break
		}
	}
	if flip < 10 || len(writes)-flip < 10 {
		t.Fatalf("unexpected write sequence (flip at %d of %d): %v", flip, len(writes), writes)
	}
	checkBig(t, s, doc, 2, 2)

	version := 2
	for _, k := range []int{0, flip / 2, flip, flip + 1, flip + 5, len(writes) - 1} {
		next := version + 1
		t.Run(fmt.Sprintf("killed after %d of %d writes (flip is write %d)", k, len(writes), flip+1), func(t *testing.T) {
			s.Faults.FailAfterWrites(k)
			r := put(next)
			s.Faults.Disarm()
			if r.Status != http.StatusInternalServerError || strings.Contains(string(r.Body), "injected") {
				t.Fatalf("interrupted write: want a plain 500, got %d %s", r.Status, r.Body)
			}
			committed := version
			if k > flip {
				committed = next
			}
			checkBig(t, s, doc, committed, version)

			r = put(next)
			if r.Status != http.StatusOK || r.Header.Get("ETag") != fmt.Sprintf(`"%d"`, next) {
				t.Fatalf("retry: want 200 with ETag %d, got %d %s %s", next, r.Status, r.Header.Get("ETag"), r.Body)
			}
			checkBig(t, s, doc, next, next)
		})
		version = next
	}

	checkEveryBigVersion(t, s, doc, version)
}

// checkEveryBigVersion asserts that versions 1 to last of the big document
// each read back whole, with their own amounts.
func checkEveryBigVersion(t *testing.T, s *testServer, doc string, last int) {
	t.Helper()
	for n := 1; n <= last; n++ {
		var v struct {
			Version   int `json:"version"`
			Positions []struct {
				PositionID  string `json:"positionId"`
				CapitalCall struct {
					Amount string `json:"amount"`
				} `json:"capitalCall"`
			} `json:"positions"`
		}
		getJSON(t, s, fmt.Sprintf("/v1/documents/%s/versions/%d", doc, n), &v)
		if v.Version != n || len(v.Positions) != bigSize {
			t.Fatalf("version %d: got version %d with %d positions", n, v.Version, len(v.Positions))
		}
		_, want := bigVersionOf(doc, n)
		for _, p := range v.Positions {
			if want[p.PositionID].Call != p.CapitalCall.Amount {
				t.Fatalf("version %d position %s: call %s, want %s", n, p.PositionID, p.CapitalCall.Amount, want[p.PositionID].Call)
			}
		}
	}
}

// checkBig asserts that every document-level endpoint shows exactly version
// committed, and that position-level reads (GSI2, exact key), which may lag
// during a rewrite, show for each position one whole version between oldest
// and committed.
func checkBig(t *testing.T, s *testServer, doc string, committed, oldest int) {
	t.Helper()
	_, want := bigVersionOf(doc, committed)

	var ov struct {
		Version   int `json:"version"`
		Positions map[string]struct {
			InvestorID    string                          `json:"investorId"`
			CapitalCalls  []struct{ Amount, Type string } `json:"capitalCalls"`
			Distributions []struct {
				Amount string `json:"amount"`
			} `json:"distributions"`
			UnfundedCommitments []struct {
				Amount string `json:"amount"`
			} `json:"unfundedCommitments"`
		} `json:"positions"`
	}
	getJSON(t, s, fmt.Sprintf("/v1/documents/%s?limit=1000", doc), &ov)
	if ov.Version != committed || len(ov.Positions) != len(want) {
		t.Fatalf("overview: version %d with %d positions, want version %d with %d", ov.Version, len(ov.Positions), committed, len(want))
	}
	for id, p := range ov.Positions {
		w, ok := want[id]
		got := bigPosition{Investor: p.InvestorID}
		if len(p.CapitalCalls) == 1 {
			got.Call = p.CapitalCalls[0].Amount
		}
		if len(p.Distributions) == 1 {
			got.Dist = p.Distributions[0].Amount
		}
		if len(p.UnfundedCommitments) == 1 {
			got.Unfunded = p.UnfundedCommitments[0].Amount
		}
		if !ok || got != w {
			t.Fatalf("overview v%d position %s: got %+v, want %+v", committed, id, got, w)
		}
	}

	var capital struct {
		Version           int `json:"version"`
		CapitalActivities struct {
			Latest struct {
				Amount string `json:"amount"`
			} `json:"latest"`
		} `json:"capitalActivities"`
		CapitalCalls []struct{ PositionID, Amount string } `json:"capitalCalls"`
	}
	getJSON(t, s, "/v1/documents/"+doc+"/capital", &capital)
	if capital.Version != committed || len(capital.CapitalCalls) != len(want) || capital.CapitalActivities.Latest.Amount != fmt.Sprintf("%d.00", 1000000*committed) {
		t.Fatalf("capital: version %d, %d calls, activity %s; want version %d", capital.Version, len(capital.CapitalCalls), capital.CapitalActivities.Latest.Amount, committed)
	}
	for _, c := range capital.CapitalCalls {
		if want[c.PositionID].Call != c.Amount {
			t.Fatalf("capital v%d: %s called %s, want %s", committed, c.PositionID, c.Amount, want[c.PositionID].Call)
		}
	}

	var analysis struct {
		Version   int `json:"version"`
		Positions []struct {
			PositionID, Called, Distributed string
		} `json:"positions"`
	}
	getJSON(t, s, "/v1/documents/"+doc+"/analysis", &analysis)
	if analysis.Version != committed || len(analysis.Positions) != len(want) {
		t.Fatalf("analysis: version %d with %d positions, want %d", analysis.Version, len(analysis.Positions), committed)
	}
	for _, a := range analysis.Positions {
		dist := want[a.PositionID].Dist
		if dist == "" {
			dist = "0.00"
		}
		if a.Called != want[a.PositionID].Call || a.Distributed != dist {
			t.Fatalf("analysis v%d %s: %+v, want %+v", committed, a.PositionID, a, want[a.PositionID])
		}
	}

	var latest struct{ Version int }
	getJSON(t, s, "/v1/documents/"+doc+"/versions/latest", &latest)
	var listed struct {
		Items []struct {
			DocumentID string
			Version    int
		} `json:"items"`
	}
	getJSON(t, s, "/v1/funds/"+bigFund(doc)+"/documents", &listed)
	if latest.Version != committed || len(listed.Items) != 1 || listed.Items[0].Version != committed {
		t.Fatalf("latest document v%d, fund index %+v; want v%d", latest.Version, listed.Items, committed)
	}

	// Positions dropped, kept and added across the versions under test.
	samples := []string{bigPositionID(doc, 100*(oldest-1)), bigPositionID(doc, 100*(committed-1)+3), bigPositionID(doc, 100*(committed-1)+bigSize-1)}
	for _, pos := range samples {
		var dp struct {
			Version int                             `json:"version"`
			Items   []struct{ Type, Amount string } `json:"items"`
		}
		r := s.do(t, http.MethodGet, "/v1/documents/"+doc+"/positions/"+pos, nil)
		w, present := want[pos]
		switch {
		case !present && r.Status == http.StatusNotFound:
		case present && r.Status == http.StatusOK:
			if err := json.Unmarshal(r.Body, &dp); err != nil || dp.Version != committed || dp.Items[0].Amount != w.Call {
				t.Fatalf("document position %s: %s; want v%d call %s", pos, r.Body, committed, w.Call)
			}
		default:
			t.Fatalf("document position %s: status %d, present in v%d: %v", pos, r.Status, committed, present)
		}

		var items struct {
			Items []struct {
				Type, DocumentID, Amount string
				DocumentVersion          int
			} `json:"items"`
		}
		r = s.do(t, http.MethodGet, "/v1/positions/"+pos, nil)
		if r.Status == http.StatusOK {
			if err := json.Unmarshal(r.Body, &items); err != nil {
				t.Fatal(err)
			}
		}
		seen := -1
		for _, it := range items.Items {
			if seen != -1 && it.DocumentVersion != seen {
				t.Fatalf("position %s mixes versions %d and %d of %s: %s", pos, seen, it.DocumentVersion, doc, r.Body)
			}
			seen = it.DocumentVersion
			_, wv := bigVersionOf(doc, it.DocumentVersion)
			if it.DocumentVersion < oldest || it.DocumentVersion > committed || (it.Type == "CapitalCall" && it.Amount != wv[pos].Call) {
				t.Fatalf("position %s: %+v not a version between %d and %d", pos, it, oldest, committed)
			}
		}
	}
}

func getJSON(t *testing.T, s *testServer, path string, v any) {
	t.Helper()
	r := s.do(t, http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
