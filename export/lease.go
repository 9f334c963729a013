package export

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
)

// The per-date export lease. Two exports of one date must never run at
// once: each deletes, after publishing, every file of the date that is not
// its own, so the later one would delete the files the earlier one's tables
// read. Exports may run on different machines, so the only coordination
// that counts is a conditional write in the table: one item per snapshot
// date, naming its owner and the instant its lease ends. A run takes it if
// nobody holds it or its lease has ended (a run that crashed), renews it
// while it runs, checks it is still its own right before publishing, and
// deletes it at the end, each write conditional on the owner. The item
// and its conditional writes are the store's (store/lease.go); the policy
// is here.

// ErrExportRunning is matched (errors.Is) by the error of an export that
// found another run of its date holding the lease. The error is also a
// *fund.Error with code fund.ECONFLICT whose message names the other run.
var ErrExportRunning = errors.New("another export of this date is running")

// runningError is the refusal: both ErrExportRunning and a fund.Error.
type runningError struct{ err *fund.Error }

func (e runningError) Error() string   { return e.err.Error() }
func (e runningError) Unwrap() []error { return []error{e.err, ErrExportRunning} }

// ErrLeaseLost is the cause of a run's failure when its lease was taken
// over (it could not renew it in time, and another run took it): the run
// stops without publishing.
var ErrLeaseLost = errors.New("export: the lease of the snapshot date was lost; this run publishes nothing")

// lease is one run's hold on its date.
type lease struct {
	store *store.Store
	date  fund.Date
	owner string
	runID string
	dur   time.Duration
	now   func() time.Time

	mu    sync.Mutex
	until time.Time // the end of the lease as last written
}

func newLease(cfg *Config, date fund.Date, runID string) *lease {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return &lease{store: cfg.Store, date: date, owner: hex.EncodeToString(b), runID: runID,
		dur: cfg.LeaseDuration, now: cfg.Now}
}

// acquire takes the lease, waiting up to wait for another run to release
// it (or for its lease to end). It returns an error matching
// ErrExportRunning if the lease is still held then.
func (l *lease) acquire(ctx context.Context, wait time.Duration) error {
	deadline := l.now().Add(wait)
	poll := min(time.Second, max(l.dur/4, 10*time.Millisecond))
	for {
		holder, err := l.tryTake(ctx)
		if err != nil || holder == nil {
			return err
		}
		if !l.now().Before(deadline) {
			return runningError{fund.Errorf(fund.ECONFLICT,
				"another export of %s is running: run %s holds the lease until %s (a crashed run's lease ends then); retry later, or wait for it with --wait-lease",
				l.date, holder.RunID, holder.Until.Format(time.RFC3339))}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("export: wait for the lease of %s: %w", l.date, ctx.Err())
		case <-time.After(min(poll, max(deadline.Sub(l.now()), time.Millisecond))):
		}
	}
}

// tryTake takes the lease if nobody holds it or its lease has ended;
// otherwise it returns the holder.
func (l *lease) tryTake(ctx context.Context) (*store.ExportLease, error) {
	for range 3 {
		now := l.now()
		until := now.Add(l.dur)
		holder, err := l.store.TakeExportLease(ctx, l.date, l.owner, l.runID, now, until)
		if errors.Is(err, store.ErrLeaseChanged) {
			continue // released since: try again
		}
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if holder == nil {
			l.mu.Lock()
			l.until = until
			l.mu.Unlock()
			return nil, nil
		}
		if holder.Until.UnixMilli() >= l.now().UnixMilli() {
			return holder, nil
		}
		// Ended between the write and the read: try again.
	}
	return nil, fmt.Errorf("export: take the lease of %s: it changed hands three times in a row", l.date)
}

// renew extends the lease by its duration from now. It returns ErrLeaseLost
// if the lease is no longer this run's.
func (l *lease) renew(ctx context.Context) error {
	until := l.now().Add(l.dur)
	err := l.store.RenewExportLease(ctx, l.date, l.owner, until)
	if errors.Is(err, store.ErrLeaseNotHeld) {
		return ErrLeaseLost
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	l.mu.Lock()
	l.until = until
	l.mu.Unlock()
	return nil
}

// ends is the end of the lease as last written.
func (l *lease) ends() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// hold renews the lease before a step that changes the destination, so a
// run that was stalled past its lease, and may have been taken over, finds
// out before it publishes or deletes anything rather than after. (Three
// small writes per run: see exporter.publish.) It returns ErrLeaseLost if
// the lease is no longer this run's.
func (l *lease) hold(ctx context.Context) error { return l.renew(ctx) }

// holdIfStale renews the lease, as hold, if a third of its duration has
// passed since it was last written.
func (l *lease) holdIfStale(ctx context.Context) error {
	if l.now().Before(l.ends().Add(-l.dur * 2 / 3)) {
		return nil
	}
	return l.renew(ctx)
}

// keep renews the lease every third of its duration until ctx is done. If
// the lease is lost, or cannot be renewed before it ends, it calls lost
// and returns: the run must stop.
func (l *lease) keep(ctx context.Context, lost func(error)) {
	t := time.NewTicker(max(l.dur/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := l.renew(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrLeaseLost) {
			lost(ErrLeaseLost)
			return
		}
		if err != nil && !l.now().Before(l.ends()) {
			lost(fmt.Errorf("%w (the last renewal failed: %v)", ErrLeaseLost, err))
			return
		}
		// A renewal that failed for another reason is tried again at the
		// next tick, while the lease still runs.
	}
}

// release deletes the lease if it is still this run's. It is best effort:
// a lease left behind ends on its own.
func (l *lease) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = l.store.ReleaseExportLease(ctx, l.date, l.owner)
}
