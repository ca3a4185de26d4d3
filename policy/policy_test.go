package policy_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	ms  = time.Millisecond
	sec = time.Second
	mid = uint64(1) << 63 // the middle of the random range
)

var (
	retry   = classify.Decision{Verdict: classify.Retry, Reason: "x"}
	stop    = classify.Decision{Verdict: classify.Stop, Reason: "x"}
	timeout = classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTimeout, Timeout: true}
	http500 = classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonServerError, Limit: 1}
	after   = func(d time.Duration) classify.Decision {
		return classify.Decision{Verdict: classify.Retry, Reason: "x", RetryAfter: d}
	}
	exact    = policy.Policy{MaxAttempts: 5, Backoff: backoff.Exponential{Base: 100 * ms, MaxDelay: sec}, Jitter: jitter.None{}}
	withKey  = policy.State{Attempt: 1, ClassFailures: 1, Keyed: true}
	first    = policy.State{Attempt: 1, ClassFailures: 1}
	attempts = func(n int) policy.State { return policy.State{Attempt: n, ClassFailures: 1} }
)

func with(p policy.Policy, f func(*policy.Policy)) policy.Policy {
	f(&p)
	return p
}

func TestNext(t *testing.T) {
	tests := []struct {
		name      string
		p         policy.Policy
		s         policy.State
		d         classify.Decision
		r         uint64
		wantDelay time.Duration
		wantStop  policy.Stop
	}{
		{"the first retry waits the base delay", exact, first, retry, 0, 100 * ms, policy.Continue},
		{"the third retry waits four times the base", exact, attempts(3), retry, 0, 400 * ms, policy.Continue},
		{"the schedule is capped", exact, attempts(4), retry, 0, 800 * ms, policy.Continue},
		{"the last attempt stops", exact, attempts(5), retry, 0, 0, policy.StopAttempts},
		{"a permanent failure stops at once", exact, first, stop, 0, 0, policy.StopPermanent},
		{"no opinion is retried in general mode", exact, first, classify.Decision{}, 0, 100 * ms, policy.Continue},
		{"no opinion stops in strict mode", with(exact, func(p *policy.Policy) { p.Strict = true }), first, classify.Decision{}, 0, 0, policy.StopPermanent},
		{"a timeout of non-idempotent work stops", exact, first, timeout, 0, 0, policy.StopNotIdempotent},
		{"a timeout of idempotent work is retried", with(exact, func(p *policy.Policy) { p.Idempotent = true }), first, timeout, 0, 100 * ms, policy.Continue},
		{"a timeout of keyed work is retried", exact, withKey, timeout, 0, 100 * ms, policy.Continue},
		{"a permanent failure is reported before exhaustion", exact, attempts(5), stop, 0, 0, policy.StopPermanent},
		{"a 500 is retried once", exact, first, http500, 0, 100 * ms, policy.Continue},
		{"a second 500 in the call stops whatever MaxAttempts says", exact, policy.State{Attempt: 2, ClassFailures: 2}, http500, 0, 0, policy.StopClassLimit},
		{"Retry-After replaces the backoff", exact, first, after(5 * sec), 0, 5 * sec, policy.Continue},
		{"Retry-After gets a small positive jitter", exact, first, after(5 * sec), mid, 5*sec + 250*ms, policy.Continue},
		{"the jitter on Retry-After is at most a second", exact, first, after(20 * sec), math.MaxUint64, 21*sec - 1, policy.Continue},
		{"the jitter on Retry-After never passes MaxDelay", exact, first, after(30 * sec), math.MaxUint64, 30 * sec, policy.Continue},
		{"Retry-After above MaxDelay is returned, not slept", exact, first, after(31 * sec), 0, 31 * sec, policy.StopWaitTooLong},
		{"Retry-After above a custom MaxDelay is returned", with(exact, func(p *policy.Policy) { p.MaxDelay = 2 * sec }), first, after(3 * sec), 0, 3 * sec, policy.StopWaitTooLong},
		{"a backoff longer than MaxDelay is clamped", with(exact, func(p *policy.Policy) { p.MaxDelay = 150 * ms }), attempts(3), retry, 0, 150 * ms, policy.Continue},
		{"a wait past MaxElapsed stops", with(exact, func(p *policy.Policy) { p.MaxElapsed = sec }), policy.State{Attempt: 1, ClassFailures: 1, Elapsed: 950 * ms}, retry, 0, 100 * ms, policy.StopElapsed},
		{"a wait that ends at MaxElapsed continues", with(exact, func(p *policy.Policy) { p.MaxElapsed = sec }), policy.State{Attempt: 1, ClassFailures: 1, Elapsed: 900 * ms}, retry, 0, 100 * ms, policy.Continue},
		{"a wait that would outlast the deadline stops", exact, policy.State{Attempt: 1, ClassFailures: 1, HasDeadline: true, Remaining: 99 * ms}, retry, 0, 100 * ms, policy.StopDeadline},
		{"a wait that ends at the deadline stops", exact, policy.State{Attempt: 1, ClassFailures: 1, HasDeadline: true, Remaining: 100 * ms}, retry, 0, 100 * ms, policy.StopDeadline},
		{"a wait well before the deadline continues", exact, policy.State{Attempt: 1, ClassFailures: 1, HasDeadline: true, Remaining: sec}, retry, 0, 100 * ms, policy.Continue},
		{"a Retry-After past the deadline stops", exact, policy.State{Attempt: 1, ClassFailures: 1, HasDeadline: true, Remaining: sec}, after(2 * sec), 0, 2 * sec, policy.StopDeadline},
		{"a huge elapsed time saturates instead of wrapping", with(exact, func(p *policy.Policy) { p.MaxElapsed = math.MaxInt64 - 1 }), policy.State{Attempt: 1, ClassFailures: 1, Elapsed: math.MaxInt64 - 1}, retry, 0, 100 * ms, policy.StopElapsed},
		{"the zero policy makes 3 attempts", policy.Policy{}, attempts(3), retry, 0, 0, policy.StopAttempts},
		{"the zero policy uses full jitter on 100ms", policy.Policy{}, first, retry, mid, 50 * ms, policy.Continue},
		{"the zero policy doubles up to 10s", policy.Policy{MaxAttempts: 100}, attempts(20), retry, math.MaxUint64, 10*sec - 1, policy.Continue},
		{"one attempt never retries", policy.HealthCheck(), first, retry, 0, 0, policy.StopAttempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, stop := tt.p.Next(tt.s, tt.d, tt.r)
			assert.Equal(t, tt.wantStop, stop, "stop")
			assert.Equal(t, tt.wantDelay, d, "delay")
		})
	}
}

