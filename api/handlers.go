package api

import (
	"github.com/fundsvc/fundsvc/wire"

	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
	"github.com/gin-gonic/gin"
)

// param returns a path ID, or answers 400 if it cannot be a valid ID.
func param(c *gin.Context, name string) (string, bool) {
	id := c.Param(name)
	if err := fund.CheckID(name, id); err != nil {
		writeError(c, err)
		return "", false
	}
	return id, true
}

// visible answers 404 with notFound unless the principal administers
// fundID: another fund's data looks exactly like data that does not exist.
func visible(c *gin.Context, fundID string, notFound error) bool {
	if principal(c).MayAdminister(fundID) {
		return true
	}
	writeError(c, notFound)
	return false
}

// mayReadDocument answers 404 unless the caller may administer the fund of
// document id, read from its commit head with one GetItem: authorization is
// decided before any read that grows with the document, so another fund's
// document costs what an unknown one does. An admin of every fund needs no
// read.
func (s *server) mayReadDocument(c *gin.Context, id string) bool {
	p := principal(c)
	if p.MayAdminister(AllFunds) {
		return true
	}
	fundID, err := s.docs.DocumentFund(c.Request.Context(), id)
	if err == nil && !p.MayAdminister(fundID) {
		err = documentNotFound(id)
	}
	if err != nil {
		writeError(c, err)
		return false
	}
	return true
}

func documentNotFound(id string) error {
	return fund.Errorf(fund.ENOTFOUND, "document %s not found", id)
}

// writeDocumentError answers an error of a read inside a document. A
// not-found keeps its specific detail ("no version 9") only when the caller
// may see the document; otherwise it is the same as for an unknown document,
// so the detail never tells another fund's document from a missing one.
func (s *server) writeDocumentError(c *gin.Context, id string, err error) {
	if fund.ErrorCode(err) == fund.ENOTFOUND {
		if h, e := s.docs.LatestDocument(c.Request.Context(), id); e != nil || !principal(c).MayAdminister(h.FundID) {
			err = documentNotFound(id)
		}
	}
	writeError(c, err)
}

// bind ties a query to the principal, so a cursor issued to one token is
// refused to every other.
func bind(c *gin.Context, query string) string { return principal(c).scope() + "\x1e" + query }

// pageRequest reads limit and cursor; query names the read the cursor must
// continue, and is bound to the principal.
func (s *server) pageRequest(c *gin.Context, query string) (int, cursor, bool) {
	query = bind(c, query)
	limit := s.defaultLimit
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > s.maxLimit {
			writeError(c, fund.Invalid("limit", "must be a whole number from 1 to %d", s.maxLimit))
			return 0, cursor{}, false
		}
		limit = n
	}
	var cur cursor
	if v := c.Query("cursor"); v != "" {
		var err error
		if cur, err = s.cursors.decode(v, query); err != nil {
			writeError(c, err)
			return 0, cursor{}, false
		}
	}
	return limit, cur, true
}

func (s *server) next(c *gin.Context, query string, key store.PageKey) string {
	if key == nil {
		return ""
	}
	return s.cursors.encode(cursor{Query: bind(c, query), Key: key})
}

func dateParam(c *gin.Context, name string) (fund.Date, bool) {
	d, err := wire.ParseDate(name, c.Query(name), false)
	if err != nil {
		writeError(c, err)
		return d, false
	}
	return d, true
}

func dateRange(c *gin.Context) (from, to fund.Date, ok bool) {
	if from, ok = dateParam(c, "from"); !ok {
		return
	}
	if to, ok = dateParam(c, "to"); !ok {
		return
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		writeError(c, fund.Invalid("to", "must not be before from"))
		return from, to, false
	}
	return from, to, true
}

func kindParam(c *gin.Context) (fund.ItemKind, bool) {
	v := c.Query("type")
	if v == "" {
		return "", true
	}
	k, ok := fund.ParseItemKind(v)
	if !ok {
		writeError(c, fund.Invalid("type", "must be CapitalCall, Distribution or UnfundedCommitment"))
	}
	return k, ok
}

