package fund

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"
)

// The accepted range and scale of every amount, defined once. An amount has at
// most MoneyMaxScale digits after the point and at most MoneyMaxIntegerDigits
// before it, so every accepted value fits a DECIMAL(19,4) column exactly.
const (
	MoneyMaxScale         = 4
	MoneyMaxIntegerDigits = 15
)

// moneyPattern accepts plain decimal notation only: no exponent, no leading
// zeros, no plus sign, no thousands separators.
var moneyPattern = regexp.MustCompile(fmt.Sprintf(`^-?(0|[1-9][0-9]{0,%d})(\.[0-9]{1,%d})?$`, MoneyMaxIntegerDigits-1, MoneyMaxScale))

// Money is an exact decimal amount. It is a number (N) in DynamoDB and a
// string in JSON ("500000.00"); it is never a float.
type Money struct{ d decimal.Decimal }

// ParseMoney parses s as an amount within the accepted range and scale.
// It returns EINVALID with a message naming the broken rule.
func ParseMoney(s string) (Money, error) {
	if !moneyPattern.MatchString(s) {
		return Money{}, moneyError(s)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Money{}, moneyError(s)
	}
	return Money{d: d}, nil
}

func moneyError(s string) *Error {
	const rule = "an amount is a decimal with at most %d digits before the point and %d after it, written without exponent or separators"
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return Errorf(EINVALID, "%q is not a valid amount: "+rule, s, MoneyMaxIntegerDigits, MoneyMaxScale)
}

// MustMoney parses s and panics if it is not a valid amount. For constants in
// code and tests only.
func MustMoney(s string) Money {
	m, err := ParseMoney(s)
	if err != nil {
		panic(err)
	}
	return m
}

// Decimal returns the exact value.
func (m Money) Decimal() decimal.Decimal { return m.d }

// Add returns m + o, exactly.
func (m Money) Add(o Money) Money { return Money{d: m.d.Add(o.d)} }

// Sub returns m - o, exactly.
func (m Money) Sub(o Money) Money { return Money{d: m.d.Sub(o.d)} }

// Equal reports whether m and o are the same amount (500000 equals 500000.00).
func (m Money) Equal(o Money) bool { return m.d.Equal(o.d) }

// Cmp compares m and o: -1, 0 or +1.
func (m Money) Cmp(o Money) int { return m.d.Cmp(o.d) }

// Sign returns -1, 0 or +1.
func (m Money) Sign() int { return m.d.Sign() }

// String renders the exact amount canonically: trailing zeros dropped, then
// at least two decimal places ("500000.00", "1.2300" → "1.23", "0.0001").
// The same amount always prints the same, whether it was just sent or read
// back from DynamoDB, which normalizes numbers.
func (m Money) String() string {
	places := int32(2)
	for exp := -m.d.Exponent(); exp > places; exp-- {
		if !m.d.Truncate(exp - 1).Equal(m.d) {
			places = exp
			break
		}
	}
	return m.d.StringFixed(places)
}

// MarshalJSON writes the amount as a JSON string. Its digits, sign and
// point need no escaping.
func (m Money) MarshalJSON() ([]byte, error) {
	s := m.String()
	b := make([]byte, 0, len(s)+2)
	return append(append(append(b, '"'), s...), '"'), nil
}

// UnmarshalJSON accepts a JSON string or a JSON number; it rejects null and
// anything outside the accepted range and scale.
func (m *Money) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return Errorf(EINVALID, "an amount may not be null")
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return Errorf(EINVALID, "an amount must be a string or a number")
		}
	} else if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return Errorf(EINVALID, "an amount must be a string or a number")
	}
	v, err := ParseMoney(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// MarshalDynamo stores the amount as a DynamoDB number, which is exact to 38
// significant digits.
func (m Money) MarshalDynamo() (types.AttributeValue, error) {
	return &types.AttributeValueMemberN{Value: m.d.String()}, nil
}

// UnmarshalDynamo reads a DynamoDB number.
func (m *Money) UnmarshalDynamo(av types.AttributeValue) error {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return fmt.Errorf("money: want a number attribute, got %T", av)
	}
	d, err := decimal.NewFromString(n.Value)
	if err != nil {
		return fmt.Errorf("money: %w", err)
	}
	m.d = d
	return nil
}

// Sum adds amounts exactly; the sum of nothing is zero.
func Sum(ms ...Money) Money {
	var total Money
	for _, m := range ms {
		total = total.Add(m)
	}
	return total
}
