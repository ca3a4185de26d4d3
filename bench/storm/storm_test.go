package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// targetRows are the rows the targets are about; the full experiment runs
// every row (go run ./storm).
var targetRows = []*row{find("no-retries", noScope), find(defaultRow, shared), find(fleetRow, perClt)}

// quick runs rows under scenarios with seed 1.
func quick(rs []*row, scs ...scenario) []summary {
	return summarize(experiment(config{seeds: []uint64{1}, scenarios: scs, rows: rs}))
}

// figures skips a test of the simulation's figures under the race
// detector, which slows the event loop tenfold: the event loop is one
// goroutine, and TestFilesAreWritten and TestRunsAreDeterministicForASeed
// run the experiment's workers under it.
func figures(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("figures are checked without -race")
	}
}

func get(t *testing.T, ss []summary, name, scope string, sc scenario) measures {
	t.Helper()
	s, ok := lookup(ss, name, scope, sc)
	require.True(t, ok, "no run of %s %s under %v", name, scope, sc)
	return s.m
}

func TestTheDependencyPausesInAStallAndSlowsAtHalfCapacity(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		trig  trigger
		start time.Duration
		want  time.Duration
	}{
		{"before the trigger, 10ms", stall, 10 * time.Second, 10*time.Second + 10*ms},
		{"a stall pauses a request in service", stall, triggerFrom - 4*ms, triggerTo + 6*ms},
		{"a stall holds a request that starts in it", stall, 35 * time.Second, triggerTo + 10*ms},
		{"after the trigger, 10ms", stall, triggerTo, triggerTo + 10*ms},
		{"half capacity doubles the time in it", half, 35 * time.Second, 35*time.Second + 20*ms},
		{"half capacity over its end", half, triggerTo - 4*ms, triggerTo + 8*ms},
		{"half capacity from before it", half, triggerFrom - 4*ms, triggerFrom + 12*ms},
		{"no trigger", noTrigger, 35 * time.Second, 35*time.Second + 10*ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server{trig: tt.trig}
			assert.Equal(t, tt.want, s.finish(tt.start, service))
		})
	}
}

func TestTheDependencyServesItsQueueInOrderWithTenWorkers(t *testing.T) {
	s := server{}
	var done []time.Duration
	for range 12 { // twelve at once: ten in service, two queued
		done = append(done, s.enqueue(0))
	}
	assert.Equal(t, 10*time.Millisecond, done[9])
	assert.Equal(t, 20*time.Millisecond, done[10], "the eleventh waits for a worker")
	assert.Equal(t, 2, s.peak)
}

func TestAnAttemptTimeoutIsWhatTheLibraryRetriesAndCountsAsATimeout(t *testing.T) {
	o := newOurs(env{rng: rand.New(rand.NewPCG(1, 1))}, sharedBudget(nil), nil)
	assert.Equal(t, classify.Retry, o.decision.Verdict)
	assert.True(t, o.decision.Timeout)
	assert.Equal(t, budget.TimedOut, budgetOutcome(o.decision), "10 tokens of the default bucket")
	assert.Equal(t, limit.TimedOut, limit.OutcomeOf(errTimeout, o.decision).Result)
}

// waits returns the waits a behaviour makes after consecutive timeouts of
// one call, until it gives up.
func waits(b behaviour) []time.Duration {
	var out []time.Duration
	q := &request{}
	for now := time.Duration(0); ; {
		q.attempts++
		w, ok := b.timedOut(q, now)
		if !ok {
			return out
		}
		out = append(out, w)
		q.prev = w
		now += timeout + w
	}
}

func TestEachPolicyWaitsAsItsSourceSays(t *testing.T) {
	e := env{rng: rand.New(rand.NewPCG(1, 2)), now: func() time.Duration { return 0 }}
	ms := time.Millisecond
	within := func(t *testing.T, got []time.Duration, lo, hi []time.Duration) {
		t.Helper()
		require.Len(t, got, len(lo))
		for i := range got {
			assert.True(t, got[i] >= lo[i] && got[i] <= hi[i], "wait %d = %v, want [%v, %v]", i+1, got[i], lo[i], hi[i])
		}
	}
	t.Run("go-retryablehttp: four retries, 1s doubling, no jitter", func(t *testing.T) {
		assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, waits(retryablehttp{}))
	})
	t.Run("avast/retry-go: ten attempts, 100ms doubling plus up to 100ms", func(t *testing.T) {
		w := waits(avast{e: e})
		require.Len(t, w, 9)
		within(t, w[:2], []time.Duration{100 * ms, 200 * ms}, []time.Duration{200 * ms, 300 * ms})
		assert.True(t, w[8] >= 25600*ms && w[8] < 25700*ms, "the ninth wait %v", w[8])
	})
	t.Run("cenkalti/backoff v4: 500ms ±50%, times 1.5, until 15 minutes", func(t *testing.T) {
		w := waits(cenkalti{e: e})
		within(t, w[:2], []time.Duration{250 * ms, 375 * ms}, []time.Duration{750 * ms, 1125 * ms})
		assert.Greater(t, len(w), 20, "far more than a 240s run")
	})
	t.Run("gRPC: four attempts, 100ms doubling ±20%, while the tokens last", func(t *testing.T) {
		g := newGRPC(e, 1)
		within(t, waits(g), []time.Duration{80 * ms, 160 * ms, 320 * ms}, []time.Duration{120 * ms, 240 * ms, 480 * ms})
		assert.Equal(t, 6.0, g.tokens[0], "a token per failed attempt")
		assert.Empty(t, waits(g), "at 5 tokens, the threshold, no retry")
	})
	t.Run("AWS: three attempts, 14 tokens a retry, waits below 50ms and 100ms", func(t *testing.T) {
		a := newAWS(e, 1, false)
		within(t, waits(a), []time.Duration{0, 0}, []time.Duration{50 * ms, 100 * ms})
		assert.Equal(t, uint(500-2*14), a.tokens[0])
	})
	t.Run("AWS legacy: 10 tokens a retry after a timeout, waits below 2s and 4s", func(t *testing.T) {
		a := newAWS(e, 1, true)
		within(t, waits(a), []time.Duration{0, 0}, []time.Duration{2 * time.Second, 4 * time.Second})
		assert.Equal(t, uint(500-2*10), a.tokens[0])
	})
	t.Run("ours: three attempts, full jitter below 100ms and 200ms", func(t *testing.T) {
		w := waits(newOurs(e, sharedBudget(defaultBudget()), nil))
		within(t, w, []time.Duration{0, 0}, []time.Duration{100 * ms, 200 * ms})
	})
}

