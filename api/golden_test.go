package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current answers")

// goldenReads are the wire shapes fixed by golden files, on the demo dataset.
var goldenReads = []struct{ name, path string }{
	{"document_DOC001_overview", "/v1/documents/DOC001"},
	{"document_DOC002_overview", "/v1/documents/DOC002"},
	{"document_DOC001_position_POSITION_1", "/v1/documents/DOC001/positions/POSITION_1"},
	{"position_POSITION_1", "/v1/positions/POSITION_1"},
	{"document_DOC001_analysis", "/v1/documents/DOC001/analysis"},
	{"document_DOC001_capital", "/v1/documents/DOC001/capital"},
	{"document_DOC001_versions", "/v1/documents/DOC001/versions"},
	{"document_DOC001_version_1", "/v1/documents/DOC001/versions/1"},
	{"fund_FUND_A_documents", "/v1/funds/FUND_A/documents"},
	{"investor_INVESTOR_1_positions", "/v1/investors/INVESTOR_1/positions"},
	{"position_POSITION_1_summary", "/v1/positions/POSITION_1/summary"},
	{"position_POSITION_2_summary_2025-09-30", "/v1/positions/POSITION_2/summary?asOf=2025-09-30"},
	{"position_POSITION_1_cashflows", "/v1/positions/POSITION_1/cashflows"},
	{"investor_INVESTOR_1_summary", "/v1/investors/INVESTOR_1/summary"},
	{"document_DOC004_overview", "/v1/documents/DOC004"},
	{"document_DOC004_version_1", "/v1/documents/DOC004/versions/1"},
	{"position_POSITION_1_performance_2025-12-31", "/v1/positions/POSITION_1/performance?asOf=2025-12-31"},
	{"position_POSITION_1_performance_2025-11-15", "/v1/positions/POSITION_1/performance?asOf=2025-11-15"},
	{"position_POSITION_2_performance_2025-08-31", "/v1/positions/POSITION_2/performance?asOf=2025-08-31"},
	{"investor_INVESTOR_1_performance_2025-12-31", "/v1/investors/INVESTOR_1/performance?asOf=2025-12-31"},
	{"fund_FUND_A_performance_2025-12-31", "/v1/funds/FUND_A/performance?asOf=2025-12-31"},
	{"document_DOC004_reconciliation", "/v1/documents/DOC004/reconciliation"},
	{"position_POSITION_1_capital_accounts", "/v1/positions/POSITION_1?type=CapitalAccount"},
}

// TestGoldenWireShapes compares each read of the demo dataset with its
// golden file; go test -run TestGoldenWireShapes -update rewrites them.
func TestGoldenWireShapes(t *testing.T) {
	s := newServer(t, true)
	for _, g := range goldenReads {
		t.Run("GET "+g.path+" matches "+g.name, func(t *testing.T) {
			r := s.do(t, http.MethodGet, g.path, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d, want 200\n%s", r.Status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, r.Body, "", "  "); err != nil {
				t.Fatalf("body is not JSON: %v\n%s", err, r.Body)
			}
			got.WriteByte('\n')
			file := filepath.Join("testdata", g.name+".golden.json")
			if *update {
				if err := os.WriteFile(file, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("GET %s differs from %s (run with -update if the change is intended)\n%s", g.path, file, goldenDiff(want, got.Bytes()))
			}
		})
	}
}

// goldenDiff shows where got first departs from want, with some context.
func goldenDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	window := func(lines []string) string {
		lo, hi := max(i-3, 0), min(i+8, len(lines))
		var b strings.Builder
		for n := lo; n < hi; n++ {
			mark := "  "
			if n == i {
				mark = "> "
			}
			fmt.Fprintf(&b, "%s%4d %s\n", mark, n+1, lines[n])
		}
		return b.String()
	}
	return fmt.Sprintf("first difference at line %d\nwant:\n%sgot:\n%s", i+1, window(w), window(g))
}

// Typed views of the answers, for asserting the demo's figures directly.
type goldenItem struct {
	Type            string `json:"type"`
	DocumentID      string `json:"documentId"`
	DocumentVersion int    `json:"documentVersion"`
	PositionID      string `json:"positionId"`
	InvestorID      string `json:"investorId"`
	Amount          string `json:"amount"`
	Status          string `json:"status"`
	Date            string `json:"date"`
	Commitment      string `json:"commitment"`
}

