package api

import (
	"context"
	"net/http"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// listPositionItems lists a position's items across documents, optionally
// of one type. An unknown position, or one the caller may not see, is 404;
// a visible one with none of the type asked for is an empty list.
func (s *server) listPositionItems(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	kind := in.itemKind()
	if !in.ok() {
		return
	}
	s.positionItems(c, in, pos, kind, "position-items:"+pos+":"+string(kind))
}

func (s *server) positionItems(c *gin.Context, in *params, pos string, kind fund.ItemKind, query string) {
	pg := in.page(query)
	lines := in.typedLines()
	b := in.basis()
	b.asOf = fund.Date{} // the items routes take every document whatever its date
	b = in.pin(&pg, b)
	if !in.ok() {
		return
	}
	// The first page of a read of the latest versions reads the pivot; the
	// pages after it are read as known at its instant (its cursor pins it),
	// from the ledger, so a restatement between two pages never mixes two
	// versions of a document into one listing. (A cursor holding a pivot's
	// key, issued before, goes on reading the pivot.)
	if b.past && (pg.cursor.Key == nil || positions.IsKnownAtKey(pg.cursor.Key)) {
		items, next, err := s.positions.Items(s.readContext(c), read(c, b), pos, kind, pg.limit, pg.cursor.Key)
		if err != nil {
			writeChargeError(c, err)
			return
		}
		c.JSON(http.StatusOK, wire.PositionItemsPage{Page: wire.Page[wire.PositionItem]{Items: wire.ItemsOf(items, lines), Next: pg.next(next)}, Basis: s.wireBasis(b)})
		return
	}
	// The pivot's items are answered undecoded, from the memo of their
	// answers when it holds them (itemanswers.go).
	items, next, err := positions.VisibleItems(c.Request.Context(), s.docs.StoredPositionItems, viewer(c), pos, kind, pg.limit, pg.cursor.Key)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	if next != nil && pg.cursor.Key == nil {
		next = positions.KnownAtKeyAfter(len(items))
	}
	s.writeItemsPage(c, items, lines, pg.next(next), s.wireBasis(b))
}

// listPositionCapitalCalls lists a position's capital calls across documents,
// or, with document, its capital call in that document (through GSI1).
func (s *server) listPositionCapitalCalls(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	doc := in.optionalID("document")
	if !in.ok() {
		return
	}
	if doc == "" {
		s.positionItems(c, in, pos, fund.CapitalCall, "position-calls:"+pos)
		return
	}
	lines := in.typedLines()
	b := in.basis()
	b.asOf = fund.Date{}
	if !in.ok() {
		return
	}
	it, err := s.positions.CapitalCallIn(s.readContext(c), read(c, b), pos, doc)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.PositionItemsPage{Page: wire.Page[wire.PositionItem]{Items: []wire.PositionItem{wire.ItemOf(it, lines)}}, Basis: s.wireBasis(b)})
}

// getPositionSummary sums up a position on the date asOf (every document
// when absent), as known at knownAt when given. Another's position is 404,
// as an unknown one.
func (s *server) getPositionSummary(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	b := in.basis()
	if !in.ok() {
		return
	}
	sum, err := s.positions.Summary(s.readContext(c), read(c, b), pos, b.asOf)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	sum.AsOf = b.statedAsOf()
	w := wire.SummaryOf(sum)
	wb := s.wireBasis(b)
	w.Basis = &wb
	c.JSON(http.StatusOK, w)
}

// getPositionCashflows lists a position's dated contributions and
// distributions with running totals, whole: a running total needs every
// flow before it, and a position has two flows per document at most.
func (s *server) getPositionCashflows(c *gin.Context) {
	in := s.params(c)
	pos := in.id("positionId")
	b := in.basis()
	if !in.ok() {
		return
	}
	identity, flows, err := s.positions.Cashflows(s.readContext(c), read(c, b), pos, b.asOf)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	w := wire.CashflowsOf(identity, b.statedAsOf(), flows)
	w.Basis = s.wireBasis(b)
	c.JSON(http.StatusOK, w)
}

// readContext is the request's context for a read of one position: it
// carries a tab of the caller's bucket, so a read as known at an instant
// pays for the documents the position's ledger lists, one token each, once
// the caller may read the position and before any of them is read
// (chargedReader.PositionKnownAt); a read of the latest versions pays for
// nothing more than its token.
func (s *server) readContext(c *gin.Context) context.Context {
	ctx := c.Request.Context()
	if s.limiter == nil {
		return ctx
	}
	return context.WithValue(ctx, tabKey{}, &tab{l: s.limiter, key: principal(c).scope()})
}

// PositionDocuments lists the position's ledger for the tab: its documents
// are paid for before the first is read.
func (r chargedReader) PositionDocuments(ctx context.Context, pos string, limit int) (fund.Registered, []string, error) {
	claim, docs, err := r.Reader.PositionDocuments(ctx, pos, limit)
	if t := tabOf(ctx); t != nil && err == nil {
		t.listedPage(min(len(docs), limit))
	}
	return claim, docs, err
}

// PositionKnownAt pays for the listed documents before the first is read.
func (r chargedReader) PositionKnownAt(ctx context.Context, doc, pos string, at time.Time) ([]fund.PositionItem, error) {
	if t := tabOf(ctx); t != nil {
		if err := t.beforeRead(); err != nil {
			return nil, err
		}
	}
	return r.Reader.PositionKnownAt(ctx, doc, pos, at)
}
