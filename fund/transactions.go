package fund

import (
	"fmt"
	"slices"
)

// Transaction lines classify a capital call's or a distribution's amount by
// the transaction types of ILPA's Performance Template v1.1 (granular
// methodology, with the sub-types of its "CF Table - Extended Version"),
// which ILPA's Capital Call & Distribution template of 2025 aligns notices
// with. Each line states its effect on the LP's unfunded commitment, as that
// template does instead of "recallable" and "inside/outside commitment"
// types. The types are declared once, in TransactionTypes; the API, the
// export, the summaries and the docs derive from that table.

// TransactionType names one ILPA transaction type, in snake_case.
type TransactionType string

// UnfundedEffect is what a transaction line does to the LP's unfunded
// commitment.
type UnfundedEffect string

const (
	// Reduces: the amount is drawn from the commitment (a call inside it).
	Reduces UnfundedEffect = "reduces"
	// Increases: the amount may be called again (a recallable
	// distribution, a return of excess capital called).
	Increases UnfundedEffect = "increases"
	// NoEffect: the commitment is untouched (a call outside commitment, a
	// permanent distribution).
	NoEffect UnfundedEffect = "none"
)

// NetTreatment is how ILPA's net TVPI and net IRR (with the impact of a
// fund-level subscription facility, the figures the Performance Template
// requires) count a transaction type (ilpa-reference §3.1).
type NetTreatment string

const (
	// PaidIn: in the TVPI denominator ("Den") and the IRR, as money paid in.
	PaidIn NetTreatment = "paid_in"
	// PaidInReturned: returned paid-in ("Den−"), netted against the
	// denominator, and in the IRR as money back.
	PaidInReturned NetTreatment = "paid_in_returned"
	// Distributed: in the TVPI numerator ("Num") and the IRR.
	Distributed NetTreatment = "distributed"
	// Excluded: in neither (carry and clawback, which net figures already
	// carry through the NAV and the distributions net of carry).
	Excluded NetTreatment = "excluded"
)

// The sides a transaction type belongs to.
const (
	OnCall         = "capitalCall"
	OnDistribution = "distribution"
)

// TransactionTypeInfo declares one transaction type.
type TransactionTypeInfo struct {
	Type TransactionType
	// On is OnCall or OnDistribution: the item whose amount it classifies.
	On string
	// Label is ILPA's label, exactly as the Performance Template's
	// mapping sheet writes it (without the leading spaces of sub-types).
	Label string
	// Number is the core type's number in the template's drop-down (1–20),
	// which sub-types share with their parent.
	Number int
	// Effect is the effect on unfunded commitment when a line states none;
	// Effects are the effects a line may state.
	Effect  UnfundedEffect
	Effects []UnfundedEffect
	Net     NetTreatment
}

