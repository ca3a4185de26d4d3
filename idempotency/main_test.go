package idempotency_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Do keeps a claim alive from a goroutine, and the middleware's tests run
// servers: none may outlive its test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
