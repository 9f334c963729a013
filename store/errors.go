package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"github.com/fundsvc/fundsvc/fund"
)

// throttled reports whether err is DynamoDB refusing work for now
// (throttling or request limits, after the SDK's own retries), which the
// caller should see as EUNAVAILABLE and retry later.
func throttled(err error) bool {
	var pte *types.ProvisionedThroughputExceededException
	var rle *types.RequestLimitExceeded
	var te *types.ThrottlingException
	if errors.As(err, &pte) || errors.As(err, &rle) || errors.As(err, &te) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && (api.ErrorCode() == "ThrottlingException" || api.ErrorCode() == "ProvisionedThroughputExceededException")
}

// errBusy is what a caller sees of DynamoDB throttling.
var errBusy = &fund.Error{Code: fund.EUNAVAILABLE, Message: "the store is busy; retry after the time in Retry-After"}

// translate turns DynamoDB throttling into EUNAVAILABLE, keeping the SDK's
// error underneath for the log: callers match codes, never AWS types.
func translate(err error) error {
	if err == nil || !throttled(err) {
		return err
	}
	var fe *fund.Error
	if errors.As(err, &fe) {
		return err // already translated
	}
	return fmt.Errorf("%w: %w", errBusy, err)
}

// translateThrottling is a client middleware that applies translate to the
// outcome of every DynamoDB operation, once the SDK's retries are spent, so
// that no throttling error leaves this package untranslated, whichever read
// or write met it.
func translateThrottling(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("fundsvcTranslateThrottling",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			return out, md, translate(err)
		}), middleware.Before)
}