func TestTenAttemptsNeverExceedTheCap(t *testing.T) {
	p := policy.Policy{MaxAttempts: 10, MaxDelay: 60 * sec, Backoff: backoff.Exponential{Base: sec, MaxDelay: 60 * sec}}
	src := jitter.NewSeeded(3)
	prev := time.Duration(0)
	for n := 1; n < 10; n++ {
		d, stop := p.Next(policy.State{Attempt: n, ClassFailures: n, Prev: prev}, retry, src.Uint64())
		require.Equal(t, policy.Continue, stop)
		nominal := min(sec<<(n-1), 60*sec)
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.Less(t, d, nominal, "full jitter stays below the nominal delay")
		prev = d
	}
	_, stop := p.Next(policy.State{Attempt: 10, ClassFailures: 10}, retry, 0)
	assert.Equal(t, policy.StopAttempts, stop)
}

func TestDecorrelatedJitterGetsThePreviousDelay(t *testing.T) {
	p := policy.Policy{MaxAttempts: 10, Backoff: backoff.Constant(100 * ms), Jitter: jitter.Decorrelated{MaxDelay: 10 * sec}}
	d, _ := p.Next(policy.State{Attempt: 3, ClassFailures: 3, Prev: 2 * sec}, retry, math.MaxUint64)
	assert.InDelta(t, float64(6*sec), float64(d), float64(ms), "up to 3 × prev")
	d, _ = p.Next(policy.State{Attempt: 3, ClassFailures: 3, Prev: 5 * sec}, retry, math.MaxUint64)
	assert.Equal(t, 10*sec, d, "capped by the jitter")
	d, _ = p.Next(policy.State{Attempt: 3, ClassFailures: 3, Prev: 20 * sec}, retry, math.MaxUint64)
	assert.Equal(t, 10*sec, d, "capped by the jitter")
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		p       *policy.Policy
		wantErr string
	}{
		{"negative attempts", &policy.Policy{MaxAttempts: -1}, "policy.Policy.MaxAttempts = -1: must be at least 1 (or 0 for the default 3)"},
		{"negative elapsed", &policy.Policy{MaxElapsed: -sec}, "policy.Policy.MaxElapsed = -1s: must not be negative"},
		{"negative attempt timeout", &policy.Policy{AttemptTimeout: -1}, "policy.Policy.AttemptTimeout = -1ns: must not be negative"},
		{"negative max delay", &policy.Policy{MaxDelay: -ms}, "policy.Policy.MaxDelay = -1ms: must not be negative"},
		{"a bad schedule", &policy.Policy{Backoff: backoff.Exponential{Base: sec, Factor: 0.5}},
			"policy.Policy.Backoff: backoff.Exponential.Factor = 0.5: must be at least 1 (or 0 for the default 2)"},
		{"a bad jitter", &policy.Policy{Jitter: jitter.Proportional(2)}, "policy.Policy.Jitter: jitter.Proportional(2): must be in [0, 1]"},
		{"a nil schedule func", &policy.Policy{Backoff: backoff.Func(nil)}, "policy.Policy.Backoff: backoff.Func(<nil>): must not be nil"},
		{"a custom schedule whose Validate returns a plain error", &policy.Policy{Backoff: badSchedule{}}, "policy.Policy.Backoff: too eager"},
		{"a nil policy", nil, "policy.Policy(<nil>): must not be nil"},
		{"the zero policy", &policy.Policy{}, ""},
		{"a custom schedule without Validate", &policy.Policy{Backoff: backoff.Func(func(int) time.Duration { return 0 })}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, argerr.ErrInvalid, "an invalid argument, as retry.ErrInvalid")
		})
	}
}

