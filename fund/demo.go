package fund

// DemoVersions returns the demo dataset as the writes that build it, in
// order: the second half of 2025 of fund FUND_A (USD), whose first call is
// in Q3 2025, for three investors with different commitments. Documents are
// numbered in date order; each notice is dated the day it was issued, a
// call is due 10 to 13 business days later, and a statement is dated its
// quarter end.
//
//	DOC001 2025-07-15 call notice no. 1, due 2025-08-01: 20% of commitment for Company A, the Q3
//	                  management fee (quarterly in advance: 0.5% of commitment, 0.375% for
//	                  INVESTOR_1's side letter) and 0.1% for organisation expenses; unfunded after it.
//	                  Version 1 as issued (Pending), version 2 once every investor had paid (Completed).
//	DOC002 2025-09-10 distribution notice no. 1, paid 2025-09-15: 5% of commitment, part of Company A
//	                  syndicated to co-investors at cost, returned as recallable capital; unfunded after it.
//	DOC003 2025-09-30 Q3 2025 capital account statements (ILPA A.1 and A.2), from 2025-07-01.
//	DOC004 2025-10-06 call notice no. 2, due 2025-10-20: 25% for Company B, the Q4 fee, 0.1% fund expenses.
//	DOC005 2025-11-14 call notice no. 3, due 2025-12-01: recalls distribution no. 1 (a typed investment
//	                  line that reduces unfunded commitment again) for a follow-on investment in Company A.
//	DOC006 2025-12-08 distribution notice no. 2, paid 2025-12-15: 10% of Company A sold (cost 40,000 per
//	                  2,000,000 committed, gain 12,000) and its dividend (3,000); 30% tax withheld from
//	                  INVESTOR_3's dividend.
//	DOC007 2025-12-31 Q4 2025 capital account statements, from 2025-10-01; version 2 restates the
//	                  unrealized gain after Company B's valuation was corrected.
//
// Per position (INVESTOR_2 and INVESTOR_3 are in the same proportion to
// their commitments; INVESTOR_1's fee is lower):
//
//	                         POSITION_1     POSITION_2     POSITION_3
//	commitment               2,000,000.00   1,000,000.00     500,000.00
//	call 1 (08-01)             409,500.00     206,000.00     103,000.00   investment 400,000 / 200,000 / 100,000,
//	                                                                       fee 7,500 / 5,000 / 2,500, expenses 2,000 / 1,000 / 500
//	distribution 1 (09-15)     100,000.00      50,000.00      25,000.00   all recallable return of capital
//	Q3 unrealized gain           9,000.00       4,500.00       2,250.00
//	Q3 ending NAV              309,000.00     154,500.00      77,250.00   contributions − distributions − fee − expenses + gain
//	Q3 ending unfunded       1,690,500.00     844,000.00     422,000.00   commitment − call 1 + recallable
//	call 2 (10-20)             509,500.00     256,000.00     128,000.00   investment 500,000 / 250,000 / 125,000, fee and expenses as call 1
//	call 3 (12-01)             100,000.00      50,000.00      25,000.00   the recall
//	distribution 2 (12-15)      55,000.00      27,500.00      13,750.00   return of capital 40,000 / 20,000 / 10,000, gain 12,000 / 6,000 / 3,000,
//	                                                                       income 3,000 / 1,500 / 750; withholding 0 / 0 / 225
//	Q4 unrealized gain          21,000.00      10,500.00       5,250.00   16,000 / 8,000 / 4,000 before the restatement
//	Q4 ending NAV              890,000.00     445,000.00     222,500.00   885,000 / 442,500 / 221,250 before it
//	Q4 ending unfunded       1,081,000.00     538,000.00     269,000.00   Q3's − call 2 − call 3
//	paid in, distributed     1,019,000.00 / 155,000.00   512,000.00 / 77,500.00   256,000.00 / 38,750.00
//
// Every statement rolls forward exactly (A.1 and A.2) and reconciles with
// the notices of its period to zero; every notice that moves unfunded
// commitment states it after the move, so the unfunded commitment
// reported and the one computed from the notices agree on every date.
// api/golden_test.go (TestDemoFigures) works every figure the tour
// (docs/tour.md) shows out by hand.
func DemoVersions() []Document {
	docs := []Document{
		demoCallNotice1(StatusPending),
		demoCallNotice1(StatusCompleted),
		demoDocument("DOC002", KindDistributionNotice, "Distribution notice no. 1, paid 2025-09-15: recallable return of capital", "2025-09-10",
			&CapitalActivity{Amount: MustMoney("175000.00"), Status: StatusCompleted, ActivityDetails: ActivityDetails{ActivityDate: MustDate("2025-09-15"), Description: "Distribution no. 1: part of Company A syndicated to co-investors at cost, recallable"}},
			demoRecallableDistribution("100000.00", "1690500.00", "2000000.00"),
			demoRecallableDistribution("50000.00", "844000.00", "1000000.00"),
			demoRecallableDistribution("25000.00", "422000.00", "500000.00")),
		demoDocument("DOC003", KindCapitalAccountStatement, "Q3 2025 capital account statements", "2025-09-30", nil,
			demoQ3("409500.00", "100000.00", "7500.00", "2000.00", "9000.00", "309000.00", "2000000.00", "1690500.00"),
			demoQ3("206000.00", "50000.00", "5000.00", "1000.00", "4500.00", "154500.00", "1000000.00", "844000.00"),
			demoQ3("103000.00", "25000.00", "2500.00", "500.00", "2250.00", "77250.00", "500000.00", "422000.00")),
		demoDocument("DOC004", KindCapitalCallNotice, "Capital call notice no. 2, due 2025-10-20", "2025-10-06",
			&CapitalActivity{Amount: MustMoney("893500.00"), Status: StatusCompleted, ActivityDetails: ActivityDetails{ActivityDate: MustDate("2025-10-20"), Description: "Call no. 2: Company B, Q4 2025 management fee, fund expenses"}},
			demoCall("2025-10-20", StatusCompleted, "500000.00", "7500.00", "2000.00", "509500.00", "1181000.00", "2000000.00"),
			demoCall("2025-10-20", StatusCompleted, "250000.00", "5000.00", "1000.00", "256000.00", "588000.00", "1000000.00"),
			demoCall("2025-10-20", StatusCompleted, "125000.00", "2500.00", "500.00", "128000.00", "294000.00", "500000.00")),
		demoDocument("DOC005", KindCapitalCallNotice, "Capital call notice no. 3, due 2025-12-01: recall of distribution no. 1", "2025-11-14",
			&CapitalActivity{Amount: MustMoney("175000.00"), Status: StatusCompleted, ActivityDetails: ActivityDetails{ActivityDate: MustDate("2025-12-01"), Description: "Call no. 3: recall of distribution no. 1 for a follow-on investment in Company A"}},
			demoRecall("100000.00", "1081000.00", "2000000.00"),
			demoRecall("50000.00", "538000.00", "1000000.00"),
			demoRecall("25000.00", "269000.00", "500000.00")),
		demoDocument("DOC006", KindDistributionNotice, "Distribution notice no. 2, paid 2025-12-15", "2025-12-08",
			&CapitalActivity{Amount: MustMoney("96250.00"), Status: StatusCompleted, ActivityDetails: ActivityDetails{ActivityDate: MustDate("2025-12-15"), Description: "Distribution no. 2: partial sale of Company A and its dividend"}},
			demoDistribution("55000.00", "40000.00", "12000.00", "3000.00", ""),
			demoDistribution("27500.00", "20000.00", "6000.00", "1500.00", ""),
			demoDistribution("13750.00", "10000.00", "3000.00", "750.00", "225.00")),
	}
	for _, restated := range []bool{false, true} {
		title := "Q4 2025 capital account statements"
		unrealized := [3]string{"16000.00", "8000.00", "4000.00"}
		ending := [3]string{"885000.00", "442500.00", "221250.00"}
		if restated {
			title += " (restated: Company B revalued)"
			unrealized = [3]string{"21000.00", "10500.00", "5250.00"}
			ending = [3]string{"890000.00", "445000.00", "222500.00"}
		}
		docs = append(docs, demoDocument("DOC007", KindCapitalAccountStatement, title, "2025-12-31", nil,
			demoQ4("309000.00", "609500.00", "55000.00", "7500.00", "2000.00", "3000.00", "12000.00", unrealized[0], ending[0], "2000000.00", "1690500.00", "1081000.00"),
			demoQ4("154500.00", "306000.00", "27500.00", "5000.00", "1000.00", "1500.00", "6000.00", unrealized[1], ending[1], "1000000.00", "844000.00", "538000.00"),
			demoQ4("77250.00", "153000.00", "13750.00", "2500.00", "500.00", "750.00", "3000.00", unrealized[2], ending[2], "500000.00", "422000.00", "269000.00")))
	}
	return docs
}