type goldenActivity struct {
	Amount  string `json:"amount"`
	Status  string `json:"status"`
	Date    string `json:"date"`
	Version int    `json:"version"`
}

type goldenHeader struct {
	DocumentID    string `json:"documentId"`
	FundID        string `json:"fundId"`
	AsOf          string `json:"asOf"`
	Version       int    `json:"version"`
	PositionCount int    `json:"positionCount"`
	Status        string `json:"status"`
	CreatedAt     string `json:"createdAt"`
}

type goldenOverview struct {
	DocumentID string `json:"documentId"`
	Version    int    `json:"version"`
	Documents  struct {
		Latest     goldenHeader   `json:"latest"`
		Historical []goldenHeader `json:"historical"`
	} `json:"documents"`
	CapitalActivities struct {
		Latest     *goldenActivity  `json:"latest"`
		Historical []goldenActivity `json:"historical"`
	} `json:"capitalActivities"`
	Positions map[string]struct {
		InvestorID          string       `json:"investorId"`
		CapitalCalls        []goldenItem `json:"capitalCalls"`
		Distributions       []goldenItem `json:"distributions"`
		UnfundedCommitments []goldenItem `json:"unfundedCommitments"`
	} `json:"positions"`
	Next string `json:"next"`
}

func goldenGet[T any](t *testing.T, s *testServer, path string) T {
	t.Helper()
	r := s.do(t, http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: status %d\n%s", path, r.Status, r.Body)
	}
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, r.Body)
	}
	return v
}

// goldenOne returns the only item of items, failing unless there is exactly one.
func goldenOne(t *testing.T, what string, items []goldenItem) goldenItem {
	t.Helper()
	if len(items) != 1 {
		t.Fatalf("%s: %d items, want 1: %+v", what, len(items), items)
	}
	return items[0]
}

