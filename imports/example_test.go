package imports

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

var update = flag.Bool("update", false, "write docs/examples/ from the demo")

// nextQuarterExample is the tour's file (docs/tour.md): the demo's capital account
// statements of the first quarter of 2026.
var nextQuarterExample = filepath.Join("..", "docs", "examples", "demo-2026q1-statements.csv")

// nextQuarter is the demo's first quarter of 2026, rolled forward from its
// Q4 2025 statements (DOC007 at its latest version): each position's NAV
// and unfunded commitment carried over, the dividend of the tour's DOC008
// (paid 2026-02-20: 20,000.00, 10,000.00 and 5,000.00) as investment income
// distributed, and an unrealized gain in the positions' proportions (2 : 1
// : 0.5), no call.
func nextQuarter(t *testing.T) fund.Document {
	t.Helper()
	var q4 fund.Document
	for _, d := range demoDocuments(fund.KindCapitalAccountStatement) {
		if d.ID == "DOC007" {
			q4 = d
		}
	}
	if q4.ID == "" {
		t.Fatal("the demo has no DOC007")
	}
	dividend := map[string]string{"POSITION_1": "20000.00", "POSITION_2": "10000.00", "POSITION_3": "5000.00"}
	gain := map[string]string{"POSITION_1": "30000.00", "POSITION_2": "15000.00", "POSITION_3": "7500.00"}
	q1 := fund.Document{ID: "DOC009", DocumentFields: fund.DocumentFields{FundID: q4.FundID, Kind: fund.KindCapitalAccountStatement,
		Title: "Q1 2026 capital account statements", AsOf: fund.MustDate("2026-03-31"), Currency: q4.Currency}}
	for _, p := range q4.Positions {
		prev := p.CapitalAccount
		income, distributed, unrealized := fund.MustMoney(dividend[p.ID]), fund.MustMoney("-"+dividend[p.ID]), fund.MustMoney(gain[p.ID])
		ending := prev.EndingNAV.Add(unrealized)
		q1.Positions = append(q1.Positions, fund.Position{ID: p.ID, InvestorID: p.InvestorID, CapitalAccount: &fund.CapitalAccount{
			PeriodStart: fund.MustDate("2026-01-01"), BeginningNAV: prev.EndingNAV,
			Distributions: &distributed, InvestmentIncome: &income, NetUnrealizedGainLoss: &unrealized, EndingNAV: ending,
			TotalCommitment: prev.TotalCommitment, BeginningUnfundedCommitment: prev.EndingUnfundedCommitment,
			EndingUnfundedCommitment: prev.EndingUnfundedCommitment,
		}})
	}
	return q1
}

// TestTheNextQuarterExampleIsTheDemoRolledForward: the tour's
// docs/examples/demo-2026q1-statements.csv is nextQuarter written by
// WriteDocuments (go test ./imports -run NextQuarter -update writes it),
// and it reads back as that document with no problem: every statement
// rolls forward.
func TestTheNextQuarterExampleIsTheDemoRolledForward(t *testing.T) {
	d := nextQuarter(t)
	var b bytes.Buffer
	if err := WriteDocuments(&b, []fund.Document{d}, FormatCSV); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(nextQuarterExample, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(nextQuarterExample)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, b.Bytes()) {
		t.Fatalf("%s is not the demo's next quarter as WriteDocuments writes it (go test ./imports -run NextQuarter -update)", nextQuarterExample)
	}
	f, err := Read(t.Context(), bytes.NewReader(committed), FormatCSV, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Errors) > 0 || len(f.Documents) != 1 {
		t.Fatalf("%d documents, problems %v", len(f.Documents), f.Errors)
	}
	if got, want := canonical(t, f.Documents[0].Document), asPut(t, d); got != want {
		t.Errorf("the example reads back as\n%s\nwant\n%s", got, want)
	}
}
