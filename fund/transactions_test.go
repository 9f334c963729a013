package fund

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

func money(s string) *Money { m := MustMoney(s); return &m }

func TestLegacyLinesMapOntoTransactionTypes(t *testing.T) {
	cases := []struct {
		name string
		got  []Transaction
		want string
	}{
		{"call without lines", CallTransactions(MustMoney("100"), nil, CallLines{}), "investment 100.00 reduces"},
		{"call lines", CallTransactions(MustMoney("100"), nil, CallLines{Investment: money("70"), ManagementFee: money("20"), FundExpenses: money("10")}),
			"investment 70.00 reduces; management_fee_inside_commitment 20.00 reduces; partnership_expenses 10.00 reduces"},
		{"stated lines win", CallTransactions(MustMoney("100"), []Transaction{{"management_fee_outside_commitment", MustMoney("100"), NoEffect}}, CallLines{Investment: money("100")}),
			"management_fee_outside_commitment 100.00 none"},
		{"distribution without parts", DistributionTransactions(MustMoney("50"), nil, DistributionLines{}), "return_of_capital 50.00 none"},
		{"recallable from return of capital first", DistributionTransactions(MustMoney("100"), nil,
			DistributionLines{ReturnOfCapital: money("30"), RealizedGain: money("50"), Income: money("20"), Recallable: money("40")}),
			"recallable_return_of_capital 40.00 increases; gain_loss 40.00 none; income 20.00 none"},
		{"recallable of a distribution without parts", DistributionTransactions(MustMoney("100"), nil, DistributionLines{Recallable: money("25"), Withholding: money("5")}),
			"recallable_return_of_capital 25.00 increases; return_of_capital 75.00 none"},
	}
	for _, c := range cases {
		var parts []string
		for _, l := range c.got {
			parts = append(parts, string(l.Type)+" "+l.Amount.String()+" "+string(l.Unfunded))
		}
		if got := strings.Join(parts, "; "); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDerivedLinesAddUpAndAreValid(t *testing.T) {
	lines := DistributionTransactions(MustMoney("100"), nil, DistributionLines{ReturnOfCapital: money("10"), Income: money("90"), Recallable: money("60")})
	if err := checkTransactions("d", OnDistribution, MustMoney("100"), lines); err != nil {
		t.Fatal(err)
	}
	if got := UnfundedChange(lines); !got.Equal(MustMoney("60")) {
		t.Fatalf("unfunded change %s, want 60", got)
	}
}

func TestTransactionLinesAreChecked(t *testing.T) {
	ok := []Transaction{{"investment", MustMoney("60"), Reduces}, {"management_fee_outside_commitment", MustMoney("40"), NoEffect}}
	cases := []struct {
		on    string
		lines []Transaction
		field string
		msg   string
	}{
		{OnCall, ok, "", ""},
		{OnCall, []Transaction{{"investment", MustMoney("60"), Reduces}}, "c.transactions", "add up to 60.00, not the amount 100.00 (difference -40.00)"},
		{OnCall, []Transaction{{"income", MustMoney("100"), NoEffect}}, "c.transactions[0].transactionType", "must be one of"},
		{OnCall, []Transaction{{"nonsense", MustMoney("100"), NoEffect}}, "c.transactions[0].transactionType", "must be one of"},
		{OnCall, []Transaction{{"investment", MustMoney("100"), Increases}}, "c.transactions[0].unfundedEffect", "must be one of [reduces none]"},
		{OnCall, []Transaction{{"investment", MustMoney("110"), Reduces}, {"working_capital", MustMoney("-10"), Reduces}}, "c.transactions[1].amount", "must not be negative"},
		{OnDistribution, []Transaction{{"recallable_return_of_capital", MustMoney("100"), NoEffect}}, "c.transactions[0].unfundedEffect", "[increases]"},
	}
	for i, c := range cases {
		err := checkTransactions("c", c.on, MustMoney("100"), c.lines)
		if c.field == "" {
			if err != nil {
				t.Errorf("%d: %v", i, err)
			}
			continue
		}
		e, _ := err.(*Error)
		if e == nil || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%d: got %v, want %s: …%s…", i, err, c.field, c.msg)
		}
	}
}

func TestEveryTransactionTypeIsWellDeclared(t *testing.T) {
	seen := map[TransactionType]bool{}
	for _, d := range TransactionTypes {
		if seen[d.Type] || d.Label == "" || d.Number < 1 || d.Number > 20 || (d.On != OnCall && d.On != OnDistribution) {
			t.Errorf("bad declaration %+v", d)
		}
		seen[d.Type] = true
		if !contains(d.Effects, d.Effect) {
			t.Errorf("%s: default effect %s not allowed", d.Type, d.Effect)
		}
		if d.On == OnCall && (contains(d.Effects, Increases) || d.Net != PaidIn) {
			t.Errorf("%s: a call line neither increases unfunded nor is anything but paid-in", d.Type)
		}
		if d.On == OnDistribution && contains(d.Effects, Reduces) {
			t.Errorf("%s: a distribution line never reduces unfunded", d.Type)
		}
	}
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// The types table in docs/analytics.md is the declaration's, row by row.
func TestTheDocsListEveryTransactionType(t *testing.T) {
	b, err := os.ReadFile("../docs/analytics.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Transaction types")
	if !ok {
		t.Fatal("docs/analytics.md has no transaction types section")
	}
	side := map[string]string{OnCall: "call", OnDistribution: "distribution"}
	net := map[NetTreatment]string{PaidIn: "paid in (Den)", PaidInReturned: "returned paid-in (Den−)", Distributed: "distributed (Num)", Excluded: "excluded"}
	for _, d := range TransactionTypes {
		var effects []string
		for _, e := range d.Effects {
			effects = append(effects, string(e))
		}
		row := fmt.Sprintf("| `%s` | %s | %s (%d) | %s | %s | %s |", d.Type, side[d.On], d.Label, d.Number, d.Effect, strings.Join(effects, ", "), net[d.Net])
		if !strings.Contains(section, row+"\n") {
			t.Errorf("docs/analytics.md lacks the row\n%s", row)
		}
	}
	for _, side := range []struct {
		name  string
		lines any
	}{{"call", CallLines{}}, {"distribution", DistributionLines{}}} {
		for _, l := range LinesOf(side.lines) {
			row := fmt.Sprintf("| %s `%s` | `%s` |", side.name, l.Name, l.Transaction)
			if l.Rule == "part" && !strings.Contains(section, row+"\n") {
				t.Errorf("docs/analytics.md lacks the row\n%s", row)
			}
		}
	}
}

// A line item that splits an amount reaches the typed lines that paid-in,
// unfunded, net IRR and the transaction_lines dataset count: every part line
// of a call or a distribution, set among the others, shows up as a typed
// line of its own amount and of its side, and the typed lines add up to the
// amount.
func TestEveryPartLineHasATypedLine(t *testing.T) {
	sides := []struct {
		on     string
		lines  any
		derive func(Money, any) []Transaction
	}{
		{OnCall, &CallLines{}, func(m Money, l any) []Transaction { return CallTransactions(m, nil, *l.(*CallLines)) }},
		{OnDistribution, &DistributionLines{}, func(m Money, l any) []Transaction {
			return DistributionTransactions(m, nil, *l.(*DistributionLines))
		}},
	}
	for _, s := range sides {
		var amount Money
		for i, l := range LinesOf(s.lines) {
			if l.Rule == "part" {
				m := MustMoney(fmt.Sprint(i + 1))
				l.Set(s.lines, &m)
				amount = amount.Add(m)
			}
		}
		derived := s.derive(amount, s.lines)
		if err := checkTransactions(s.on, s.on, amount, derived); err != nil {
			t.Errorf("%s: the typed lines of every part line: %v", s.on, err)
		}
		for _, l := range LinesOf(s.lines) {
			if l.Rule != "part" {
				continue
			}
			i := slices.IndexFunc(derived, func(x Transaction) bool { return x.Amount.Equal(*l.Get(s.lines)) })
			if i < 0 {
				t.Errorf("%s.%s has no typed line: give it a transaction type", s.on, l.Name)
			} else if d, ok := TransactionTypeOf(derived[i].Type); !ok || d.On != s.on {
				t.Errorf("%s.%s is typed %q, no transaction type of its side", s.on, l.Name, derived[i].Type)
			}
		}
	}
}
