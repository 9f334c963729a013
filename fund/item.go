package fund

import (
	"time"
)

// Item is the stored shape of every entity in the table: one flat struct with
// the union of all attributes, so that a Query over a mixed partition decodes
// in one pass. Only this package builds Items; other packages read them.
type Item struct {
	PK     string
	SK     string
	GSI1PK string `dynamo:",omitempty"`
	GSI1SK string `dynamo:",omitempty"`
	GSI2PK string `dynamo:",omitempty"`
	GSI2SK string `dynamo:",omitempty"`
	Type   string

	DocumentID string `dynamo:",omitempty"`
	FundID     string `dynamo:",omitempty"`
	InvestorID string `dynamo:",omitempty"`
	PositionID string `dynamo:",omitempty"`

	// Document-level attributes.
	Kind          string `dynamo:",omitempty"`
	Title         string `dynamo:",omitempty"`
	AsOf          Date   `dynamo:",omitempty"`
	Currency      string `dynamo:",omitempty"`
	PositionCount int    `dynamo:",omitempty"`

	// Commit protocol (see docs/commit-protocol.md).
	Version      int    `dynamo:",omitempty"`
	CommitID     string `dynamo:",omitempty"`
	ContentHash  string `dynamo:",omitempty"`
	Materialized bool   `dynamo:",omitempty"`
	Tombstone    bool   `dynamo:",omitempty"`

	// Amounts and their line items.
	Status          string `dynamo:",omitempty"`
	Amount          *Money `dynamo:",omitempty"`
	Date            Date   `dynamo:",omitempty"`
	Description     string `dynamo:",omitempty"`
	Investment      *Money `dynamo:",omitempty"`
	ManagementFee   *Money `dynamo:",omitempty"`
	FundExpenses    *Money `dynamo:",omitempty"`
	ReturnOfCapital *Money `dynamo:",omitempty"`
	RealizedGain    *Money `dynamo:",omitempty"`
	Income          *Money `dynamo:",omitempty"`
	Recallable      *Money `dynamo:",omitempty"`
	Withholding     *Money `dynamo:",omitempty"`
	Commitment      *Money `dynamo:",omitempty"`

	CreatedAt time.Time `dynamo:",omitempty"`
	CreatedBy string    `dynamo:",omitempty"`
	RequestID string    `dynamo:",omitempty"` // on the head: the idempotent request that wrote it
}

// PositionItem is one position-level entity (capital call, distribution or
// unfunded commitment) as read back: what one document, at one version,
// reports for one position.
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

	Investment      *Money
	ManagementFee   *Money
	FundExpenses    *Money
	ReturnOfCapital *Money
	RealizedGain    *Money
	Income          *Money
	Recallable      *Money
	Withholding     *Money
	Commitment      *Money
}

// ItemKindOfType maps a stored Type back to its item kind.
func ItemKindOfType(t string) (ItemKind, bool) {
	for _, k := range ItemKinds {
		if k.Type() == t {
			return k, true
		}
	}
	return "", false
}

// IsPositionItem reports whether the item is a live (not tombstoned)
// capital call, distribution or unfunded commitment.
func (it *Item) IsPositionItem() bool {
	_, ok := ItemKindOfType(it.Type)
	return ok && !it.Tombstone
}

// PositionItem converts a stored position item to its read form.
func (it *Item) PositionItem() PositionItem {
	k, _ := ItemKindOfType(it.Type)
	p := PositionItem{
		Kind: k, DocumentID: it.DocumentID, DocumentVersion: it.Version,
		FundID: it.FundID, InvestorID: it.InvestorID, PositionID: it.PositionID,
		AsOf: it.AsOf, CreatedAt: it.CreatedAt, Currency: it.Currency, Status: Status(it.Status), Date: it.Date,
		Investment: it.Investment, ManagementFee: it.ManagementFee, FundExpenses: it.FundExpenses,
		ReturnOfCapital: it.ReturnOfCapital, RealizedGain: it.RealizedGain, Income: it.Income,
		Recallable: it.Recallable, Withholding: it.Withholding, Commitment: it.Commitment,
	}
	if it.Amount != nil {
		p.Amount = *it.Amount
	}
	return p
}

// itemsOf appends what position p of d reports to out: one item per kind
// present, in ItemKinds order.
func (d *Document) itemsOf(p *Position, out []PositionItem) []PositionItem {
	base := PositionItem{DocumentID: d.ID, DocumentVersion: d.Version, FundID: d.FundID, InvestorID: p.InvestorID,
		PositionID: p.ID, AsOf: d.AsOf, CreatedAt: d.CreatedAt, Currency: d.Currency}
	if c := p.CapitalCall; c != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.Date = CapitalCall, c.Amount, c.Status, c.DueDate
		it.Investment, it.ManagementFee, it.FundExpenses = c.Investment, c.ManagementFee, c.FundExpenses
		out = append(out, it)
	}
	if x := p.Distribution; x != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.Date = Distribution, x.Amount, x.Status, x.Date
		it.ReturnOfCapital, it.RealizedGain, it.Income = x.ReturnOfCapital, x.RealizedGain, x.Income
		it.Recallable, it.Withholding = x.Recallable, x.Withholding
		out = append(out, it)
	}
	if u := p.UnfundedCommitment; u != nil {
		it := base
		it.Kind, it.Amount, it.Status, it.Commitment = UnfundedCommitment, u.Amount, u.Status, u.Commitment
		out = append(out, it)
	}
	return out
}

