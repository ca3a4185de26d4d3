package chaos_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newScenario(t testing.TB, c chaos.Config) *chaos.Scenario {
	t.Helper()
	s, err := chaos.New(c)
	require.NoError(t, err)
	return s
}

// outcomes runs n calls through s and returns what each returned, as text.
func outcomes(s *chaos.Scenario, n int) []string {
	op := chaos.Wrap(s, func(context.Context) error { return nil })
	out := make([]string, n)
	for i := range out {
		out[i] = "ok"
		if err := op(context.Background()); err != nil {
			out[i] = err.Error()
		}
	}
	return out
}

func mixed(seed uint64) chaos.Config {
	return chaos.Config{Seed: seed, Rules: []chaos.Rule{
		{Fault: chaos.Refused(), Rate: 0.1},
		{Fault: chaos.ResetAfterSend(), Rate: 0.2},
		{Fault: chaos.Throttle(429, time.Second), Rate: 0.1},
	}}
}

func TestTheSameSeedGivesTheSameFaultsInTheSameOrder(t *testing.T) {
	a := outcomes(newScenario(t, mixed(7)), 200)
	assert.Equal(t, a, outcomes(newScenario(t, mixed(7)), 200))
	assert.NotEqual(t, a, outcomes(newScenario(t, mixed(8)), 200), "another seed, other faults")
}

func TestARateInjectsThatShareOfTheCalls(t *testing.T) {
	s := newScenario(t, chaos.Config{Seed: 1, Rules: []chaos.Rule{{Fault: chaos.ResetAfterSend(), Rate: 0.2}}})
	const n = 20_000
	failed := 0
	for _, o := range outcomes(s, n) {
		if o != "ok" {
			failed++
		}
	}
	assert.InDelta(t, 0.2*n, failed, 0.01*n)
	st := s.Stats()
	assert.Equal(t, chaos.Stats{Calls: n, Faults: int64(failed), Processed: n, Lost: int64(failed)}, st,
		"every call reached the target; the reset ones lost their answer")
}

func TestConcurrentCallsDrawTheSameFaultsAsSequentialOnes(t *testing.T) {
	seq := newScenario(t, mixed(3))
	outcomes(seq, 1000)
	par := newScenario(t, mixed(3))
	op := chaos.Wrap(par, func(context.Context) error { return nil })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 125 {
				_ = op(context.Background())
			}
		})
	}
	wg.Wait()
	assert.Equal(t, seq.Stats(), par.Stats(), "the n-th call draws the same, whoever makes it")
}

func TestAScriptRunsItsFaultsInOrderThenLetsCallsThrough(t *testing.T) {
	s := newScenario(t, chaos.Config{Rules: []chaos.Rule{
		{Script: []chaos.Fault{chaos.Throttle(503, 0), chaos.Throttle(503, 0), {}, chaos.Refused()}},
	}})
	assert.Equal(t, []string{"http 503 Service Unavailable", "http 503 Service Unavailable", "ok",
		"dial tcp: connect: connection refused", "ok", "ok"}, outcomes(s, 6))
}

func TestAScheduleThrottlesForItsWindowAndInBursts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s := newScenario(t, chaos.Config{Rules: []chaos.Rule{
			{Fault: chaos.Throttle(429, time.Second), For: 10 * time.Second},
			{Fault: chaos.Throttle(503, 0), Start: time.Minute, For: 5 * time.Second, Every: 20 * time.Second},
		}})
		op := chaos.Wrap(s, func(context.Context) error { return nil })
		status := func() int {
			var se *classify.StatusError
			if errors.As(op(t.Context()), &se) {
				return se.Code
			}
			return 200
		}
		var got []int
		for _, at := range []time.Duration{0, 9 * time.Second, 10 * time.Second, 59 * time.Second, 60 * time.Second,
			64 * time.Second, 65 * time.Second, 80 * time.Second, 86 * time.Second} {
			time.Sleep(at - time.Since(start))
			got = append(got, status())
		}
		assert.Equal(t, []int{429, 429, 200, 200, 503, 503, 200, 503, 200}, got)
	})
}

func TestLatencyRunsOnFakeTimeAndThenTheNextRulesDecide(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t, chaos.Config{Rules: []chaos.Rule{
			{Fault: chaos.Latency(time.Hour)},
			{Fault: chaos.Refused(), Rate: 0.5},
		}})
		op := chaos.Wrap(s, func(context.Context) error { return nil })
		t0 := time.Now()
		for range 10 {
			_ = op(t.Context())
		}
		assert.Equal(t, 10*time.Hour, time.Since(t0))
		st := s.Stats()
		assert.Equal(t, int64(10), st.Faults)
		assert.Greater(t, st.Processed, int64(0))
		assert.Less(t, st.Processed, int64(10), "some calls were refused after their wait")
	})
}

func TestLatencyEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t, chaos.Config{Rules: []chaos.Rule{{Fault: chaos.Latency(time.Hour)}}})
		ran := false
		op := chaos.Wrap(s, func(context.Context) error { ran = true; return nil })
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		t0 := time.Now()
		assert.ErrorIs(t, op(ctx), context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(t0))
		assert.False(t, ran, "a call that never left waited for nothing")
	})
}

func TestLatencyTailHasItsMedianAndP99(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t, chaos.Config{Seed: 5, Rules: []chaos.Rule{{Fault: chaos.LatencyTail(10*time.Millisecond, 200*time.Millisecond)}}})
		op := chaos.Wrap(s, func(context.Context) error { return nil })
		const n = 4000
		waits := make([]time.Duration, n)
		for i := range waits {
			t0 := time.Now()
			require.NoError(t, op(t.Context()))
			waits[i] = time.Since(t0)
		}
		below := func(d time.Duration) float64 {
			k := 0
			for _, w := range waits {
				if w < d {
					k++
				}
			}
			return float64(k) / n
		}
		assert.InDelta(t, 0.5, below(10*time.Millisecond), 0.03)
		assert.InDelta(t, 0.99, below(200*time.Millisecond), 0.005)
		assert.Less(t, below(time.Second), 1.0, "the tail goes far beyond p99")
		assert.Equal(t, 1.0, below(20*time.Second+1), "but no further than 100 × p99")
	})
}

func TestTimeoutRunsTheCallAndHoldsTheAnswerBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t, chaos.Config{Rules: []chaos.Rule{{Fault: chaos.Timeout(30 * time.Second)}}})
		runs := 0
		op := chaos.Wrap(s, func(context.Context) error { runs++; return nil })
		t0 := time.Now()
		err := op(t.Context())
		assert.EqualError(t, err, "read tcp: i/o timeout")
		assert.Equal(t, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTimeout, Timeout: true}, classify.Default(err))
		assert.Equal(t, 30*time.Second, time.Since(t0))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.ErrorIs(t, op(ctx), context.DeadlineExceeded, "the caller's deadline comes first")
		assert.Equal(t, 2, runs)
		assert.Equal(t, chaos.Stats{Calls: 2, Faults: 2, Processed: 2, Lost: 2}, s.Stats())
	})
}

func TestFunctionsSeeTheErrorsAClientWould(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		fault  chaos.Fault
		want   string
		ran    bool
		reason string
	}{
		{chaos.Error(boom), "boom", false, ""},
		{chaos.Throttle(429, 1500*time.Millisecond), "http 429 Too Many Requests", false, classify.ReasonTooManyRequests},
		{chaos.Respond(404, "no"), "http 404 Not Found", false, classify.ReasonClientError},
		{chaos.Respond(200, "fine"), "", false, ""},
		{chaos.Refused(), "dial tcp: connect: connection refused", false, classify.ReasonConnRefused},
		{chaos.ResetBeforeSend(), "write tcp: write: connection reset by peer", false, classify.ReasonConnReset},
		{chaos.ResetAfterSend(), "read tcp: read: connection reset by peer", true, classify.ReasonConnReset},
		{chaos.Truncate(10), "unexpected EOF", true, classify.ReasonConnClosed},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			s := newScenario(t, chaos.Config{Rules: []chaos.Rule{{Fault: tt.fault}}})
			ran := false
			err := chaos.Wrap(s, func(context.Context) error { ran = true; return nil })(t.Context())
			if tt.want == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.want)
			}
			assert.Equal(t, tt.ran, ran, "whether the function ran")
			if tt.reason != "" {
				assert.Equal(t, tt.reason, classify.Default(err).Reason)
			}
		})
	}
}

func TestAThrottledFunctionCarriesItsRetryAfter(t *testing.T) {
	s := newScenario(t, chaos.Config{Rules: []chaos.Rule{{Fault: chaos.Throttle(503, 1500*time.Millisecond)}}})
	err := chaos.Wrap(s, func(context.Context) error { return nil })(t.Context())
	d := classify.Default(err)
	assert.Equal(t, classify.Retry, d.Verdict)
	assert.Equal(t, 1500*time.Millisecond, d.RetryAfter, "Retry-After-Ms is exact; Retry-After says 2 s")
}

func TestWrapValueReturnsTheChosenValueOrLosesTheAnswer(t *testing.T) {
	s := newScenario(t, chaos.Config{Rules: []chaos.Rule{{Script: []chaos.Fault{chaos.Value(42), {}, chaos.ResetAfterSend(), chaos.Value("text")}}}})
	fn := chaos.WrapValue(s, func(context.Context) (int, error) { return 7, nil })
	var got []int
	var errs []error
	for range 4 {
		v, err := fn(t.Context())
		got, errs = append(got, v), append(errs, err)
	}
	assert.Equal(t, []int{42, 7, 0, 0}, got)
	assert.NoError(t, errs[0])
	assert.NoError(t, errs[1])
	assert.Equal(t, classify.ReasonConnReset, classify.Default(errs[2]).Reason)
	assert.ErrorIs(t, errs[3], retry.ErrInvalid, "a string is not an int")
	assert.ErrorContains(t, errs[3], "chaos.Value")
}

