package httpretry_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test of the package must leave no goroutine — no connection, no
// timer — behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
