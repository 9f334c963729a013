package fund

// DemoVersions returns the demo dataset as the writes that build it, in
// order: DOC001 (two versions, so it has history) and DOC002 of FUND_A, for
// POSITION_1 (INVESTOR_1) and POSITION_2 (INVESTOR_2), then the quarterly
// capital account statements of both positions: DOC003 for Q3 2025 and
// DOC004 for Q4 2025, which is restated once (a corrected unrealized gain).
// Each statement rolls forward exactly and reconciles with the notices.
func DemoVersions() []Document {
	m := func(s string) *Money { v := MustMoney(s); return &v }
	doc001 := func(activity CapitalActivity) Document {
		return Document{
			ID: "DOC001", FundID: "FUND_A", Kind: KindCapitalAccountStatement,
			Title: "Q3 2025 capital account statement", AsOf: MustDate("2025-09-01"), Currency: "USD",
			CapitalActivity: &activity,
			Positions: []Position{
				{ID: "POSITION_1", InvestorID: "INVESTOR_1",
					CapitalCall:        &CapitalCallItem{Amount: MustMoney("500000.00"), Status: StatusPending, DueDate: MustDate("2025-09-30"), CallLines: CallLines{Investment: m("480000.00"), ManagementFee: m("15000.00"), FundExpenses: m("5000.00")}},
					Distribution:       &DistributionItem{Amount: MustMoney("75000.00"), Status: StatusCompleted, Date: MustDate("2025-08-20"), DistributionLines: DistributionLines{ReturnOfCapital: m("50000.00"), RealizedGain: m("20000.00"), Income: m("5000.00"), Recallable: m("10000.00"), Withholding: m("1500.00")}},
					UnfundedCommitment: &UnfundedCommitmentItem{Amount: MustMoney("1500000.00"), Status: StatusActive, UnfundedLines: UnfundedLines{Commitment: m("2000000.00")}}},
				{ID: "POSITION_2", InvestorID: "INVESTOR_2",
					CapitalCall:        &CapitalCallItem{Amount: MustMoney("300000.00"), Status: StatusPending, DueDate: MustDate("2025-09-30")},
					Distribution:       &DistributionItem{Amount: MustMoney("45000.00"), Status: StatusCompleted, Date: MustDate("2025-08-20")},
					UnfundedCommitment: &UnfundedCommitmentItem{Amount: MustMoney("850000.00"), Status: StatusActive, UnfundedLines: UnfundedLines{Commitment: m("1150000.00")}}},
			},
		}
	}
	return []Document{
		doc001(CapitalActivity{Amount: MustMoney("450000.00"), Status: StatusCompleted, Date: MustDate("2025-08-15"), Description: "Initial capital activity"}),
		doc001(CapitalActivity{Amount: MustMoney("500000.00"), Status: StatusPending, Date: MustDate("2025-09-15"), Description: "Restated capital activity"}),
		{
			ID: "DOC002", FundID: "FUND_A", Kind: KindCapitalCallNotice,
			Title: "Capital call notice 2025-10", AsOf: MustDate("2025-10-01"), Currency: "USD",
			Positions: []Position{
				{ID: "POSITION_1", InvestorID: "INVESTOR_1",
					CapitalCall:  &CapitalCallItem{Amount: MustMoney("750000.00"), Status: StatusCompleted, DueDate: MustDate("2025-10-15")},
					Distribution: &DistributionItem{Amount: MustMoney("120000.00"), Status: StatusPending, Date: MustDate("2025-10-20")}},
				{ID: "POSITION_2", InvestorID: "INVESTOR_2",
					CapitalCall: &CapitalCallItem{Amount: MustMoney("400000.00"), Status: StatusPending, DueDate: MustDate("2025-10-15")}},
			},
		},
		demoStatement("DOC003", "Q3 2025 capital account statements", "2025-09-30", "2025-07-01",
			CapitalAccount{BeginningNAV: MustMoney("0.00"), Contributions: m("500000.00"), Distributions: m("-75000.00"),
				ManagementFeesGross: m("-15000.00"), PartnershipExpenses: m("-5000.00"), InvestmentIncome: m("6000.00"),
				NetRealizedGainLoss: m("20000.00"), NetUnrealizedGainLoss: m("9000.00"), EndingNAV: MustMoney("440000.00"),
				TotalCommitment: m("2000000.00"), BeginningUnfundedCommitment: m("2000000.00"), LessContributions: m("-500000.00"),
				PlusRecallableDistributions: m("10000.00"), EndingUnfundedCommitment: m("1510000.00")},
			CapitalAccount{BeginningNAV: MustMoney("0.00"), Contributions: m("300000.00"), Distributions: m("-45000.00"),
				ManagementFeesGross: m("-9000.00"), NetUnrealizedGainLoss: m("24000.00"), EndingNAV: MustMoney("270000.00"),
				TotalCommitment: m("1150000.00"), BeginningUnfundedCommitment: m("1150000.00"), LessContributions: m("-300000.00"),
				EndingUnfundedCommitment: m("850000.00")}),
		demoStatement("DOC004", "Q4 2025 capital account statements", "2025-12-31", "2025-10-01",
			demoQ4Position1("45000.00", "1100000.00"), demoQ4Position2()),
		demoStatement("DOC004", "Q4 2025 capital account statements (restated)", "2025-12-31", "2025-10-01",
			demoQ4Position1("55000.00", "1110000.00"), demoQ4Position2()),
	}
}

func demoStatement(id, title, asOf, periodStart string, p1, p2 CapitalAccount) Document {
	p1.PeriodStart, p2.PeriodStart = MustDate(periodStart), MustDate(periodStart)
	return Document{ID: id, FundID: "FUND_A", Kind: KindCapitalAccountStatement, Title: title, AsOf: MustDate(asOf), Currency: "USD",
		Positions: []Position{{ID: "POSITION_1", InvestorID: "INVESTOR_1", CapitalAccount: &p1}, {ID: "POSITION_2", InvestorID: "INVESTOR_2", CapitalAccount: &p2}}}
}

func demoQ4Position1(unrealized, ending string) CapitalAccount {
	m := func(s string) *Money { v := MustMoney(s); return &v }
	return CapitalAccount{BeginningNAV: MustMoney("440000.00"), Contributions: m("750000.00"), Distributions: m("-120000.00"),
		ManagementFeesGross: m("-15000.00"), NetUnrealizedGainLoss: m(unrealized), EndingNAV: MustMoney(ending),
		TotalCommitment: m("2000000.00"), BeginningUnfundedCommitment: m("1510000.00"), LessContributions: m("-750000.00"),
		EndingUnfundedCommitment: m("760000.00")}
}

func demoQ4Position2() CapitalAccount {
	m := func(s string) *Money { v := MustMoney(s); return &v }
	return CapitalAccount{BeginningNAV: MustMoney("270000.00"), Contributions: m("400000.00"),
		ManagementFeesGross: m("-9000.00"), NetUnrealizedGainLoss: m("19000.00"), EndingNAV: MustMoney("680000.00"),
		TotalCommitment: m("1150000.00"), BeginningUnfundedCommitment: m("850000.00"), LessContributions: m("-400000.00"),
		EndingUnfundedCommitment: m("450000.00")}
}
