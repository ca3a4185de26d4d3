package sqlite_test

import (
	"testing"

	"go.uber.org/goleak"
)

// database/sql starts a goroutine per open database, and the conformance
// suite replays concurrently: every test must close what it opened.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