// TransactionTypes lists every type a line may carry, calls first.
var TransactionTypes = []TransactionTypeInfo{
	{"investment", OnCall, "Capital Call: Investments", 1, Reduces, []UnfundedEffect{Reduces, NoEffect}, PaidIn},
	{"management_fee_inside_commitment", OnCall, "Capital Call: Management Fees (Inside Commitment)", 2, Reduces, []UnfundedEffect{Reduces}, PaidIn},
	{"management_fee_outside_commitment", OnCall, "Capital Call: Management Fees (Outside Commitment)", 2, NoEffect, []UnfundedEffect{NoEffect}, PaidIn},
	{"partnership_expenses", OnCall, "Capital Call: Partnership Expenses", 2, Reduces, []UnfundedEffect{Reduces, NoEffect}, PaidIn},
	{"placement_agent_fees", OnCall, "Capital Call: Placement Agent Fees", 2, Reduces, []UnfundedEffect{Reduces, NoEffect}, PaidIn},
	{"working_capital", OnCall, "Capital Call: Working Capital", 3, Reduces, []UnfundedEffect{Reduces, NoEffect}, PaidIn},
	{"subscription_facility_fees_interest", OnCall, "Capital Call: Fund-level Subscription Facility Fees/Interest", 7, Reduces, []UnfundedEffect{Reduces, NoEffect}, PaidIn},
	{"deemed_gp_contribution", OnCall, "Deemed GP Contribution from LPs", 10, NoEffect, []UnfundedEffect{Reduces, NoEffect}, PaidIn},

	{"income", OnDistribution, "Distribution: Permanent - Income/Dividends", 12, NoEffect, []UnfundedEffect{NoEffect}, Distributed},
	{"gain_loss", OnDistribution, "Distribution: Permanent - Gain / Loss", 12, NoEffect, []UnfundedEffect{NoEffect}, Distributed},
	{"return_of_capital", OnDistribution, "Distribution: Permanent - Return of Capital", 12, NoEffect, []UnfundedEffect{NoEffect}, Distributed},
	{"return_of_management_fees", OnDistribution, "Distribution: Permanent - Return of Management Fees", 12, NoEffect, []UnfundedEffect{NoEffect}, Distributed},
	{"return_of_partnership_expenses", OnDistribution, "Distribution: Permanent - Return of Partnership Expenses", 12, NoEffect, []UnfundedEffect{NoEffect}, Distributed},
	{"recallable_return_of_capital", OnDistribution, "Distribution: Recallable - Return of Capital", 13, Increases, []UnfundedEffect{Increases}, Distributed},
	{"recallable_return_of_management_fees", OnDistribution, "Distribution: Recallable - Return of Management Fees", 13, Increases, []UnfundedEffect{Increases}, Distributed},
	{"recallable_return_of_partnership_expenses", OnDistribution, "Distribution: Recallable - Return of Partnership Expenses", 13, Increases, []UnfundedEffect{Increases}, Distributed},
	{"return_of_excess_capital_investments", OnDistribution, "Distribution: Return of Excess Capital Called: Investments", 14, Increases, []UnfundedEffect{Increases, NoEffect}, PaidInReturned},
	{"return_of_excess_capital_fees_expenses", OnDistribution, "Distribution: Return of Excess Capital Called: Management Fees/Partnership Expenses", 15, Increases, []UnfundedEffect{Increases, NoEffect}, PaidInReturned},
	{"carry", OnDistribution, "Distribution: Carry", 11, NoEffect, []UnfundedEffect{NoEffect}, Excluded},
	{"clawback", OnDistribution, "Distribution: Clawback", 11, NoEffect, []UnfundedEffect{NoEffect}, Excluded},
}

// TransactionTypeOf returns the declaration of t.
func TransactionTypeOf(t TransactionType) (TransactionTypeInfo, bool) {
	for _, d := range TransactionTypes {
		if d.Type == t {
			return d, true
		}
	}
	return TransactionTypeInfo{}, false
}

// TransactionTypesOn lists the types of one side (OnCall or OnDistribution).
func TransactionTypesOn(on string) []TransactionType {
	var out []TransactionType
	for _, d := range TransactionTypes {
		if d.On == on {
			out = append(out, d.Type)
		}
	}
	return out
}

// Transaction is one typed line of a call's or a distribution's amount.
type Transaction struct {
	Type   TransactionType `json:"transactionType" doc:"The ILPA Performance Template v1.1 transaction type (granular methodology)."`
	Amount Money           `json:"amount" doc:"Required, not negative. The lines of an item must add up to its 'amount' exactly."`
	// Unfunded is the line's effect on unfunded commitment; empty in a
	// request means the type's default (Normalize fills it in).
	Unfunded UnfundedEffect `json:"unfundedEffect,omitempty" doc:"Optional: the type's default when absent. Calls may reduce unfunded commitment or leave it ('none': outside commitment); distributions may increase it (recallable, returns of excess capital called) or leave it."`
}

// Info returns the declaration of the line's type.
func (t Transaction) Info() TransactionTypeInfo {
	d, _ := TransactionTypeOf(t.Type)
	return d
}

// normalizeTransactions fills each line's default effect.
func normalizeTransactions(lines []Transaction) {
	for i := range lines {
		if lines[i].Unfunded == "" {
			lines[i].Unfunded = lines[i].Info().Effect
		}
	}
}

