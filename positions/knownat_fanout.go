package positions

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The fan-out reads as known at an instant: an investor's summary and
// performance, a fund's performance, a document's reconciliation, each
// position read as reportedKnownAt reads it. Positions of one fund share
// their documents, so each document's version known at the instant is
// found once for the whole read (knownVersions), not once per position:
// a fund of 400 positions in 20 documents costs 20 version searches.
// Per position the read is then the ledger's Query and one Query of each
// document version that reports it (the asOf rule's reads aside).

// knownVersions is the version of each document known at one instant, for
// the duration of one read: each is found with one Reader.KnownVersion,
// however many positions of the read the document reports, even when
// several ask for it at once.
type knownVersions struct {
	r   Reader
	at  time.Time
	doc onceEach[knownVersion]
}

// knownVersion is one document's version known at the instant (found
// false: the document had no committed version then).
type knownVersion struct {
	header fund.DocumentHeader
	found  bool
}

func newKnownVersions(r Reader, at time.Time) *knownVersions {
	return &knownVersions{r: r, at: at}
}

// of returns the document's version known at the instant, finding it
// the first time it is asked for.
func (k *knownVersions) of(ctx context.Context, doc string) (knownVersion, error) {
	return k.doc.get(ctx, doc, func() (knownVersion, error) {
		h, err := k.r.KnownVersion(ctx, doc, k.at)
		if fund.ErrorCode(err) == fund.ENOTFOUND {
			return knownVersion{}, nil
		}
		return knownVersion{header: h, found: err == nil}, err
	})
}

// known records a version already found (the reconciled document's).
func (k *knownVersions) known(h fund.DocumentHeader) {
	k.doc.set(h.ID, knownVersion{header: h, found: true})
}

// onceEach computes a value once per key for the duration of one read,
// even when several goroutines ask for it at once: the first asks, the
// others wait for its answer (or their context).
type onceEach[V any] struct {
	mu   sync.Mutex
	keys map[string]*onceValue[V]
}

// onceValue is one key's value: ready is closed once it is computed.
type onceValue[V any] struct {
	ready chan struct{}
	v     V
	err   error
}

func (o *onceEach[V]) get(ctx context.Context, key string, compute func() (V, error)) (V, error) {
	o.mu.Lock()
	if o.keys == nil {
		o.keys = map[string]*onceValue[V]{}
	}
	e, asked := o.keys[key]
	if !asked {
		e = &onceValue[V]{ready: make(chan struct{})}
		o.keys[key] = e
	}
	o.mu.Unlock()
	if !asked {
		e.v, e.err = compute()
		close(e.ready)
	}
	select {
	case <-e.ready:
		return e.v, e.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// set records key's value as computed already.
func (o *onceEach[V]) set(key string, v V) {
	e := &onceValue[V]{ready: make(chan struct{}), v: v}
	close(e.ready)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys == nil {
		o.keys = map[string]*onceValue[V]{}
	}
	o.keys[key] = e
}

// position is Reader.PositionKnownAt through the memo: the position's
// items in the document's version known at the instant; none when the
// document had none then, or it is a void.
func (k *knownVersions) position(ctx context.Context, doc, pos string) ([]fund.PositionItem, error) {
	v, err := k.of(ctx, doc)
	if err != nil || !v.found || v.header.Voided {
		return nil, err
	}
	return k.r.VersionPosition(ctx, doc, v.header.CommitID, pos)
}

// knownAtRead reads a registered position as known at the instant of
// versions, counting only the items of its row's fund and investor: a
// position registered after the instant did not exist then.
func (s *Analytics) knownAtRead(asOf fund.Date, versions *knownVersions) positionRead {
	return func(ctx context.Context, r Registered) (fund.PositionItem, []fund.PositionItem, error) {
		if r.RegisteredAt.After(versions.at) {
			return fund.PositionItem{}, nil, unregistered(r)
		}
		return s.reportedKnownAtIn(ctx, r.PositionID, asOf, versions.at, anyone, &r, versions)
	}
}

// fundPerformanceKnownAt is FundPerformance as known at the instant at:
// the fund's registry (the same bound), then each position as
// InvestorPerformance reads it as known then, each document's version
// known then found once for the whole fund.
//
// A fund none of whose positions was registered yet at the instant is
// ENOTFOUND, as the live read answers a fund with none.
func (s *Analytics) fundPerformanceKnownAt(ctx context.Context, fundID string, asOf fund.Date, at time.Time, maxPositions int) (FundPerformance, error) {
	var registered atomic.Int64
	read := s.evaluatedBy(asOf, s.knownAtRead(asOf, newKnownVersions(s.r, at)))
	p, err := s.fundPerformance(ctx, fundID, asOf, maxPositions, func(ctx context.Context, r Registered) (Performance, error) {
		if !r.RegisteredAt.After(at) {
			registered.Add(1)
		}
		return read(ctx, r)
	})
	if err == nil && registered.Load() == 0 {
		return FundPerformance{}, fund.Errorf(fund.ENOTFOUND, "fund %s not found", fundID)
	}
	return p, err
}

// unregistered is the answer for a position registered after the instant
// a read is known at: it did not exist then, and the fan-outs leave it out
// without reading it. A position is registered by the staging of the
// first version that reports it, before that version's commit instant.
func unregistered(r Registered) error {
	return fund.Errorf(fund.ENOTFOUND, "position %s not found", r.PositionID)
}

// documentReconciliationKnownAt is DocumentReconciliation as known at the
// instant at: a page of the statements of version, the document's version
// known then (the caller found it, and decided the caller may read it),
// read from that version's partition, each reconciled with the notices
// of its position as known at the same instant. Its keys are
// DocumentStatements' kind, marked as a read's as known at an instant
// (knownAtPageNext): a listing begun on the latest view goes on in the
// version.
func (s *Analytics) documentReconciliationKnownAt(ctx context.Context, version fund.DocumentHeader, at time.Time, limit int, start []byte) (DocumentReconciliation, []byte, error) {
	doc := version.ID
	if version.Voided {
		return DocumentReconciliation{DocumentID: doc, Reconciliations: []Reconciliation{}}, nil, nil
	}
	statements, next, err := s.r.VersionStatements(ctx, doc, version.CommitID, limit, knownAtPageKey(start))
	if err != nil {
		return DocumentReconciliation{}, nil, err
	}
	versions := newKnownVersions(s.r, at)
	versions.known(version)
	out, err := s.reconcileAll(ctx, doc, statements, func(ctx context.Context, st *fund.PositionItem, owner *Registered) ([]fund.PositionItem, error) {
		_, items, err := s.reportedKnownAtIn(ctx, st.PositionID, st.AsOf, at, anyone, owner, versions)
		return items, err
	})
	return out, knownAtPageNext(next), err
}
