package fund_test

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/shopspring/decimal"
)

func share(s string) *fund.Share { v := fund.MustShare(s); return &v }
func money(s string) *fund.Money { v := fund.MustMoney(s); return &v }

func balances(vals ...string) fund.Balances {
	m := func(i int) fund.Money { return fund.MustMoney(vals[i]) }
	return fund.Balances{Commitment: m(0), Unfunded: m(1), PaidIn: m(2), Distributed: m(3), Withholding: m(4),
		DistributedNet: m(5), Recallable: m(6), CapitalAccount: m(7)}
}

// measures lists every measure of b, in a fixed order, with its name.
func measures(b fund.Balances) map[string]fund.Money {
	return map[string]fund.Money{"commitment": b.Commitment, "unfundedCommitment": b.Unfunded, "paidIn": b.PaidIn,
		"distributed": b.Distributed, "withholding": b.Withholding, "distributedNet": b.DistributedNet,
		"recallable": b.Recallable, "capitalAccount": b.CapitalAccount}
}

// TestATransferSplitsAThirdToTheCentAndStatesTheResidual: 100.00 split in
// thirds between three parties leaves one cent, which goes to the
// transferor (ties go to it) and is stated.
func TestATransferSplitsAThirdToTheCentAndStatesTheResidual(t *testing.T) {
	tr := fund.Transfer{TransferorPositionID: "P1", PerformanceTreatment: fund.TreatmentInherit, Transferees: []fund.Transferee{
		{PositionID: "P2", InvestorID: "I2", Share: share("0.333333333333")},
		{PositionID: "P3", InvestorID: "I3", Share: share("0.333333333333")},
	}}
	before := balances("100.00", "40.00", "60.00", "10.00", "1.00", "9.00", "3.00", "75.50")
	a, err := tr.Split(before)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(a.Kept.Commitment, a.Moved[0].Commitment, a.Moved[1].Commitment); got != "33.34 33.33 33.33" {
		t.Errorf("commitment split %s, want 33.34 33.33 33.33", got)
	}
	if len(a.Residuals) == 0 || a.Residuals[0].Measure != "commitment" || a.Residuals[0].Unit.String() != "0.01" || fmt.Sprint(a.Residuals[0].To) != "[]" {
		t.Errorf("residuals %+v, want the commitment's cent to the transferor", a.Residuals)
	}
	// 7,550 cents: parts of 2,516.67, 2,516.67 and 2,516.67 less a hair
	// each, so the two cents go to the two largest remainders.
	if got := fmt.Sprint(a.Kept.CapitalAccount, a.Moved[0].CapitalAccount, a.Moved[1].CapitalAccount); got != "25.17 25.17 25.16" {
		t.Errorf("capital account split %s, want 25.17 25.17 25.16", got)
	}
}

// TestATransferConservesEveryMeasureToTheUnit: on random balances (four
// decimal places, negative capital accounts) and random transfers to one
// to five transferees, by share or by commitment, the transferor after
// plus every transferee is the transferor before, each party is within one
// unit of its exact part, a commitment stated moves exactly, and the
// residuals name every unit placed.
func TestATransferConservesEveryMeasureToTheUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	amount := func(scale int32, negative bool) fund.Money {
		v := decimal.New(rng.Int64N(10_000_000_000), -scale)
		if negative && rng.IntN(3) == 0 {
			v = v.Neg()
		}
		return fund.MoneyOf(v)
	}
	for run := range 2000 {
		scale := int32(rng.IntN(5))
		before := fund.Balances{Commitment: amount(scale, false), Unfunded: amount(scale, false), PaidIn: amount(scale, false),
			Distributed: amount(scale, false), Withholding: amount(scale, false), DistributedNet: amount(scale, false),
			Recallable: amount(scale, false), CapitalAccount: amount(scale, true)}
		if before.Commitment.Sign() == 0 {
			continue
		}
		tr := fund.Transfer{TransferorPositionID: "P0", PerformanceTreatment: fund.TreatmentFresh}
		byCommitment := rng.IntN(2) == 0
		left := before.Commitment.Decimal()
		room := decimal.NewFromInt(1)
		for i := range 1 + rng.IntN(5) {
			e := fund.Transferee{PositionID: fmt.Sprintf("P%d", i+1), InvestorID: "I"}
			if byCommitment {
				c := left.Mul(decimal.NewFromFloat(rng.Float64())).Truncate(2)
				if c.Sign() <= 0 {
					break
				}
				left = left.Sub(c)
				v := fund.MoneyOf(c)
				e.Commitment = &v
			} else {
				s := room.Mul(decimal.NewFromFloat(rng.Float64())).Truncate(int32(1 + rng.IntN(fund.ShareMaxScale)))
				if s.Sign() <= 0 {
					break
				}
				room = room.Sub(s)
				e.Share = share(s.String())
			}
			tr.Transferees = append(tr.Transferees, e)
		}
		if len(tr.Transferees) == 0 {
			continue
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		a, err := tr.Split(before)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		placed := map[string]int{}
		for _, r := range a.Residuals {
			placed[r.Measure] = len(r.To)
		}
		parts := append([]fund.Balances{a.Kept}, a.Moved...)
		shares := append([]*big.Rat{new(big.Rat).Sub(big.NewRat(1, 1), sum(a.Shares))}, a.Shares...)
		for name, want := range measures(before) {
			total := fund.Money{}
			unit := decimal.New(1, -max(2, -want.Decimal().Exponent()))
			for j, p := range parts {
				got := measures(p)[name]
				total = total.Add(got)
				exact := new(big.Rat).Mul(want.Decimal().Rat(), shares[j])
				if diff := new(big.Rat).Sub(got.Decimal().Rat(), exact); diff.Abs(diff).Cmp(unit.Rat()) >= 0 {
					t.Fatalf("run %d: %s of party %d is %s, more than a unit from its exact part %s", run, name, j, got, exact.FloatString(8))
				}
			}
			if !total.Equal(want) {
				t.Fatalf("run %d: %s after adds up to %s, want %s", run, name, total, want)
			}
			// The units placed are the total less the parts rounded down.
			floors := decimal.Zero
			for j := range parts {
				q := new(big.Rat).Mul(want.Decimal().Rat(), shares[j])
				q.Quo(q, unit.Rat())
				floors = floors.Add(decimal.NewFromBigInt(new(big.Int).Div(q.Num(), q.Denom()), 0))
			}
			if units := want.Decimal().Div(unit).Sub(floors); !units.Equal(decimal.NewFromInt(int64(placed[name]))) {
				t.Fatalf("run %d: %s left %s units to place, the residuals name %d", run, name, units, placed[name])
			}
		}
		for i, e := range tr.Transferees {
			if e.Commitment != nil && !a.Moved[i].Commitment.Equal(*e.Commitment) {
				t.Fatalf("run %d: transferee %d took commitment %s, it stated %s", run, i, a.Moved[i].Commitment, e.Commitment)
			}
		}
	}
}

