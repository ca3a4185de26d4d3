package redistest_test

import (
	"testing"

	"github.com/retrykit/retry/internal/redistest"
	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind, and stops
// the shared cluster.
func TestMain(m *testing.M) { goleak.VerifyTestMain(redistest.StopSharedAfter(m)) }
