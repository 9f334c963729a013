package dynamotest

import (
	"context"
	"sync"

	"github.com/aws/smithy-go/middleware"
)

// WriteHook runs a function at a precise point of a writer's work: armed with
// OnWrite(k, f), it calls f synchronously just before the k-th write
// operation (PutItem, UpdateItem, DeleteItem, BatchWriteItem,
// TransactWriteItems) from then on is sent. A write that starts while f runs
// waits until f returns. So an f that kills the server (Server.Kill) makes
// that write and every later one meet a dead server, while the writes before
// it were sent to a live one (those still in flight, in a writer that writes
// in parallel, may be cut off too).
//
// Writes are counted once per operation, however many times the SDK retries
// it. Reads and table operations are never counted or held. f runs once;
// after it the hook lets everything through until armed again. The zero
// value is disarmed; it is safe for concurrent use.
type WriteHook struct {
	mu     sync.Mutex
	armed  bool
	match  func(op string, input any) bool // the writes counted; nil for every write
	left   int                             // matching writes still to let through before f
	f      func()
	done   chan struct{} // closed once f has returned; nil until it runs
	writes int
}

// OnWrite arms the hook: f runs just before the k-th write operation from
// now on (k = 1: the next write) is sent. It replaces any earlier arming.
func (h *WriteHook) OnWrite(k int, f func()) { h.OnWriteWhere(nil, k, f) }

// OnWriteOp arms the hook like OnWrite, counting only writes of the named
// operation (such as "UpdateItem"): f runs just before the k-th of them.
func (h *WriteHook) OnWriteOp(op string, k int, f func()) {
	h.OnWriteWhere(func(o string, _ any) bool { return o == op }, k, f)
}

// OnWriteWhere arms the hook like OnWrite, counting only the writes match
// accepts: f runs just before the k-th of them. match gets the operation's
// name and its input, such as a *dynamodb.TransactWriteItemsInput, to pick
// a write by what it writes ("the transaction that puts the head"); it must
// neither change the input nor block. A nil match accepts every write.
func (h *WriteHook) OnWriteWhere(match func(op string, input any) bool, k int, f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.match, h.left, h.f, h.done = true, match, max(k, 1)-1, f, nil
}

// Disarm lets every write through again. A write waiting for f keeps waiting
// until f returns.
func (h *WriteHook) Disarm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.match, h.f = false, nil, nil
}

// Fired reports whether f has run (or is running) since the hook was last
// armed.
func (h *WriteHook) Fired() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done != nil
}

// Writes returns how many write operations started since the hook was made,
// armed or not, the one f ran before included.
func (h *WriteHook) Writes() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writes
}

// APIOption returns the middleware to add to a client, with WithAPIOptions
// or in dynamodb.Options.APIOptions.
func (h *WriteHook) APIOption() func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		op := stack.ID()
		if !writeOps[op] {
			return nil
		}
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("dynamotest.WriteHook",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if err := h.before(ctx, op, in.Parameters); err != nil {
					return middleware.InitializeOutput{}, middleware.Metadata{}, err
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

// before runs f if op is the write it waits for, or waits while f runs.
func (h *WriteHook) before(ctx context.Context, op string, input any) error {
	h.mu.Lock()
	h.writes++
	var run func()
	done := h.done
	if h.armed && done == nil && (h.match == nil || h.match(op, input)) {
		if h.left > 0 {
			h.left--
		} else {
			run, done = h.f, make(chan struct{})
			h.done, h.armed, h.f = done, false, nil
		}
	}
	h.mu.Unlock()

	if run != nil {
		defer close(done)
		run()
		return nil
	}
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
