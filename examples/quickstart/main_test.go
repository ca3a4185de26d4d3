package main

import (
	"bytes"
	"regexp"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its tests: a server, a
// client's connections, a worker.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestQuickstart(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	// Waits are jittered: match their shape, and the fixed facts exactly.
	want := []string{
		`(?m)^flaky function:$`,
		`(?m)^  attempt 1 failed \(connection reset\): waiting \d+(\.\d+)?(µs|ms|s)$`,
		`(?m)^  attempt 2 failed \(connection reset\): waiting \d+(\.\d+)?(µs|ms|s)$`,
		`(?m)^  ok after 3 attempts, waited \d+(\.\d+)?(µs|ms|s)$`,
		`(?m)^flaky server:$`,
		`(?m)^  attempt 1 failed \(http 503\): waiting \d+(\.\d+)?(µs|ms|s)$`,
		`(?m)^  attempt 2 failed \(http 429\): waiting 1(\.\d+)?s$`,
		`(?m)^  "hello" after 3 attempts, waited 1(\.\d)?s \(the server asked for 1s\)$`,
	}
	for _, re := range want {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output does not match %s:\n%s", re, out.String())
		}
	}
}
