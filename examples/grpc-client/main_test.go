package main

import (
	"bytes"
	"regexp"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its tests: the server,
// the client's connection.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGRPCClient(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, re := range []string{
		`(?m)^Check warming +SERVING after 3 attempt\(s\)$`,
		`(?m)^Check throttled +SERVING after 2 attempt\(s\), the server asked to wait 50ms$`,
		`(?m)^Check quota +ResourceExhausted after 1 attempt\(s\): "daily quota used up"\n +stopped \(wait-too-long\): the server asked to wait 2m0s, longer than the maximum delay$`,
		`(?m)^List, no key +Unavailable after 1 attempt\(s\): "connection to the database lost"\n +stopped \(not-idempotent\): the call may have reached the server, and is neither idempotent nor keyed$`,
		`(?m)^List, key list-7 +2 services after 2 attempt\(s\)$`,
		`(?m)^Watch +opened after 2 attempt\(s\), 2 message\(s\), then:$`,
		`(?m)^ +stream: broke after 2 chunk\(s\), not retried: rpc error: code = Unavailable desc = server restarting \(2 kept in the error\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output does not match %s:\n%s", re, out.String())
		}
	}
}
