package store

import (
	"time"

	"github.com/fundsvc/fundsvc/fund"
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
	InvestorID string `dynamo:",omitempty"`
	PositionID string `dynamo:",omitempty"`

	// Document-level attributes (FundID also on every other record).
	fund.DocumentFields `dynamo:",omitempty"`
	PositionCount       int `dynamo:",omitempty"`

	// Commit protocol (see docs/commit-protocol.md).
	Version      int    `dynamo:",omitempty"`
	CommitID     string `dynamo:",omitempty"`
	ContentHash  string `dynamo:",omitempty"`
	Materialized bool   `dynamo:",omitempty"`
	Tombstone    bool   `dynamo:",omitempty"`
	// On the head and a version's document records: the version voided
	// the document (fund.Document.Voided).
	Voided bool `dynamo:",omitempty"`

	// Amounts, and the details of the item's kind (fund's details structs,
	// embedded whole: a field declared in one of them is stored with no
	// edit here).
	Status                   string      `dynamo:",omitempty"`
	Amount                   *fund.Money `dynamo:",omitempty"`
	fund.ActivityDetails     `dynamo:",omitempty"`
	fund.CallDetails         `dynamo:",omitempty"`
	fund.DistributionDetails `dynamo:",omitempty"`
	fund.UnfundedDetails     `dynamo:",omitempty"`
	// A call's or a distribution's stated typed lines: a list of maps.
	Transactions []fund.Transaction `dynamo:",omitempty"`
	// A statement's lines, each its own attribute. Its beginning and ending
	// NAV are left out when zero, as every zero amount is: the Type says
	// the item is a statement, and they read back as zero.
	fund.CapitalAccount `dynamo:",omitempty"`

	CreatedAt time.Time `dynamo:",omitempty"`
	CreatedBy string    `dynamo:",omitempty"`
	RequestID string    `dynamo:",omitempty"` // on the head: the idempotent request that wrote it
	// On the head: the instant its commit was sent, which the change index
	// (GSI1) is keyed by.
	CommittedAt time.Time `dynamo:",omitempty"`

	// On the head: the records of its version and of the OverviewHistory
	// versions before it, compressed (recent.go), which the overview shows
	// from the head it reads anyway.
	Recent []byte `dynamo:",omitempty"`
}

// ItemKindOfType maps a stored Type back to its item kind.
func ItemKindOfType(t string) (fund.ItemKind, bool) {
	for _, k := range fund.ItemKinds {
		if k.Type() == t {
			return k, true
		}
	}
	return "", false
}

// IsPositionItem reports whether the item is a live (not tombstoned)
// capital account statement, capital call, distribution or unfunded
// commitment.
func (it *Item) IsPositionItem() bool {
	_, ok := ItemKindOfType(it.Type)
	return ok && !it.Tombstone
}

// PositionItem converts a stored position item to its read form.
func (it *Item) PositionItem() fund.PositionItem {
	k, _ := ItemKindOfType(it.Type)
	p := fund.PositionItem{
		Kind: k, DocumentID: it.DocumentID, DocumentVersion: it.Version, FundID: it.FundID,
		InvestorID: it.InvestorID, PositionID: it.PositionID, AsOf: it.AsOf, CreatedAt: it.CreatedAt,
		Currency: it.Currency, Status: fund.Status(it.Status),
		CallDetails: it.CallDetails, DistributionDetails: it.DistributionDetails, UnfundedDetails: it.UnfundedDetails,
		Transactions: it.Transactions,
	}
	if it.Amount != nil {
		p.Amount = *it.Amount
	}
	if k == fund.Statement {
		c := it.CapitalAccount
		p.CapitalAccount = &c
	}
	return p
}

// storedItem is the record of a position item, without keys.
func storedItem(p *fund.PositionItem) Item {
	amt := p.Amount
	var statement fund.CapitalAccount
	if p.CapitalAccount != nil {
		statement = *p.CapitalAccount
	}
	return Item{
		Type: p.Kind.Type(), DocumentID: p.DocumentID, InvestorID: p.InvestorID, PositionID: p.PositionID,
		DocumentFields: fund.DocumentFields{FundID: p.FundID, AsOf: p.AsOf, Currency: p.Currency},
		Version:        p.DocumentVersion, CreatedAt: p.CreatedAt, Amount: &amt, Status: string(p.Status),
		CallDetails: p.CallDetails, DistributionDetails: p.DistributionDetails, UnfundedDetails: p.UnfundedDetails,
		Transactions: p.Transactions, CapitalAccount: statement,
	}
}

// positionItems flattens a document's positions into stored items of its
// latest view (with index keys) or of its version partition (without).
func positionItems(d *fund.Document, latest bool) []Item {
	items := make([]Item, 0, len(d.Positions)*len(fund.ItemKinds))
	var reported []fund.PositionItem
	for i := range d.Positions {
		reported = d.AppendItems(&d.Positions[i], reported[:0])
		for j := range reported {
			pi := &reported[j]
			it := storedItem(pi)
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
func documentItem(d *fund.Document, pk, sk string) Item {
	h := d.Header()
	return Item{
		PK: pk, SK: sk, Type: TypeDocument, DocumentID: h.ID, DocumentFields: h.DocumentFields, PositionCount: h.PositionCount,
		Version: h.Version, CommitID: h.CommitID, CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy, Voided: h.Voided,
	}
}

// activityItem is the capital-activity record of d under the given keys.
func activityItem(d *fund.Document, pk, sk string) Item {
	a := d.CapitalActivity
	amt := a.Amount
	return Item{
		PK: pk, SK: sk, Type: TypeCapitalActivity, DocumentID: d.ID,
		DocumentFields: fund.DocumentFields{FundID: d.FundID, Currency: d.Currency, AsOf: d.AsOf},
		Amount:         &amt, Status: string(a.Status), ActivityDetails: a.ActivityDetails,
		Version: d.Version, CommitID: d.CommitID, CreatedAt: d.CreatedAt,
	}
}

// Header converts a stored document record.
func (it *Item) Header() fund.DocumentHeader {
	return fund.DocumentHeader{ID: it.DocumentID, DocumentFields: it.DocumentFields, PositionCount: it.PositionCount,
		Version: it.Version, CommitID: it.CommitID, CreatedAt: it.CreatedAt, CreatedBy: it.CreatedBy, Voided: it.Voided}
}

// Activity converts a stored capital-activity record.
func (it *Item) Activity() fund.ActivityRecord {
	a := fund.ActivityRecord{Version: it.Version}
	a.Status, a.ActivityDetails = fund.Status(it.Status), it.ActivityDetails
	if it.Amount != nil {
		a.Amount = *it.Amount
	}
	return a
}

// assemble rebuilds a full Document from one version's records.
func assemble(h fund.DocumentHeader, activity *Item, items []fund.PositionItem) fund.Document {
	d := fund.Document{ID: h.ID, DocumentFields: h.DocumentFields, Version: h.Version, CommitID: h.CommitID,
		CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy, Voided: h.Voided}
	if activity != nil {
		a := activity.Activity().CapitalActivity
		d.CapitalActivity = &a
	}
	d.Positions = fund.GroupPositions(items)
	return d
}
