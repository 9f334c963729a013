package positions

import (
	"math"
	"sort"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/shopspring/decimal"
)

// Performance arithmetic: net IRR (XIRR) over dated flows and the multiples
// of paid-in capital (DPI, RVPI, TVPI). Pure functions; the conventions are
// in docs/analytics.md, "Performance: NAV, net IRR and multiples".

// Flow is one dated amount of money between a position's investor and its
// fund, signed from the investor's (LP's) side as ILPA's Performance
// Template signs it: a contribution is negative (money paid in), a
// distribution positive (money back), and the terminal NAV positive, dated
// the day it is valued at.
type Flow struct {
	Date   fund.Date
	Amount fund.Money
}

// IRRStatus says whether an IRR was found, and if not, why.
type IRRStatus string

const (
	// IRROK: the one rate at which the flows' net present value is zero.
	IRROK IRRStatus = "ok"
	// IRRNoFlows: no flows, or every date's flows net to zero.
	IRRNoFlows IRRStatus = "no_flows"
	// IRRNoSignChange: the net present value never changes sign, so there
	// is no root: every flow has the same sign (a single flow among them),
	// or, with several sign changes among the flows, none in the NPV.
	IRRNoSignChange IRRStatus = "no_sign_change"
	// IRRMultipleRoots: the net present value changes sign more than once
	// over the rates searched, so no one rate is the IRR.
	IRRMultipleRoots IRRStatus = "multiple_roots"
	// IRRNotConverged: a root exists but lies outside the rates searched
	// (IRRMinRate to IRRMaxRate), or could not be narrowed to IRRTolerance.
	IRRNotConverged IRRStatus = "not_converged"
	// IRRUndatedFlow: a flow has the zero date.
	IRRUndatedFlow IRRStatus = "undated_flow"
)

const (
	// IRRScale is the number of decimal places of an IRR answered: the
	// rate found rounded half away from zero (0.123457 is 12.3457%).
	IRRScale = 6
	// IRRTolerance is the width, in rate, of the bracket the root is
	// narrowed to before it is rounded.
	IRRTolerance = 1e-10
	// IRRMinRate and IRRMaxRate bound the rates searched: from −99.999999%
	// to 1,000,000% a year, well inside the rates float64 can narrow to
	// IRRTolerance.
	IRRMinRate = -0.99999999
	IRRMaxRate = 1e4
)

// IRR is an annual internal rate of return, or why there is none.
type IRR struct {
	// Rate is set only when Status is Solved, rounded to IRRScale places;
	// a performance answer keeps it only when Annualised (see GIPS).
	Rate   *decimal.Decimal
	Status IRRStatus
	// Days is the span of the flows, from the first date to the last.
	Days int
	// CumulativeReturn is the return over the whole span at the rate
	// found, (1 + rate)^(Days/365) − 1, rounded to IRRScale places: set
	// whenever Status is Solved.
	CumulativeReturn *decimal.Decimal
	// Annualised says that Rate is an annual rate fit to show: set by GIPS.
	Annualised bool
	// Flows are the flows the rate solves for: netted per date, zero
	// nets dropped, in date order.
	Flows []Flow
}

// MinAnnualisedDays is the shortest span whose return is annualised: a
// year. The GIPS standards forbid it for shorter periods ("Returns for
// periods of less than one year MUST NOT be annualized", provision I.5.A.4
// of the 2010 edition, kept in the 2020 edition): a quarter's 3% is not a
// 12.6% annual rate. See docs/analytics.md.
const MinAnnualisedDays = 365

// GIPS applies the annualisation rule to an IRR: a span of at least
// MinAnnualisedDays keeps its annual Rate; a shorter one gives only its
// CumulativeReturn, the return of the span, and no Rate.
func (r IRR) GIPS() IRR {
	r.Annualised = r.Status.Solved() && r.Days >= MinAnnualisedDays
	if !r.Annualised {
		r.Rate = nil
	}
	return r
}