func TestTheRatioBudgetAllowsAFifthOfFirstAttemptsPlusTenASecond(t *testing.T) {
	now := time.Duration(0)
	r := &ratio{now: func() time.Duration { return now }}
	for range 1000 {
		r.Record(budget.Attempt{Outcome: budget.TimedOut})
	}
	n := 0
	for r.Allow() {
		n++
	}
	assert.Equal(t, 200+100, n, "20% of 1,000 first attempts, plus 10 a second over 10s")
	now += ratioWindow
	assert.True(t, r.Allow(), "a window later, the floor is back")
}

func TestRecoveryIsWhenGoodputStaysAtTheLoad(t *testing.T) {
	nb := int(horizon / bin)
	arrived, good := make([]int32, nb), make([]int32, nb)
	for i := range arrived {
		arrived[i] = 90
		good[i] = 90
	}
	assert.Equal(t, time.Duration(0), recovery(good, arrived))
	for i := int(triggerFrom / bin); i < int((triggerTo+5*time.Second)/bin); i++ {
		good[i] = 0
	}
	assert.Equal(t, 5*time.Second, recovery(good, arrived))
	good[nb-1] = 0
	assert.Equal(t, never, recovery(good, arrived), "short in the last second")
}

func TestWithoutATriggerNothingIsRetried(t *testing.T) {
	figures(t)
	rs := allRows()
	if testing.Short() {
		rs = targetRows
	}
	for _, s := range quick(rs, scenario{700, noTrigger}, scenario{900, noTrigger}) {
		assert.InDelta(t, 1, s.m.amplification, 0.0005, "%s %s at %.0f/s", s.row.name, s.row.scope, s.sc.lambda)
		assert.Zero(t, s.m.recovery, "%s %s", s.row.name, s.row.scope)
		assert.Zero(t, s.m.failedPct, "%s %s", s.row.name, s.row.scope)
	}
}

func TestWithoutRetriesRecoveryIsTheBacklogsDrainTime(t *testing.T) {
	figures(t)
	// 10s of arrivals queue up; they drain at 1,000 − λ a second until
	// the queue is under 1s of work: (10λ − 1,000) / (1,000 − λ).
	ss := quick(targetRows[:1], scenario{700, stall}, scenario{900, stall})
	assert.InDelta(t, 20, get(t, ss, "no-retries", noScope, scenario{700, stall}).recovery.Seconds(), 2)
	assert.InDelta(t, 80, get(t, ss, "no-retries", noScope, scenario{900, stall}).recovery.Seconds(), 6)
}

func TestTheTargetsAreMet(t *testing.T) {
	figures(t)
	ss := quick(targetRows, triggers...)
	for _, tg := range targets(ss) {
		assert.True(t, tg.met, "%s: %s", tg.what, tg.measured)
	}
	require.Len(t, targets(ss), len(triggers)+1, "every target checked")
}

func TestRunsAreDeterministicForASeed(t *testing.T) {
	c := config{seeds: []uint64{7, 7, 8}, scenarios: []scenario{{900, half}}, rows: targetRows[2:]}
	cells := experiment(c) // in parallel
	assert.Equal(t, cells[0].m, cells[1].m)
	assert.NotEqual(t, cells[0].m, cells[2].m, "another seed, other arrivals")
}

func TestTheCountsAddUp(t *testing.T) {
	figures(t)
	for _, r := range targetRows {
		res := run(r, scenario{900, stall}, 1)
		inFlight := res.offered - res.succeeded - res.failed
		assert.GreaterOrEqual(t, inFlight, 0, r.name)
		assert.LessOrEqual(t, inFlight, 900*int(timeout/time.Second+maxWait/time.Second), "%s: at most the calls of the last 31s", r.name)
		assert.LessOrEqual(t, res.processed, res.sent, r.name)
		assert.LessOrEqual(t, res.wasted, res.processed, r.name)
		assert.LessOrEqual(t, res.refused, res.failed, r.name)
	}
}

func TestFilesAreWritten(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	c := config{seeds: []uint64{1}, scenarios: []scenario{{700, stall}}, rows: targetRows}
	require.NoError(t, experimentFiles(c, dir, &out))
	csv, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	assert.Equal(t, header, lines[0])
	assert.Len(t, lines, 1+len(targetRows))
	st, err := os.Stat(filepath.Join(dir, "storm.png"))
	require.NoError(t, err)
	assert.Positive(t, st.Size())
	assert.Contains(t, out.String(), "stall, λ = 700/s")
}
