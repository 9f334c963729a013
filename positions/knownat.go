package positions

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"golang.org/x/sync/errgroup"
)

// Reads as known at an instant (docs/knownat.md). The
// position pivot holds each document's latest items only, so a position
// known at an instant is read from its ledger instead: the documents that
// ever reported it (Reader.PositionDocuments), each at its version known
// at the instant (Reader.PositionKnownAt). A document counts at its latest
// version committed at or before the instant, under the live read's asOf
// rule among the versions committed by then; a document whose version then
// did not report the position (withdrawn, or voided) does not count, and
// one first committed later does not exist. The arithmetic is the live
// read's (Summarize, CashflowsOf, Evaluate), on those items.

// MaxKnownAtDocuments bounds the documents one read of a position as known
// at an instant reads (each a few GetItems and a Query or two): a position
// reported by more is answered 400 before any of them is read.
const MaxKnownAtDocuments = 200

// knownAtReads is how many documents are read at once.
const knownAtReads = 8

// reportedKnownAt returns the items that count for a position on asOf
// (zero: every document whatever its date) as known at the instant at,
// and the position's identity, read from them: the live read (reported)
// on the versions known at the instant instead of the latest ones.
//
// v is decided on the ledger's Query, the first read, on the claim's fund
// and investor, so a refused position costs what an unknown one does (that
// one Query). It returns ENOTFOUND when the position has no claim, v may
// not read it, or no document's version known at the instant reports
// it; EINVALID when more than MaxKnownAtDocuments documents ever reported
// it. As the live read, a position whose documents are all dated after
// asOf is found, with no items counted.
func (s *Analytics) reportedKnownAt(ctx context.Context, pos string, asOf fund.Date, at time.Time, v fund.Viewer) (fund.PositionItem, []fund.PositionItem, error) {
	return s.reportedKnownAtIn(ctx, pos, asOf, at, v, nil, nil)
}

// reportedKnownAtIn is reportedKnownAt for a fan-out: when owner is set, it
// counts only the items of owner's fund and investor (as reported does);
// when versions is set, each document's version known at the instant is
// found through it (once per document for the whole fan-out) and the
// position read from that version, rather than searched for again.
func (s *Analytics) reportedKnownAtIn(ctx context.Context, pos string, asOf fund.Date, at time.Time, v fund.Viewer, owner *Registered, versions *knownVersions) (fund.PositionItem, []fund.PositionItem, error) {
	notFound := fund.Errorf(fund.ENOTFOUND, "position %s not found", pos)
	claim, docs, err := s.r.PositionDocuments(ctx, pos, MaxKnownAtDocuments)
	if err != nil {
		return fund.PositionItem{}, nil, err
	}
	if claim.PositionID == "" || !v.MayReadPosition(claim.FundID, claim.InvestorID) {
		return fund.PositionItem{}, nil, notFound
	}
	if len(docs) > MaxKnownAtDocuments {
		return fund.PositionItem{}, nil, fund.Invalid("knownAt", "position %s has been reported by more than %d documents, the most a read as known at an instant covers; read it without knownAt, or from the export", pos, MaxKnownAtDocuments)
	}
	each := make([][]fund.PositionItem, len(docs))
	if err := eachAtOnce(ctx, len(docs), func(ctx context.Context, i int) (err error) {
		if versions != nil {
			each[i], err = versions.position(ctx, docs[i], pos)
		} else {
			each[i], err = s.r.PositionKnownAt(ctx, docs[i], pos, at)
		}
		return err
	}); err != nil {
		return fund.PositionItem{}, nil, err
	}
	var known []fund.PositionItem
	for _, its := range each {
		known = append(known, its...)
	}
	if owner != nil {
		known = slices.DeleteFunc(known, func(it fund.PositionItem) bool {
			return it.FundID != owner.FundID || it.InvestorID != owner.InvestorID
		})
	}
	if len(known) == 0 {
		// Every document came later, or its version then withdrew the
		// position (or was a void): unknown, as the live read answers a
		// position no document's latest version reports.
		return fund.PositionItem{}, nil, notFound
	}
	slices.SortStableFunc(known, func(a, b fund.PositionItem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.DocumentID, b.DocumentID))
	})
	identity := known[0]
	// The asOf rule, as the live read applies it to the latest versions:
	// a document whose version known at the instant is dated after asOf
	// counts at its latest earlier version dated on or before it.
	counted, later := Counted(known, asOf)
	docs = docs[:0]
	for doc := range later {
		docs = append(docs, doc)
	}
	slices.Sort(docs)
	earlier := make([][]fund.PositionItem, len(docs))
	if err := eachAtOnce(ctx, len(docs), func(ctx context.Context, i int) (err error) {
		earlier[i], err = s.r.PositionAsOf(ctx, docs[i], pos, asOf, later[docs[i]])
		return err
	}); err != nil {
		return fund.PositionItem{}, nil, err
	}
	for _, items := range earlier {
		counted = append(counted, items...)
	}
	return identity, counted, nil
}

