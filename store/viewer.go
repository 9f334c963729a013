package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// View is the store as one read sees it (fund.Read: who reads, and from
// the latest versions or as known at an instant): every read through it
// answers with the same shape and the same access rule either way.
type View struct {
	s  *Store
	rd fund.Read
	// reads pays for a read as known at an instant whose requests grow
	// with the table (listings, fund and investor records); nil: unpaid.
	reads *Reads
}

// As returns the store as rd sees it.
func (s *Store) As(rd fund.Read) View { return View{s: s, rd: rd} }

// Paying returns the view paying through reads for the requests of a read
// as known at an instant that grow with the table.
func (r View) Paying(reads *Reads) View {
	r.reads = reads
	return r
}

// authorize returns ENOTFOUND unless the viewer may read document doc,
// whose fund it reads from the commit head with one GetItem: decided before
// any read that grows with the document, so another fund's document costs
// what an unknown one does. An administrator of every fund needs no read.
func (r View) authorize(ctx context.Context, doc string) error {
	if r.rd.AllFunds && r.rd.Investor == "" {
		return nil
	}
	fundID, err := r.s.DocumentFund(ctx, doc)
	if err == nil && !r.rd.Administers(fundID) {
		err = notFound(doc)
	}
	return err
}

// visible returns err, or ENOTFOUND for doc when the viewer may not read
// fundID: the check after the read, for the reads that are not authorized
// first and for whatever changed in between.
func (r View) visible(doc, fundID string, err error) error {
	if err == nil && !r.rd.Administers(fundID) {
		return notFound(doc)
	}
	return err
}

// detailed keeps the specific detail of a not-found inside a document ("no
// version 9") only when the viewer may see the document, which it reads
// with one GetItem of its latest record; otherwise the error is that of an
// unknown document, so the detail never tells another fund's document from
// a missing one.
func (r View) detailed(ctx context.Context, doc string, err error) error {
	if fund.ErrorCode(err) != fund.ENOTFOUND {
		return err
	}
	if h, e := r.s.latestRecord(ctx, doc); e != nil || !r.rd.Administers(h.FundID) {
		return notFound(doc)
	}
	return err
}

// LatestDocument returns the record of the version of doc the view reads
// (latestRecord). It returns ENOTFOUND for an unknown document and for one
// of a fund the viewer does not cover.
func (r View) LatestDocument(ctx context.Context, doc string) (fund.DocumentHeader, error) {
	rec, err := r.latestRecord(ctx, doc)
	if err != nil {
		return fund.DocumentHeader{}, err
	}
	return rec.Header(), nil
}

