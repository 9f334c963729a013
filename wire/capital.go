package wire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
)

// Transaction is one typed line of a capital call or a distribution, in a
// request and in answers (fund.Transaction).
type Transaction struct {
	Type           string `json:"type"`
	Amount         Amount `json:"amount"`
	UnfundedEffect string `json:"unfundedEffect,omitempty"`
}

// TransactionsOf renders typed lines.
func TransactionsOf(lines []fund.Transaction) []Transaction {
	if lines == nil {
		return nil
	}
	out := make([]Transaction, 0, len(lines))
	for _, l := range lines {
		out = append(out, Transaction{Type: string(l.Type), Amount: AmountOf(l.Amount), UnfundedEffect: string(l.Unfunded)})
	}
	return out
}

// toTransactions converts a request's typed lines, naming field in errors;
// fund's Validate checks the types, effects and sums.
func toTransactions(field string, in []Transaction) ([]fund.Transaction, error) {
	if in == nil {
		return nil, nil
	}
	if len(in) == 0 {
		return nil, fund.Invalid(field, "may not be empty; leave the field out instead")
	}
	out := make([]fund.Transaction, 0, len(in))
	for i, t := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		if t.Type == "" {
			return nil, fund.Invalid(f+".type", "is required")
		}
		m, err := required(f+".amount", t.Amount)
		if err != nil {
			return nil, err
		}
		out = append(out, fund.Transaction{Type: fund.TransactionType(t.Type), Amount: m, Unfunded: fund.UnfundedEffect(t.UnfundedEffect)})
	}
	return out, nil
}

// CapitalAccount is a position's capital account statement: fund's
// declaration, whose lines (fund.CapitalLines) are its members. In a
// request each line passes through an Amount, so that null is refused and
// a malformed amount is blamed on its full path.
type CapitalAccount struct {
	fund.CapitalAccount
	sent    map[string]Amount // lines as sent, when decoded
	period  *string
	unknown string // the first member that is neither the period nor a line
}

// CapitalAccountOf renders a statement.
func CapitalAccountOf(c *fund.CapitalAccount) *CapitalAccount {
	if c == nil {
		return nil
	}
	return &CapitalAccount{CapitalAccount: *c}
}

func (c *CapitalAccount) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return fund.Invalid("capitalAccount", "must be a JSON object")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return err
	}
	c.sent = map[string]Amount{}
	for name, raw := range members {
		if name == "periodStart" {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return fund.Invalid("capitalAccount.periodStart", "must be a JSON string (YYYY-MM-DD)")
			}
			c.period = &s
			continue
		}
		var line *fund.CapitalLine
		for _, l := range fund.CapitalLines() {
			if l.Name == name {
				line = &l
				break
			}
		}
		if line == nil {
			if c.unknown == "" || name < c.unknown {
				c.unknown = name
			}
			continue
		}
		var a Amount
		_ = a.UnmarshalJSON(raw) // never fails; its error waits for the conversion
		c.sent[name] = a
		if m := a.m; a.set && !a.null && a.err == nil {
			line.Set(&c.CapitalAccount, &m) // for a client that decodes a response
		}
	}
	if c.period != nil {
		c.PeriodStart, _ = fund.ParseDate(*c.period)
	}
	return nil
}

// toCapitalAccount converts a request's statement, naming field in errors:
// the period start, beginning NAV and ending NAV are required, every other
// line optional. fund's Validate checks signs and roll-forwards.
func (c *CapitalAccount) toCapitalAccount(field string) (*fund.CapitalAccount, error) {
	out := c.CapitalAccount
	if c.sent == nil { // built in Go, not decoded
		return &out, nil
	}
	if c.unknown != "" {
		return nil, fund.Invalid(field+"."+c.unknown, "is not a line of a capital account statement (see the CapitalAccountInput schema)")
	}
	if c.period == nil {
		return nil, fund.Invalid(field+".periodStart", "is required (YYYY-MM-DD)")
	}
	var err error
	if out.PeriodStart, err = ParseDate(field+".periodStart", *c.period, true); err != nil {
		return nil, err
	}
	for _, l := range fund.CapitalLines() {
		f := field + "." + l.Name
		var m *fund.Money
		if l.Role == "beginning" && l.Section == fund.SectionNAV || l.Role == "ending" && l.Section == fund.SectionNAV {
			v, err := required(f, c.sent[l.Name])
			if err != nil {
				return nil, err
			}
			m = &v
		} else if m, err = optional(f, c.sent[l.Name]); err != nil {
			return nil, err
		}
		l.Set(&out, m)
	}
	return &out, nil
}
