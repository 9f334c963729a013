package store

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

func TestTurnsOneWriterAtATimeAndGiveUpWithTheContext(t *testing.T) {
	var tr turns
	ctx := context.Background()
	done, err := tr.wait(ctx, "D1", 8)
	if err != nil {
		t.Fatal(err)
	}
	// Another document is not held up.
	other, err := tr.wait(ctx, "D2", 8)
	if err != nil {
		t.Fatal(err)
	}
	other()

	// A writer of D1 waits while the turn is held, and gives up when its
	// context ends.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := tr.wait(short, "D1", 8); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait while held: %v, want the context's deadline", err)
	}

	// The next writer gets its turn once the first is done.
	got := make(chan error, 1)
	go func() {
		next, err := tr.wait(ctx, "D1", 8)
		if err == nil {
			next()
		}
		got <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); tr.users("D1") < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the second writer never queued")
		}
		runtime.Gosched()
	}
	select {
	case err := <-got:
		t.Fatalf("second writer got its turn while the first held it (err %v)", err)
	default:
	}
	done()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.docs) != 0 {
		t.Fatalf("%d documents still tracked after every writer left", len(tr.docs))
	}
}

// TestTurnsRefuseWritersBeyondTheQueue: with one writer of a document
// holding its turn and maxWaiting behind it, the next writer of that
// document is refused at once (EUNAVAILABLE) and counted, while another
// document's writer is not held up; once a waiting writer has its turn,
// the queue has room again.
func TestTurnsRefuseWritersBeyondTheQueue(t *testing.T) {
	var tr turns
	ctx := context.Background()
	const maxWaiting = 2
	first, err := tr.wait(ctx, "D1", maxWaiting)
	if err != nil {
		t.Fatal(err)
	}
	turnsOf := make(chan func(), maxWaiting)
	for range maxWaiting {
		go func() {
			done, err := tr.wait(ctx, "D1", maxWaiting)
			if err != nil {
				t.Error(err)
				return
			}
			turnsOf <- done
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); tr.stats().Waiting < maxWaiting; {
		if time.Now().After(deadline) {
			t.Fatalf("%d writers wait, want %d", tr.stats().Waiting, maxWaiting)
		}
		runtime.Gosched()
	}

	_, err = tr.wait(ctx, "D1", maxWaiting)
	if fund.ErrorCode(err) != fund.EUNAVAILABLE {
		t.Fatalf("a writer beyond the queue: %v, want EUNAVAILABLE", err)
	}
	if q := tr.stats(); q.Waiting != maxWaiting || q.Refused != 1 {
		t.Fatalf("after the refusal: %+v, want %d waiting and 1 refused", q, maxWaiting)
	}
	other, err := tr.wait(ctx, "D2", maxWaiting)
	if err != nil {
		t.Fatalf("another document's writer: %v", err)
	}
	other()

	// The refused writer left no trace: the holder hands over to the
	// first waiter, which leaves room for one more.
	first()
	next := <-turnsOf
	if q := tr.stats(); q.Waiting != maxWaiting-1 {
		t.Fatalf("after a waiter got its turn: %+v, want %d waiting", q, maxWaiting-1)
	}
	go func() {
		done, err := tr.wait(ctx, "D1", maxWaiting)
		if err != nil {
			t.Error(err)
			return
		}
		turnsOf <- done
	}()
	next()
	for range maxWaiting {
		(<-turnsOf)()
	}
	if q := tr.stats(); q.Waiting != 0 || q.Refused != 1 {
		t.Fatalf("after every writer left: %+v", q)
	}

	// With none allowed to wait, a second writer is refused while the
	// first writes.
	alone, err := tr.wait(ctx, "D3", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.wait(ctx, "D3", 0); fund.ErrorCode(err) != fund.EUNAVAILABLE {
		t.Fatalf("with no waiting allowed: %v, want EUNAVAILABLE", err)
	}
	alone()
}

// users is how many writers hold or wait for doc's turn.
func (t *turns) users(doc string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d := t.docs[doc]; d != nil {
		return d.users
	}
	return 0
}
