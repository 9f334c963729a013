package store

import (
	"context"

	"github.com/fundsvc/fundsvc/fund"
)

// WriteUnlessUnchanged is Write (without If-Match) for an import: when d's
// content is the content of the document's latest version (the commit
// head's ContentHash, the hash every write records), it writes nothing and
// returns that version with unchanged true; otherwise it writes d as
// Write does. So importing the same file again adds no version, and an
// import cut short completes the rest when run again.
//
// It returns what Write returns: ENOTFOUND for an existing document of a
// fund the viewer does not cover (decided from the head, before anything is
// written), EINVALID for a document that breaks a rule, ECONFLICT for a
// document of another fund or a voided one. A head that matches but was
// never finished (its writer died before the latest view) is finished by
// Write, which adds no version either.
func (r View) WriteUnlessUnchanged(ctx context.Context, d fund.Document) (w Written, unchanged bool, err error) {
	head, err := r.s.head(ctx, d.ID)
	if err != nil {
		return Written{}, false, err
	}
	if head != nil && !r.rd.Administers(head.FundID) {
		return Written{}, false, notFound(d.ID)
	}
	if head != nil && head.Materialized && !head.Voided && head.FundID == d.FundID {
		same := d
		same.Positions = append([]fund.Position(nil), d.Positions...) // prepare sorts them
		hash, _, err := r.s.prepare(&same)
		if err != nil {
			return Written{}, false, err
		}
		if hash == head.ContentHash {
			same.Version, same.CommitID, same.CreatedAt, same.CreatedBy = head.Version, head.CommitID, head.CreatedAt, head.CreatedBy
			return Written{Document: same}, true, nil
		}
	}
	w, err = r.Write(ctx, d, nil)
	return w, false, err
}
