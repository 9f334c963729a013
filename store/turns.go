package store

import (
	"context"
	"sync"
)

// turns gives the writers of one document their turn one at a time, in the
// order they asked, within this process. Without it, concurrent writers of
// a document each stage a whole version and all but one lose the commit and
// stage it again; under load, the losers can retry until their deadline.
// Writers in other processes are still serialized by the commit's
// condition, as before.
//
// The zero value is ready to use; it is safe for concurrent use.
type turns struct {
	mu   sync.Mutex
	docs map[string]*turn
}

type turn struct {
	// held has a token in it while a writer has the document. Go queues
	// blocked senders first come, first served.
	held  chan struct{}
	users int // writers holding or waiting for the turn, by turns.mu
}

// wait blocks until it is the caller's turn to write doc, or ctx is done.
// The caller must call the returned done when it has finished writing.
func (t *turns) wait(ctx context.Context, doc string) (done func(), err error) {
	t.mu.Lock()
	if t.docs == nil {
		t.docs = map[string]*turn{}
	}
	d := t.docs[doc]
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
