package chaos_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a server,
// a connection, a timer's waiter.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
