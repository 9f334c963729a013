package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
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
	d := fund.Document{ID: "D1", DocumentFields: fund.DocumentFields{FundID: "F1", Kind: fund.KindCapitalCallNotice, Title: "t", AsOf: fund.MustDate("2025-06-30")}}
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

// TestUnreachableDynamoDBFailsSoon: a request to an endpoint that refuses
// connections is tried unreachableAttempts (3) times, each attempt counted
// below the SDK's retry loop, and fails within a second or two with
// ErrUnreachable, an EUNAVAILABLE, instead of the SDK's eight attempts
// over up to a minute.
func TestUnreachableDynamoDBFailsSoon(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	ln.Close()
	var attempts atomic.Int32
	count := func(stack *middleware.Stack) error {
		return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("countAttempts",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				attempts.Add(1)
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}
	cfg := dynamotest.Shared().Config(func(c *aws.Config) { c.BaseEndpoint = aws.String(endpoint) }, dynamotest.WithAPIOptions(count))
	s := store.NewStore(store.NewDB(cfg), "fundsvc")
	began := time.Now()
	err = s.CheckTable(t.Context())
	took := time.Since(began)
	if !errors.Is(err, store.ErrUnreachable) || fund.ErrorCode(err) != fund.EUNAVAILABLE || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want ErrUnreachable over the refused connection", err)
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	if took > 3*time.Second {
		t.Errorf("took %s", took)
	}
	if _, err := s.As(fund.Operator).LatestDocument(t.Context(), "DOC001"); !errors.Is(err, store.ErrUnreachable) {
		t.Errorf("a read: %v, want ErrUnreachable", err)
	}
}