// checkTransactions validates the typed lines of an item (field names it)
// of side on: known types of that side, allowed effects, no negative
// amount, and a sum equal to the amount exactly.
func checkTransactions(field, on string, amount Money, lines []Transaction) error {
	if lines == nil {
		return nil
	}
	if len(lines) == 0 {
		return Invalid(field+".transactions", "may not be empty; leave the field out instead")
	}
	if len(lines) > MaxTransactions {
		return Invalid(field+".transactions", "an item holds at most %d transaction lines, got %d", MaxTransactions, len(lines))
	}
	var sum Money
	for i, l := range lines {
		f := fmt.Sprintf("%s.transactions[%d]", field, i)
		d, ok := TransactionTypeOf(l.Type)
		if !ok || d.On != on {
			return Invalid(f+".transactionType", "must be one of %v, got %q", TransactionTypesOn(on), l.Type)
		}
		if !slices.Contains(d.Effects, l.Unfunded) {
			return Invalid(f+".unfundedEffect", "a %s line's effect on unfunded commitment must be one of %v, got %q", l.Type, d.Effects, l.Unfunded)
		}
		if l.Amount.Sign() < 0 {
			return Invalid(f+".amount", "must not be negative, got %s", l.Amount)
		}
		sum = sum.Add(l.Amount)
	}
	if !sum.Equal(amount) {
		return Invalid(field+".transactions", "the transaction lines add up to %s, not the amount %s (difference %s)", sum, amount, sum.Sub(amount))
	}
	return nil
}

// MaxTransactions bounds the typed lines of one item.
const MaxTransactions = 32

// CallTransactions are the typed lines of a capital call: its stated
// transactions, or, when it states none, one line for each non-zero part of
// its line items, of the part's transaction type (docs/analytics.md,
// "Transaction types"); a call without lines is one investment line. Every
// derived line has its type's default effect.
func CallTransactions(amount Money, stated []Transaction, l CallLines) []Transaction {
	if len(stated) > 0 {
		return stated
	}
	var out []Transaction
	add := func(t TransactionType, m *Money) {
		if m != nil && m.Sign() != 0 {
			d, _ := TransactionTypeOf(t)
			out = append(out, Transaction{Type: t, Amount: *m, Unfunded: d.Effect})
		}
	}
	for _, line := range LinesOf(&l) {
		if line.Rule == "part" {
			add(line.Transaction, line.Get(&l))
		}
	}
	if out == nil {
		add("investment", &amount)
	}
	return out
}

// DistributionTransactions are the typed lines of a distribution: its
// stated transactions, or one line for each part of its line items, of the
// part's transaction type; a distribution without parts is one
// return_of_capital line. Then the recallable portion becomes
// recallable_return_of_capital, taken from the parts in declaration order
// (return of capital first, then gain, then income); withholding is a
// portion of the gross, not a type.
func DistributionTransactions(amount Money, stated []Transaction, l DistributionLines) []Transaction {
	if len(stated) > 0 {
		return stated
	}
	type part struct {
		t TransactionType
		m Money
	}
	var parts []part
	for _, line := range LinesOf(&l) {
		if m := line.Get(&l); line.Rule == "part" && m != nil {
			parts = append(parts, part{line.Transaction, *m})
		}
	}
	if parts == nil {
		parts = []part{{"return_of_capital", amount}}
	}
	var recall Money
	if l.Recallable != nil {
		recall = *l.Recallable
	}
	var out []Transaction
	if recall.Sign() > 0 {
		out = append(out, Transaction{Type: "recallable_return_of_capital", Amount: recall, Unfunded: Increases})
	}
	for _, p := range parts {
		take := p.m
		if recall.Cmp(take) < 0 {
			take = recall
		}
		recall = recall.Sub(take)
		if rest := p.m.Sub(take); rest.Sign() != 0 {
			out = append(out, Transaction{Type: p.t, Amount: rest, Unfunded: NoEffect})
		}
	}
	return out
}

// UnfundedChange is the lines' net effect on unfunded commitment: the
// amounts of lines that increase it less those of lines that reduce it.
func UnfundedChange(lines []Transaction) Money {
	var m Money
	for _, l := range lines {
		switch l.Unfunded {
		case Increases:
			m = m.Add(l.Amount)
		case Reduces:
			m = m.Sub(l.Amount)
		}
	}
	return m
}
