package redis_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test closes the go-redis clients it opens, and the Limiter's calls
// end with them: no goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
