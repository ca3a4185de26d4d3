package redis_test

import (
	"testing"

	"go.uber.org/goleak"
)

// go-redis clients hold connections, and the conformance suite replays
// concurrently: every test must close every client it opened.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