// NetFlows sums the flows of each date into one, drops dates whose flows
// net to zero, and orders the rest by date. Netting changes no net present
// value, so no IRR; it makes "one sign change" a property of the dates.
func NetFlows(flows []Flow) []Flow {
	byDate := map[string]*Flow{}
	for _, f := range flows {
		k := f.Date.String()
		if n, ok := byDate[k]; ok {
			n.Amount = n.Amount.Add(f.Amount)
		} else {
			byDate[k] = &Flow{Date: f.Date, Amount: f.Amount}
		}
	}
	net := make([]Flow, 0, len(byDate))
	for _, f := range byDate {
		if f.Amount.Sign() != 0 {
			net = append(net, *f)
		}
	}
	sort.Slice(net, func(i, j int) bool { return net[i].Date.Before(net[j].Date) })
	return net
}

// XIRR is the annual rate at which the flows' net present value is zero,
// counting time as actual days ÷ 365 from the first date (Excel's and
// LibreOffice's XIRR convention). It brackets the root on a scan of rates
// and bisects it to IRRTolerance; it never guesses a rate: when there is no
// single root the status says why and Rate is nil.
func XIRR(flows []Flow) IRR {
	for _, f := range flows {
		if f.Date.IsZero() {
			return IRR{Status: IRRUndatedFlow}
		}
	}
	net := NetFlows(flows)
	yf := yearFlows(net)
	rate, status := solveXIRR(yf)
	irr := IRR{Status: status, Flows: net}
	if len(net) > 0 {
		irr.Days = int(math.Round(yf[len(yf)-1].years * 365))
	}
	if status == IRROK {
		r := decimal.NewFromFloat(rate).Round(IRRScale)
		c := decimal.NewFromFloat(math.Pow(1+rate, float64(irr.Days)/365) - 1).Round(IRRScale)
		irr.Rate, irr.CumulativeReturn = &r, &c
	}
	return irr
}

// yearFlow is a flow as the solver sees it: years from the first flow and
// an amount in float64. The solve is in float64 because it needs
// fractional powers, which exact decimals do not have; only the rounded
// rate leaves it, and money stays exact everywhere else.
type yearFlow struct{ years, amount float64 }

func yearFlows(net []Flow) []yearFlow {
	yf := make([]yearFlow, len(net))
	for i, f := range net {
		days := math.Round(f.Date.Time().Sub(net[0].Date.Time()).Hours() / 24)
		yf[i] = yearFlow{years: days / 365, amount: f.Amount.Decimal().InexactFloat64()}
	}
	return yf
}

// scanStep is the step, in ln(1 + rate), of the scan for sign changes of
// the NPV: about 2% of (1 + rate) between neighbours.
const scanStep = 0.02

// solveXIRR finds the root of the NPV over ln(1 + rate), where every rate
// above −100% is a real number, so the scan and the bisection never leave
// the NPV's domain.
func solveXIRR(flows []yearFlow) (float64, IRRStatus) {
	if len(flows) == 0 {
		return 0, IRRNoFlows
	}
	changes := 0
	for i := 1; i < len(flows); i++ {
		if (flows[i].amount > 0) != (flows[i-1].amount > 0) {
			changes++
		}
	}
	if changes == 0 {
		return 0, IRRNoSignChange
	}
	lo, hi := math.Log1p(IRRMinRate), math.Log1p(IRRMaxRate)
	var brackets [][2]float64
	prevG, prev := lo, npvSign(flows, lo)
	if prev == 0 {
		brackets = append(brackets, [2]float64{lo, lo})
	}
	for g := lo + scanStep; ; g += scanStep {
		if g > hi {
			g = hi
		}
		s := npvSign(flows, g)
		if s == 0 {
			brackets = append(brackets, [2]float64{g, g})
		} else if prev != 0 && s != prev {
			brackets = append(brackets, [2]float64{prevG, g})
		}
		prevG, prev = g, s
		if g == hi {
			break
		}
	}
	switch {
	case len(brackets) > 1:
		return 0, IRRMultipleRoots
	case len(brackets) == 0 && changes == 1:
		// One sign change among the flows means exactly one root over all
		// rates above −100% (Descartes' rule of signs holds for real
		// exponents): it lies outside the rates searched.
		return 0, IRRNotConverged
	case len(brackets) == 0:
		return 0, IRRNoSignChange
	}
	a, b := brackets[0][0], brackets[0][1]
	sa := npvSign(flows, a)
	for i := 0; i < 200; i++ {
		if math.Expm1(b)-math.Expm1(a) < IRRTolerance {
			return math.Expm1(a + (b-a)/2), IRROK
		}
		m := a + (b-a)/2
		if m <= a || m >= b {
			break
		}
		sm := npvSign(flows, m)
		if sm == 0 {
			return math.Expm1(m), IRROK
		}
		if sm == sa {
			a = m
		} else {
			b = m
		}
	}
	return 0, IRRNotConverged
}

