package dashboard_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A dashboard replays in the background: every test must leave no
// goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
