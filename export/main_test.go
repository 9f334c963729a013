package export_test

import (
	"os"
	"testing"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/s3test"
)

// TestMain shares one DynamoDB Local and one MinIO among the tests and
// stops both afterwards.
func TestMain(m *testing.M) {
	code := dynamotest.Main(m)
	s3test.Cleanup()
	os.Exit(code)
}
