package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// The export lease: one item per snapshot date, naming the run that may
// export that date and the instant its lease ends. Every write is
// conditional, so runs on different machines agree on one holder. The
// policy (how long, when to renew, how long to wait) is the export's; this
// file only stores it.

// ExportLease is the lease of one snapshot date, as stored.
type ExportLease struct {
	Owner     string    // a random token of the run holding it
	RunID     string    // the run holding it, for messages
	Until     time.Time // the lease ends then unless renewed (millisecond precision)
	StartedAt time.Time // when the run took it
}

// ErrLeaseNotHeld is returned by RenewExportLease when the lease is no
// longer the owner's.
var ErrLeaseNotHeld = errors.New("store: the export lease is not held by this owner")

// ErrLeaseChanged is returned by TakeExportLease when the lease was held at
// the write but gone at the read that followed: trying again may succeed.
var ErrLeaseChanged = errors.New("store: the export lease changed hands while it was read")

// leaseItem is the stored lease. Its Type is no entity, so the committed
// record stream and every reader pass over it.
type leaseItem struct {
	PK, SK, Type string
	Owner        string
	RunID        string
	LeaseUntil   int64 // Unix milliseconds
	StartedAt    time.Time
	// ExpiresAt lets the table's TTL remove a lease left by a crashed run,
	// a day after it ended; until then, the lease's own end decides.
	ExpiresAt int64
}

func (it *leaseItem) lease() *ExportLease {
	return &ExportLease{Owner: it.Owner, RunID: it.RunID, Until: time.UnixMilli(it.LeaseUntil).UTC(), StartedAt: it.StartedAt}
}

// leaseTTL is how long after its end a lease item stays in the table.
const leaseTTL = 24 * time.Hour

// TakeExportLease makes owner the holder of date's lease until until, if
// nobody holds it or its lease ended before now (one conditional PutItem).
// It returns nil if it did; otherwise the holder, read with one strongly
// consistent GetItem (whose lease may have ended since the write: the
// caller decides with its clock), or ErrLeaseChanged if the lease was gone
// by then.
func (s *Store) TakeExportLease(ctx context.Context, date fund.Date, owner, runID string, now, until time.Time) (*ExportLease, error) {
	it := leaseItem{
		PK: ExportLeasePK(date), SK: ExportLeaseSK, Type: TypeExportLease,
		Owner: owner, RunID: runID, LeaseUntil: until.UnixMilli(), StartedAt: now.UTC(),
		ExpiresAt: until.Add(leaseTTL).Unix(),
	}
	err := s.table.Put(it).If("attribute_not_exists($) OR $ < ?", AttrPK, "LeaseUntil", now.UnixMilli()).Run(ctx)
	if err == nil {
		return nil, nil
	}
	if !dynamo.IsCondCheckFailed(err) {
		return nil, fmt.Errorf("store: take the export lease of %s: %w", date, err)
	}
	holder, err := s.ExportLease(ctx, date)
	if err != nil {
		return nil, err
	}
	if holder == nil {
		return nil, ErrLeaseChanged
	}
	return holder, nil
}

// ExportLease returns the lease of date, or nil if there is none (one
// strongly consistent GetItem).
func (s *Store) ExportLease(ctx context.Context, date fund.Date) (*ExportLease, error) {
	var it leaseItem
	err := s.table.Get(AttrPK, ExportLeasePK(date)).Range(AttrSK, dynamo.Equal, ExportLeaseSK).Consistent(true).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read the export lease of %s: %w", date, err)
	}
	return it.lease(), nil
}

// RenewExportLease moves the end of owner's lease of date to until (one
// conditional UpdateItem). It returns ErrLeaseNotHeld if the lease is no
// longer owner's.
func (s *Store) RenewExportLease(ctx context.Context, date fund.Date, owner string, until time.Time) error {
	err := s.table.Update(AttrPK, ExportLeasePK(date)).Range(AttrSK, ExportLeaseSK).
		Set("LeaseUntil", until.UnixMilli()).Set(AttrExpiresAt, until.Add(leaseTTL).Unix()).
		If("$ = ?", "Owner", owner).Run(ctx)
	if dynamo.IsCondCheckFailed(err) {
		return ErrLeaseNotHeld
	}
	if err != nil {
		return fmt.Errorf("store: renew the export lease of %s: %w", date, err)
	}
	return nil
}

// ReleaseExportLease deletes date's lease if it is owner's (one conditional
// DeleteItem); a lease that is not, or no longer there, is left alone
// without error.
func (s *Store) ReleaseExportLease(ctx context.Context, date fund.Date, owner string) error {
	err := s.table.Delete(AttrPK, ExportLeasePK(date)).Range(AttrSK, ExportLeaseSK).
		If("$ = ?", "Owner", owner).Run(ctx)
	if err != nil && !dynamo.IsCondCheckFailed(err) {
		return fmt.Errorf("store: release the export lease of %s: %w", date, err)
	}
	return nil
}
