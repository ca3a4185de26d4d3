package sqlretry_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/retrykit/retry/internal/pgtest"
)

// TestMain runs the package's tests against one PostgreSQL server (a fresh
// database per test), stops it after, and fails the package if a test leaves
// a goroutine behind (every pool and *sql.DB is closed).
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
