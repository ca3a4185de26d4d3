package queuetest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The suite's concurrent replays start goroutines: every test must leave
// none behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
