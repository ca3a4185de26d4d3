package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// small is an experiment quick enough for go test -race.
var small = config{seed: 1, jobs: 1500, clients: []int{10, 100}}

func find(rows []row, strategy, scope string, clients int) row {
	for _, r := range rows {
		if r.strategy == strategy && r.scope == scope && r.clients == clients {
			return r
		}
	}
	panic("no row " + strategy + " " + scope)
}

func TestEveryJobEnds(t *testing.T) {
	for _, r := range experiment(small) {
		ended := r.accepted + r.refused + r.exhausted
		if ended != small.jobs {
			t.Errorf("%s %s, %d clients: %d jobs ended, want %d", r.strategy, r.scope, r.clients, ended, small.jobs)
		}
	}
}

func TestRunsAreDeterministicForASeed(t *testing.T) {
	a, b := experiment(small), experiment(small)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("run %d differs: %+v and %+v", i, a[i], b[i])
		}
	}
}

// TestTheSharedAdaptiveLimiterMeetsItsTargets checks the targets of client-side
// rate limiting on the full model: shared by 100 clients, at most 5% of calls
// throttled and a goodput of at least 95% of the limit; at 10 clients, no
// worse than retry alone.
func TestTheSharedAdaptiveLimiterMeetsItsTargets(t *testing.T) {
	rows := experiment(config{seed: 1, jobs: 6000, clients: []int{10, 100}})
	at100 := find(rows, "adaptive", "shared", 100)
	if at100.throttledPct > 5 || at100.goodputPct < 95 {
		t.Errorf("shared by 100 clients: %.1f%% throttled, goodput %.1f%% of the limit; want ≤ 5%% and ≥ 95%%", at100.throttledPct, at100.goodputPct)
	}
	at10, alone := find(rows, "adaptive", "shared", 10), find(rows, "retry-only", "-", 10)
	if at10.throttledPct > alone.throttledPct || at10.goodputPct < alone.goodputPct-2 || at10.p99S > alone.p99S {
		t.Errorf("at 10 clients: %+v; retry alone: %+v", at10, alone)
	}
}

// TestASlowStartMeetsTheTargetsAtAThousandClients: with a Start, the shared
// limiter keeps at most 5% of the calls throttled and a goodput of at least
// 95% of the limit at 10, 100 and 1,000 clients, where it starts at the
// full limit's burst without one (16% throttled at 1,000).
func TestASlowStartMeetsTheTargetsAtAThousandClients(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 1,000 clients")
	}
	rows := experiment(config{seed: 1, jobs: 6000, clients: []int{10, 100, 1000}})
	for _, n := range []int{10, 100, 1000} {
		r := find(rows, "adaptive+start", "shared", n)
		if r.throttledPct > 5 || r.goodputPct < 95 || r.refused > 0 {
			t.Errorf("%d clients: %.1f%% throttled, goodput %.1f%% of the limit, %d refused; want ≤ 5%%, ≥ 95%%, none",
				n, r.throttledPct, r.goodputPct, r.refused)
		}
	}
	if old := find(rows, "adaptive", "shared", 1000); old.throttledPct <= 5 {
		t.Errorf("without a Start, 1,000 clients: %.1f%% throttled; the model no longer shows the first burst", old.throttledPct)
	}
}

func TestFilesAreWritten(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := experimentFiles(config{seed: 1, jobs: 300, clients: []int{10, 100}}, dir, &out); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if lines[0] != header || len(lines) != 1+2*len(strategies) {
		t.Errorf("results.csv:\n%s", csv)
	}
	if st, err := os.Stat(filepath.Join(dir, "ratelimit.png")); err != nil || st.Size() == 0 {
		t.Errorf("ratelimit.png: %v", err)
	}
}
