package api

import (
	"context"
	"net/http"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// The document routes read through s.docs.As(latest(c)): the store decides,
// before any read that grows with the document, that a document of a fund
// the token does not cover is not found, exactly as an unknown one.

// putDocument creates or restates a document as its next version.
func (s *server) putDocument(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	in.jsonBody()
	expect := in.ifMatch()
	if !in.ok() {
		return
	}
	req := wire.DocumentRequest{Positions: wire.PositionList{Max: s.maxPositions}}
	if err := wire.DecodeStrict(http.MaxBytesReader(c.Writer, c.Request.Body, s.maxBody), &req); err != nil {
		writeError(c, err)
		return
	}
	doc, err := req.ToDocument(id)
	if err != nil {
		writeError(c, err)
		return
	}
	p := principal(c)
	if !viewer(c).Administers(doc.FundID) {
		writeError(c, &fund.Error{Code: fund.EFORBIDDEN, Field: "fundId", Message: "your token does not cover fund " + doc.FundID})
		return
	}
	doc.CreatedBy = p.Subject
	doc.RequestID, _ = c.Request.Context().Value(keyRequestIdentity).(string)
	doc.RequestOwner, _ = c.Request.Context().Value(keyRequestOwner).(string)
	saved, err := s.docs.As(latest(c)).Write(c.Request.Context(), doc, expect)
	if err != nil {
		writeError(c, err)
		return
	}
	status := http.StatusOK
	if saved.Document.Version == 1 {
		status = http.StatusCreated
	}
	setETag(c, saved.Document.Version)
	c.Header("Location", "/v1/documents/"+id)
	c.JSON(status, wire.WrittenOf(saved.Document, saved.Changes))
}

// deleteDocument voids a document: its next version reports nothing and
// is marked voided, and every version stays readable. The store decides
// first, from the commit head, that a document of a fund the token does not
// cover is not found, so nothing is written for it.
func (s *server) deleteDocument(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	expect := in.requiredIfMatch()
	if !in.ok() {
		return
	}
	p := principal(c)
	req := fund.Document{ID: id, CreatedBy: p.Subject}
	req.RequestID, _ = c.Request.Context().Value(keyRequestIdentity).(string)
	req.RequestOwner, _ = c.Request.Context().Value(keyRequestOwner).(string)
	voided, err := s.docs.As(latest(c)).Void(c.Request.Context(), req, expect)
	if err != nil {
		writeError(c, err)
		return
	}
	setETag(c, voided.Document.Version)
	c.JSON(http.StatusOK, wire.WrittenOf(voided.Document, voided.Changes))
}

// documentBasis reads the basis of a document route, which takes knownAt
// but no asOf: the version shown is the one known at knownAt whatever its
// date, so the basis's asOf is null.
func (p *params) documentBasis() basis {
	b := p.basis()
	b.asOf = fund.Date{}
	return b
}

// getOverview returns a document grouped as documents, capital activities and
// positions. The first page comes from one Query of the document partition
// (with knownAt, from the partition of the version known then); later pages
// read the same committed version's own partition, so a client paging
// through a large document sees one version throughout.
func (s *server) getOverview(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	pg := in.page("overview:" + id)
	lines := in.typedLines()
	b := in.pin(&pg, in.documentBasis())
	if !in.ok() {
		return
	}
	docs, settle := s.view(c, b)
	defer settle()
	resp := wire.Overview{DocumentID: id, Basis: s.wireBasis(b)}
	var items []fund.PositionItem
	var doc fund.Document
	more := false
	if pg.cursor.Commit == "" {
		snap, err := docs.Overview(c.Request.Context(), id)
		if err != nil {
			writeError(c, err)
			return
		}
		doc = snap.Document
		resp.Documents = &wire.OverviewDocuments{Latest: wire.HeaderOf(doc.Header(), wire.VersionLatest), Earlier: []wire.DocumentHeader{}}
		for _, h := range snap.History {
			resp.Documents.Earlier = append(resp.Documents.Earlier, wire.HeaderOf(h, wire.VersionSuperseded))
		}
		resp.CapitalActivities = &wire.CapitalActivities{Earlier: []wire.CapitalActivity{}}
		if doc.CapitalActivity != nil {
			resp.CapitalActivities.Latest = wire.ActivityOf(*doc.CapitalActivity, doc.Version)
		}
		for _, a := range snap.Activities {
			resp.CapitalActivities.Earlier = append(resp.CapitalActivities.Earlier, *wire.ActivityOf(a.CapitalActivity, a.Version))
		}
		first := doc
		if len(first.Positions) > pg.limit {
			first.Positions, more = first.Positions[:pg.limit], true
		}
		items = first.ItemsByPosition()
	} else {
		var err error
		items, more, err = docs.PositionsAfter(c.Request.Context(), id, pg.cursor.Commit, pg.cursor.After, pg.limit)
		if err != nil {
			writeError(c, err)
			return
		}
		doc = fund.Document{ID: id, Version: pg.cursor.Version, CommitID: pg.cursor.Commit}
	}
	resp.Version = doc.Version
	if more {
		resp.Next = pg.codec.encode(cursor{Query: pg.query, Commit: doc.CommitID, Version: doc.Version, After: lastPosition(items), Basis: pg.basis})
	}
	setETag(c, doc.Version)
	resp.Positions = wire.GroupsOf(items, lines)
	c.JSON(http.StatusOK, resp)
}

// lastPosition is the greatest position ID among items, where the next page
// of an overview starts.
func lastPosition(items []fund.PositionItem) string {
	last := ""
	for i := range items {
		last = max(last, items[i].PositionID)
	}
	return last
}

// getVersions lists a document's latest record beside its earlier ones,
// newest first, a page of history records at a time (limit, cursor); with
// from or to, the record of every version whose asOf lies between them
// (every version of the end date included, the current one too). The
// latest record is read first, so another fund's document is refused
// before its history is read. With knownAt, the version known then is
// the latest, and no version committed later is listed. The cursor pins
// the version the first page showed as the latest, so later pages list
// the versions below it whatever was committed since.
func (s *server) getVersions(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	from, to := in.dateRange()
	pg := in.page("versions:" + id + ":" + from.String() + ":" + to.String())
	b := in.pin(&pg, in.documentBasis())
	if !in.ok() {
		return
	}
	docs, settle := s.view(c, b)
	defer settle()
	ctx := c.Request.Context()
	latest, history, next, err := docs.Versions(ctx, id, pg.cursor.Version, from, to, pg.limit, pg.cursor.Key)
	if err != nil {
		writeError(c, err)
		return
	}
	resp := wire.Versions{DocumentID: id, Versions: []wire.DocumentHeader{}, Basis: s.wireBasis(b)}
	if next != nil {
		resp.Next = pg.codec.encode(cursor{Query: pg.query, Key: next, Basis: pg.basis, Version: latest.Version})
	}
	if from.IsZero() && to.IsZero() {
		h := wire.HeaderOf(latest, wire.VersionLatest)
		resp.Latest = &h
		setETag(c, latest.Version)
	}
	for _, h := range history {
		resp.Versions = append(resp.Versions, wire.HeaderOf(h, wire.HeaderStatus(h, latest.Version)))
	}
	if err := s.stampVersions(ctx, id, latest.Version, resp.Latest, resp.Versions); err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, resp)
}