// eachAtOnce calls read for 0..n-1, knownAtReads at a time, and returns
// the first error.
func eachAtOnce(ctx context.Context, n int, read func(context.Context, int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(knownAtReads)
	for i := range n {
		g.Go(func() error { return read(gctx, i) })
	}
	return g.Wait()
}

// itemsKnownAt is Items as known at the instant at: the items of each
// document's version known then, by kind then document, of one kind when
// kind is set, a page of up to limit from start (a key it issued). It
// reads the whole position on every page (reportedKnownAt's reads, at most
// MaxKnownAtDocuments documents) and cuts the page from it. A position no
// document's version then reports, or that v may not read, is ENOTFOUND;
// a known one with none of the kind asked for is an empty page.
func (s *Analytics) itemsKnownAt(ctx context.Context, pos string, kind fund.ItemKind, at time.Time, limit int, start []byte, v fund.Viewer) ([]fund.PositionItem, []byte, error) {
	from := 0
	if start != nil {
		n, err := strconv.Atoi(string(bytes.TrimPrefix(start, knownAtKey)))
		if !IsKnownAtKey(start) || err != nil || n < 0 {
			return nil, nil, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
		}
		from = n
	}
	_, items, err := s.reportedKnownAt(ctx, pos, fund.Date{}, at, v)
	if err != nil {
		return nil, nil, err
	}
	if kind != "" {
		items = slices.DeleteFunc(items, func(it fund.PositionItem) bool { return it.Kind != kind })
	}
	from = min(from, len(items))
	to := min(from+limit, len(items))
	var next []byte
	if to < len(items) {
		next = KnownAtKeyAfter(to)
	}
	return items[from:to], next, nil
}

// knownAtKey starts the page keys itemsKnownAt and knownAtPageNext issue, which no Reader's
// key starts with.
var knownAtKey = []byte("knownAt:")

// KnownAtKeyAfter is the page key of itemsKnownAt's page that starts after
// the first n items: what a first page read from the latest versions hands
// on, so that the pages after it are read as known at its instant.
func KnownAtKeyAfter(n int) []byte { return append(slices.Clone(knownAtKey), strconv.Itoa(n)...) }

// IsKnownAtKey says whether a page key was issued by a read as known at an instant (rather
// than by the Reader, for a read of the latest versions).
func IsKnownAtKey(k []byte) bool { return bytes.HasPrefix(k, knownAtKey) }

// capitalCallKnownAt is CapitalCallIn as known at the instant at: the
// position's capital call in the document's version known then. v is
// decided on the ledger's Query, as reportedKnownAt decides; ENOTFOUND
// when the position is unknown or refused, or the version has no call.
func (s *Analytics) capitalCallKnownAt(ctx context.Context, pos, doc string, at time.Time, v fund.Viewer) (fund.PositionItem, error) {
	notFound := fund.Errorf(fund.ENOTFOUND, "no capital call for position %s in document %s", pos, doc)
	claim, docs, err := s.r.PositionDocuments(ctx, pos, MaxKnownAtDocuments)
	if err != nil {
		return fund.PositionItem{}, err
	}
	if claim.PositionID == "" || !v.MayReadPosition(claim.FundID, claim.InvestorID) || !slices.Contains(docs, doc) {
		return fund.PositionItem{}, notFound
	}
	items, err := s.r.PositionKnownAt(ctx, doc, pos, at)
	if err != nil {
		return fund.PositionItem{}, err
	}
	for _, it := range items {
		if it.Kind == fund.CapitalCall {
			return it, nil
		}
	}
	return fund.PositionItem{}, notFound
}
