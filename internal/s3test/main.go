package s3test

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// The one server of this test binary. sharedOnce guards shared and
// sharedErr: they are written only inside it and read only after it.
var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Shared returns this test binary's server, starting it on first use; a
// failed start fails t, and every later call with it. TestMain must stop the
// server after the tests with Main or Cleanup; otherwise its data stays
// behind, and so does the server itself except on Linux.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = Start(context.Background())
	})
	if sharedErr != nil {
		t.Fatalf("s3test: %v", sharedErr)
	}
	return shared
}

// Main runs a test binary's tests, then stops the shared server if a test
// started it, and returns the exit code, for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }
func Main(m *testing.M) int {
	defer Cleanup()
	return m.Run()
}

// Cleanup stops the shared server if one was started; Shared fails from then
// on. Call it after m.Run in a TestMain that does not use Main, such as one
// built around dynamotest.Main (see the package documentation).
func Cleanup() {
	sharedOnce.Do(func() {
		sharedErr = errors.New("Shared called after Cleanup")
	})
	if shared != nil {
		shared.Stop()
	}
}