// stampVersions sets each listed version's commit instant and the instant
// the version after it superseded it (none after latest, the version the
// listing shows as the latest), read with one Query of the document's
// events.
func (s *server) stampVersions(ctx context.Context, doc string, latest int, first *wire.DocumentHeader, rest []wire.DocumentHeader) error {
	lo, hi := latest, 0
	for _, h := range rest {
		lo, hi = min(lo, h.Version), max(hi, h.Version)
	}
	if first != nil {
		lo, hi = min(lo, first.Version), max(hi, first.Version)
	}
	if hi == 0 {
		return nil
	}
	at, err := s.docs.CommitInstants(ctx, doc, lo, min(hi+1, latest))
	if err != nil {
		return err
	}
	stamp := func(h *wire.DocumentHeader) {
		if t, ok := at[h.Version]; ok {
			h.CommittedAt = &t
		}
		if t, ok := at[h.Version+1]; ok && h.Version < latest {
			h.SupersededAt = &t
		}
	}
	if first != nil {
		stamp(first)
	}
	for i := range rest {
		stamp(&rest[i])
	}
	return nil
}

// getVersion returns one whole version, or the latest document record;
// with knownAt, `latest` is the version known then, and a version
// committed later does not exist.
func (s *server) getVersion(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	n, latest := in.version()
	b := in.documentBasis()
	if !in.ok() {
		return
	}
	docs, settle := s.view(c, b)
	defer settle()
	ctx := c.Request.Context()
	if latest {
		h, err := docs.LatestDocument(ctx, id)
		if err != nil {
			writeError(c, err)
			return
		}
		setETag(c, h.Version)
		c.JSON(http.StatusOK, wire.DocumentHeaderRead{DocumentHeader: wire.HeaderOf(h, wire.VersionLatest), Basis: s.wireBasis(b)})
		return
	}
	d, err := docs.Version(ctx, id, n)
	if err != nil {
		writeError(c, err)
		return
	}
	setETag(c, d.Version)
	c.JSON(http.StatusOK, wire.DocumentVersionRead{DocumentVersion: wire.VersionOf(d), Basis: s.wireBasis(b)})
}