func sum(rs []*big.Rat) *big.Rat {
	t := new(big.Rat)
	for _, r := range rs {
		t.Add(t, r)
	}
	return t
}

// TestAWholeTransferLeavesTheTransferorNothing: shares adding up to 1
// leave the transferor zero of every measure.
func TestAWholeTransferLeavesTheTransferorNothing(t *testing.T) {
	tr := fund.Transfer{TransferorPositionID: "P1", PerformanceTreatment: fund.TreatmentInherit, Transferees: []fund.Transferee{
		{PositionID: "P2", InvestorID: "I2", Share: share("0.25")}, {PositionID: "P3", InvestorID: "I3", Share: share("0.75")},
	}}
	a, err := tr.Split(balances("1000.00", "400.00", "600.00", "100.00", "10.00", "90.00", "30.00", "-12.34"))
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range measures(a.Kept) {
		if m.Sign() != 0 {
			t.Errorf("the transferor kept %s of %s, want nothing", m, name)
		}
	}
	if got := fmt.Sprint(a.Moved[0].CapitalAccount, a.Moved[1].CapitalAccount); got != "-3.08 -9.26" {
		t.Errorf("the capital account moved as %s, want -3.08 -9.26 (remainders tie: the cent to the earlier)", got)
	}
}

// TestATransferRefusesWhatItCannotDo: each refusal names its field and,
// where it is about amounts, what the transferor holds.
func TestATransferRefusesWhatItCannotDo(t *testing.T) {
	base := func(es ...fund.Transferee) fund.Transfer {
		return fund.Transfer{TransferorPositionID: "P1", PerformanceTreatment: fund.TreatmentInherit, Transferees: es}
	}
	before := balances("1000.00", "400.00", "600.00", "0", "0", "0", "0", "500.00")
	for _, c := range []struct {
		name        string
		t           fund.Transfer
		field, text string
	}{
		{"to itself", base(fund.Transferee{PositionID: "P1", InvestorID: "I", Share: share("0.1")}), "transfer.transferees[0].positionId", "itself"},
		{"twice", base(fund.Transferee{PositionID: "P2", InvestorID: "I", Share: share("0.1")}, fund.Transferee{PositionID: "P2", InvestorID: "I", Share: share("0.1")}), "transfer.transferees[1].positionId", "more than once"},
		{"both", base(fund.Transferee{PositionID: "P2", InvestorID: "I", Share: share("0.1"), Commitment: money("10.00")}), "transfer.transferees[0]", "a share and a commitment"},
		{"neither", base(fund.Transferee{PositionID: "P2", InvestorID: "I"}), "transfer.transferees[0]", "neither"},
		{"mixed", base(fund.Transferee{PositionID: "P2", InvestorID: "I", Share: share("0.1")}, fund.Transferee{PositionID: "P3", InvestorID: "I", Commitment: money("10.00")}), "transfer.transferees", "mixes"},
		{"no one", base(), "transfer.transferees", "at least one"},
		{"no treatment", fund.Transfer{TransferorPositionID: "P1", Transferees: []fund.Transferee{{PositionID: "P2", InvestorID: "I", Share: share("1")}}}, "transfer.performanceTreatment", "inherit"},
		{"shares above the whole", base(fund.Transferee{PositionID: "P2", InvestorID: "I", Share: share("0.6")}, fund.Transferee{PositionID: "P3", InvestorID: "I", Share: share("0.5")}), "transfer.transferees[1].share", "holds 0.4 of its interest"},
		{"commitment above what is held", base(fund.Transferee{PositionID: "P2", InvestorID: "I", Commitment: money("1000.01")}), "transfer.transferees[0].commitment", "commitment of 1000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.t.Validate()
			if err == nil {
				_, err = c.t.Split(before)
			}
			var fe *fund.Error
			if !errors.As(err, &fe) || fe.Code != fund.EINVALID || fe.Field != c.field || !strings.Contains(fe.Message, c.text) {
				t.Errorf("got %v, want invalid %s saying %q", err, c.field, c.text)
			}
		})
	}
	for _, s := range []string{"0", "1.5", "-0.1", "0.1234567890123", "1e-1", ".5"} {
		if _, err := fund.ParseShare(s); err == nil {
			t.Errorf("share %q accepted", s)
		}
	}
}
