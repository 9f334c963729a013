package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
)

func TestThrottled(t *testing.T) {
	wrapped := fmt.Errorf("overview of document D: %w", &types.ThrottlingException{Message: aws.String("slow down")})
	if !throttled(wrapped) || !throttled(&types.ProvisionedThroughputExceededException{}) || !throttled(&types.RequestLimitExceeded{}) {
		t.Fatal("throttling not recognised")
	}
	if throttled(&types.ConditionalCheckFailedException{}) || throttled(errors.New("boom")) || throttled(nil) {
		t.Fatal("a non-throttling error was taken for throttling")
	}
}

func TestThrottlingIsTranslatedToUnavailable(t *testing.T) {
	sdk := &types.ThrottlingException{Message: aws.String("slow down")}
	err := translate(fmt.Errorf("overview of document D: %w", sdk))
	var fe *fund.Error
	if !errors.As(err, &fe) || fe.Code != fund.EUNAVAILABLE || fe.Message != "the store is busy; retry after the time in Retry-After" {
		t.Fatalf("throttling became %v, want EUNAVAILABLE", err)
	}
	if !errors.Is(err, sdk) {
		t.Error("the SDK's error is no longer underneath, for the log")
	}
	if again := translate(err); again != err {
		t.Errorf("a translated error was translated again: %v", again)
	}
	for _, other := range []error{nil, errors.New("boom"), &types.ConditionalCheckFailedException{}} {
		if got := translate(other); got != other {
			t.Errorf("translate(%v) = %v, want it unchanged", other, got)
		}
	}
}