func setETag(c *gin.Context, version int) {
	c.Header("ETag", `"`+strconv.Itoa(version)+`"`)
}

// ifMatch reads If-Match as a version number ("3" or 3). "*" asks only that
// the document exist (RFC 9110), whatever its version when the write
// commits. If-Match compares strongly (RFC 9110 13.1.1): a weak tag (W/"3")
// never matches, so it is 412.
func (s *server) ifMatch(c *gin.Context) (*int, bool) {
	v := strings.TrimSpace(c.GetHeader("If-Match"))
	if v == "" {
		return nil, true
	}
	if v == "*" {
		anyVersion := store.AnyVersion
		return &anyVersion, true
	}
	if strings.HasPrefix(v, "W/") {
		writeError(c, fund.Errorf(fund.EPRECONDITION, "If-Match compares entity tags strongly; a weak tag never matches"))
		return nil, false
	}
	n, err := strconv.Atoi(strings.Trim(v, `"`))
	if err != nil || n < 0 {
		writeError(c, fund.Invalid("If-Match", "must be a version such as \"3\" taken from an ETag, or *"))
		return nil, false
	}
	return &n, true
}

// putDocument creates or restates a document as its next version.
func (s *server) putDocument(c *gin.Context) {
	id, ok := param(c, "documentId")
	if !ok {
		return
	}
	if mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type")); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		writeError(c, &fund.Error{Code: codeUnsupported, Field: "Content-Type", Message: "send the document as application/json"})
		return
	}
	expect, ok := s.ifMatch(c)
	if !ok {
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
	if !p.MayAdminister(doc.FundID) {
		writeError(c, &fund.Error{Code: fund.EFORBIDDEN, Field: "fundId", Message: "your token does not cover fund " + doc.FundID})
		return
	}
	// A document of a fund outside the token's scope is answered as absent:
	// 404, or 412 for If-Match: *, exactly as for a document that does not
	// exist, at the same cost (one GetItem of the head).
	fundID, err := s.docs.DocumentFund(c.Request.Context(), id)
	absent := fund.ErrorCode(err) == fund.ENOTFOUND || (err == nil && !p.MayAdminister(fundID))
	switch {
	case absent && expect != nil && *expect == store.AnyVersion:
		writeError(c, fund.Errorf(fund.EPRECONDITION, "If-Match: * but document %s does not exist", id))
		return
	case err == nil && absent:
		writeError(c, documentNotFound(id))
		return
	case err != nil && !absent:
		writeError(c, err)
		return
	}
	doc.CreatedBy = p.Subject
	doc.RequestID, _ = c.Request.Context().Value(keyRequestIdentity).(string)
	doc.RequestOwner, _ = c.Request.Context().Value(keyRequestOwner).(string)
	saved, err := s.docs.Restate(c.Request.Context(), doc, expect)
	var fe *fund.Error
	if errors.As(err, &fe) && fe.Code == fund.ECONFLICT && fe.Field == "fundId" && !s.mayReadDocument(c, id) {
		return // another fund created it meanwhile: absent, as above
	}
	if err != nil {
		writeError(c, err)
		return
	}
	status := http.StatusOK
	if saved.Version == 1 {
		status = http.StatusCreated
	}
	setETag(c, saved.Version)
	c.Header("Location", "/v1/documents/"+id)
	c.JSON(status, wire.VersionOf(saved))
}

