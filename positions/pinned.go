package positions

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The later pages of a fan-out read whose first page was read from the
// latest versions: its cursor pins the instant the first page was read at,
// and every later page is read as known at that instant. Reading each of
// a page's positions as known at an instant costs a ledger Query and one
// Query per document that reports it, where the latest read costs one
// Query; but a fund none of whose documents was committed since the
// instant reads the same from its latest versions as at the instant. So
// each fund of the page is asked once whether it changed since (its event
// feed, Reader.FundChangedSince), and only the positions of a fund that
// did are read as known at the instant: paging on at once through a
// listing costs what the first page did, plus one Query per fund.

// pinnedFunds answers, once per fund for one read, whether a fund's
// documents changed since the instant, and finds the versions known then
// for the positions of those that did.
type pinnedFunds struct {
	r        Reader
	at       time.Time
	versions *knownVersions
	changed  onceEach[bool]
}

func newPinnedFunds(r Reader, at time.Time) *pinnedFunds {
	return &pinnedFunds{r: r, at: at, versions: newKnownVersions(r, at)}
}

// since reports whether the fund changed since the instant, asking the
// Reader the first time.
func (p *pinnedFunds) since(ctx context.Context, fundID string) (bool, error) {
	return p.changed.get(ctx, fundID, func() (bool, error) { return p.r.FundChangedSince(ctx, fundID, p.at) })
}

// pinnedReported is a registered position's items on asOf as known at the
// instant: from the latest versions when its fund has not changed since,
// otherwise as reportedKnownAtIn reads them. A position registered after
// the instant did not exist then.
func (s *Analytics) pinnedReported(ctx context.Context, p *pinnedFunds, r Registered, asOf fund.Date) (fund.PositionItem, []fund.PositionItem, error) {
	if r.RegisteredAt.After(p.at) {
		return fund.PositionItem{}, nil, unregistered(r)
	}
	changed, err := p.since(ctx, r.FundID)
	if err != nil {
		return fund.PositionItem{}, nil, err
	}
	if !changed {
		return s.reported(ctx, r.PositionID, asOf, &r, anyone)
	}
	return s.reportedKnownAtIn(ctx, r.PositionID, asOf, p.at, anyone, &r, p.versions)
}

// positionRead reads one registered position's items on a date for a
// fan-out page: its identity and the items that count.
type positionRead func(ctx context.Context, r Registered) (fund.PositionItem, []fund.PositionItem, error)

// pageReader is how a fan-out page reads its positions: read, resuming
// the Reader's listing at start, and next, the key the page hands on made
// from the Reader's.
type pageReader struct {
	read  positionRead
	start []byte
	next  func([]byte) []byte
}

// pageRead says how a fan-out page that resumes at start reads each
// position on asOf as rd sees it: from the latest versions; as known at
// rd's instant (the keys it hands on marked as such, knownAtPageNext); or,
// for a later page of a read of the latest versions (rd pins the first
// page's instant and start is a key of the latest read), as known at the
// pinned instant through pinnedFunds.
func (s *Analytics) pageRead(rd fund.Read, asOf fund.Date, start []byte) pageReader {
	same := func(k []byte) []byte { return k }
	switch {
	case !rd.Past:
		return pageReader{read: s.latestRead(asOf), start: start, next: same}
	case start != nil && !IsKnownAtKey(start):
		p := newPinnedFunds(s.r, rd.KnownAt)
		return pageReader{start: start, next: same, read: func(ctx context.Context, r Registered) (fund.PositionItem, []fund.PositionItem, error) {
			return s.pinnedReported(ctx, p, r, asOf)
		}}
	}
	return pageReader{read: s.knownAtRead(asOf, newKnownVersions(s.r, rd.KnownAt)), start: knownAtPageKey(start), next: knownAtPageNext}
}

// latestRead reads a registered position from the latest versions,
// counting only the items of its row's fund and investor.
func (s *Analytics) latestRead(asOf fund.Date) positionRead {
	return func(ctx context.Context, r Registered) (fund.PositionItem, []fund.PositionItem, error) {
		return s.reported(ctx, r.PositionID, asOf, &r, anyone)
	}
}

// knownAtPageNext marks a key of the Reader's listing as handed on by a
// page read as known at an instant, so the next page is read so too;
// knownAtPageKey unmarks it.
func knownAtPageNext(next []byte) []byte {
	if next == nil {
		return nil
	}
	return append(slices.Clone(knownAtKey), next...)
}

func knownAtPageKey(k []byte) []byte {
	if k == nil {
		return nil
	}
	return bytes.TrimPrefix(k, knownAtKey)
}
