package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestThrottled(t *testing.T) {
	wrapped := fmt.Errorf("overview of document D: %w", &types.ThrottlingException{Message: aws.String("slow down")})
	if !Throttled(wrapped) || !Throttled(&types.ProvisionedThroughputExceededException{}) || !Throttled(&types.RequestLimitExceeded{}) {
		t.Fatal("throttling not recognised")
	}
	if Throttled(&types.ConditionalCheckFailedException{}) || Throttled(errors.New("boom")) || Throttled(nil) {
		t.Fatal("a non-throttling error was taken for throttling")
	}
}
