package dlq_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Watch and the conformance suite's replays start goroutines: every test
// must leave none behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
