package main

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry/examples/internal/memnet"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its tests: a server, a
// client's connections, a worker.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestGatewayClient runs the tour in a synctest bubble, server included (over
// memnet: real sockets cannot be in a bubble), so that its timers fire in the
// order of their deadlines however loaded the machine: the 400ms attempt
// timeout always before the 800ms generation, the keyed retry always while
// that generation runs.
func TestGatewayClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := memnet.Listen()
		start := time.Now()
		var out, logs bytes.Buffer
		if err := run(t.Context(), &out, newLogger(&logs, slog.LevelDebug), ln, ln.Transport()); err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
		checkOutput(t, out.String())
		checkLogs(t, logs.String())
		// Two Retry-After waits of 1s, two 400ms timeouts and a few short
		// backoffs: about three seconds, on the fake clock.
		if took := time.Since(start); took < 2800*time.Millisecond || took > 3200*time.Millisecond {
			t.Errorf("the tour took %v of fake time; want 2.8–3.2s", took)
		}
	})
}

// TestGatewayClientOnLoopback runs the program as main does, over real
// sockets, and checks only what cannot depend on timing — on a loaded
// machine any call may outlast its 400ms attempt timeout: one line per call,
// in order, then the gateway's summary.
func TestGatewayClientOnLoopback(t *testing.T) {
	var out bytes.Buffer
	if err := runOnLoopback(t.Context(), &out, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	calls := scenarios(nil, nil)
	if len(lines) != len(calls)+1 || !strings.HasPrefix(lines[len(calls)], "gateway: ") {
		t.Fatalf("want %d lines, one per call, then the gateway's summary:\n%s", len(calls)+1, out.String())
	}
	for i, c := range calls {
		if !strings.HasPrefix(lines[i], c.asked+" ") {
			t.Errorf("line %d is %q; want the call %q", i+1, lines[i], c.asked)
		}
	}
}

func checkOutput(t *testing.T, out string) {
	t.Helper()
	// One line per call: what was asked, then attempts and waits (jittered:
	// matched by shape), then what happened and why it stopped.
	const text = `"Order 4417 ships on Monday\."`
	for _, c := range []struct{ asked, want string }{
		{"503, then 429 + Retry-After 1s", `attempts=3 waited=1(\.\d+)?s +ok ` + text + ` from gen_1: answered`},
		{"same key, another prompt", `attempts=1 waited=0s +409 idempotency-key-reuse \(req_4, trace_\d+\): not retryable \(idempotency key reused\)`},
		{"502 upstream-error", `attempts=1 waited=0s +502 upstream-error \(req_5, trace_\d+\): not retryable \(upstream error: the server already retried\)`},
		{"502 upstream-error, opted in to a retry", `attempts=2 waited=(\d+ms|0s) +502 upstream-error \(req_7, trace_\d+\): retry limit for this kind of failure reached \(upstream error: the server already retried\)`},
		{"429 spend-cap-exceeded + Retry-After 1s", `attempts=1 waited=0s +429 spend-cap-exceeded \(req_8, trace_\d+\): not retryable \(spend cap exceeded\)`},
		{"slow generation, no key", `attempts=1 waited=0s +timed out after 400ms: not retried, no Idempotency-Key: the gateway is probably still generating it`},
		{"slow generation, keyed", `attempts=3 waited=1(\.\d+)?s +ok ` + text + `, a replay of gen_3: collected the stored result: not billed again`},
		{"key of 300 characters", `attempts=0 waited=0s +refused before sending: Idempotency-Key: 300 characters: the limit is 255`},
		{"llama-70b: 503 + Retry-After 30s", `attempts=1 waited=0s +503 backend-unavailable \(req_\d+, trace_\d+\): .*: Retry-After 30s returned, not slept`},
		{"llama-70b again", `attempts=0 waited=0s +failed locally, no request sent: memnet/llama-70b cooling down \(\d+s left\)`},
		{"qwen3-0.6b, same host", `attempts=1 waited=0s +ok ` + text + ` from gen_4: answered`},
		{"stream, refused once (503)", `attempts=2 waited=(\d+ms|0s) +ok ` + text + `: answered`},
		{"stream, breaks after 3 chunks", `attempts=1 waited=0s +broke, partial "Order 4417 ships ": not retried after the first chunk: .*the engine crashed mid-generation`},
	} {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(c.asked) + ` +` + c.want + `$`)
		if !re.MatchString(out) {
			t.Errorf("%s: no line matches %s:\n%s", c.asked, re, out)
		}
	}
	// What the gateway saw proves the rest: llama-70b's cooldown saved a
	// request, the keyless timed-out call's generation went on without
	// anybody waiting for it, and the keyed one was collected, not run twice.
	summary := "gateway: 17 requests (llama-70b: 1), 6 generations billed (2 finished after their client had timed out), 1 replay not billed\n"
	if !strings.HasSuffix(out, summary) {
		t.Errorf("want the summary %q:\n%s", summary, out)
	}
}

// checkLogs checks that waits are logged at the levels the gateway's
// documentation asks: INFO from a second, DEBUG below.
func checkLogs(t *testing.T, logs string) {
	t.Helper()
	for _, want := range []string{
		`level=DEBUG msg="retry: waiting before the next attempt" attempt=1 delay=[\d.]+(µs|ms|ns) class="http 503"`,
		`level=INFO msg="retry: waiting before the next attempt" attempt=2 delay=1(\.\d+)?s class="http 429"`,
		`level=INFO msg="retry: waiting before the next attempt" attempt=2 delay=1(\.\d+)?s class="idempotency key in progress"`,
		`level=INFO msg="retry: the server asked to come back later: the key cools down" key=memnet/llama-70b for=30s`,
	} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(logs) {
			t.Errorf("no log line matches %s:\n%s", want, logs)
		}
	}
}
