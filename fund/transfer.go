package fund

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"

	"github.com/shopspring/decimal"
)

// A transfer of interest moves part or all of one position (the
// transferor) to one or more positions (the transferees), at an effective
// date: its commitment, its capital and, by PerformanceTreatment, its
// history. Split is its arithmetic, whose conventions docs/analytics.md
// states ("Transfers of interest").

// PerformanceTreatment says how a transferee's performance starts.
type PerformanceTreatment string

// The treatments: inherit carries the transferee's share of the
// transferor's history (ILPA: a partner transfer carries all prior
// history); fresh starts its history at the effective date, from the value
// it received.
const (
	TreatmentInherit PerformanceTreatment = "inherit"
	TreatmentFresh   PerformanceTreatment = "fresh"
)

// AllocationMethod is how the period that contains the transfer is split
// between the parties (IRC §706(d)).
type AllocationMethod string

// The two methods of US partnership rules.
const (
	AllocationInterimClosing AllocationMethod = "interim_closing"
	AllocationProration      AllocationMethod = "proration"
)

// Transfer is what a transfer_of_interest document states.
type Transfer struct {
	TransferorPositionID string               `json:"transferorPositionId" doc:"The position that gives up part or all of its interest."`
	PerformanceTreatment PerformanceTreatment `json:"performanceTreatment" doc:"inherit: each transferee carries its share of the transferor's history; fresh: a transferee's history starts at the effective date, from the value it received."`
	AllocationMethod     AllocationMethod     `json:"allocationMethod,omitempty" doc:"How the period that contains the transfer is split between the parties: interim_closing or proration. Optional."`
	AgreementDate        Date                 `json:"agreementDate,omitzero" doc:"When the transfer agreement was signed. Optional."`
	Transferees          []Transferee         `json:"transferees" doc:"The positions that receive the interest, each with its share or the commitment it takes."`
}

// Transferee is one position that receives part of the transferor's
// interest: either Share or Commitment, never both.
type Transferee struct {
	PositionID string `json:"positionId" doc:"The receiving position, new or existing."`
	InvestorID string `json:"investorId" doc:"The investor of the receiving position."`
	Share      *Share `json:"share,omitempty" doc:"The part of the transferor's interest (before the transfer) it receives, above 0 and at most 1, e.g. '0.4'."`
	Commitment *Money `json:"commitment,omitempty" doc:"The commitment it takes over, above 0; its share is this over the transferor's commitment."`
}

// ShareMaxScale is the most digits a share may have after the point.
const ShareMaxScale = 12

var sharePattern = regexp.MustCompile(fmt.Sprintf(`^(0|1)(\.[0-9]{1,%d})?$`, ShareMaxScale))

// Share is an exact fraction of a position's interest, above 0 and at
// most 1, written in plain decimal notation ("0.4").
type Share struct{ d decimal.Decimal }

// ParseShare parses s as a share, or returns EINVALID.
func ParseShare(s string) (Share, error) {
	d, err := decimal.NewFromString(s)
	if !sharePattern.MatchString(s) || err != nil || d.Sign() <= 0 || d.GreaterThan(decimal.NewFromInt(1)) {
		return Share{}, Errorf(EINVALID, "%s is not a share: a share is a decimal above 0 and at most 1, with at most %d digits after the point", quoteShort(s), ShareMaxScale)
	}
	return Share{d}, nil
}