type badSchedule struct{}

func (badSchedule) Delay(int) time.Duration { return 0 }
func (badSchedule) Validate() error         { return errors.New("too eager") }

func TestPresets(t *testing.T) {
	tests := []struct {
		name                string
		p                   policy.Policy
		attempts            int
		firstCap, lastCap   time.Duration
		strict, requiresKey bool
	}{
		{"LLM call", policy.LLMCall(), 4, 2 * sec, 8 * sec, true, false},
		{"DB write", policy.DBWrite(), 4, 100 * ms, 400 * ms, false, false},
		{"email send", policy.EmailSend(), 4, sec, 4 * sec, false, false},
		{"payment", policy.Payment(), 4, 2 * sec, 8 * sec, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.p.Validate())
			assert.Equal(t, tt.attempts, tt.p.Attempts())
			assert.Equal(t, tt.strict, tt.p.Strict)
			assert.Equal(t, tt.requiresKey, tt.p.RequireKey)
			first, _ := tt.p.Next(first, retry, math.MaxUint64)
			assert.InDelta(t, float64(tt.firstCap), float64(first), float64(ms), "first wait tops out at the base")
			last, stop := tt.p.Next(attempts(tt.attempts-1), retry, math.MaxUint64)
			assert.Equal(t, policy.Continue, stop)
			assert.InDelta(t, float64(tt.lastCap), float64(last), float64(ms), "last wait")
			_, stop = tt.p.Next(attempts(tt.attempts), retry, 0)
			assert.Equal(t, policy.StopAttempts, stop)
		})
	}
	hc := policy.HealthCheck()
	assert.Equal(t, 1, hc.Attempts())
}

func TestStopLabelsAreStableAndDistinct(t *testing.T) {
	assert.Equal(t, "max-attempts", policy.StopAttempts.String())
	assert.Equal(t, "stop(200)", policy.Stop(200).String())
	seen := map[string]policy.Stop{}
	n := 0
	for s := range policy.Stops() {
		n++
		label := s.String()
		assert.Regexp(t, `^[a-z]+(-[a-z]+)*$`, label, "a label is lower-case words joined by hyphens")
		prev, dup := seen[label]
		assert.False(t, dup, "%d and %d share the label %q", prev, s, label)
		seen[label] = s
	}
	assert.Equal(t, 12, n, "every reason is listed once, Continue excluded")
}

var sinkD time.Duration

func BenchmarkNext(b *testing.B) {
	b.ReportAllocs()
	p := policy.Policy{MaxAttempts: 10, Backoff: backoff.Exponential{Base: 100 * ms, MaxDelay: 30 * sec}}
	for i := range b.N {
		sinkD, _ = p.Next(policy.State{Attempt: i&7 + 1, ClassFailures: 1}, retry, uint64(i)*0x9e3779b97f4a7c15)
	}
}

// The default schedule and jitter take a path of their own in Delay: it must
// give what the same schedule and jitter give through their interfaces.
func TestTheInlinedPathAgreesWithTheInterfaces(t *testing.T) {
	schedules := []backoff.Exponential{
		policy.DefaultBackoff(),
		{Base: 100 * ms, MaxDelay: 30 * sec},
		{Base: 7, Factor: 2},
		{Base: sec, Factor: 2, MaxDelay: sec},
		{},
	}
	src := jitter.NewSeeded(9)
	for _, e := range schedules {
		for _, nilFields := range []bool{false, true} {
			inlined := policy.Policy{Backoff: e, Jitter: jitter.Full{}, MaxDelay: time.Hour}
			if nilFields && e == policy.DefaultBackoff() {
				inlined.Backoff, inlined.Jitter = nil, nil
			}
			general := policy.Policy{Backoff: backoff.Func(e.Delay), Jitter: full{}, MaxDelay: time.Hour}
			for _, n := range []int{math.MinInt, 0, 1, 2, 5, 40, 62, 63, 64, math.MaxInt} {
				r := src.Uint64()
				require.Equal(t, general.Delay(n, 0, 0, r), inlined.Delay(n, 0, 0, r), "%+v, attempt %d", e, n)
			}
		}
	}
}

func TestANilPolicyIsTheZeroPolicy(t *testing.T) {
	var p *policy.Policy
	zero := &policy.Policy{}
	assert.Equal(t, zero.Attempts(), p.Attempts())
	assert.Equal(t, zero.Delay(2, 0, 0, mid), p.Delay(2, 0, 0, mid))
	d, stop := p.Next(first, retry, mid)
	wantD, wantStop := zero.Next(first, retry, mid)
	assert.Equal(t, wantD, d)
	assert.Equal(t, wantStop, stop)
	assert.ErrorIs(t, p.Validate(), argerr.ErrInvalid, "but it is not a valid policy")
}

// full is jitter.Full under another type, which Delay does not recognise:
// it takes the general path.
type full struct{}

func (full) Apply(d, prev time.Duration, r uint64) time.Duration {
	return jitter.Full{}.Apply(d, prev, r)
}
