package store

import (
	"context"

	"github.com/fundsvc/fundsvc/fund"
)

// Void voids document d.ID (a document sent by mistake): it stores version
// N+1 with the document-level fields of version N, no capital activity, no
// position, marked voided, written like any version (docs/commit-protocol.md),
// so every latest item of N becomes a tombstone and the fund's document
// listing loses the document, while every version stays readable. Of d it
// reads the ID and the server-owned fields of a write (CreatedBy,
// RequestID, RequestOwner).
//
// ifMatch is the version the caller last saw, or AnyVersion; Void returns
// EPRECONDITION if the document is at another version, ENOTFOUND if it
// does not exist. A document voided already is not written again: Void
// answers that void, whatever ifMatch names, so repeating it is safe. The
// answer's Changes are against the version the void replaced: every
// position removed.
func (s *Store) Void(ctx context.Context, d fund.Document, ifMatch int) (Written, error) {
	req := fund.Document{ID: d.ID, CreatedBy: d.CreatedBy, RequestID: d.RequestID, RequestOwner: d.RequestOwner}
	return s.write(ctx, req, &ifMatch, writeVoid)
}

// voidOf is the version that voids prev, written by the request req.
func voidOf(prev, req fund.Document) fund.Document {
	return fund.Document{ID: prev.ID, DocumentFields: prev.DocumentFields, Voided: true,
		CreatedBy: req.CreatedBy, RequestID: req.RequestID, RequestOwner: req.RequestOwner}
}

// prepareVoid is prepare for a void, whose content is a stored version's
// document-level fields: it is not validated again (rules added since it
// was stored must not keep it from being voided).
func prepareVoid(d *fund.Document) (hash string, requestIndex map[string]int, err error) {
	d.Normalize()
	hash, err = contentHash(*d)
	return hash, map[string]int{}, err
}

// voided is the answer to a write that finds the document voided by its
// head: the voided version whole, and what it changed against the version
// before it. A void that died before it was materialized is finished first.
func (s *Store) voided(ctx context.Context, head *Item) (Written, error) {
	d, err := s.readVersion(ctx, head.DocumentID, head.CommitID)
	if err != nil {
		return Written{}, err
	}
	if !head.Materialized {
		if err := s.materialize(ctx, &d, nil); err != nil {
			return Written{}, err
		}
	}
	return s.writtenAgain(ctx, d, writeWithChanges)
}

// writtenAgain is the answer to a write that finds d, a version it asked
// for, committed already: d, and with mode writeWithChanges what d changed
// against the version before it, read by its number.
func (s *Store) writtenAgain(ctx context.Context, d fund.Document, mode writeMode) (Written, error) {
	w := Written{Document: d}
	if mode == writeRestate || d.Version < 2 {
		return w, nil
	}
	prev, err := s.version(ctx, d.ID, d.Version-1)
	if err != nil {
		return Written{}, err
	}
	c := fund.Compare(&prev, &d)
	w.Changes = &c
	return w, nil
}