// demoInvestors are the demo's positions and their investors, in the order
// every demo document lists them.
var demoInvestors = [3][2]string{{"POSITION_1", "INVESTOR_1"}, {"POSITION_2", "INVESTOR_2"}, {"POSITION_3", "INVESTOR_3"}}

// demoDocument is a document of FUND_A in USD whose positions are the three
// given, in demoInvestors' order.
func demoDocument(id string, kind Kind, title, asOf string, activity *CapitalActivity, ps ...Position) Document {
	for i := range ps {
		ps[i].ID, ps[i].InvestorID = demoInvestors[i][0], demoInvestors[i][1]
	}
	return Document{ID: id, CapitalActivity: activity, Positions: ps, DocumentFields: DocumentFields{FundID: "FUND_A", Kind: kind, Title: title, AsOf: MustDate(asOf), Currency: "USD"}}
}

func demoMoney(s string) *Money { m := MustMoney(s); return &m }

// demoCallNotice1 is the first call notice, as issued (Pending) or once paid
// (Completed): the commitments are stated here first.
func demoCallNotice1(status Status) Document {
	return demoDocument("DOC001", KindCapitalCallNotice, "Capital call notice no. 1, due 2025-08-01", "2025-07-15",
		&CapitalActivity{Amount: MustMoney("718500.00"), Status: status, ActivityDetails: ActivityDetails{ActivityDate: MustDate("2025-08-01"), Description: "Call no. 1: Company A, Q3 2025 management fee, organisation expenses"}},
		demoCall("2025-08-01", status, "400000.00", "7500.00", "2000.00", "409500.00", "1590500.00", "2000000.00"),
		demoCall("2025-08-01", status, "200000.00", "5000.00", "1000.00", "206000.00", "794000.00", "1000000.00"),
		demoCall("2025-08-01", status, "100000.00", "2500.00", "500.00", "103000.00", "397000.00", "500000.00"))
}