// getDocumentPosition returns one position's items in a document; with
// type, the one item of that kind, read by its exact key.
func (s *server) getDocumentPosition(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	pos := in.id("positionId")
	kind := in.itemKind()
	lines := in.typedLines()
	b := in.documentBasis()
	if !in.ok() {
		return
	}
	docs, settle := s.view(c, b)
	defer settle()
	version, items, err := docs.DocumentPosition(c.Request.Context(), id, pos, kind)
	if err != nil {
		writeError(c, err)
		return
	}
	if kind == "" {
		setETag(c, version) // as the latest version's: not with itemType
	}
	c.JSON(http.StatusOK, wire.DocumentPosition{DocumentID: id, PositionID: pos, Version: version, Items: wire.ItemsOf(items, lines), Basis: s.wireBasis(b)})
}

// getCapital returns the capital activities and capital calls of a
// document, a page of earlier capital activities at a time, newest first:
// the first page also holds the version's capital activity and capital
// calls; later pages continue below the version the first page read
// (with knownAt, the version known then), which the cursor pins.
func (s *server) getCapital(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	pg := in.page("capital:" + id)
	lines := in.typedLines()
	b := in.pin(&pg, in.documentBasis())
	if !in.ok() {
		return
	}
	docs, settle := s.view(c, b)
	defer settle()
	capital, next, err := docs.Capital(c.Request.Context(), id, pg.limit, pg.cursor.Key)
	if err != nil {
		writeError(c, err)
		return
	}
	resp := wire.Capital{DocumentID: id, Version: capital.Version, CapitalActivities: wire.CapitalActivities{Earlier: []wire.CapitalActivity{}},
		CapitalCalls: wire.ItemsOf(capital.Calls, lines), Next: pg.next(next), Basis: s.wireBasis(b)}
	if capital.Latest != nil {
		resp.CapitalActivities.Latest = wire.ActivityOf(capital.Latest.CapitalActivity, capital.Latest.Version)
	}
	for _, a := range capital.Activities {
		resp.CapitalActivities.Earlier = append(resp.CapitalActivities.Earlier, *wire.ActivityOf(a.CapitalActivity, a.Version))
	}
	setETag(c, capital.Version)
	c.JSON(http.StatusOK, resp)
}

// getAnalysis returns, per position, counts and exact totals of what the
// document's latest version (with knownAt, the version known then) calls,
// distributes and reports unfunded.
func (s *server) getAnalysis(c *gin.Context) {
	in := s.params(c)
	id := in.id("documentId")
	b := in.documentBasis()
	if !in.ok() {
		return
	}
	docs, settle := s.view(c, b)
	defer settle()
	doc, err := docs.Document(c.Request.Context(), id)
	if err != nil {
		writeError(c, err)
		return
	}
	resp := wire.Analysis{DocumentID: id, Version: doc.Version, Positions: []wire.PositionAnalysis{}, Basis: s.wireBasis(b)}
	for _, a := range positions.Analyze(doc) {
		resp.Positions = append(resp.Positions, wire.AnalysisOf(a))
	}
	setETag(c, doc.Version)
	c.JSON(http.StatusOK, resp)
}
