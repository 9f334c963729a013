package store

import (
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

func TestDocumentHistoryRangeIncludesEveryVersionOfTheEndDate(t *testing.T) {
	lo, hi := DocumentHistoryRange(fund.MustDate("2025-01-01"), fund.MustDate("2025-09-01"))
	for _, sk := range []string{DocumentHistorySK(fund.MustDate("2025-09-01"), 1), DocumentHistorySK(fund.MustDate("2025-09-01"), 9999999), DocumentHistorySK(fund.MustDate("2025-01-01"), 1)} {
		if sk < lo || sk > hi {
			t.Errorf("%s outside [%s, %s]", sk, lo, hi)
		}
	}
	for _, sk := range []string{DocumentHistorySK(fund.MustDate("2025-09-02"), 1), DocumentHistorySK(fund.MustDate("2024-12-31"), 7), DocumentLatestSK} {
		if sk >= lo && sk <= hi {
			t.Errorf("%s inside [%s, %s]", sk, lo, hi)
		}
	}
	clo, chi := CapitalRange()
	// Statements (CAPITAL_ACCOUNT#) are in it too; Capital filters them out.
	for _, sk := range []string{HeadSK, CapitalActivityLatestSK, PositionItemSK(fund.CapitalCall, "P1"), PositionItemSK(fund.Statement, "P1")} {
		if sk < clo || sk > chi {
			t.Errorf("%s outside the capital range", sk)
		}
	}
	for _, sk := range []string{PositionItemSK(fund.Distribution, "P1"), DocumentLatestSK, PositionItemSK(fund.UnfundedCommitment, "P1")} {
		if sk >= clo && sk <= chi {
			t.Errorf("%s inside the capital range", sk)
		}
	}
}

func TestStatementPrefixSelectsStatementsOnly(t *testing.T) {
	for _, k := range fund.ItemKinds {
		if got := strings.HasPrefix(PositionItemSK(k, "P1"), StatementPrefix); got != (k == fund.Statement) {
			t.Errorf("the statement prefix selects %s: %v", PositionItemSK(k, "P1"), got)
		}
	}
	for _, sk := range []string{HeadSK, CapitalActivityLatestSK, CapitalActivityHistorySK(fund.MustDate("2025-06-30"), 1), DocumentLatestSK} {
		if strings.HasPrefix(sk, StatementPrefix) {
			t.Errorf("the statement prefix selects %s", sk)
		}
	}
}
