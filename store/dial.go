package store

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/guregu/dynamo/v2"
)

// NewDB returns a DynamoDB client for cfg with fundsvc's retry policy:
// throttling, 5xx and transaction conflicts are retried with exponential
// backoff and jitter; condition-check failures are not (they are answers).
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
	m := newMeter()
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = cfg.BaseEndpoint != nil
		o.APIOptions = append(o.APIOptions,
			translateThrottling, // EUNAVAILABLE once retries are spent (errors.go)
			m.count,             // consumed capacity (capacity.go)
		)
		o.Retryer = retry.NewStandard(dynamo.RetryTxConflicts, func(so *retry.StandardOptions) {
			so.MaxAttempts = 8
		})
	})
	return dynamo.NewFromIface(meteredClient{Client: client, meter: m})
}
