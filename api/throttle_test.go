package api_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

// TestSustainedThrottlingIsA503 makes every DynamoDB call answer with
// throttling, inside the SDK's retry loop: the calls are retried, and when
// the retries run out the client gets 503 with Retry-After, not 500.
func TestSustainedThrottlingIsA503(t *testing.T) {
	var attempts atomic.Int32
	throttle := func(stack *middleware.Stack) error {
		return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("throttle", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			attempts.Add(1)
			return middleware.FinalizeOutput{}, middleware.Metadata{}, &types.ThrottlingException{Message: aws.String("Rate of requests exceeds the allowed throughput.")}
		}), middleware.After)
	}
	cfg := dynamotest.Shared().Config(dynamotest.WithAPIOptions(throttle))
	cfg.RetryMaxAttempts = 3 // caps store.NewDB's retryer, to keep the test short
	store := store.NewStore(store.NewDB(cfg), dynamotest.UniqueName(t, "throttled"))
	s := startAPI(t, &fundtest.Env{Store: store, Positions: positions.NewAnalytics(store)}, nil)

	r := s.do(t, http.MethodGet, "/v1/documents/DOC001", nil)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("got %d Retry-After %q: %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if n := attempts.Load(); n != 3 {
		t.Fatalf("the throttled call was attempted %d times, want 3 (retried, then given up)", n)
	}
}