// npvSign is the sign of the NPV at rate e^g − 1: Σ amount · e^(−g·years).
// Every term is scaled by the same positive factor so that no power
// overflows, which leaves the sign as it is.
func npvSign(flows []yearFlow, g float64) int {
	top := math.Inf(-1)
	for _, f := range flows {
		top = math.Max(top, -g*f.years)
	}
	var sum float64
	for _, f := range flows {
		sum += f.amount * math.Exp(-g*f.years-top)
	}
	switch {
	case sum > 0:
		return 1
	case sum < 0:
		return -1
	}
	return 0
}

// MultipleScale is the number of decimal places of a DPI, RVPI or TVPI
// answered with an IRR, as ILPA's Performance Template shows TVPI
// (48,500 ÷ 37,800 = 1.283069).
const MultipleScale = 6

// MultiplesStatus says which multiples could be computed.
type MultiplesStatus string

const (
	// MultiplesOK: DPI, RVPI and TVPI.
	MultiplesOK MultiplesStatus = "ok"
	// MultiplesNoNAV: no NAV, so DPI only.
	MultiplesNoNAV MultiplesStatus = "no_nav"
	// MultiplesNoPaidIn: nothing paid in, so no multiple at all.
	MultiplesNoPaidIn MultiplesStatus = "no_paid_in"
)

// PaidInMultiples are a position's distributions and NAV as multiples of
// the capital paid in. Each is nil when its status says it is absent.
type PaidInMultiples struct {
	DPI, RVPI, TVPI *decimal.Decimal
	Status          MultiplesStatus
}

// Multiples divides distributions and NAV by paid-in capital exactly and
// rounds once, half away from zero, to MultipleScale places: DPI is
// distributed ÷ paid-in, TVPI (distributed + NAV) ÷ paid-in, and RVPI is
// TVPI − DPI, so TVPI = DPI + RVPI holds exactly after rounding while TVPI,
// the figure ILPA requires, is the exact quotient rounded. RVPI may
// therefore differ from NAV ÷ paid-in rounded by one unit in the last
// place. Paid-in is taken as a magnitude, as ILPA's ABS() of the signed
// contributions does; nav is nil when no NAV is known.
func Multiples(paidIn, distributed fund.Money, nav *fund.Money) PaidInMultiples {
	p := paidIn.Decimal().Abs()
	if p.Sign() == 0 {
		return PaidInMultiples{Status: MultiplesNoPaidIn}
	}
	dpi := distributed.Decimal().DivRound(p, MultipleScale)
	if nav == nil {
		return PaidInMultiples{DPI: &dpi, Status: MultiplesNoNAV}
	}
	tvpi := distributed.Decimal().Add(nav.Decimal()).DivRound(p, MultipleScale)
	rvpi := tvpi.Sub(dpi)
	return PaidInMultiples{DPI: &dpi, RVPI: &rvpi, TVPI: &tvpi, Status: MultiplesOK}
}

// NetPaidIn is the divisor of the multiples: paid-in less the paid-in
// returned (ILPA's net paid-in capital), or zero, so no multiple, when
// returns exceed what was paid in.
func NetPaidIn(paidIn, returned fund.Money) fund.Money {
	if n := paidIn.Sub(returned); n.Sign() > 0 {
		return n
	}
	return fund.Money{}
}
