package store

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Throttled reports whether err is DynamoDB refusing work for now
// (throttling or request limits, after the SDK's own retries), which the
// caller should see as EUNAVAILABLE and retry later.
func Throttled(err error) bool {
	var pte *types.ProvisionedThroughputExceededException
	var rle *types.RequestLimitExceeded
	var te *types.ThrottlingException
	if errors.As(err, &pte) || errors.As(err, &rle) || errors.As(err, &te) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && (api.ErrorCode() == "ThrottlingException" || api.ErrorCode() == "ProvisionedThroughputExceededException")
}
