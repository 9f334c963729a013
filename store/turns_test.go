package store

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

func TestTurnsOneWriterAtATimeAndGiveUpWithTheContext(t *testing.T) {
	var tr turns
	ctx := context.Background()
	done, err := tr.wait(ctx, "D1")
	if err != nil {
		t.Fatal(err)
	}
	// Another document is not held up.
	other, err := tr.wait(ctx, "D2")
	if err != nil {
		t.Fatal(err)
	}
	other()

	// A writer of D1 waits while the turn is held, and gives up when its
	// context ends.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := tr.wait(short, "D1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait while held: %v, want the context's deadline", err)
	}

	// The next writer gets its turn once the first is done.
	got := make(chan error, 1)
	go func() {
		next, err := tr.wait(ctx, "D1")
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

// users is how many writers hold or wait for doc's turn.
func (t *turns) users(doc string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d := t.docs[doc]; d != nil {
		return d.users
	}
	return 0
}