// getOverview returns a document grouped as documents, capital activities and
// positions. The first page comes from one Query of the document partition;
// later pages read the same committed version's own partition, so a client
// paging through a large document sees one version throughout.
func (s *server) getOverview(c *gin.Context) {
	id, ok := param(c, "documentId")
	if !ok {
		return
	}
	query := "overview:" + id
	limit, cur, ok := s.pageRequest(c, query)
	if !ok {
		return
	}
	resp := overview{DocumentID: id}
	var doc fund.Document
	more := false
	if cur.Commit == "" {
		if !s.mayReadDocument(c, id) {
			return
		}
		snap, err := s.docs.Overview(c.Request.Context(), id)
		if err != nil {
			writeError(c, err)
			return
		}
		if !visible(c, snap.Document.FundID, documentNotFound(id)) {
			return
		}
		doc = snap.Document
		resp.Documents = &wire.OverviewDocuments{Latest: wire.HeaderOf(fund.DocumentHeader{ID: doc.ID, FundID: doc.FundID, Kind: doc.Kind, Title: doc.Title,
			AsOf: doc.AsOf, Currency: doc.Currency, PositionCount: len(doc.Positions), Version: doc.Version, CreatedAt: doc.CreatedAt, CreatedBy: doc.CreatedBy}, "Active"),
			Historical: []wire.DocumentHeader{}}
		for _, h := range snap.History {
			resp.Documents.Historical = append(resp.Documents.Historical, wire.HeaderOf(h, "Historical"))
		}
		resp.CapitalActivities = &wire.CapitalActivities{Historical: []wire.CapitalActivity{}}
		if doc.CapitalActivity != nil {
			resp.CapitalActivities.Latest = wire.ActivityOf(*doc.CapitalActivity, doc.Version)
		}
		for _, a := range snap.Activities {
			resp.CapitalActivities.Historical = append(resp.CapitalActivities.Historical, *wire.ActivityOf(a.CapitalActivity, a.Version))
		}
		page := doc
		if len(page.Positions) > limit {
			page.Positions, more = page.Positions[:limit], true
		}
		resp.Items = page.ItemsByPosition()
	} else {
		var err error
		resp.Items, more, err = s.docs.PositionsAfter(c.Request.Context(), id, cur.Commit, cur.After, limit)
		if err != nil {
			writeError(c, err)
			return
		}
		if len(resp.Items) > 0 && !visible(c, resp.Items[0].FundID, documentNotFound(id)) {
			return
		}
		doc = fund.Document{ID: id, Version: cur.Version, CommitID: cur.Commit}
	}
	resp.Version = doc.Version
	if more {
		resp.Next = s.cursors.encode(cursor{Query: bind(c, query), Commit: doc.CommitID, Version: doc.Version, After: lastPosition(resp.Items)})
	}
	setETag(c, doc.Version)
	writeBody(c, func(b []byte) []byte { return appendOverview(b, &resp) })
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

// getVersions lists a document's latest record beside its earlier ones, a
// page of history records at a time (limit, cursor); with from or to, the
// record of every version whose asOf lies between them (every version of the
// end date included, the current one too). The latest record is read first,
// so another fund's document is refused before its history is read.
func (s *server) getVersions(c *gin.Context) {
	id, ok := param(c, "documentId")
	if !ok {
		return
	}
	from, to, ok := dateRange(c)
	if !ok {
		return
	}
	query := "versions:" + id + ":" + from.String() + ":" + to.String()
	limit, cur, ok := s.pageRequest(c, query)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	latest, err := s.docs.LatestDocument(ctx, id)
	if err != nil {
		writeError(c, err)
		return
	}
	if !visible(c, latest.FundID, documentNotFound(id)) {
		return
	}
	history, next, err := s.docs.HistoryPage(ctx, id, from, to, limit, cur.Key)
	if err != nil {
		writeError(c, err)
		return
	}
	type response struct {
		DocumentID string                `json:"documentId"`
		Latest     *wire.DocumentHeader  `json:"latest,omitempty"`
		Historical []wire.DocumentHeader `json:"historical"`
		Next       string                `json:"next,omitempty"`
	}
	resp := response{DocumentID: id, Historical: []wire.DocumentHeader{}, Next: s.next(c, query, next)}
	ranged := !from.IsZero() || !to.IsZero()
	if !ranged {
		h := wire.HeaderOf(latest, "Active")
		resp.Latest = &h
		setETag(c, latest.Version)
	}
	for _, h := range history {
		switch {
		case ranged:
			// Every version's record in the range, the current one included.
			resp.Historical = append(resp.Historical, wire.HeaderOf(h, ""))
		case h.Version < latest.Version:
			resp.Historical = append(resp.Historical, wire.HeaderOf(h, "Historical"))
		}
	}
	c.JSON(http.StatusOK, resp)
}

// getVersion returns one whole version, or the latest document record.
func (s *server) getVersion(c *gin.Context) {
	id, ok := param(c, "documentId")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	if c.Param("version") == "latest" {
		h, err := s.docs.LatestDocument(ctx, id)
		if err != nil {
			writeError(c, err)
			return
		}
		if !visible(c, h.FundID, documentNotFound(id)) {
			return
		}
		setETag(c, h.Version)
		c.JSON(http.StatusOK, wire.HeaderOf(h, "Active"))
		return
	}
	n, err := strconv.Atoi(c.Param("version"))
	if err != nil || n < 1 {
		writeError(c, fund.Invalid("version", "must be a version number from 1, or latest"))
		return
	}
	if !s.mayReadDocument(c, id) {
		return
	}
	d, err := s.docs.Version(ctx, id, n)
	if err != nil {
		s.writeDocumentError(c, id, err)
		return
	}
	if !visible(c, d.FundID, documentNotFound(id)) {
		return
	}
	setETag(c, d.Version)
	c.JSON(http.StatusOK, wire.VersionOf(d))
}

// getDocumentPosition returns one position's items in a document; with
// type, the one item of that kind, read by its exact key.
func (s *server) getDocumentPosition(c *gin.Context) {
	id, ok := param(c, "documentId")
	if !ok {
		return
	}
	pos, ok := param(c, "positionId")
	if !ok {
		return
	}
	kind, ok := kindParam(c)
	if !ok {
		return
	}
	type response struct {
		DocumentID string              `json:"documentId"`
		PositionID string              `json:"positionId"`
		Version    int                 `json:"version"`
		Items      []wire.PositionItem `json:"items"`
	}
	if !s.mayReadDocument(c, id) {
		return
	}
	ctx := c.Request.Context()
	if kind != "" {
		it, err := s.docs.PositionItemByKey(ctx, id, kind, pos)
		if err != nil {
			s.writeDocumentError(c, id, err)
			return
		}
		if !visible(c, it.FundID, documentNotFound(id)) {
			return
		}
		c.JSON(http.StatusOK, response{DocumentID: id, PositionID: pos, Version: it.DocumentVersion, Items: []wire.PositionItem{wire.ItemOf(it)}})
		return
	}
	version, items, err := s.docs.DocumentPosition(ctx, id, pos)
	if err != nil {
		s.writeDocumentError(c, id, err)
		return
	}
	if !visible(c, items[0].FundID, documentNotFound(id)) {
		return
	}
	setETag(c, version)
	c.JSON(http.StatusOK, response{DocumentID: id, PositionID: pos, Version: version, Items: wire.ItemsOf(items)})
}

// getCapital returns the capital activities and capital calls of a document.
func (s *server) getCapital(c *gin.Context) {
	id, ok := param(c, "documentId")
	if !ok || !s.mayReadDocument(c, id) {
		return
	}
	capital, err := s.docs.Capital(c.Request.Context(), id)
	if err != nil {
		writeError(c, err)
		return
	}
	if !visible(c, capital.FundID, documentNotFound(id)) {
		return
	}
	resp := struct {
		DocumentID        string                 `json:"documentId"`
		Version           int                    `json:"version"`
		CapitalActivities wire.CapitalActivities `json:"capitalActivities"`
		CapitalCalls      []wire.PositionItem    `json:"capitalCalls"`
	}{DocumentID: id, Version: capital.Version, CapitalActivities: wire.CapitalActivities{Historical: []wire.CapitalActivity{}}, CapitalCalls: wire.ItemsOf(capital.Calls)}
	if capital.Latest != nil {
		resp.CapitalActivities.Latest = wire.ActivityOf(capital.Latest.CapitalActivity, capital.Latest.Version)
	}
	for _, a := range capital.Activities {
		resp.CapitalActivities.Historical = append(resp.CapitalActivities.Historical, *wire.ActivityOf(a.CapitalActivity, a.Version))
	}
	setETag(c, capital.Version)
	c.JSON(http.StatusOK, resp)
}

// getAnalysis returns, per position, counts and exact totals of what the
// document's latest version calls, distributes and reports unfunded.
func (s *server) getAnalysis(c *gin.Context) {
	id, ok := param(c, "documentId")
	if !ok || !s.mayReadDocument(c, id) {
		return
	}
	snap, err := s.docs.Overview(c.Request.Context(), id)
	if err != nil {
		writeError(c, err)
		return
	}
	if !visible(c, snap.Document.FundID, documentNotFound(id)) {
		return
	}
	resp := struct {
		DocumentID string                  `json:"documentId"`
		Version    int                     `json:"version"`
		Positions  []wire.PositionAnalysis `json:"positions"`
	}{DocumentID: id, Version: snap.Document.Version, Positions: []wire.PositionAnalysis{}}
	for _, a := range positions.Analyze(snap.Document) {
		resp.Positions = append(resp.Positions, wire.AnalysisOf(a))
	}
	setETag(c, snap.Document.Version)
	c.JSON(http.StatusOK, resp)
}

// listFundDocuments lists a fund's documents by asOf, optionally of one kind.
func (s *server) listFundDocuments(c *gin.Context) {
	fundID, ok := param(c, "fundId")
	if !ok {
		return
	}
	from, to, ok := dateRange(c)
	if !ok {
		return
	}
	kind := fund.Kind(c.Query("kind"))
	if kind != "" && !kind.Valid() {
		writeError(c, fund.Invalid("kind", "must be one of %v", fund.Kinds))
		return
	}
	if !visible(c, fundID, fund.Errorf(fund.ENOTFOUND, "fund %s not found", fundID)) {
		return
	}
	query := "fund-documents:" + fundID + ":" + from.String() + ":" + to.String() + ":" + string(kind)
	limit, cur, ok := s.pageRequest(c, query)
	if !ok {
		return
	}
	docs, next, err := s.docs.FundDocuments(c.Request.Context(), fundID, from, to, kind, limit, cur.Key)
	if err == nil && len(docs) == 0 && cur.Key == nil {
		err = s.fundMustExist(c, fundID)
	}
	if err != nil {
		writeError(c, err)
		return
	}
	headers := make([]wire.DocumentHeader, 0, len(docs))
	for _, d := range docs {
		headers = append(headers, wire.HeaderOf(d, ""))
	}
	nextCursor := s.next(c, query, next)
	writeBody(c, func(b []byte) []byte { return appendPage(b, headers, appendHeader, nextCursor) })
}

func (s *server) fundMustExist(c *gin.Context, fundID string) error {
	ok, err := s.docs.FundExists(c.Request.Context(), fundID)
	if err == nil && !ok {
		err = fund.Errorf(fund.ENOTFOUND, "fund %s not found", fundID)
	}
	return err
}

// listFundPositions lists the positions registered in a fund.
func (s *server) listFundPositions(c *gin.Context) {
	fundID, ok := param(c, "fundId")
	if !ok {
		return
	}
	if !visible(c, fundID, fund.Errorf(fund.ENOTFOUND, "fund %s not found", fundID)) {
		return
	}
	query := "fund-positions:" + fundID
	limit, cur, ok := s.pageRequest(c, query)
	if !ok {
		return
	}
	rs, next, err := s.positions.OfFund(c.Request.Context(), fundID, limit, cur.Key)
	if err == nil && len(rs) == 0 && cur.Key == nil {
		err = s.fundMustExist(c, fundID)
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.Page[wire.RegisteredPosition]{Items: wire.RegisteredOf(rs), Next: s.next(c, query, next)})
}

func investorNotFound(inv string) error {
	return fund.Errorf(fund.ENOTFOUND, "investor %s not found", inv)
}

// filtersInvestor reports whether p may see only some of an investor's
// positions: an admin whose token does not cover every fund.
func filtersInvestor(p Principal) bool {
	return p.Role != RoleInvestor && !p.MayAdminister(AllFunds)
}

// ownInvestor answers 404, as for an unknown investor, when an investor
// token names another investor than its own.
func ownInvestor(c *gin.Context, inv string) bool {
	if p := principal(c); p.Role == RoleInvestor && p.Investor != inv {
		writeError(c, investorNotFound(inv))
		return false
	}
	return true
}

// listInvestorPositions lists an investor's positions across funds.
func (s *server) listInvestorPositions(c *gin.Context) {
	inv, ok := param(c, "investorId")
	if !ok {
		return
	}
	if !ownInvestor(c, inv) {
		return
	}
	p, notFound := principal(c), investorNotFound(inv)
	query := "investor-positions:" + inv
	limit, cur, ok := s.pageRequest(c, query)
	if !ok {
		return
	}
	// An admin sees the investor's positions in the funds the token covers,
	// read a bounded number of rows at a time: a page may hold fewer than
	// limit with a next cursor, but reading it never costs more than two
	// Queries, whoever asks.
	keep := func(r positions.Registered) bool { return mayReadPosition(p, r.FundID, r.InvestorID) }
	mine, next, err := s.positions.VisibleOfInvestor(c.Request.Context(), inv, keep, filtersInvestor(p), limit, cur.Key)
	if err != nil {
		writeError(c, err)
		return
	}
	if len(mine) == 0 && cur.Key == nil && next == nil {
		writeError(c, notFound)
		return
	}
	c.JSON(http.StatusOK, wire.Page[wire.RegisteredPosition]{Items: wire.RegisteredOf(mine), Next: s.next(c, query, next)})
}

// listPositionItems lists a position's items across documents, optionally
// of one type. An unknown position, or one the caller may not see, is 404;
// a visible one with none of the type asked for is an empty list.
func (s *server) listPositionItems(c *gin.Context) {
	pos, ok := param(c, "positionId")
	if !ok {
		return
	}
	kind, ok := kindParam(c)
	if !ok {
		return
	}
	s.positionItems(c, pos, kind, "position-items:"+pos+":"+string(kind))
}

func (s *server) positionItems(c *gin.Context, pos string, kind fund.ItemKind, query string) {
	limit, cur, ok := s.pageRequest(c, query)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	items, next, err := s.positions.Items(ctx, pos, kind, limit, cur.Key)
	if err != nil {
		writeError(c, err)
		return
	}
	notFound := positionNotFound(pos)
	for _, it := range items {
		if !mayRead(principal(c), it) {
			if kind != "" && cur.Key == nil {
				// An unknown position costs a second Query (below); so does
				// another's, or its cost would tell that it exists.
				_, _, _ = s.positions.Items(ctx, pos, "", 1, nil)
			}
			writeError(c, notFound)
			return
		}
	}
	if len(items) == 0 && cur.Key == nil {
		// An unknown position and another's are both 404; a visible position
		// with none of the type asked for is an empty page.
		if kind == "" {
			writeError(c, notFound)
			return
		}
		some, _, err := s.positions.Items(ctx, pos, "", 1, nil)
		if err != nil {
			writeError(c, err)
			return
		}
		if len(some) == 0 || !mayRead(principal(c), some[0]) {
			writeError(c, notFound)
			return
		}
	}
	nextCursor := s.next(c, query, next)
	writeBody(c, func(b []byte) []byte { return appendPage(b, items, appendItem, nextCursor) })
}

// listPositionCapitalCalls lists a position's capital calls across documents,
// or, with document, its capital call in that document (through GSI1).
func (s *server) listPositionCapitalCalls(c *gin.Context) {
	pos, ok := param(c, "positionId")
	if !ok {
		return
	}
	doc := c.Query("document")
	if doc == "" {
		s.positionItems(c, pos, fund.CapitalCall, "position-calls:"+pos)
		return
	}
	if err := fund.CheckID("document", doc); err != nil {
		writeError(c, err)
		return
	}
	it, err := s.positions.CapitalCallIn(c.Request.Context(), pos, doc)
	if err == nil && !mayRead(principal(c), it) {
		err = fund.Errorf(fund.ENOTFOUND, "no capital call for position %s in document %s", pos, doc)
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.Page[wire.PositionItem]{Items: []wire.PositionItem{wire.ItemOf(it)}})
}

// mayRead reports whether p may see a position item: an investor its own
// investor's, an admin those of its funds.
func mayRead(p Principal, it fund.PositionItem) bool {
	return mayReadPosition(p, it.FundID, it.InvestorID)
}

// mayReadPosition reports whether p may see a position of fundID held by
// investorID.
func mayReadPosition(p Principal, fundID, investorID string) bool {
	if p.Role == RoleInvestor {
		return investorID == p.Investor
	}
	return p.MayAdminister(fundID)
}

// allowFor is p's access rule for the positions package, applied before
// any read past the first.
func allowFor(p Principal) positions.Allow {
	return func(fundID, investorID string) bool { return mayReadPosition(p, fundID, investorID) }
}

func positionNotFound(pos string) error {
	return fund.Errorf(fund.ENOTFOUND, "position %s not found", pos)
}

// positionOnDate reads the position and the optional asOf date of a
// position's summary or cash flows.
func positionOnDate(c *gin.Context) (string, fund.Date, bool) {
	pos, ok := param(c, "positionId")
	if !ok {
		return "", fund.Date{}, false
	}
	asOf, ok := dateParam(c, "asOf")
	return pos, asOf, ok
}

// readable turns a read of a position the caller may not see into the
// not-found of an unknown position.
func readable(c *gin.Context, pos, fundID, investorID string, err error) error {
	if err == nil && !mayReadPosition(principal(c), fundID, investorID) {
		return positionNotFound(pos)
	}
	return err
}

// getPositionSummary sums up a position on the date asOf (every document
// when absent). Another's position is 404, as an unknown one.
func (s *server) getPositionSummary(c *gin.Context) {
	pos, asOf, ok := positionOnDate(c)
	if !ok {
		return
	}
	sum, err := s.positions.SummaryFor(c.Request.Context(), pos, asOf, allowFor(principal(c)))
	if err = readable(c, pos, sum.FundID, sum.InvestorID, err); err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.SummaryOf(sum))
}

