package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/fundsvc/fundsvc/fund"
)

// turns gives the writers of one document their turn one at a time, in the
// order they asked, within this process. Without it, concurrent writers of
// a document each stage a whole version and all but one lose the commit and
// stage it again; under load, the losers can retry until their deadline.
// Writers in other processes are still serialized by the commit's
// condition, as before.
//
// A bounded number of writers may wait behind the one that has the turn
// (Store.MaxWaitingWriters): each holds its request's body and a decoded
// document until its deadline (the write timeout, 5 minutes by default), so
// an unbounded queue would let one client pile them up; the next is
// refused at once (EUNAVAILABLE), before it reads or writes anything.
//
// The zero value is ready to use; it is safe for concurrent use.
type turns struct {
	mu      sync.Mutex
	docs    map[string]*turn
	refused uint64 // writers refused because the queue was full, by mu
}

type turn struct {
	// held has a token in it while a writer has the document. Go queues
	// blocked senders first come, first served.
	held  chan struct{}
	users int // writers holding or waiting for the turn, by turns.mu
}

// wait blocks until it is the caller's turn to write doc, or ctx is done.
// The caller must call the returned done when it has finished writing. When
// maxWaiting writers already wait for doc behind the one writing it, wait
// returns EUNAVAILABLE at once.
func (t *turns) wait(ctx context.Context, doc string, maxWaiting int) (done func(), err error) {
	t.mu.Lock()
	if t.docs == nil {
		t.docs = map[string]*turn{}
	}
	d := t.docs[doc]
	if d != nil && d.users-1 >= maxWaiting {
		t.refused++
		t.mu.Unlock()
		return nil, &fund.Error{Code: fund.EUNAVAILABLE,
			Message: fmt.Sprintf("%d writers already wait for document %s on this instance, the most that may; retry later", maxWaiting, doc)}
	}
	if d == nil {
		d = &turn{held: make(chan struct{}, 1)}
		t.docs[doc] = d
	}
	d.users++
	t.mu.Unlock()

	leave := func() {
		t.mu.Lock()
		if d.users--; d.users == 0 {
			delete(t.docs, doc)
		}
		t.mu.Unlock()
	}
	select {
	case d.held <- struct{}{}:
		return func() { <-d.held; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// DefaultMaxWaitingWriters is how many writers of one document may wait
// for their turn in a process unless configured otherwise: far more than
// an administrator's retries or an import need, far fewer than the
// hundreds one token could otherwise hold until the write deadline.
const DefaultMaxWaitingWriters = 8

// WriteQueue reports the writers waiting for their turn in this process
// and how many were refused since it started.
func (s *Store) WriteQueue() WriteQueue { return s.writers.stats() }

// WriteQueue is what the writers of this process's documents are doing.
type WriteQueue struct {
	// Waiting is how many writers wait for their turn behind the writer of
	// their document, over every document.
	Waiting int
	// Refused is how many writers were refused since the process started
	// because MaxWaitingWriters already waited for their document.
	Refused uint64
}

// stats counts the waiting writers of every document.
func (t *turns) stats() WriteQueue {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := WriteQueue{Refused: t.refused}
	for _, d := range t.docs {
		q.Waiting += d.users - 1
	}
	return q
}
