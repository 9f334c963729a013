package dynamotest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
)

// EndpointEnv names the environment variable that points every test binary
// at one DynamoDB Local started outside it (`make test` does), instead of
// each binary starting its own.
const EndpointEnv = "FUNDSVC_TEST_DYNAMODB_ENDPOINT"

var shared atomic.Pointer[Server]

// Main runs a test binary's tests against one DynamoDB Local and returns the
// exit code, for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }
//
// If EndpointEnv is set, Main uses the server there and leaves it running;
// otherwise it starts one and stops it after the tests. If no server can be
// had, Main runs no tests and returns 1.
func Main(m *testing.M) int {
	var (
		s   *Server
		err error
	)
	if endpoint := os.Getenv(EndpointEnv); endpoint != "" {
		s, err = attach(context.Background(), endpoint)
	} else {
		s, err = Start(context.Background())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynamotest: %v\n", err)
		return 1
	}
	shared.Store(s)
	defer s.Stop()
	return m.Run()
}

// Shared returns the server Main provides for this test binary. It panics if
// TestMain did not call Main.
func Shared() *Server {
	s := shared.Load()
	if s == nil {
		panic("dynamotest: Shared called without dynamotest.Main in TestMain")
	}
	return s
}
