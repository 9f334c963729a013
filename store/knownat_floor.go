package store

import (
	"context"
	"time"
)

// The floor of reads as known at an instant: the event feed's start. Every
// process lowers the recorded start before its first commit to the
// instant that commit's version was created at (recordEventsStart), so
// no version was committed, and no position registered, before it: a read
// as known at an instant before the start is answered as before anything,
// whatever the instant, without searching the months or versions between.

// BeforeFeed reports whether at is before the event feed's start (or no
// version was ever committed): nothing was known then. It reads nothing
// when at is at or after a start this process has read (the recorded
// start is only ever lowered, so such an instant is never before it), and
// otherwise one strongly consistent GetItem, paid for in reads.
func (s *Store) BeforeFeed(ctx context.Context, at time.Time, reads *Reads) (bool, error) {
	s.start.mu.Lock()
	read := s.start.read
	s.start.mu.Unlock()
	if !read.IsZero() && !at.Before(read) {
		return false, nil
	}
	if err := reads.spend(1); err != nil {
		return false, err
	}
	start, ok, err := s.eventsStart(ctx)
	if err != nil {
		return false, err
	}
	return !ok || at.Before(start), nil
}
