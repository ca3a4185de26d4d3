package postgres_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/retrykit/retry/internal/pgtest"
)

// TestMain runs the tests against one PostgreSQL server (a fresh database
// per test) and fails the package if a test leaves a goroutine behind. The
// child process of the kill test runs without either.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(pgtest.Main(m))
}
