package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// "Why did this number move": a position's summary or performance figures
// moved by the document versions committed in a window of instants. The
// reads are package positions' (SummaryChanges, PerformanceChanges),
// through s.positions, so they are charged by the work.

// changesReadDoc is what both changes routes' descriptions say of how
// they read.
var changesReadDoc = fmt.Sprintf("The position is read as known at `from` (each document of its ledger at its latest version committed at or before `from`, under the `asOf` rule among the versions committed by then, as a read with `knownAt` is), then after each version committed after `from` and at or before `to`, in commit order (commit instant, then document ID, then version), as known at that version's commit instant; so the figures after the last version are the read as known at `to`, and for every money figure the contributions (after − before) of the versions listed add up exactly to its change from `from` to `to` (`figures`). A version that changed no figure is left out; a window in which none changed any answers an empty `changes`. Each change names its document, version, event type (created, restated, voided), commit instant and `versionPath`, so the version can be read whole. `asOf` defaults to `to`'s date (UTC). Reads: one strongly consistent Query of the position's ledger, on which access is decided (a position the token may not read costs that Query, as an unknown one); then per document of the ledger its versions in the window (the head's GetItem, a Query of its instant index for each end of the window and one Query of the window's events), then the document as known at `from` and each version listed as known at its instant (each at most 2 GetItems and 2 Queries, two more when a restatement moved its date after `asOf`), 8 at a time. A position reported by more than %d documents, or a window in which its documents committed more than %d versions, is 400 before any version is read. Rate limit: one token per document of the ledger and one per version listed, each charged before the reads it pays for (429 if the token's bucket is empty then).", positions.MaxKnownAtDocuments, positions.MaxChangeVersions)

// changesWindow is what a changes read is taken on.
type changesWindow struct {
	from, to time.Time
	asOf     fund.Date
}

// changesWindow reads from (required), to (the instant the read began
// when absent) and asOf (to's date, UTC, when absent): both instants RFC
// 3339 and not in the future, from before to.
func (p *params) changesWindow() changesWindow {
	var w changesWindow
	asOf := p.date("asOf")
	from, given := p.instant("from")
	if p.err != nil {
		return w
	}
	if !given {
		p.fail(fund.Invalid("from", "is required: the instant the window starts after, RFC 3339 with its offset"))
		return w
	}
	to, given := p.instant("to")
	if p.err != nil {
		return w
	}
	if !given {
		to = p.s.docs.Now().UTC()
	}
	if !from.Before(to) {
		p.fail(fund.Invalid("from", "must be before to (%s)", to.Format(time.RFC3339Nano)))
		return w
	}
	if asOf.IsZero() {
		asOf = fund.DateOf(to)
	}
	return changesWindow{from: from, to: to, asOf: asOf}
}

// getPositionSummaryChanges answers the versions that moved a position's
// summary; another's position is 404, as an unknown one.
func (s *server) getPositionSummaryChanges(c *gin.Context) {
	s.positionChanges(c, s.positions.SummaryChanges)
}

// getPositionPerformanceChanges answers the versions that moved a
// position's performance; another's position is 404, as an unknown one.
func (s *server) getPositionPerformanceChanges(c *gin.Context) {
	s.positionChanges(c, s.positions.PerformanceChanges)
}

func (s *server) positionChanges(c *gin.Context, read func(ctx context.Context, v fund.Viewer, pos string, asOf fund.Date, from, to time.Time) (positions.Changes, error)) {
	in := s.params(c)
	pos := in.id("positionId")
	w := in.changesWindow()
	if !in.ok() {
		return
	}
	ch, err := read(s.readContext(c), viewer(c), pos, w.asOf, w.from, w.to)
	if err != nil {
		writeChargeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.PositionFigureChangesOf(ch, !w.to.After(s.docs.SettledUntil())))
}

// DocumentVersionsBetween lists a document's versions in a window for the
// tab: the document is paid for (as the ledger listed it) before it is
// read, and the versions listed are paid for before the first of them is.
func (r chargedReader) DocumentVersionsBetween(ctx context.Context, doc string, from, to time.Time, limit int) ([]fund.Event, error) {
	lister, ok := r.Reader.(positions.VersionLister)
	if !ok {
		return nil, fmt.Errorf("api: the store does not list a document's versions")
	}
	t := tabOf(ctx)
	if t != nil {
		if err := t.beforeRead(); err != nil {
			return nil, err
		}
	}
	evs, err := lister.DocumentVersionsBetween(ctx, doc, from, to, limit)
	if t != nil && err == nil {
		t.listedPage(min(len(evs), limit))
	}
	return evs, err
}
