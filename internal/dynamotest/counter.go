package dynamotest

import (
	"context"
	"slices"
	"sync"

	"github.com/aws/smithy-go/middleware"
)

// Counter records the name of every DynamoDB operation (Query, GetItem,
// BatchGetItem, TransactWriteItems, Scan, …) made by the clients it is added
// to, in call order, so a test can assert how a result was read: "one Query",
// "no Scan". An operation counts once however many times the SDK retries it,
// and whether or not it fails. The zero value is ready to use; it is safe for
// concurrent use.
type Counter struct {
	mu  sync.Mutex
	ops []string
}

// APIOption returns the middleware to add to a client, with WithAPIOptions
// or in dynamodb.Options.APIOptions.
func (c *Counter) APIOption() func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		op := stack.ID() // the SDK names each operation's stack after it
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("dynamotest.Counter",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.mu.Lock()
				c.ops = append(c.ops, op)
				c.mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

// Ops returns the operations recorded since the last Reset, oldest first.
func (c *Counter) Ops() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ops)
}

// Count returns how many times op (such as "Query") was recorded since the
// last Reset.
func (c *Counter) Count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, o := range c.ops {
		if o == op {
			n++
		}
	}
	return n
}

// Reset forgets every recorded operation.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops = nil
}
