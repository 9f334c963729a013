package export

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

// TestDecimalEncodingIsExact round-trips the limits and random amounts of
// every scale through the DECIMAL(19,4) encoding.
func TestDecimalEncodingIsExact(t *testing.T) {
	cases := []string{"0", "0.0001", "-0.0001", "1", "-1", "999999999999999.9999", "-999999999999999.9999",
		"922337203685477.5807", "922337203685477.5808", "-922337203685477.5809", "123.45"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		sign := []string{"", "-"}[r.IntN(2)]
		cases = append(cases, fmt.Sprintf("%s%d.%04d", sign, r.Int64N(1_000_000_000_000_000), r.IntN(10_000)))
	}
	for _, c := range cases {
		m := fund.MustMoney(c)
		enc, err := toDecimal(m)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		got := fund.MustMoney(fromDecimal(enc))
		if !got.Equal(m) {
			t.Fatalf("%s: encoded and decoded as %s", c, got)
		}
	}
}

// TestDecimalEncodingRefusesWhatDoesNotFit checks the guard behind the
// encoding: amounts outside DECIMAL(19,4) are an error, never a different
// number. (The API never accepts them; the guard protects against data
// written some other way.)
func TestDecimalEncodingRefusesWhatDoesNotFit(t *testing.T) {
	for _, c := range []string{"10000000000000000", "0.00001"} {
		var m fund.Money
		if err := m.UnmarshalJSON([]byte(`"` + c + `"`)); err == nil {
			t.Fatalf("%s: the API accepts it; pick another case", c)
		}
	}
	big := fund.MustMoney("999999999999999.9999").Add(fund.MustMoney("0.0001"))
	if _, err := toDecimal(big); err == nil {
		t.Errorf("%s encoded without error", big)
	}
	fine := fund.MustMoney("0.0001")
	if _, err := toDecimal(fund.Sum(fine, fine)); err != nil {
		t.Errorf("0.0002: %v", err)
	}
}
