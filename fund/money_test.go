package fund

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

func TestParseMoney(t *testing.T) {
	good := map[string]string{
		"0": "0.00", "500000": "500000.00", "500000.00": "500000.00", "0.0001": "0.0001",
		"999999999999999.9999": "999999999999999.9999", "-12.5": "-12.50", "1.2300": "1.23", "1.2350": "1.235", "-0.10": "-0.10",
	}
	for in, want := range good {
		m, err := ParseMoney(in)
		if err != nil || m.String() != want {
			t.Errorf("ParseMoney(%q) = %s, %v; want %s", in, m, err, want)
		}
	}
	for _, in := range []string{"", "1e3", "1E3", "+1", "01", "1,000", "1.00001", "1000000000000000", ".5", "5.", "NaN", "Infinity", " 1", "0x10", "1_000", "--1", "١"} {
		if _, err := ParseMoney(in); ErrorCode(err) != EINVALID {
			t.Errorf("ParseMoney(%q) accepted, want EINVALID", in)
		}
	}
}

func TestMoneyIsExact(t *testing.T) {
	// 0.1 + 0.2 is the classic float failure.
	if sum := MustMoney("0.1").Add(MustMoney("0.2")); !sum.Equal(MustMoney("0.3")) || sum.String() != "0.30" {
		t.Fatalf("0.1 + 0.2 = %s", sum)
	}
	big := MustMoney("999999999999999.9999")
	if got := Sum(big, big, big).String(); got != "2999999999999999.9997" {
		t.Fatalf("sum of the largest amounts = %s", got)
	}
}

func TestMoneyJSON(t *testing.T) {
	var m Money
	for in, want := range map[string]string{`"500000.00"`: "500000.00", `500000.5`: "500000.50", `"0.0001"`: "0.0001"} {
		if err := json.Unmarshal([]byte(in), &m); err != nil || m.String() != want {
			t.Errorf("unmarshal %s = %s, %v", in, m, err)
		}
	}
	for _, in := range []string{`null`, `true`, `{}`, `[]`, `"1e3"`, `1e3`, `"abc"`, `1.00001`} {
		if err := m.UnmarshalJSON([]byte(in)); ErrorCode(err) != EINVALID {
			t.Errorf("unmarshal %s accepted", in)
		}
	}
	b, _ := json.Marshal(MustMoney("75000"))
	if string(b) != `"75000.00"` {
		t.Fatalf("marshal = %s", b)
	}
	// In a struct, as a pointer, and as a map value, always a JSON string
	// of the canonical form.
	m = MustMoney("-0.1")
	b, _ = json.Marshal(struct {
		A Money
		B *Money
		C map[string]Money
	}{m, &m, map[string]Money{"k": MustMoney("1.2300")}})
	if string(b) != `{"A":"-0.10","B":"-0.10","C":{"k":"1.23"}}` {
		t.Fatalf("marshal = %s", b)
	}
}

func TestIDs(t *testing.T) {
	for _, id := range []string{"DOC001", "a", "POSITION_1", "fund.a:b-c", strings.Repeat("x", 64)} {
		if !ValidID(id) {
			t.Errorf("%q rejected", id)
		}
	}
	for _, id := range []string{"", "DOC#1", "a b", "-a", "_a", strings.Repeat("x", 65), "a/b", "é", "a\x00"} {
		if ValidID(id) {
			t.Errorf("%q accepted", id)
		}
	}
}

func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"0", "500000.00", "-1.5", "1e3", "999999999999999.9999", "00", "1.", ".1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMoney(s)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("ParseMoney(%q): %v is not EINVALID", s, err)
			}
			return
		}
		// Whatever is accepted survives the round trips exactly.
		if m.String() != roundedString(m) {
			t.Fatalf("%q prints %q, rounding says %q", s, m, roundedString(m))
		}
		back, err := ParseMoney(m.String())
		if err != nil || !back.Equal(m) || back.String() != m.String() {
			t.Fatalf("%q → %s → %s, %v", s, m, back, err)
		}
		// A store keeps the decimal's string (a DynamoDB number) and reads it back.
		stored, err := decimal.NewFromString(m.Decimal().String())
		if fromDB := MoneyOf(stored); err != nil || !fromDB.Equal(m) {
			t.Fatalf("%q lost in its stored form: %s, %v", s, fromDB, err)
		}
	})
}

func TestErrorsQuoteLongInputWithoutBreakingCharacters(t *testing.T) {
	err := CheckID("documentId", strings.Repeat("é", 60))
	if err == nil || !utf8.ValidString(err.Error()) {
		t.Fatalf("%q", err)
	}
}

// roundedString is how String was first written, through the decimal
// package's rounding: slow, but plainly right. Append must agree with it.
func roundedString(m Money) string {
	places := int32(2)
	for exp := -m.d.Exponent(); exp > places; exp-- {
		if !m.d.Truncate(exp - 1).Equal(m.d) {
			places = exp
			break
		}
	}
	return m.d.StringFixed(places)
}

func TestMoneyStringMatchesRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(d decimal.Decimal) {
		t.Helper()
		m := Money{d: d}
		if got, want := m.String(), roundedString(m); got != want {
			t.Fatalf("%s (coefficient %s, exponent %d): String %q, want %q", d, d.Coefficient(), d.Exponent(), got, want)
		}
	}
	for _, s := range []string{"0", "-0", "0.00", "0.0000", "1", "-1", "10", "1.2300", "0.0001", "-0.5", "1E+3", "-25E+2", "0E+4", "0.10", "100.1000",
		// Around the int64 fast path: 18 digits, 19, and beyond int64.
		"99999999999999.9999", "999999999999999.9999", "-999999999999999.9999", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-12345678901234567890123.45", "1E+20"} {
		check(decimal.RequireFromString(s))
	}
	for range 20000 {
		coef := rng.Int64N(2_000_000_000) - 1_000_000_000
		if rng.IntN(4) == 0 {
			coef = rng.Int64N(100) * []int64{1, 10, 100, 1000, 10000}[rng.IntN(5)]
		}
		check(decimal.New(coef, int32(rng.IntN(14)-10)))
	}
}
