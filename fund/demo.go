package fund

// DemoVersions returns the demo dataset as the writes that build it, in
// order: DOC001 (two versions, so it has history) and DOC002 of FUND_A, for
// POSITION_1 (INVESTOR_1) and POSITION_2 (INVESTOR_2).
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
	}
}