// demoCall is a call split into investment, management fee and fund
// expenses, with the unfunded commitment after it.
func demoCall(due string, status Status, investment, fee, expenses, amount, unfunded, commitment string) Position {
	return Position{
		CapitalCall:        &CapitalCallItem{Amount: MustMoney(amount), Status: status, CallDetails: CallDetails{DueDate: MustDate(due), CallLines: CallLines{Investment: demoMoney(investment), ManagementFee: demoMoney(fee), FundExpenses: demoMoney(expenses)}}},
		UnfundedCommitment: &UnfundedCommitmentItem{Amount: MustMoney(unfunded), Status: StatusActive, UnfundedDetails: UnfundedDetails{UnfundedLines: UnfundedLines{Commitment: demoMoney(commitment)}}},
	}
}

// demoRecall calls back a recallable distribution: one typed investment
// line, stated rather than mapped, that reduces unfunded commitment again.
func demoRecall(amount, unfunded, commitment string) Position {
	return Position{
		CapitalCall: &CapitalCallItem{Amount: MustMoney(amount), Status: StatusCompleted,

			Transactions: []Transaction{{Type: "investment", Amount: MustMoney(amount), Unfunded: Reduces}}, CallDetails: CallDetails{DueDate: MustDate("2025-12-01"), CallLines: CallLines{Investment: demoMoney(amount)}},
		},
		UnfundedCommitment: &UnfundedCommitmentItem{Amount: MustMoney(unfunded), Status: StatusActive, UnfundedDetails: UnfundedDetails{UnfundedLines: UnfundedLines{Commitment: demoMoney(commitment)}}},
	}
}

// demoRecallableDistribution returns capital that may be called again, with
// the unfunded commitment it raises.
func demoRecallableDistribution(amount, unfunded, commitment string) Position {
	return Position{
		Distribution:       &DistributionItem{Amount: MustMoney(amount), Status: StatusCompleted, DistributionDetails: DistributionDetails{PaymentDate: MustDate("2025-09-15"), DistributionLines: DistributionLines{ReturnOfCapital: demoMoney(amount), Recallable: demoMoney(amount)}}},
		UnfundedCommitment: &UnfundedCommitmentItem{Amount: MustMoney(unfunded), Status: StatusActive, UnfundedDetails: UnfundedDetails{UnfundedLines: UnfundedLines{Commitment: demoMoney(commitment)}}},
	}
}