// latestRecord reads the record of the version of doc the view reads: the
// latest, with one GetItem, or the one known at the view's instant (knownAt,
// then recordOf). It returns ENOTFOUND for an unknown document, for one of
// a fund the viewer does not cover, and for one first committed after the
// view's instant.
func (r View) latestRecord(ctx context.Context, doc string) (*Item, error) {
	if r.rd.Past {
		k, err := r.knownAt(ctx, doc)
		if err != nil {
			return nil, err
		}
		return r.s.recordOf(ctx, &k)
	}
	rec, err := r.s.latestRecord(ctx, doc)
	if err == nil {
		err = r.visible(doc, rec.FundID, nil)
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Versions returns a document's latest record and a page of its history
// records up to it (historyPage). The latest record is read first
// (latestRecord), so another fund's document is refused before its history
// is read; as known at the view's instant, no version committed later is
// listed. A later page names the version its first page showed as the
// latest (pinned, which a cursor keeps; 0 for a first page), whose record
// it reads with one GetItem, so a restatement since the first page
// changes no later one. It returns ENOTFOUND for an unknown document and
// for one of a fund the viewer does not cover.
func (r View) Versions(ctx context.Context, doc string, pinned int, from, to fund.Date, limit int, start PageKey) (fund.DocumentHeader, []fund.DocumentHeader, PageKey, error) {
	var latest *Item
	var err error
	if pinned > 0 {
		if latest, err = r.s.versionRecord(ctx, doc, pinned); err != nil {
			err = fmt.Errorf("document %s version %d: %w", doc, pinned, err)
		} else if latest == nil {
			err = notFound(doc)
		} else {
			err = r.visible(doc, latest.FundID, nil)
		}
	} else {
		latest, err = r.latestRecord(ctx, doc)
	}
	if err != nil {
		return fund.DocumentHeader{}, nil, nil, err
	}
	history, next, err := r.s.historyPage(ctx, latest, from, to, limit, start)
	if err != nil {
		return fund.DocumentHeader{}, nil, nil, err
	}
	return latest.Header(), history, next, nil
}

// Version returns version n of a document whole, positions included: one
// GetItem finds the version's record, one Query reads its partition. As
// known at the view's instant, the version known then (knownAt) needs no
// record, and a version committed later is ENOTFOUND, exactly as a version
// the document does not have. It returns ENOTFOUND for an unknown
// document, for one of a fund the viewer does not cover, and for a version
// a visible document does not have.
func (r View) Version(ctx context.Context, doc string, n int) (fund.Document, error) {
	if r.rd.Past {
		k, err := r.knownAt(ctx, doc)
		switch {
		case err != nil:
			return fund.Document{}, err
		case n > k.Version:
			return fund.Document{}, fund.Errorf(fund.ENOTFOUND, "document %s has no version %d", doc, n)
		case n == k.Version:
			return r.s.readVersion(ctx, doc, k.CommitID)
		}
		return r.s.version(ctx, doc, n)
	}
	if err := r.authorize(ctx, doc); err != nil {
		return fund.Document{}, err
	}
	d, err := r.s.version(ctx, doc, n)
	if err != nil {
		return fund.Document{}, r.detailed(ctx, doc, err)
	}
	if err := r.visible(doc, d.FundID, nil); err != nil {
		return fund.Document{}, err
	}
	return d, nil
}

// fundNotFound is the error of a fund that does not exist, or that the
// viewer does not cover.
func fundNotFound(fundID string) error {
	return fund.Errorf(fund.ENOTFOUND, "fund %s not found", fundID)
}

// FundVisible returns ENOTFOUND, as for an unknown fund, unless the viewer
// covers fundID; it reads nothing.
func (r View) FundVisible(fundID string) error {
	if !r.rd.Administers(fundID) {
		return fundNotFound(fundID)
	}
	return nil
}

// FundMustExist returns ENOTFOUND unless fundID has ever had a document,
// read with one GetItem, and, as known at the view's instant, unless one
// of its documents was committed by then (fundHadDocumentAt): what tells
// an empty first page of a fund's list from an unknown fund.
func (r View) FundMustExist(ctx context.Context, fundID string) error {
	var it Item
	err := r.s.table.Get(AttrPK, FundPK(fundID)).Range(AttrSK, dynamo.Equal, FundSK).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) {
		return fundNotFound(fundID)
	}
	if err != nil {
		return fmt.Errorf("fund %s: %w", fundID, err)
	}
	if r.rd.Past {
		had, err := r.s.fundHadDocumentAt(ctx, fundID, r.rd.KnownAt, r.reads)
		if err == nil && !had {
			err = fundNotFound(fundID)
		}
		return err
	}
	return nil
}

// FundDocuments lists a fund's documents with asOf between from and to
// (either may be zero), optionally of one kind, with one Query on the fund
// partition; each page reads at most limit index entries. As known at the
// view's instant: fundDocumentsPageAt. It returns ENOTFOUND for a fund the
// viewer does not cover, before any read, and for a fund that has no
// document (one more GetItem when the first page is empty).
func (r View) FundDocuments(ctx context.Context, fundID string, from, to fund.Date, kind fund.Kind, limit int, start PageKey) ([]fund.DocumentHeader, PageKey, error) {
	if r.rd.Past {
		return r.fundDocumentsPageAt(ctx, fundID, from, to, kind, limit, start)
	}
	if err := r.FundVisible(fundID); err != nil {
		return nil, nil, err
	}
	lo, hi := FundDocumentRange(from, to)
	q := r.s.table.Get(AttrPK, FundPK(fundID)).Range(AttrSK, dynamo.Between, lo, hi)
	if kind != "" {
		q = q.Filter("$ = ?", "Kind", string(kind))
	}
	items, next, err := queryPage(ctx, q, "", limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("documents of fund %s: %w", fundID, err)
	}
	if len(items) == 0 && start == nil {
		if err := r.FundMustExist(ctx, fundID); err != nil {
			return nil, nil, err
		}
	}
	docs := make([]fund.DocumentHeader, 0, len(items))
	for i := range items {
		docs = append(docs, items[i].Header())
	}
	return docs, next, nil
}

// Write writes d as the next version of its document (Store.Write) for
// the viewer, who must cover d.FundID. An existing document of a fund the
// viewer does not cover is answered as absent, at the cost of an unknown
// one (one GetItem of the head): ENOTFOUND, or EPRECONDITION when ifMatch is
// AnyVersion, which asks that the document exist.
func (r View) Write(ctx context.Context, d fund.Document, ifMatch *int) (Written, error) {
	fundID, err := r.s.DocumentFund(ctx, d.ID)
	absent := fund.ErrorCode(err) == fund.ENOTFOUND || (err == nil && !r.rd.Administers(fundID))
	switch {
	case absent && ifMatch != nil && *ifMatch == AnyVersion:
		return Written{}, fund.Errorf(fund.EPRECONDITION, "If-Match: * but document %s does not exist", d.ID)
	case err == nil && absent:
		return Written{}, notFound(d.ID)
	case err != nil && !absent:
		return Written{}, err
	}
	saved, err := r.s.Write(ctx, d, ifMatch)
	var fe *fund.Error
	if errors.As(err, &fe) && fe.Code == fund.ECONFLICT && fe.Field == "fundId" {
		// Another fund created the document meanwhile: absent, as above.
		if aerr := r.authorize(ctx, d.ID); aerr != nil {
			return Written{}, aerr
		}
	}
	return saved, err
}

// Void voids document d.ID (Store.Void) for the viewer, who must cover
// its fund: that is decided first, from the commit head (one GetItem), so a
// document of another fund is answered ENOTFOUND, exactly as an unknown one,
// before anything is written. A document cannot change fund, so the check
// holds for the version the void replaces.
func (r View) Void(ctx context.Context, d fund.Document, ifMatch int) (Written, error) {
	fundID, err := r.s.DocumentFund(ctx, d.ID)
	if err == nil && !r.rd.Administers(fundID) {
		err = notFound(d.ID)
	}
	if err != nil {
		return Written{}, err
	}
	return r.s.Void(ctx, d, ifMatch)
}