// getPositionCashflows lists a position's dated contributions and
// distributions with running totals, whole: a running total needs every
// flow before it, and a position has two flows per document at most.
func (s *server) getPositionCashflows(c *gin.Context) {
	pos, asOf, ok := positionOnDate(c)
	if !ok {
		return
	}
	identity, flows, err := s.positions.CashflowsFor(c.Request.Context(), pos, asOf, allowFor(principal(c)))
	if err = readable(c, pos, identity.FundID, identity.InvestorID, err); err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.CashflowsOf(identity, asOf, flows))
}

// getInvestorSummary sums up an investor's positions and totals them per
// currency. An investor sees its own; an admin the investor's positions in
// its funds. Nothing visible is 404, as an unknown investor.
func (s *server) getInvestorSummary(c *gin.Context) {
	inv, ok := param(c, "investorId")
	if !ok {
		return
	}
	asOf, ok := dateParam(c, "asOf")
	if !ok {
		return
	}
	if !ownInvestor(c, inv) {
		return
	}
	query := "investor-summary:" + inv + ":" + asOf.String()
	limit, cur, ok := s.pageRequest(c, query)
	if !ok {
		return
	}
	p := principal(c)
	keep := func(r positions.Registered) bool { return mayReadPosition(p, r.FundID, r.InvestorID) }
	sum, next, err := s.positions.InvestorSummary(c.Request.Context(), inv, asOf, keep, filtersInvestor(p), limit, cur.Key)
	if err != nil {
		writeError(c, err)
		return
	}
	resp := wire.InvestorSummaryOf(sum)
	resp.Next = s.next(c, query, next)
	c.JSON(http.StatusOK, resp)
}
