package main

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its tests: the metrics
// server, a client's connections.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestObservability runs the workload and scrapes /metrics (run prints what
// it scraped): the failures follow a fixed pattern, so every count is exact.
// Durations vary with the machine; only their counts are checked.
func TestObservability(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out, ""); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	want := []string{
		`retry_attempts_total{retry_name="inventory",retry_verdict="success"} 150`,
		`retry_attempts_total{retry_class="http 503",retry_name="inventory",retry_verdict="retry"} 42`,
		`retry_breaker_rejections_total{retry_breaker_name="inventory",retry_breaker_reason="open",retry_name="inventory"} 47`,
		`retry_breaker_state{retry_breaker_name="inventory",retry_breaker_state="closed",retry_name="inventory"} 0`,
		`retry_breaker_state{retry_breaker_name="inventory",retry_breaker_state="half_open",retry_name="inventory"} 0`,
		`retry_breaker_state{retry_breaker_name="inventory",retry_breaker_state="open",retry_name="inventory"} 1`,
		`retry_budget_refusals_total{retry_name="inventory"} 3`,
		`retry_budget_tokens{retry_name="inventory"} 39`,
		`retry_call_duration_seconds_count{retry_name="inventory",retry_outcome="breaker-open"} 47`,
		`retry_call_duration_seconds_count{retry_name="inventory",retry_outcome="budget"} 3`,
		`retry_call_duration_seconds_count{retry_name="inventory",retry_outcome="success"} 150`,
		`retry_call_retries_sum{retry_name="inventory",retry_outcome="budget"} 1`,
		`retry_call_retries_sum{retry_name="inventory",retry_outcome="success"} 38`,
	}
	story := []string{
		`200 calls to "inventory": one attempt in four fails with a 503 until call 150, then every attempt.`,
		`150 succeeded; the retry budget stopped 3; the breaker opened and refused 47 at once.`,
		`What a dashboard reads of it, scraped from /metrics (otel_scope labels left out):`,
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < len(story) || strings.Join(lines[:len(story)], "\n") != strings.Join(story, "\n") {
		t.Errorf("the story:\n%s\nwant it to open with:\n%s", out.String(), strings.Join(story, "\n"))
		return
	}
	var got []string
	for _, l := range lines[len(story):] {
		got = append(got, strings.TrimPrefix(l, "  "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("scraped series:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
}
