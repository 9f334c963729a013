package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// connectTimeout bounds the opening of a connection to DynamoDB: an
// endpoint that drops packets (a stopped host, a firewall) would otherwise
// hold each attempt for the operating system's TCP timeout, minutes.
const connectTimeout = 2 * time.Second

// unreachableAttempts is how many times a request is tried when no
// connection to DynamoDB can be opened, and unreachableBackoff the wait
// before the second try (doubled for the next): a DynamoDB Local restarting
// or a connection refused once is ridden out, a dead endpoint answers a
// request with 503 within a second (refused) or seven (timing out) instead
// of the SDK's eight attempts over up to a minute. Throttling and 5xx keep
// the SDK's eight attempts and its backoff.
const (
	unreachableAttempts = 3
	unreachableBackoff  = 100 * time.Millisecond
)

// NewDB returns a DynamoDB client for cfg with fundsvc's retry policy:
// throttling, 5xx and transaction conflicts are retried with exponential
// backoff and jitter; condition-check failures are not (they are answers);
// a connection that cannot be opened is tried unreachableAttempts times,
// each within connectTimeout, and then fails with ErrUnreachable.
//
// Every request it sends asks for its consumed capacity, and the units
// returned are summed per operation (capacity.go): Store.Consumed reads
// them.
//
// Against a configured endpoint (DynamoDB Local) the CRC32 check of
// responses is off: DynamoDB Local answers some requests (CreateTable of a
// table that exists, ...) with a checksum header of 0, and the SDK logs a
// warning for each. Against AWS, where no endpoint is configured, it stays on.
func NewDB(cfg aws.Config) *dynamo.DB {
	switch c := cfg.HTTPClient.(type) {
	case nil:
		cfg.HTTPClient = awshttp.NewBuildableClient().WithDialerOptions(boundConnect)
	case *awshttp.BuildableClient:
		cfg.HTTPClient = c.WithDialerOptions(boundConnect)
	}
	m, clock := newMeter(), newTableClock()
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = cfg.BaseEndpoint != nil
		o.APIOptions = append(o.APIOptions,
			translateThrottling,  // EUNAVAILABLE once retries are spent (errors.go)
			translateUnreachable, // ErrUnreachable once retries are spent
			m.count,              // consumed capacity (capacity.go)
			clock.measure,        // DynamoDB's clock (clock.go)
		)
		o.Retryer = retry.NewStandard(dynamo.RetryTxConflicts, func(so *retry.StandardOptions) {
			so.MaxAttempts = 8
			so.Backoff = unreachableLimit{retry.NewExponentialJitterBackoff(so.MaxBackoff)}
		})
	})
	return dynamo.NewFromIface(meteredClient{Client: client, meter: m, clock: clock})
}

func boundConnect(d *net.Dialer) { d.Timeout = connectTimeout }

// unreachableLimit is the SDK's backoff, except that a connection that
// could not be opened ends the retries after unreachableAttempts, sooner.
type unreachableLimit struct{ next retry.BackoffDelayer }

func (b unreachableLimit) BackoffDelay(attempt int, err error) (time.Duration, error) {
	if !unreachable(err) {
		return b.next.BackoffDelay(attempt, err)
	}
	if attempt >= unreachableAttempts {
		return 0, fmt.Errorf("no connection after %d attempts: %w", attempt, err)
	}
	return unreachableBackoff << max(attempt-1, 0), nil
}

// unreachable reports whether err is a connection to DynamoDB that could
// not be opened: refused, timed out, no route, or a host name that does not
// resolve. An error on a connection once open (reset, closed) is not.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) && op.Op == "dial" || errors.As(err, &dns)
}

// ErrUnreachable is the error of a request to a DynamoDB that no
// connection could be opened to (see NewDB). It is EUNAVAILABLE, and wraps
// the connection's own error.
var ErrUnreachable = &fund.Error{Code: fund.EUNAVAILABLE, Message: "DynamoDB is not reachable"}

// translateUnreachable is a client middleware that wraps ErrUnreachable
// around a connection that could not be opened, once the retries are spent,
// so that every read and write answers it as EUNAVAILABLE (503). A request
// whose own context ended is left alone: it timed out or was cancelled.
func translateUnreachable(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("fundsvcTranslateUnreachable",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if err != nil && ctx.Err() == nil && unreachable(err) && !errors.Is(err, ErrUnreachable) {
				err = fmt.Errorf("%w: %w", ErrUnreachable, err)
			}
			return out, md, err
		}), middleware.Before)
}
