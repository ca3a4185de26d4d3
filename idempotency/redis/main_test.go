package redis_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test closes the go-redis clients it opens, and every execution's
// heartbeat ends with it: no goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