// stored is the record of a position item, without keys.
func (p *PositionItem) stored() Item {
	amt := p.Amount
	return Item{
		Type: p.Kind.Type(), DocumentID: p.DocumentID, FundID: p.FundID, InvestorID: p.InvestorID, PositionID: p.PositionID,
		AsOf: p.AsOf, Currency: p.Currency, Version: p.DocumentVersion, CreatedAt: p.CreatedAt,
		Amount: &amt, Status: string(p.Status), Date: p.Date,
		Investment: p.Investment, ManagementFee: p.ManagementFee, FundExpenses: p.FundExpenses,
		ReturnOfCapital: p.ReturnOfCapital, RealizedGain: p.RealizedGain, Income: p.Income,
		Recallable: p.Recallable, Withholding: p.Withholding, Commitment: p.Commitment,
	}
}

// positionItems flattens a document's positions into stored items of its
// latest view (with index keys) or of its version partition (without).
func positionItems(d *Document, latest bool) []Item {
	items := make([]Item, 0, len(d.Positions)*len(ItemKinds))
	var reported []PositionItem
	for i := range d.Positions {
		reported = d.itemsOf(&d.Positions[i], reported[:0])
		for j := range reported {
			pi := &reported[j]
			it := pi.stored()
			if latest {
				it.PK, it.SK = DocPK(d.ID), PositionItemSK(pi.Kind, pi.PositionID)
				it.GSI1PK, it.GSI1SK = PositionItemGSI1PK(pi.Kind, pi.PositionID, d.ID), GSI1LatestSK
				it.GSI2PK, it.GSI2SK = PositionGSI2PK(pi.PositionID), PositionItemGSI2SK(pi.Kind, d.ID)
			} else {
				it.PK, it.SK = VersionPK(d.ID, d.CommitID), VersionPositionItemSK(pi.PositionID, pi.Kind)
			}
			items = append(items, it)
		}
	}
	return items
}

// documentItem is the document-level record of d under the given keys.
func documentItem(d *Document, pk, sk string) Item {
	return Item{
		PK: pk, SK: sk, Type: TypeDocument,
		DocumentID: d.ID, FundID: d.FundID, Kind: string(d.Kind), Title: d.Title,
		AsOf: d.AsOf, Currency: d.Currency, PositionCount: len(d.Positions),
		Version: d.Version, CommitID: d.CommitID, CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy,
	}
}

// activityItem is the capital-activity record of d under the given keys.
func activityItem(d *Document, pk, sk string) Item {
	a := d.CapitalActivity
	amt := a.Amount
	return Item{
		PK: pk, SK: sk, Type: TypeCapitalActivity,
		DocumentID: d.ID, FundID: d.FundID, Currency: d.Currency, AsOf: d.AsOf,
		Amount: &amt, Status: string(a.Status), Date: a.Date, Description: a.Description,
		Version: d.Version, CommitID: d.CommitID, CreatedAt: d.CreatedAt,
	}
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

// Header converts a stored document record.
func (it *Item) Header() DocumentHeader {
	return DocumentHeader{
		ID: it.DocumentID, FundID: it.FundID, Kind: Kind(it.Kind), Title: it.Title,
		AsOf: it.AsOf, Currency: it.Currency, PositionCount: it.PositionCount,
		Version: it.Version, CommitID: it.CommitID, CreatedAt: it.CreatedAt, CreatedBy: it.CreatedBy,
	}
}

// ActivityRecord is one version's capital activity as read back.
type ActivityRecord struct {
	CapitalActivity
	Version int
}

// Activity converts a stored capital-activity record.
func (it *Item) Activity() ActivityRecord {
	a := ActivityRecord{Version: it.Version}
	a.Status, a.Date, a.Description = Status(it.Status), it.Date, it.Description
	if it.Amount != nil {
		a.Amount = *it.Amount
	}
	return a
}

// assemble rebuilds a full Document from one version's records.
func assemble(h DocumentHeader, activity *Item, items []PositionItem) Document {
	d := Document{
		ID: h.ID, FundID: h.FundID, Kind: h.Kind, Title: h.Title, AsOf: h.AsOf,
		Currency: h.Currency, Version: h.Version, CommitID: h.CommitID, CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy,
	}
	if activity != nil {
		a := activity.Activity().CapitalActivity
		d.CapitalActivity = &a
	}
	d.Positions = GroupPositions(items)
	return d
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
		case CapitalCall:
			p.CapitalCall = &CapitalCallItem{Amount: it.Amount, Status: it.Status, DueDate: it.Date,
				Investment: it.Investment, ManagementFee: it.ManagementFee, FundExpenses: it.FundExpenses}
		case Distribution:
			p.Distribution = &DistributionItem{Amount: it.Amount, Status: it.Status, Date: it.Date,
				ReturnOfCapital: it.ReturnOfCapital, RealizedGain: it.RealizedGain, Income: it.Income,
				Recallable: it.Recallable, Withholding: it.Withholding}
		case UnfundedCommitment:
			p.UnfundedCommitment = &UnfundedCommitmentItem{Amount: it.Amount, Status: it.Status, Commitment: it.Commitment}
		}
	}
	d := Document{Positions: out}
	d.SortPositions()
	return d.Positions
}
