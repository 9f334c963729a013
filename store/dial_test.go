package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/logging"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/store"
)

// sdkLog collects what the AWS SDK logs.
type sdkLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *sdkLog) Logf(c logging.Classification, format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(c)+" "+fmt.Sprintf(format, v...))
}

// TestNoSDKWarningsAgainstDynamoDBLocal runs what a first start does (table
// create, twice, as make run may) and a refused condition, the everyday
// error answer, and fails on any warning the SDK logs: DynamoDB Local's
// error answers carry a CRC32 the SDK cannot verify, and each one used to
// log "failed to close HTTP response body ... did not match expected
// checksum".
func TestNoSDKWarningsAgainstDynamoDBLocal(t *testing.T) {
	ctx := context.Background()
	log := &sdkLog{}
	cfg := dynamotest.Shared().Config(func(c *aws.Config) { c.Logger = log })
	s := store.NewStore(store.NewDB(cfg), dynamotest.UniqueName(t, "warn"))
	for range 2 {
		if err := s.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	d := fund.Document{ID: "D1", FundID: "F1", Kind: fund.KindCapitalCallNotice, Title: "t", AsOf: fund.MustDate("2025-06-30")}
	if _, err := s.Restate(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	stale := 7
	if _, err := s.Restate(ctx, d, &stale); !errors.As(err, new(*fund.Error)) {
		t.Fatalf("a stale If-Match: %v, want a refusal", err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, l := range log.lines {
		if strings.HasPrefix(l, string(logging.Warn)) {
			t.Errorf("the SDK logged: %s", l)
		}
	}
}
