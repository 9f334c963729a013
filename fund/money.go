package fund

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

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

// MoneyOf is the amount d, as it comes back from a store.
func MoneyOf(d decimal.Decimal) Money { return Money{d: d} }

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
func (m Money) String() string { return string(m.Append(nil)) }

// Append appends the canonical form String returns to b. It works on the
// decimal's digits and exponent directly: responses print thousands of
// amounts, and rounding through the decimal package allocated for each.
func (m Money) Append(b []byte) []byte {
	var scratch [40]byte
	var digits []byte
	if m.d.NumDigits() <= 18 { // every amount within the accepted range: no big.Int copy
		digits = strconv.AppendInt(scratch[:0], m.d.CoefficientInt64(), 10)
	} else {
		digits = m.d.Coefficient().Append(scratch[:0], 10)
	}
	if digits[0] == '-' {
		b, digits = append(b, '-'), digits[1:]
	}
	exp := int(m.d.Exponent())
	if exp >= 0 {
		b = append(b, digits...)
		if string(digits) != "0" {
			for range exp {
				b = append(b, '0')
			}
		}
		return append(b, ".00"...)
	}
	// Split the digits at the point, which lies -exp digits from the right.
	places := -exp
	lead := 0 // zeros between the point and the first digit
	if len(digits) > places {
		b = append(b, digits[:len(digits)-places]...)
		digits = digits[len(digits)-places:]
	} else {
		b = append(b, '0')
		lead = places - len(digits)
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		lead = 0 // the fraction was all zeros
	}
	b = append(b, '.')
	for range lead {
		b = append(b, '0')
	}
	b = append(b, digits...)
	for n := lead + len(digits); n < 2; n++ {
		b = append(b, '0')
	}
	return b
}

// MarshalText writes the canonical form String returns, which makes an
// amount a JSON string ("500000.00"). It is a TextMarshaler rather than a
// json.Marshaler on purpose: encoding/json re-validates and compacts what
// MarshalJSON returns, and a response holds thousands of amounts, while
// text it only quotes (digits, sign and point need no escaping).
func (m Money) MarshalText() ([]byte, error) { return m.Append(make([]byte, 0, 24)), nil }

// AppendText appends the canonical form to b (encoding.TextAppender).
func (m Money) AppendText(b []byte) ([]byte, error) { return m.Append(b), nil }

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

// Sum adds amounts exactly; the sum of nothing is zero.
func Sum(ms ...Money) Money {
	var total Money
	for _, m := range ms {
		total = total.Add(m)
	}
	return total
}
