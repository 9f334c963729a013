package store

import (
	"context"
	"errors"

	"github.com/fundsvc/fundsvc/fund"
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
	if h, e := r.s.LatestDocument(ctx, doc); e != nil || !r.rd.Administers(h.FundID) {
		return notFound(doc)
	}
	return err
}

// Overview is Store.Overview as the viewer sees it (as known at the
// view's instant: overviewAt). It returns ENOTFOUND for an unknown
// document and for one of a fund the viewer does not cover.
func (r View) Overview(ctx context.Context, doc string) (Snapshot, error) {
	if r.rd.Past {
		return r.overviewAt(ctx, doc)
	}
	if err := r.authorize(ctx, doc); err != nil {
		return Snapshot{}, err
	}
	snap, err := r.s.Overview(ctx, doc)
	if err = r.visible(doc, snap.Document.FundID, err); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// PositionsAfter is Store.PositionsAfter as the viewer sees it: the later
// pages of an overview. It returns ENOTFOUND when what it read is of a fund
// the viewer does not cover.
func (r View) PositionsAfter(ctx context.Context, doc, commitID, after string, limit int) ([]fund.PositionItem, bool, error) {
	items, more, err := r.s.PositionsAfter(ctx, doc, commitID, after, limit)
	if err == nil && len(items) > 0 {
		err = r.visible(doc, items[0].FundID, nil)
	}
	if err != nil {
		return nil, false, err
	}
	return items, more, nil
}

// LatestDocument is Store.LatestDocument as the viewer sees it: one GetItem
// (as known at the view's instant: latestDocumentAt). It returns ENOTFOUND
// for an unknown document and for one of a fund the viewer does not cover.
func (r View) LatestDocument(ctx context.Context, doc string) (fund.DocumentHeader, error) {
	if r.rd.Past {
		return r.latestDocumentAt(ctx, doc)
	}
	h, err := r.s.LatestDocument(ctx, doc)
	if err = r.visible(doc, h.FundID, err); err != nil {
		return fund.DocumentHeader{}, err
	}
	return h, nil
}

// Versions returns a document's latest record and a page of its history
// records (Store.HistoryPage): the latest record is read first, with one
// GetItem, so another fund's document is refused before its history is read.
// As known at the view's instant, the latest is the version known then
// (versionsAt). A later page names the version its first page showed as
// the latest (pinned), below which it is read whatever was committed since
// (versionsBelow); pinned is 0 for a first page. It returns ENOTFOUND for
// an unknown document and for one of a fund the viewer does not cover.
func (r View) Versions(ctx context.Context, doc string, pinned int, from, to fund.Date, limit int, start PageKey) (fund.DocumentHeader, []fund.DocumentHeader, PageKey, error) {
	switch {
	case pinned > 0:
		return r.versionsBelow(ctx, doc, pinned, from, to, limit, start)
	case r.rd.Past:
		return r.versionsAt(ctx, doc, from, to, limit)
	}
	latest, err := r.s.latestRecord(ctx, doc)
	if err == nil {
		err = r.visible(doc, latest.FundID, nil)
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

// Version is Store.Version as the viewer sees it. It returns ENOTFOUND for
// an unknown document, for one of a fund the viewer does not cover, and for
// a version a visible document does not have (as known at the view's
// instant, also one committed later: versionAsKnownAt).
func (r View) Version(ctx context.Context, doc string, n int) (fund.Document, error) {
	if r.rd.Past {
		return r.versionAsKnownAt(ctx, doc, n)
	}
	if err := r.authorize(ctx, doc); err != nil {
		return fund.Document{}, err
	}
	d, err := r.s.Version(ctx, doc, n)
	if err != nil {
		return fund.Document{}, r.detailed(ctx, doc, err)
	}
	if err := r.visible(doc, d.FundID, nil); err != nil {
		return fund.Document{}, err
	}
	return d, nil
}

// DocumentPosition is Store.DocumentPosition as the viewer sees it: the
// version read and the position's items in it; kind, when not empty, keeps
// the item of that kind only, read by its exact key (PositionItemByKey).
// As known at the view's instant it reads the version known then
// (documentPositionAt). It returns ENOTFOUND for an unknown document, for
// one of a fund the viewer does not cover, and for a position (or an item
// of kind) a visible document does not report.
func (r View) DocumentPosition(ctx context.Context, doc, pos string, kind fund.ItemKind) (int, []fund.PositionItem, error) {
	switch {
	case r.rd.Past:
		return r.documentPositionAt(ctx, doc, pos, kind)
	case kind != "":
		it, err := r.positionItemByKey(ctx, doc, kind, pos)
		if err != nil {
			return 0, nil, err
		}
		return it.DocumentVersion, []fund.PositionItem{it}, nil
	}
	if err := r.authorize(ctx, doc); err != nil {
		return 0, nil, err
	}
	version, items, err := r.s.DocumentPosition(ctx, doc, pos)
	if err != nil {
		return 0, nil, r.detailed(ctx, doc, err)
	}
	if err := r.visible(doc, items[0].FundID, nil); err != nil {
		return 0, nil, err
	}
	return version, items, nil
}

// positionItemByKey is Store.PositionItemByKey as the viewer sees it. It
// returns ENOTFOUND for an unknown document, for one of a fund the viewer
// does not cover, and for an item a visible document does not report.
func (r View) positionItemByKey(ctx context.Context, doc string, k fund.ItemKind, pos string) (fund.PositionItem, error) {
	if err := r.authorize(ctx, doc); err != nil {
		return fund.PositionItem{}, err
	}
	it, err := r.s.PositionItemByKey(ctx, doc, k, pos)
	if err != nil {
		return fund.PositionItem{}, r.detailed(ctx, doc, err)
	}
	if err := r.visible(doc, it.FundID, nil); err != nil {
		return fund.PositionItem{}, err
	}
	return it, nil
}

// Capital is Store.Capital as the viewer sees it; its first page as known
// at the view's instant is capitalAt's, whose key a later page resumes
// as any other. It returns ENOTFOUND for an unknown document and for one
// of a fund the viewer does not cover.
func (r View) Capital(ctx context.Context, doc string, limit int, start PageKey) (Capital, PageKey, error) {
	if r.rd.Past && len(start) == 0 {
		return r.capitalAt(ctx, doc, limit)
	}
	if err := r.authorize(ctx, doc); err != nil {
		return Capital{}, nil, err
	}
	c, next, err := r.s.Capital(ctx, doc, limit, start)
	if err = r.visible(doc, c.FundID, err); err != nil {
		return Capital{}, nil, err
	}
	return c, next, nil
}

// DocumentStatements is Store.DocumentStatements as the viewer sees it,
// after one GetItem of the commit head, so that a document without
// statements is told from an unknown one. It returns ENOTFOUND for an
// unknown document and for one of a fund the viewer does not cover.
func (r View) DocumentStatements(ctx context.Context, doc string, limit int, start PageKey) ([]fund.PositionItem, PageKey, error) {
	fundID, err := r.s.DocumentFund(ctx, doc)
	if err = r.visible(doc, fundID, err); err != nil {
		return nil, nil, err
	}
	items, next, err := r.s.DocumentStatements(ctx, doc, limit, start)
	if err == nil && len(items) > 0 {
		err = r.visible(doc, items[0].FundID, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	return items, next, nil
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
// read with one GetItem: what tells an empty first page of a fund's list
// from an unknown fund.
func (r View) FundMustExist(ctx context.Context, fundID string) error {
	ok, err := r.s.FundExists(ctx, fundID)
	if err == nil && !ok {
		err = fundNotFound(fundID)
	}
	return err
}

// FundDocuments is Store.FundDocuments as the viewer sees it (as known at
// the view's instant: fundDocumentsAt). It returns ENOTFOUND for a fund
// the viewer does not cover, before any read, and for a fund that has no
// document (one more GetItem when the first page is empty).
func (r View) FundDocuments(ctx context.Context, fundID string, from, to fund.Date, kind fund.Kind, limit int, start PageKey) ([]fund.DocumentHeader, PageKey, error) {
	if r.rd.Past {
		return r.fundDocumentsPageAt(ctx, fundID, from, to, kind, limit, start)
	}
	if err := r.FundVisible(fundID); err != nil {
		return nil, nil, err
	}
	docs, next, err := r.s.FundDocuments(ctx, fundID, from, to, kind, limit, start)
	if err == nil && len(docs) == 0 && start == nil {
		err = r.FundMustExist(ctx, fundID)
	}
	if err != nil {
		return nil, nil, err
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