// MustShare parses s and panics if it is not a share. For tests only.
func MustShare(s string) Share {
	v, err := ParseShare(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Decimal returns the exact value.
func (s Share) Decimal() decimal.Decimal { return s.d }

// String writes the share in plain decimal notation, without trailing
// zeros ("0.4").
func (s Share) String() string { return s.d.String() }

// MarshalText writes the share as a JSON string.
func (s Share) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a share.
func (s *Share) UnmarshalText(b []byte) error {
	v, err := ParseShare(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Validate checks what a transfer states on its own, before any balance is
// read: field names are relative to the request's "transfer".
func (t *Transfer) Validate() error {
	const field = "transfer"
	if err := CheckID(field+".transferorPositionId", t.TransferorPositionID); err != nil {
		return err
	}
	switch t.PerformanceTreatment {
	case TreatmentInherit, TreatmentFresh:
	default:
		return Invalid(field+".performanceTreatment", "must be %s or %s", TreatmentInherit, TreatmentFresh)
	}
	switch t.AllocationMethod {
	case "", AllocationInterimClosing, AllocationProration:
	default:
		return Invalid(field+".allocationMethod", "must be %s or %s when given", AllocationInterimClosing, AllocationProration)
	}
	if len(t.Transferees) == 0 {
		return Invalid(field+".transferees", "names at least one transferee")
	}
	seen := map[string]int{}
	byShare, byCommitment := 0, 0
	for i, e := range t.Transferees {
		at := fmt.Sprintf("%s.transferees[%d]", field, i)
		if err := CheckID(at+".positionId", e.PositionID); err != nil {
			return err
		}
		if err := CheckID(at+".investorId", e.InvestorID); err != nil {
			return err
		}
		if e.PositionID == t.TransferorPositionID {
			return Invalid(at+".positionId", "is the transferor; a position cannot transfer to itself")
		}
		if first, dup := seen[e.PositionID]; dup {
			return Invalid(at+".positionId", "position %s appears more than once (first at transferees[%d])", e.PositionID, first)
		}
		seen[e.PositionID] = i
		switch {
		case e.Share != nil && e.Commitment != nil:
			return Invalid(at, "gives a share and a commitment; give one")
		case e.Share != nil:
			byShare++
		case e.Commitment != nil:
			if e.Commitment.Sign() <= 0 {
				return Invalid(at+".commitment", "must be above 0")
			}
			byCommitment++
		default:
			return Invalid(at, "gives neither a share nor a commitment; give one")
		}
	}
	if byShare > 0 && byCommitment > 0 {
		return Invalid(field+".transferees", "mixes shares and commitments; give every transferee's part the same way")
	}
	return nil
}

// Balances are a position's measures at an instant: what a transfer moves.
type Balances struct {
	Commitment     Money `json:"commitment"`
	Unfunded       Money `json:"unfundedCommitment"`
	PaidIn         Money `json:"paidIn"`
	Distributed    Money `json:"distributed"`
	Withholding    Money `json:"withholding"`
	DistributedNet Money `json:"distributedNet"`
	Recallable     Money `json:"recallable"`
	CapitalAccount Money `json:"capitalAccount"`
}

// measures lists the fields of Balances with their names in JSON, so Split
// treats each alike.
func (b *Balances) measures() []struct {
	name string
	m    *Money
} {
	return []struct {
		name string
		m    *Money
	}{
		{"commitment", &b.Commitment}, {"unfundedCommitment", &b.Unfunded}, {"paidIn", &b.PaidIn},
		{"distributed", &b.Distributed}, {"withholding", &b.Withholding}, {"distributedNet", &b.DistributedNet},
		{"recallable", &b.Recallable}, {"capitalAccount", &b.CapitalAccount},
	}
}

// Residual is a rounding residual of one measure: the smallest units the
// largest-remainder rule gave, one each, to the parties named (the
// transferor is "", a transferee its position ID).
type Residual struct {
	Measure string   `json:"measure"`
	Unit    Money    `json:"unit"`
	To      []string `json:"to"`
}

// Allocation is a transfer's split of the transferor's balances.
type Allocation struct {
	Before    Balances   // the transferor's, as of the effective date
	Kept      Balances   // the transferor's after the transfer
	Moved     []Balances // what each transferee receives, in the order of Transferees
	Shares    []*big.Rat // each transferee's exact share of Before
	Residuals []Residual // the measures whose split did not come out exact
}

// Split divides before, the transferor's balances as of the effective
// date, between the transferor and the transferees. A transferee's share
// is its Share, or its Commitment over before.Commitment; every measure is
// split by the shares, at the smallest unit of the measure's scale and at
// least the cent, so that for each measure Kept plus every Moved equals
// before exactly: each party first gets its exact part rounded down, and
// the units left go one each to the parties with the largest remainders
// (ties to the transferor, then in request order), which Residuals state.
// A commitment moved is the one stated, exactly.
//
// It returns EINVALID, naming the field and what the transferor holds,
// when the shares add up to more than 1 or the commitments to more than
// before.Commitment, and when a commitment is given and before.Commitment
// is not above zero. t must be valid.
func (t *Transfer) Split(before Balances) (Allocation, error) {
	a := Allocation{Before: before, Moved: make([]Balances, len(t.Transferees))}
	total := new(big.Rat)
	for i, e := range t.Transferees {
		at := fmt.Sprintf("transfer.transferees[%d]", i)
		held := new(big.Rat).Sub(big.NewRat(1, 1), total) // the share the transferees before left
		var s *big.Rat
		if e.Share != nil {
			s = e.Share.d.Rat()
			if s.Cmp(held) > 0 {
				return Allocation{}, Invalid(at+".share", "is %s, but the transferor holds %s of its interest after the transferees before it", e.Share, ratString(held))
			}
		} else {
			if before.Commitment.Sign() <= 0 {
				return Allocation{}, Invalid(at+".commitment", "cannot be taken: the transferor's commitment as of the effective date is %s", before.Commitment)
			}
			s = new(big.Rat).Quo(e.Commitment.d.Rat(), before.Commitment.d.Rat())
			if s.Cmp(held) > 0 {
				remaining := new(big.Rat).Mul(held, before.Commitment.d.Rat())
				return Allocation{}, Invalid(at+".commitment", "is %s, but the transferor holds a commitment of %s after the transferees before it", e.Commitment, ratString(remaining))
			}
		}
		total.Add(total, s)
		a.Shares = append(a.Shares, s)
	}
	// The transferor keeps the rest; its share comes first, so ties go to it.
	shares := append([]*big.Rat{new(big.Rat).Sub(big.NewRat(1, 1), total)}, a.Shares...)
	parties := append([]*Balances{&a.Kept}, pointers(a.Moved)...)
	names := []string{""}
	for _, e := range t.Transferees {
		names = append(names, e.PositionID)
	}
	whole := before
	for k, m := range whole.measures() {
		parts, unit, extra := largestRemainder(*m.m, shares)
		for j, p := range parts {
			*parties[j].measures()[k].m = p
		}
		if len(extra) > 0 {
			r := Residual{Measure: m.name, Unit: unit}
			for _, j := range extra {
				r.To = append(r.To, names[j])
			}
			a.Residuals = append(a.Residuals, r)
		}
	}
	return a, nil
}

func pointers(bs []Balances) []*Balances {
	out := make([]*Balances, len(bs))
	for i := range bs {
		out[i] = &bs[i]
	}
	return out
}

// largestRemainder splits m by shares (which add up to 1) in units of
// 10^-max(2, m's scale): each part is its exact quota rounded down, and
// the units left over go one each to the parts with the largest
// remainders, ties to the earlier part. It returns the parts, the unit and
// the indices of the parts that got one.
func largestRemainder(m Money, shares []*big.Rat) ([]Money, Money, []int) {
	scale := max(2, -m.d.Exponent())
	unitsPer := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	units := new(big.Rat).Mul(m.d.Rat(), new(big.Rat).SetInt(unitsPer)) // an integer: scale covers m's digits
	whole := units.Num()
	parts := make([]*big.Int, len(shares))
	rems := make([]*big.Rat, len(shares))
	left := new(big.Int).Set(whole)
	for i, s := range shares {
		q := new(big.Rat).Mul(units, s)
		floor := new(big.Int).Div(q.Num(), q.Denom()) // Euclidean: rounds down for a positive denominator
		parts[i] = floor
		rems[i] = new(big.Rat).Sub(q, new(big.Rat).SetInt(floor))
		left.Sub(left, floor)
	}
	order := make([]int, len(shares))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rems[order[a]].Cmp(rems[order[b]]) > 0 })
	var extra []int
	for n := left.Int64(); n > 0; n-- { // fewer than len(shares) units
		j := order[len(extra)]
		parts[j].Add(parts[j], big.NewInt(1))
		extra = append(extra, j)
	}
	sort.Ints(extra)
	out := make([]Money, len(parts))
	for i, p := range parts {
		out[i] = Money{d: decimal.NewFromBigInt(p, -scale)}
	}
	return out, Money{d: decimal.New(1, -scale)}, extra
}

// ratString writes r, a share or an amount, exactly when it ends within 12
// places and rounded to 12 otherwise.
func ratString(r *big.Rat) string {
	d, _ := decimal.NewFromString(r.FloatString(ShareMaxScale))
	return d.String()
}
