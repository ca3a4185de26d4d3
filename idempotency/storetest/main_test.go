package storetest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The suite starts goroutines (concurrent claims, a waiter's completer):
// none outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
