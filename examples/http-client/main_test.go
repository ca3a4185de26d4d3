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

func TestHTTPClient(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, re := range []string{
		`(?m)^GET /users/7 +200 "ok GET /users/7" after 3 attempt\(s\), waited (\d+ms|0s)$`,
		`(?m)^POST /orders +503 "overloaded\\n" after 1 attempt\(s\), waited 0s$`,
		`(?m)^ +why: sent once, not retried: without an Idempotency-Key a POST is not safe to repeat$`,
		`(?m)^POST /orders/keyed \(with a key\) +200 "ok POST /orders/keyed" after 3 attempt\(s\)`,
		`(?m)^GET /stream \(events\) +"Hello world" after 3 attempt\(s\)`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output does not match %s:\n%s", re, out.String())
		}
	}
}