// TestDemoFigures asserts the demo dataset's figures from DESIGN.md, so the
// golden files are not merely whatever the code printed.
func TestDemoFigures(t *testing.T) {
	s := newServer(t, true)

	t.Run("DOC001 reports the design's calls, distributions and unfunded commitments", func(t *testing.T) {
		o := goldenGet[goldenOverview](t, s, "/v1/documents/DOC001")
		want := map[string]struct{ investor, call, dist, unfunded string }{
			"POSITION_1": {"INVESTOR_1", "500000.00", "75000.00", "1500000.00"},
			"POSITION_2": {"INVESTOR_2", "300000.00", "45000.00", "850000.00"},
		}
		if len(o.Positions) != len(want) {
			t.Fatalf("positions %v, want POSITION_1 and POSITION_2", o.Positions)
		}
		for id, w := range want {
			p := o.Positions[id]
			if p.InvestorID != w.investor {
				t.Errorf("%s investor = %q, want %q", id, p.InvestorID, w.investor)
			}
			if c := goldenOne(t, id+" calls", p.CapitalCalls); c.Amount != w.call || c.Status != "Pending" || c.DocumentVersion != 2 {
				t.Errorf("%s call = %+v, want %s Pending at version 2", id, c, w.call)
			}
			if d := goldenOne(t, id+" distributions", p.Distributions); d.Amount != w.dist || d.Status != "Completed" {
				t.Errorf("%s distribution = %+v, want %s Completed", id, d, w.dist)
			}
			if u := goldenOne(t, id+" unfunded", p.UnfundedCommitments); u.Amount != w.unfunded || u.Status != "Active" {
				t.Errorf("%s unfunded = %+v, want %s Active", id, u, w.unfunded)
			}
		}
		if o.Next != "" {
			t.Errorf("a two-position overview has a next page: %q", o.Next)
		}
	})

	t.Run("DOC001 has a latest document and one historical version of 2025-09-01", func(t *testing.T) {
		o := goldenGet[goldenOverview](t, s, "/v1/documents/DOC001")
		l := o.Documents.Latest
		if o.Version != 2 || l.Version != 2 || l.Status != "Active" || l.AsOf != "2025-09-01" || l.PositionCount != 2 || l.CreatedAt != "2026-01-02T03:04:05Z" {
			t.Errorf("latest = %+v (overview version %d), want version 2, Active, 2025-09-01, 2 positions, created at the fixed clock", l, o.Version)
		}
		if h := o.Documents.Historical; len(h) != 1 || h[0].Version != 1 || h[0].Status != "Historical" || h[0].AsOf != "2025-09-01" {
			t.Errorf("historical = %+v, want only version 1, Historical, of 2025-09-01", h)
		}
	})

	t.Run("DOC001's capital activity is 500000 Pending, and 450000 Completed of 2025-08-15 in its history", func(t *testing.T) {
		o := goldenGet[goldenOverview](t, s, "/v1/documents/DOC001")
		if a := o.CapitalActivities.Latest; a == nil || a.Amount != "500000.00" || a.Status != "Pending" {
			t.Errorf("latest capital activity = %+v, want 500000.00 Pending", a)
		}
		want := []goldenActivity{{Amount: "450000.00", Status: "Completed", Date: "2025-08-15", Version: 1}}
		if got := o.CapitalActivities.Historical; !reflect.DeepEqual(got, want) {
			t.Errorf("historical capital activities = %+v, want only %+v", got, want)
		}
	})

	t.Run("DOC002 reports the design's calls and its one distribution", func(t *testing.T) {
		o := goldenGet[goldenOverview](t, s, "/v1/documents/DOC002")
		p1, p2 := o.Positions["POSITION_1"], o.Positions["POSITION_2"]
		if c := goldenOne(t, "POSITION_1 calls", p1.CapitalCalls); c.Amount != "750000.00" || c.Status != "Completed" {
			t.Errorf("POSITION_1 call = %+v, want 750000.00 Completed", c)
		}
		if c := goldenOne(t, "POSITION_2 calls", p2.CapitalCalls); c.Amount != "400000.00" || c.Status != "Pending" {
			t.Errorf("POSITION_2 call = %+v, want 400000.00 Pending", c)
		}
		if d := goldenOne(t, "POSITION_1 distributions", p1.Distributions); d.Amount != "120000.00" || d.Status != "Pending" {
			t.Errorf("POSITION_1 distribution = %+v, want 120000.00 Pending", d)
		}
		if len(p2.Distributions) != 0 || len(p1.UnfundedCommitments) != 0 || len(p2.UnfundedCommitments) != 0 {
			t.Errorf("DOC002 reports items the design does not: %+v", o.Positions)
		}
		if o.CapitalActivities.Latest != nil || len(o.CapitalActivities.Historical) != 0 {
			t.Errorf("DOC002 has capital activity %+v %+v; the design gives it none", o.CapitalActivities.Latest, o.CapitalActivities.Historical)
		}
		if l := o.Documents.Latest; o.Version != 1 || l.Version != 1 || l.Status != "Active" || l.AsOf != "2025-10-01" {
			t.Errorf("DOC002 latest = %+v at overview version %d, want version 1, Active, 2025-10-01", l, o.Version)
		}
		if len(o.Documents.Historical) != 0 {
			t.Errorf("DOC002 has historical versions %+v; the design gives it none", o.Documents.Historical)
		}
	})

	t.Run("DOC001's analysis totals each position exactly", func(t *testing.T) {
		a := goldenGet[struct {
			Positions []struct {
				PositionID                                   string
				CapitalCalls, Distributions                  int
				UnfundedCommitments                          int
				TotalCalled, TotalDistributed, TotalUnfunded string
			} `json:"positions"`
		}](t, s, "/v1/documents/DOC001/analysis")
		want := map[string][3]string{"POSITION_1": {"500000.00", "75000.00", "1500000.00"}, "POSITION_2": {"300000.00", "45000.00", "850000.00"}}
		if len(a.Positions) != 2 {
			t.Fatalf("analysis of %d positions, want 2", len(a.Positions))
		}
		for _, p := range a.Positions {
			w := want[p.PositionID]
			if got := [3]string{p.TotalCalled, p.TotalDistributed, p.TotalUnfunded}; got != w || p.CapitalCalls != 1 || p.Distributions != 1 || p.UnfundedCommitments != 1 {
				t.Errorf("%s analysis = %+v, want totals %v and one item of each kind", p.PositionID, p, w)
			}
		}
	})

	t.Run("DOC001's capital holds its activity and both calls and nothing else", func(t *testing.T) {
		c := goldenGet[struct {
			CapitalActivities struct {
				Latest *goldenActivity `json:"latest"`
			} `json:"capitalActivities"`
			CapitalCalls []goldenItem `json:"capitalCalls"`
		}](t, s, "/v1/documents/DOC001/capital")
		if a := c.CapitalActivities.Latest; a == nil || a.Amount != "500000.00" {
			t.Errorf("latest capital activity = %+v, want 500000.00", a)
		}
		var got []string
		for _, it := range c.CapitalCalls {
			if it.Type != "CapitalCall" {
				t.Errorf("capital read returned a %s", it.Type)
			}
			got = append(got, it.PositionID+"="+it.Amount)
		}
		if strings.Join(got, ",") != "POSITION_1=500000.00,POSITION_2=300000.00" {
			t.Errorf("capital calls = %v", got)
		}
	})

	t.Run("POSITION_1 shows its items across the four documents", func(t *testing.T) {
		p := goldenGet[struct {
			Items []goldenItem `json:"items"`
		}](t, s, "/v1/positions/POSITION_1")
		var got []string
		for _, it := range p.Items {
			got = append(got, it.Type+" "+it.DocumentID+" "+it.Amount)
		}
		want := "CapitalAccount DOC003 440000.00,CapitalAccount DOC004 1110000.00," +
			"CapitalCall DOC001 500000.00,CapitalCall DOC002 750000.00,Distribution DOC001 75000.00,Distribution DOC002 120000.00,UnfundedCommitment DOC001 1500000.00"
		if strings.Join(got, ",") != want {
			t.Errorf("items = %v\nwant %s", got, want)
		}
	})

	t.Run("POSITION_1's performance, worked out by hand from the demo", func(t *testing.T) {
		type perf struct {
			NAV struct {
				Status, Value string
				Statement     struct {
					DocumentID string
					Version    int
				}
			} `json:"nav"`
			PaidIn, Distributed, DPI, RVPI, TVPI string
		}
		// On 2025-12-31: DOC004's restated ending NAV 1,110,000; paid in
		// 500,000 (DOC001, due 09-30) + 750,000 (DOC002, due 10-15);
		// distributed 75,000 + 120,000. DPI 195,000 / 1,250,000 = 0.156,
		// TVPI 1,305,000 / 1,250,000 = 1.044, RVPI 0.888.
		p := goldenGet[perf](t, s, "/v1/positions/POSITION_1/performance?asOf=2025-12-31")
		if p.NAV.Status != "statement" || p.NAV.Value != "1110000.00" || p.NAV.Statement.DocumentID != "DOC004" || p.NAV.Statement.Version != 2 ||
			p.PaidIn != "1250000.00" || p.Distributed != "195000.00" || p.DPI != "0.156000" || p.TVPI != "1.044000" || p.RVPI != "0.888000" {
			t.Errorf("2025-12-31: %+v", p)
		}
		// On 2025-11-15: DOC003's 440,000 rolled forward by the 750,000
		// called on 10-15 less the 120,000 distributed on 10-20.
		p = goldenGet[perf](t, s, "/v1/positions/POSITION_1/performance?asOf=2025-11-15")
		if p.NAV.Status != "rolled_forward" || p.NAV.Value != "1070000.00" || p.NAV.Statement.DocumentID != "DOC003" {
			t.Errorf("2025-11-15: %+v", p)
		}
	})

	t.Run("FUND_A lists DOC001 to DOC004 by date and INVESTOR_1 holds POSITION_1 only", func(t *testing.T) {
		docs := goldenGet[struct {
			Items []goldenHeader `json:"items"`
		}](t, s, "/v1/funds/FUND_A/documents")
		var ids []string
		for _, d := range docs.Items {
			ids = append(ids, d.DocumentID)
		}
		if strings.Join(ids, ",") != "DOC001,DOC003,DOC002,DOC004" {
			t.Errorf("FUND_A documents = %+v, want DOC001 (2025-09-01), DOC003 (09-30), DOC002 (10-01), DOC004 (12-31)", docs.Items)
		}
		inv := goldenGet[struct {
			Items []struct{ PositionID, FundID, InvestorID string } `json:"items"`
		}](t, s, "/v1/investors/INVESTOR_1/positions")
		if len(inv.Items) != 1 || inv.Items[0].PositionID != "POSITION_1" || inv.Items[0].FundID != "FUND_A" {
			t.Errorf("INVESTOR_1 positions = %+v, want POSITION_1 of FUND_A", inv.Items)
		}
	})
}
