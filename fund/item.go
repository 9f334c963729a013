package fund

import (
	"slices"
	"strings"
	"time"
)

// PositionItem is one position-level entity (capital call, distribution,
// unfunded commitment or capital account statement) as read back: what one
// document, at one version, reports for one position. It embeds the
// details structs of every kind; those of other kinds are empty.
type PositionItem struct {
	Kind            ItemKind  `json:"itemType" doc:"What the item is: capital_call, distribution, unfunded_commitment or capital_account."`
	DocumentID      string    `json:"documentId" doc:"The document that reports the item."`
	DocumentVersion int       `json:"documentVersion" doc:"The version of the document this item comes from."`
	FundID          string    `json:"fundId" doc:"The position's fund."`
	InvestorID      string    `json:"investorId" doc:"The position's investor."`
	PositionID      string    `json:"positionId" doc:"The position."`
	AsOf            Date      `json:"asOf" doc:"The document's as-of date."`
	CreatedAt       time.Time `json:"createdAt" doc:"When the document version was written."`
	Currency        string    `json:"currency" doc:"The document's currency."`
	Amount          Money     `json:"amount" doc:"The item's amount; a capital account statement's is its ending NAV."`
	Status          Status    `json:"status" doc:"'pending' or 'completed' for calls and distributions, 'active' for unfunded commitments, 'completed' for statements."`

	CallDetails
	DistributionDetails
	UnfundedDetails
	// Transactions are a call's or a distribution's stated typed lines.
	Transactions []Transaction `json:"transactions,omitempty" doc:"A capital call's or distribution's typed lines as its document stated them (TypedLines adds those its line items map onto when it states none). Absent on other items."`
	// CapitalAccount is a statement's (kind Statement), whose Amount is its
	// ending NAV.
	CapitalAccount *CapitalAccount `json:"capitalAccount,omitempty" doc:"A capital account statement's lines; present on 'capital_account' items only, whose 'amount' is the ending NAV."`
}

// FlowDate is the date an item's money moves: a call's due date, a
// distribution's payment date, otherwise (or when it has none) its
// document's asOf.
func (it *PositionItem) FlowDate() Date {
	var d Date
	switch it.Kind {
	case CapitalCall:
		d = it.DueDate
	case Distribution:
		d = it.PaymentDate
	}
	if d.IsZero() {
		return it.AsOf
	}
	return d
}

// Owner is the item's fund and investor, which decide who may read it.
func (it PositionItem) Owner() (fundID, investorID string) { return it.FundID, it.InvestorID }

// Paid reports whether the item's money has moved: a completed call is paid
// in, a completed distribution distributed.
func (it *PositionItem) Paid() bool { return it.Status == StatusCompleted }

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
		it.Kind, it.Amount, it.Status, it.CapitalAccount = Statement, c.EndingNAV, StatusCompleted, c
		out = append(out, it)
	}
	if c := p.CapitalCall; c != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.CallDetails, it.Transactions = CapitalCall, c.Amount, c.Status, c.CallDetails, c.Transactions
		out = append(out, it)
	}
	if x := p.Distribution; x != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.DistributionDetails, it.Transactions = Distribution, x.Amount, x.Status, x.DistributionDetails, x.Transactions
		out = append(out, it)
	}
	if u := p.UnfundedCommitment; u != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.UnfundedDetails = UnfundedCommitment, u.Amount, u.Status, u.UnfundedDetails
		out = append(out, it)
	}
	return out
}

// DocumentHeader is the document-level part of one version, without its
// positions: what the latest and historical document records hold.
type DocumentHeader struct {
	ID string
	DocumentFields
	PositionCount int
	Version       int
	CommitID      string
	CreatedAt     time.Time
	CreatedBy     string
	Voided        bool // the version that voided the document
}

// Header is the document-level part of d.
func (d *Document) Header() DocumentHeader {
	return DocumentHeader{ID: d.ID, DocumentFields: d.DocumentFields, PositionCount: len(d.Positions),
		Version: d.Version, CommitID: d.CommitID, CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy, Voided: d.Voided}
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
			p.CapitalCall = &CapitalCallItem{Amount: it.Amount, Status: it.Status, CallDetails: it.CallDetails, Transactions: it.Transactions}
		case Distribution:
			p.Distribution = &DistributionItem{Amount: it.Amount, Status: it.Status, DistributionDetails: it.DistributionDetails, Transactions: it.Transactions}
		case UnfundedCommitment:
			p.UnfundedCommitment = &UnfundedCommitmentItem{Amount: it.Amount, Status: it.Status, UnfundedDetails: it.UnfundedDetails}
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

// The entity names of the position items: the Type attribute a store keeps
// them under.
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

// Name is the item kind in the API's and the export's one casing of
// enumerations: capital_account, capital_call, distribution,
// unfunded_commitment.
func (k ItemKind) Name() string { return strings.ToLower(string(k)) }

// MarshalText writes the kind's Name.
func (k ItemKind) MarshalText() ([]byte, error) { return []byte(k.Name()), nil }

// UnmarshalText reads a kind's Name.
func (k *ItemKind) UnmarshalText(b []byte) error {
	v, ok := ParseItemKind(string(b))
	if !ok {
		return Invalid("itemType", "must be one of %v, got %q", ItemKindNames(), b)
	}
	*k = v
	return nil
}

// ItemKindNames lists the kinds' Names, in ItemKinds order.
func ItemKindNames() []string {
	out := make([]string, len(ItemKinds))
	for i, k := range ItemKinds {
		out[i] = k.Name()
	}
	return out
}

// ParseItemKind reads a kind's Name ("capital_call").
func ParseItemKind(s string) (ItemKind, bool) {
	for _, k := range ItemKinds {
		if s == k.Name() {
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
