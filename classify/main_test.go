package classify_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests start HTTP servers and clients: none may leave a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
