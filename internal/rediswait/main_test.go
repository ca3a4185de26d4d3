package rediswait_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test closes the clients it opens: no goroutine outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
