package fund

import (
	"slices"
	"strings"
	"time"
)

// PositionItem is one position-level entity (capital call, distribution,
// unfunded commitment or capital account statement) as read back: what one
// document, at one version, reports for one position.
type PositionItem struct {
	Kind            ItemKind
	DocumentID      string
	DocumentVersion int
	FundID          string
	InvestorID      string
	PositionID      string
	AsOf            Date      // the document's as-of date
	CreatedAt       time.Time // when the document version was written
	Currency        string
	Amount          Money
	Status          Status
	Date            Date // due date of a call, payment date of a distribution

	// The lines of its kind; the others are empty.
	CallLines
	DistributionLines
	UnfundedLines
	// Transactions are a call's or a distribution's stated typed lines.
	Transactions []Transaction
	// CapitalAccount is a statement's (kind Statement), whose Amount is its
	// ending NAV.
	CapitalAccount *CapitalAccount
}

// TypedLines returns a call's or a distribution's typed lines: stated, or
// derived from its line items (CallTransactions, DistributionTransactions).
func (it *PositionItem) TypedLines() []Transaction {
	switch it.Kind {
	case CapitalCall:
		return CallTransactions(it.Amount, it.Transactions, it.CallLines)
	case Distribution:
		return DistributionTransactions(it.Amount, it.Transactions, it.DistributionLines)
	}
	return nil
}

// AppendItems appends what position p of d reports to out: one item per kind
// present, in ItemKinds order.
func (d *Document) AppendItems(p *Position, out []PositionItem) []PositionItem {
	base := PositionItem{DocumentID: d.ID, DocumentVersion: d.Version, FundID: d.FundID, InvestorID: p.InvestorID,
		PositionID: p.ID, AsOf: d.AsOf, CreatedAt: d.CreatedAt, Currency: d.Currency}
	if c := p.CapitalAccount; c != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.Date, it.CapitalAccount = Statement, c.EndingNAV, StatusCompleted, c.PeriodStart, c
		out = append(out, it)
	}
	if c := p.CapitalCall; c != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.Date, it.CallLines, it.Transactions = CapitalCall, c.Amount, c.Status, c.DueDate, c.CallLines, c.Transactions
		out = append(out, it)
	}
	if x := p.Distribution; x != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.Date, it.DistributionLines, it.Transactions = Distribution, x.Amount, x.Status, x.Date, x.DistributionLines, x.Transactions
		out = append(out, it)
	}
	if u := p.UnfundedCommitment; u != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.UnfundedLines = UnfundedCommitment, u.Amount, u.Status, u.UnfundedLines
		out = append(out, it)
	}
	return out
}

// DocumentHeader is the document-level part of one version, without its
// positions: what the latest and historical document records hold.
type DocumentHeader struct {
	ID            string
	FundID        string
	Kind          Kind
	Title         string
	AsOf          Date
	Currency      string
	PositionCount int
	Version       int
	CommitID      string
	CreatedAt     time.Time
	CreatedBy     string
}

// ActivityRecord is one version's capital activity as read back.
type ActivityRecord struct {
	CapitalActivity
	Version int
}

// GroupPositions folds position items into positions, sorted by ID.
func GroupPositions(items []PositionItem) []Position {
	var out []Position
	index := map[string]int{}
	for _, it := range items {
		i, ok := index[it.PositionID]
		if !ok {
			i = len(out)
			index[it.PositionID] = i
			out = append(out, Position{ID: it.PositionID, InvestorID: it.InvestorID})
		}
		p := &out[i]
		switch it.Kind {
		case Statement:
			p.CapitalAccount = it.CapitalAccount
		case CapitalCall:
			p.CapitalCall = &CapitalCallItem{
				Amount:       it.Amount,
				Status:       it.Status,
				DueDate:      it.Date,
				CallLines:    it.CallLines,
				Transactions: it.Transactions,
			}
		case Distribution:
			p.Distribution = &DistributionItem{
				Amount:            it.Amount,
				Status:            it.Status,
				Date:              it.Date,
				DistributionLines: it.DistributionLines,
				Transactions:      it.Transactions,
			}
		case UnfundedCommitment:
			p.UnfundedCommitment = &UnfundedCommitmentItem{Amount: it.Amount, Status: it.Status, UnfundedLines: it.UnfundedLines}
		}
	}
	d := Document{Positions: out}
	d.SortPositions()
	return d.Positions
}

// ItemKind is one of the four position-level entities.
type ItemKind string

// The position-level entities, as spelled in sort keys. A Statement is a
// position's capital account statement (CapitalAccount).
const (
	Statement          ItemKind = "CAPITAL_ACCOUNT"
	CapitalCall        ItemKind = "CAPITAL_CALL"
	Distribution       ItemKind = "DISTRIBUTION"
	UnfundedCommitment ItemKind = "UNFUNDED_COMMITMENT"
)

// ItemKinds lists the position-level entities in sort-key order.
var ItemKinds = []ItemKind{Statement, CapitalCall, Distribution, UnfundedCommitment}

// The entity names of the position items: an item's type in answers, and
// the Type attribute a store keeps it under.
const (
	TypeCapitalAccount     = "CapitalAccount"
	TypeCapitalCall        = "CapitalCall"
	TypeDistribution       = "Distribution"
	TypeUnfundedCommitment = "UnfundedCommitment"
)

// Type returns the item kind's entity name.
func (k ItemKind) Type() string {
	switch k {
	case Statement:
		return TypeCapitalAccount
	case CapitalCall:
		return TypeCapitalCall
	case Distribution:
		return TypeDistribution
	default:
		return TypeUnfundedCommitment
	}
}

// ParseItemKind accepts the entity name ("CapitalCall") or its key spelling
// ("CAPITAL_CALL").
func ParseItemKind(s string) (ItemKind, bool) {
	for _, k := range ItemKinds {
		if s == string(k) || s == k.Type() {
			return k, true
		}
	}
	return "", false
}

// Items lists the document's position items in sort-key order: capital
// calls, then distributions, then unfunded commitments, each by position.
func (d *Document) Items() []PositionItem {
	out := d.ItemsByPosition()
	SortItems(out)
	return out
}

// ItemsByPosition lists the document's position items position by position,
// in the order of d.Positions, each position's in ItemKinds order.
func (d *Document) ItemsByPosition() []PositionItem {
	out := make([]PositionItem, 0, len(d.Positions)*len(ItemKinds))
	for i := range d.Positions {
		out = d.AppendItems(&d.Positions[i], out)
	}
	return out
}

// SortItems orders items as their latest-view sort keys do: by kind, then position.
func SortItems(items []PositionItem) {
	slices.SortFunc(items, func(a, b PositionItem) int {
		if a.Kind != b.Kind {
			return strings.Compare(string(a.Kind), string(b.Kind))
		}
		return strings.Compare(a.PositionID, b.PositionID)
	})
}