// demoDistribution is a permanent distribution; withholding is "" when
// none is withheld.
func demoDistribution(amount, returnOfCapital, gain, income, withholding string) Position {
	x := &DistributionItem{Amount: MustMoney(amount), Status: StatusCompleted, DistributionDetails: DistributionDetails{PaymentDate: MustDate("2025-12-15"), DistributionLines: DistributionLines{ReturnOfCapital: demoMoney(returnOfCapital), RealizedGain: demoMoney(gain), Income: demoMoney(income)}}}
	if withholding != "" {
		x.Withholding = demoMoney(withholding)
	}
	return Position{Distribution: x}
}

// demoQ3 is a Q3 2025 statement: the fund's first quarter, so it begins at
// zero NAV and the whole commitment unfunded; the quarter's one
// distribution is recallable whole, so A.2 adds it back.
func demoQ3(contributions, distributions, fee, expenses, unrealized, ending, commitment, endingUnfunded string) Position {
	neg := func(s string) *Money { m := Money{}.Sub(MustMoney(s)); return &m }
	return Position{CapitalAccount: &CapitalAccount{PeriodStart: MustDate("2025-07-01"),
		BeginningNAV: MustMoney("0.00"), Contributions: demoMoney(contributions), Distributions: neg(distributions),
		ManagementFeesGross: neg(fee), PartnershipExpenses: neg(expenses), NetUnrealizedGainLoss: demoMoney(unrealized), EndingNAV: MustMoney(ending),
		TotalCommitment: demoMoney(commitment), BeginningUnfundedCommitment: demoMoney(commitment), LessContributions: neg(contributions),
		PlusRecallableDistributions: demoMoney(distributions), EndingUnfundedCommitment: demoMoney(endingUnfunded)}}
}

// demoQ4 is a Q4 2025 statement.
func demoQ4(beginning, contributions, distributions, fee, expenses, income, realized, unrealized, ending, commitment, beginningUnfunded, endingUnfunded string) Position {
	neg := func(s string) *Money { m := Money{}.Sub(MustMoney(s)); return &m }
	return Position{CapitalAccount: &CapitalAccount{PeriodStart: MustDate("2025-10-01"),
		BeginningNAV: MustMoney(beginning), Contributions: demoMoney(contributions), Distributions: neg(distributions),
		ManagementFeesGross: neg(fee), PartnershipExpenses: neg(expenses), InvestmentIncome: demoMoney(income),
		NetRealizedGainLoss: demoMoney(realized), NetUnrealizedGainLoss: demoMoney(unrealized), EndingNAV: MustMoney(ending),
		TotalCommitment: demoMoney(commitment), BeginningUnfundedCommitment: demoMoney(beginningUnfunded), LessContributions: neg(contributions),
		EndingUnfundedCommitment: demoMoney(endingUnfunded)}}
}

// DemoFund is one fund record of the demo dataset.
type DemoFund struct {
	ID string
	FundFields
}

// DemoInvestor is one investor record of the demo dataset.
type DemoInvestor struct {
	ID string
	InvestorFields
}

// DemoLatest is each demo document at its latest version, in the order of
// their first versions.
func DemoLatest() []Document {
	var out []Document
	index := map[string]int{}
	for _, d := range DemoVersions() {
		if i, ok := index[d.ID]; ok {
			out[i] = d
			continue
		}
		index[d.ID] = len(out)
		out = append(out, d)
	}
	return out
}

// DemoRecords returns the demo's records: FUND_A (its first close in
// 2025, five months before its first call, with a target of 250 million
// dollars), and INVESTOR_1 and INVESTOR_2. INVESTOR_3 has no record: it is
// known from the documents only, as an investor is until its onboarding
// is entered, and answered by its ID alone.
func DemoRecords() ([]DemoFund, []DemoInvestor) {
	return []DemoFund{{ID: "FUND_A", FundFields: FundFields{
			Name: "Fund A", LegalName: "Fund A Partners, L.P.", BaseCurrency: "USD", VintageYear: 2025,
			TargetSize: demoMoney("250000000.00"), InceptionDate: MustDate("2025-02-03"),
			ExternalIDs: ExternalIDs{"carta": "FA-2025-001", "burgiss": "BG-77123"},
		}}},
		[]DemoInvestor{
			{ID: "INVESTOR_1", InvestorFields: InvestorFields{DisplayName: "Northwind State Pension Plan", InvestorType: InvestorPension,
				ExternalIDs: ExternalIDs{"carta": "LP-0001"}}},
			{ID: "INVESTOR_2", InvestorFields: InvestorFields{DisplayName: "Alder University Endowment", InvestorType: InvestorEndowment}},
		}
}
