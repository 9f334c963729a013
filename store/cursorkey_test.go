package store_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestCursorKeyIsOneKeyPerTable: eight callers asking a table without a
// cursor key at once (as instances starting together do) all get the same
// key of CursorKeyBytes bytes; a later call gets it again; another table
// has another key.
func TestCursorKeyIsOneKeyPerTable(t *testing.T) {
	env := fundtest.New(t)
	const callers = 8
	keys := make([][]byte, callers)
	errs := make([]error, callers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range callers {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			keys[i], errs[i] = env.Store.CursorKey(t.Context())
		}()
	}
	start.Done()
	done.Wait()
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if len(keys[i]) != store.CursorKeyBytes || !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("caller %d got key %x, caller 0 %x: want one key of %d bytes", i, keys[i], keys[0], store.CursorKeyBytes)
		}
	}
	again, err := env.Store.CursorKey(t.Context())
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Fatalf("a later call: %x, %v; want %x", again, err, keys[0])
	}
	other, err := fundtest.New(t).Store.CursorKey(t.Context())
	if err != nil || bytes.Equal(other, keys[0]) {
		t.Fatalf("another table's key: %x, %v; want a key of its own", other, err)
	}
}
