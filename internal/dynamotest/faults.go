package dynamotest

import (
	"context"
	"sync"

	"github.com/aws/smithy-go/middleware"
)

// ErrInjected is the error a FaultInjector fails writes with. Match it with
// errors.Is; the SDK wraps it in a *smithy.OperationError.
var ErrInjected error = injectedError{}

type injectedError struct{}

func (injectedError) Error() string { return "dynamotest: injected write failure" }

// RetryableError tells the SDK's retryer (retry.RetryableError, one of its
// default checks) that retrying cannot help, as for a process that died
// mid-write: the operation fails on its first attempt.
func (injectedError) RetryableError() bool { return false }

// writeOps are the DynamoDB operations that change items.
var writeOps = map[string]bool{
	"PutItem":            true,
	"UpdateItem":         true,
	"DeleteItem":         true,
	"BatchWriteItem":     true,
	"TransactWriteItems": true,
}

// FaultInjector makes writes fail on demand, to test what readers see and
// what a retry does after a writer dies part-way: armed with
// FailAfterWrites(k), it lets k more writes (PutItem, UpdateItem, DeleteItem,
// BatchWriteItem, TransactWriteItems) through and fails every write after
// them with ErrInjected, without sending it, until Disarm. Reads and table
// operations always pass. The zero value is disarmed; it is safe for
// concurrent use.
type FaultInjector struct {
	mu       sync.Mutex
	armed    bool
	allowed  int // writes still let through while armed
	failing  int // writes still to fail before disarming itself; 0: every one
	writes   int
	injected int
}

// FailAfterWrites arms the injector: the next k writes pass, later ones fail.
func (f *FaultInjector) FailAfterWrites(k int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed, f.allowed, f.failing = true, max(k, 0), 0
}

// FailWrites arms the injector for n failures only: the next k writes pass,
// the n after them fail, and every later one passes again, as for a request
// that fails at one point while the store stays up (so its clean-up runs).
func (f *FaultInjector) FailWrites(k, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed, f.allowed, f.failing = true, max(k, 0), max(n, 1)
}

// Disarm lets every write through again.
func (f *FaultInjector) Disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
}

// Writes returns how many write operations the injector has let through
// since it was made, armed or not: run a writer once disarmed to learn how
// many writes it makes, then fail it after each of them in turn.
func (f *FaultInjector) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// Injected returns how many requests failed with ErrInjected. Each failed
// operation is one request, since the SDK does not retry ErrInjected.
func (f *FaultInjector) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

type injectKey struct{}

// APIOption returns the middleware to add to a client, with WithAPIOptions
// or in dynamodb.Options.APIOptions.
//
// It decides once per operation, before the SDK's retry loop, whether the
// write fails, so that k counts operations rather than attempts. It fails
// the request inside the retry loop, where a real failed request fails, so
// that the retryer classifies ErrInjected as it would any error.
func (f *FaultInjector) APIOption() func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		op := stack.ID()
		if !writeOps[op] {
			return nil
		}
		decide := middleware.InitializeMiddlewareFunc("dynamotest.FaultInjector.decide",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				f.mu.Lock()
				fail := f.armed && f.allowed == 0
				if fail && f.failing > 0 {
					f.failing--
					f.armed = f.failing > 0
				}
				if !fail {
					if f.armed {
						f.allowed--
					}
					f.writes++
				}
				f.mu.Unlock()
				if fail {
					ctx = middleware.WithStackValue(ctx, injectKey{}, true)
				}
				return next.HandleInitialize(ctx, in)
			})
		if err := stack.Initialize.Add(decide, middleware.After); err != nil {
			return err
		}
		inject := middleware.FinalizeMiddlewareFunc("dynamotest.FaultInjector.inject",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if fail, _ := middleware.GetStackValue(ctx, injectKey{}).(bool); fail {
					f.mu.Lock()
					f.injected++
					f.mu.Unlock()
					return middleware.FinalizeOutput{}, middleware.Metadata{}, ErrInjected
				}
				return next.HandleFinalize(ctx, in)
			})
		if _, ok := stack.Finalize.Get("Retry"); ok {
			return stack.Finalize.Insert(inject, "Retry", middleware.After)
		}
		return stack.Finalize.Add(inject, middleware.After)
	}
}
