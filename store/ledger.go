package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The position ledger: the documents that have ever reported a position,
// for reads as known at an instant (docs/knownat.md). The position pivot
// (GSI2) holds each document's latest items only, so a document whose
// latest version withdrew the position (a restatement without it, or a
// void) has left it, yet it counted before. So the staging of a version
// puts, for each position it reports that the version it replaces did not,
// one ledger entry in the position's claim partition (POSITION#<pos>,
// DOCUMENT#<doc>): idempotent, as every version of a document puts the same
// item, and written before the commit, so a committed version's positions
// always have theirs (an entry is removed only with a claim no committed
// version holds, claims.go). The claim itself stands for the entry of the
// document whose write put it (its DocumentID), so a write that claims a
// new position stages no entry for it: the claim, too, is written before
// the commit and removed only with the entry. An entry left by a version
// that never committed is harmless: the read finds no committed version
// of that document reporting the position.
//
// A knownAt read of a position is one strongly consistent Query of that
// partition (the claim, then the entries), then, per document, the version
// known at the instant (VersionAt) and its items of the position.

// ledgerItem is a ledger entry as stored.
type ledgerItem struct {
	PK, SK, Type string
	PositionID   string
	DocumentID   string
}

// ledgerItems are the ledger entries of positions of document d.
func ledgerItems(d *fund.Document, positions []string) []ledgerItem {
	out := make([]ledgerItem, 0, len(positions))
	for _, pos := range positions {
		out = append(out, ledgerItem{PK: PositionClaimPK(pos), SK: PositionLedgerSK(d.ID), Type: TypePositionLedger, PositionID: pos, DocumentID: d.ID})
	}
	return out
}

// ledgerRow reads either item of a claim partition: the claim or an entry.
type ledgerRow struct {
	Type       string
	DocumentID string
	FundID     string
	InvestorID string
	Currency   string
	CreatedAt  time.Time
}

// PositionDocuments reads a position's claim and the documents that have
// reported it in any version, by document ID, with one strongly consistent
// Query of its claim partition, which stops after limit+1 documents: more
// than limit returned means more exist. The documents are the entries'
// and the one the claim stands for (see above), sorted. The claim is the
// zero Registered when the position has none. A claim still pending names the identity of
// any committed version that reports the position, as a claim is taken
// over only from writers that never committed (claims.go).
func (s *Store) PositionDocuments(ctx context.Context, pos string, limit int) (fund.Registered, []string, error) {
	it := s.table.Get(AttrPK, PositionClaimPK(pos)).Consistent(true).Limit(limit + 2).Iter()
	var claim fund.Registered
	var docs []string
	for {
		var row ledgerRow
		if !it.Next(ctx, &row) {
			break
		}
		switch row.Type {
		case TypePositionClaim:
			claim = fund.Registered{PositionID: pos, FundID: row.FundID, InvestorID: row.InvestorID, Currency: row.Currency, RegisteredAt: row.CreatedAt}
		case TypePositionLedger:
		default:
			continue
		}
		if row.DocumentID != "" && !slices.Contains(docs, row.DocumentID) {
			docs = append(docs, row.DocumentID)
		}
	}
	if err := it.Err(); err != nil {
		return fund.Registered{}, nil, fmt.Errorf("ledger of position %s: %w", pos, err)
	}
	slices.Sort(docs)
	return claim, docs, nil
}

// PositionKnownAt returns a document's items of a position in its latest
// version committed at or before at: none when the document had no
// committed version then (it did not exist yet), or that version is a void
// or does not report the position (withdrawn). Reads: VersionAt's (2 +
// ⌈log₂ n⌉ GetItems at most) and one Query of the version's partition.
func (s *Store) PositionKnownAt(ctx context.Context, doc, pos string, at time.Time) ([]fund.PositionItem, error) {
	ref, err := s.VersionAt(ctx, doc, at)
	if fund.ErrorCode(err) == fund.ENOTFOUND {
		return nil, nil
	}
	if err != nil || ref.Voided { // a void's partition holds no position anyway
		return nil, err
	}
	return s.VersionPosition(ctx, doc, ref.CommitID, pos)
}