func TestSwitchedOffOrNilEveryCallGoesThrough(t *testing.T) {
	s := newScenario(t, chaos.Config{Rules: []chaos.Rule{{Fault: chaos.Refused()}}})
	s.Enable(false)
	assert.False(t, s.Enabled())
	assert.Equal(t, []string{"ok", "ok"}, outcomes(s, 2))
	assert.Equal(t, chaos.Stats{}, s.Stats(), "a switched-off scenario counts nothing")
	s.Enable(true)
	assert.Equal(t, []string{"dial tcp: connect: connection refused"}, outcomes(s, 1))

	var none *chaos.Scenario
	assert.False(t, none.Enabled())
	none.Enable(true)
	assert.Equal(t, []string{"ok"}, outcomes(none, 1))
	assert.Equal(t, chaos.Stats{}, none.Stats())
	resp, err := none.Transport(answer(200, "hi")).RoundTrip(get(t, "http://example.com/"))
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
}

func TestNilFunctionsAreInvalidNotPanics(t *testing.T) {
	assert.ErrorIs(t, chaos.Wrap(nil, nil)(t.Context()), retry.ErrInvalid)
	_, err := chaos.WrapValue[int](nil, nil)(t.Context())
	assert.ErrorIs(t, err, retry.ErrInvalid)
	s := newScenario(t, chaos.Config{Rules: []chaos.Rule{{Fault: chaos.Latency(time.Millisecond)}, {Fault: chaos.Timeout(time.Millisecond)}}})
	assert.EqualError(t, chaos.Wrap(s, func(context.Context) error { return nil })(nil), "read tcp: i/o timeout", "a nil context never ends")
}

func TestBadRulesAreInvalidErrorsThatNameTheField(t *testing.T) {
	tests := []struct {
		name string
		rule chaos.Rule
		want string
	}{
		{"neither a fault nor a script", chaos.Rule{Rate: 0.5}, "chaos.Config.Rules[0].Script"},
		{"both a fault and a script", chaos.Rule{Fault: chaos.Refused(), Script: []chaos.Fault{chaos.Refused()}}, "chaos.Config.Rules[0].Script"},
		{"a rate above 1", chaos.Rule{Fault: chaos.Refused(), Rate: 1.5}, "chaos.Config.Rules[0].Rate = 1.5"},
		{"a negative rate", chaos.Rule{Fault: chaos.Refused(), Rate: -0.1}, "chaos.Config.Rules[0].Rate = -0.1"},
		{"a negative start", chaos.Rule{Fault: chaos.Refused(), Start: -1}, "chaos.Config.Rules[0].Start"},
		{"bursts without a length", chaos.Rule{Fault: chaos.Refused(), Every: time.Second}, "chaos.Config.Rules[0].For = 0s"},
		{"bursts longer than their period", chaos.Rule{Fault: chaos.Refused(), For: time.Second, Every: time.Second}, "chaos.Config.Rules[0].For = 1s"},
		{"a nil error", chaos.Rule{Fault: chaos.Error(nil)}, "chaos.Config.Rules[0].Fault = Error(<nil>)"},
		{"a negative latency", chaos.Rule{Fault: chaos.Latency(-time.Second)}, "chaos.Config.Rules[0].Fault = Latency(-1s)"},
		{"a tail shorter than its median", chaos.Rule{Fault: chaos.LatencyTail(time.Second, time.Millisecond)}, "chaos.Config.Rules[0].Fault = LatencyTail(1s, 1ms)"},
		{"a throttle with a success status", chaos.Rule{Fault: chaos.Throttle(200, 0)}, "chaos.Config.Rules[0].Fault = Throttle(200, 0s)"},
		{"a response with no status", chaos.Rule{Fault: chaos.Respond(0, "")}, `chaos.Config.Rules[0].Fault = Respond(0, "")`},
		{"a negative byte count", chaos.Rule{Script: []chaos.Fault{{}, chaos.Truncate(-1)}}, "chaos.Config.Rules[0].Script[1] = Truncate(-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := chaos.New(chaos.Config{Rules: []chaos.Rule{tt.rule}})
			assert.Nil(t, s)
			var invalid *retry.InvalidError
			require.ErrorAs(t, err, &invalid)
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), "%v", err)
		})
	}
}

func TestTheConfigIsCopied(t *testing.T) {
	script := []chaos.Fault{chaos.Refused()}
	s := newScenario(t, chaos.Config{Rules: []chaos.Rule{{Script: script}}})
	script[0] = chaos.Fault{}
	assert.Equal(t, []string{"dial tcp: connect: connection refused", "ok"}, outcomes(s, 2))
}

// answer is a base transport that answers every request with code and
// text, and reads the request's body as a server would.
func answer(code int, text string) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
			_ = req.Body.Close()
		}
		return &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(text)), Request: req}, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func get(t testing.TB, url string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return req
}
