package store

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// The reads of the fan-out routes as known at an instant (a fund's or an
// investor's positions, a document's reconciliation): package positions
// finds the version of each document known at the instant once per
// request (KnownVersion) and reads each position's items of it
// (VersionPosition), rather than searching a document's versions again for
// every position it reports (PositionKnownAt).

// KnownVersion returns the header of the document's latest version
// committed at or before at (ID, fund, asOf, version, commit, voided), with
// VersionAt's reads. It returns ENOTFOUND when the document is unknown or
// had no committed version then.
func (s *Store) KnownVersion(ctx context.Context, doc string, at time.Time) (fund.DocumentHeader, error) {
	ref, err := s.VersionAt(ctx, doc, at)
	if err != nil {
		return fund.DocumentHeader{}, err
	}
	return ref.Header(), nil
}

// Header is the version's header as package positions reads it.
func (r VersionRef) Header() fund.DocumentHeader {
	return fund.DocumentHeader{ID: r.DocumentID, DocumentFields: fund.DocumentFields{FundID: r.FundID, AsOf: r.AsOf},
		Version: r.Version, CommitID: r.CommitID, CreatedAt: r.CommittedAt, Voided: r.Voided}
}

// VersionStatements lists the capital account statements of one committed
// version of a document, by position: those of up to limit positions from
// start, with one Query of the version's immutable partition. start is a
// key DocumentStatements or VersionStatements issued (both name the last
// statement's position), so a listing begun on the latest view goes on in
// a version; the key to resume from is nil at the end. A page may hold
// fewer than limit statements (positions without one).
func (s *Store) VersionStatements(ctx context.Context, doc, commitID string, limit int, start PageKey) ([]fund.PositionItem, PageKey, error) {
	after, err := statementAfter(start)
	if err != nil {
		return nil, nil, err
	}
	var out []fund.PositionItem
	last, more, err := s.positionsAfter(ctx, doc, commitID, after, limit, func(it *Item) {
		if it.IsPositionItem() {
			if pi := it.PositionItem(); pi.Kind == fund.Statement {
				out = append(out, pi)
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if !more {
		return out, nil, nil
	}
	return out, pageKeyOf(dynamo.PagingKey{AttrPK: &types.AttributeValueMemberS{Value: DocPK(doc)}, AttrSK: &types.AttributeValueMemberS{Value: StatementPrefix + last}}), nil
}

// statementAfter is the position a statements key resumes after: the key
// of the last statement read, in the document's latest view ("" at the
// start).
func statementAfter(start PageKey) (string, error) {
	k, err := paging(start)
	if err != nil || k == nil {
		return "", err
	}
	sk, ok := k[AttrSK].(*types.AttributeValueMemberS)
	if !ok || !strings.HasPrefix(sk.Value, StatementPrefix) {
		return "", fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
	}
	return strings.TrimPrefix(sk.Value, StatementPrefix), nil
}
