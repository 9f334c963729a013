package wire

import (
	"github.com/fundsvc/fundsvc/fund"
)

// PositionItem is one position item, flat, as the position routes and the
// overview return it: fund's read form whole, whose details of other kinds
// are empty and left out, with the typed lines of a call or a distribution
// its document stated, or, with AllLines, those mapped from its line items
// when it states none.
type PositionItem struct {
	fund.PositionItem
	Transactions []TransactionLine `json:"transactions,omitempty" doc:"A capital call's or distribution's typed lines as its document stated them. With 'transactions=all', a call or distribution that states none carries those its line items map onto (docs/analytics.md, \"Transaction types\"), each marked 'stated' false. Absent otherwise, and on other items."`
}

// TypedLines chooses which typed lines the calls and distributions of an
// answer carry: the value of the routes' query parameter transactions.
type TypedLines string

const (
	// StatedLines, the default, answers the lines a document states and
	// nothing for an item that states none: the mapped lines only repeat
	// its line items with constant labels, as much again as the item.
	StatedLines TypedLines = "stated"
	// AllLines answers every call's and distribution's typed lines, stated
	// or mapped from its line items.
	AllLines TypedLines = "all"
)

// TypedLinesValues are the values of TypedLines, the default first.
func TypedLinesValues() []string { return []string{string(StatedLines), string(AllLines)} }

// TransactionLine is one typed line of a call or a distribution as answers
// show it, with its place, ILPA's label and its net treatment.
type TransactionLine struct {
	Line int `json:"line" doc:"The line's place in its item: 1, 2, …"`
	fund.Transaction
	ILPALabel    string `json:"ilpaLabel" doc:"ILPA's label of the transaction type."`
	NetTreatment string `json:"netTreatment" doc:"How net IRR and TVPI count the line: paid_in, paid_in_returned, distributed or excluded."`
	Stated       bool   `json:"stated" doc:"Whether the item states its typed lines (true) or they are mapped from its line items (false, with 'transactions=all' only)."`
}

// TransactionLinesOf renders an item's typed lines: those it states, or,
// with AllLines, those mapped from its line items when it states none.
func TransactionLinesOf(it *fund.PositionItem, lines TypedLines) []TransactionLine {
	stated := len(it.Transactions) > 0
	if !stated && lines != AllLines {
		return nil
	}
	typed := it.TypedLines()
	if typed == nil {
		return nil
	}
	out := make([]TransactionLine, 0, len(typed))
	for i, l := range typed {
		info := l.Info()
		out = append(out, TransactionLine{Line: i + 1, Transaction: l, ILPALabel: info.Label, NetTreatment: string(info.Net), Stated: stated})
	}
	return out
}

// ItemOf renders an item with the typed lines chosen.
func ItemOf(it fund.PositionItem, lines TypedLines) PositionItem {
	return PositionItem{PositionItem: it, Transactions: TransactionLinesOf(&it, lines)}
}

// ItemsOf renders items with the typed lines chosen.
func ItemsOf(items []fund.PositionItem, lines TypedLines) []PositionItem {
	return renderAll(items, func(it fund.PositionItem) PositionItem { return ItemOf(it, lines) })
}
