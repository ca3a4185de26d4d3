package limit_test

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	accepted  = limit.Outcome{Result: limit.Accepted}
	throttled = limit.Outcome{Result: limit.Throttled, RetryAfter: time.Second}
	other     = limit.Outcome{Result: limit.Other}
)

// clock is a fake clock for the explicit form.
type clock struct{ now time.Duration }

func (c *clock) Now() time.Duration { return c.now }

// feed records n accepted answers spread evenly over d.
func feed(a *limit.Adaptive, c *clock, n int, d time.Duration) {
	for range n {
		c.now += d / time.Duration(n)
		a.Record(context.Background(), accepted)
	}
}

func newAdaptive(t *testing.T, c *clock) *limit.Adaptive {
	t.Helper()
	a, err := limit.NewAdaptive(limit.AdaptiveConfig{Now: c.Now})
	require.NoError(t, err)
	return a
}

func TestAdaptiveLetsEverythingThroughUntilTheFirstThrottle(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	assert.True(t, a.Rate() > 1e300, "no limit yet")
	for range 10_000 {
		require.True(t, a.Acquire(context.Background(), 0))
	}
	feed(a, c, 500, time.Second)
	a.Record(context.Background(), other)
	assert.True(t, a.Rate() > 1e300, "neither accepted nor other answers set a limit")
}

func TestAdaptiveCutsToTheAcceptedRateNotTheSentRate(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 200, 2*time.Second) // the server accepts 100 a second
	a.Record(context.Background(), throttled)
	assert.InDelta(t, 90, a.Rate(), 1, "0.9 of the accepted rate, where AWS cuts to 0.7 of the sent rate")
}

func TestAdaptiveIgnoresThrottlesWithinHoldOfACut(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 200, 2*time.Second)
	a.Record(context.Background(), throttled)
	cut := a.Rate()
	for range 50 { // answers to attempts sent before the cut
		c.now += time.Millisecond
		a.Record(context.Background(), throttled)
	}
	assert.Equal(t, cut, a.Rate(), "one cut per episode")
	c.now += 100 * time.Millisecond
	feed(a, c, 9, 100*time.Millisecond)
	a.Record(context.Background(), throttled)
	assert.Less(t, a.Rate(), cut, "a throttle after Hold cuts again")
}

func TestAdaptiveGrowsBackAlongCubicThenProbesSlowly(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 200, 2*time.Second)
	a.Record(context.Background(), throttled)
	var rates []float64
	for range 8 {
		feed(a, c, 100, time.Second)
		rates = append(rates, a.Rate())
	}
	for i := 1; i < len(rates); i++ {
		assert.GreaterOrEqual(t, rates[i], rates[i-1], "never down without a throttle: %v", rates)
	}
	// k = cbrt(100·0.1/0.4) ≈ 2.9s: back at 100 by then, then 2 a second.
	assert.InDelta(t, 99.8, rates[1], 1, "concave approach: %v", rates)
	assert.InDelta(t, 100+2*(8-2.92), rates[7], 1.5, "linear probe: %v", rates)
}

func TestAdaptiveWaitsForARetryAfterBeforeProbing(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 200, 2*time.Second)
	a.Record(context.Background(), limit.Outcome{Result: limit.Throttled, RetryAfter: 10 * time.Second})
	feed(a, c, 500, 5*time.Second)
	assert.Less(t, a.Rate(), 100.0, "still below the last accepted rate 5s into a 10s Retry-After")
}

func TestAdaptivePacesAtItsRateInOrder(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 200, 2*time.Second)
	a.Record(context.Background(), throttled) // rate 90, an empty bucket
	var waits []time.Duration
	for range 3 {
		_, w := a.Take()
		waits = append(waits, w)
	}
	step := time.Second / 90
	assert.Equal(t, []time.Duration{step, 2 * step, 3 * step}, waits, "each in line behind the last")
}

func TestAdaptiveCutSlowsTurnsAlreadyPromised(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 200, 2*time.Second)
	a.Record(context.Background(), throttled)
	var last limit.Ticket
	for range 45 {
		last, _ = a.Take()
	}
	before := a.Due(last) // half a second at 90 a second
	c.now += 200 * time.Millisecond
	feed(a, c, 4, 40*time.Millisecond) // the server now takes 4 in 40ms after the hold
	a.Record(context.Background(), throttled)
	after := a.Due(last)
	assert.Greater(t, after, before-240*time.Millisecond, "the same ticket waits longer at the lower rate")
}

func TestAdaptiveReturnedTicketGoesToTheNextInLine(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 200, 2*time.Second)
	a.Record(context.Background(), throttled)
	first, _ := a.Take()
	second, w := a.Take()
	a.Return(first)
	assert.Less(t, a.Due(second), w, "the returned token is the next one's")
}

// lineOf3 is a limiter cut to 90 a second, with three tickets in line.
func lineOf3(t *testing.T) (*limit.Adaptive, *clock, [3]limit.Ticket, time.Duration) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 200, 2*time.Second)
	a.Record(context.Background(), throttled) // rate 90, an empty bucket
	var line [3]limit.Ticket
	for i := range line {
		line[i], _ = a.Take()
	}
	return a, c, line, time.Second / 90
}

func TestAdaptiveTakesBackTheLastTicketAsIfNeverAsked(t *testing.T) {
	a, _, line, step := lineOf3(t)
	a.Return(line[2]) // a caller refused at once: its turn was beyond its maxWait
	again, w := a.Take()
	assert.Equal(t, line[2], again, "the same place, taken again")
	assert.Equal(t, 3*step, w, "behind the same two")
	assert.Equal(t, step, a.Due(line[0]), "the head of the line did not move up")
}

func TestAdaptiveSkipsThePlaceOfATicketGivenBackWhileItWaited(t *testing.T) {
	a, c, line, step := lineOf3(t)
	a.Return(line[1])
	assert.Equal(t, step, a.Due(line[0]), "the one ahead of it is not served sooner")
	assert.Equal(t, 2*step, a.Due(line[2]), "the one behind it moves up one turn")
	c.now += step + 20*time.Microsecond // tokens are counted in whole thousandths
	assert.Zero(t, a.Due(line[0]))
	assert.InDelta(t, step, a.Due(line[2]), float64(20*time.Microsecond), "the place given back is skipped when its turn comes")
	_, w := a.Take()
	assert.InDelta(t, 2*step, w, float64(20*time.Microsecond), "a newcomer waits behind the one still in line, and only it")
}

func TestAdaptiveLineEmptiesWhenItsCallersGiveUp(t *testing.T) {
	// A cut pushes a long line past its callers' maxWait, and newcomers
	// are refused at once: every ticket comes back, in any order. The
	// line must then be empty, not full of places nobody holds.
	a, _, _, _ := lineOf3(t)
	var line []limit.Ticket
	for range 300 {
		tk, _ := a.Take()
		line = append(line, tk)
	}
	for i := range 100 { // newcomers refused at once
		tk, _ := a.Take()
		a.Return(tk)
		if i%3 == 0 { // and waiters giving up, from the middle of the line
			a.Return(line[150+i/3])
		}
	}
	head := a.Due(line[0])
	for i := len(line) - 1; i >= 0; i-- {
		if i < 150 || i >= 184 {
			a.Return(line[i])
		}
	}
	assert.Equal(t, 4*time.Second/90, head, "the head was not served out of turn: three before it")
	_, w := a.Take()
	assert.Equal(t, 4*time.Second/90, w, "only the first three are left in line")
}

func TestAdaptiveAcquireRefusesAWaitLongerThanMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := limit.NewAdaptive(limit.AdaptiveConfig{})
		require.NoError(t, err)
		for range 10 {
			a.Record(context.Background(), accepted)
		}
		time.Sleep(time.Second)
		a.Record(context.Background(), throttled)
		rate := a.Rate()
		require.InDelta(t, 9, rate, 0.5, "0.9 of 10 accepted in the last second")
		ctx := context.Background()
		start := time.Now()
		assert.True(t, a.Acquire(ctx, time.Second), "the first token is due in 1/9s")
		assert.InDelta(t, float64(time.Second)/rate, float64(time.Since(start)), float64(time.Millisecond))
		assert.False(t, a.Acquire(ctx, time.Millisecond), "the next is not due within 1ms")
		assert.True(t, a.Acquire(ctx, time.Second), "the refused one's token was given back")
	})
}

func TestAdaptiveAcquireEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := limit.NewAdaptive(limit.AdaptiveConfig{MinRate: 0.5})
		require.NoError(t, err)
		time.Sleep(time.Second)
		a.Record(context.Background(), throttled) // nothing accepted: the minimum rate
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		assert.False(t, a.Acquire(ctx, time.Minute))
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "returned when the context ended")
	})
}

func TestAdaptiveIsSafeForConcurrentUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := limit.NewAdaptive(limit.AdaptiveConfig{})
		require.NoError(t, err)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 200 {
					if a.Acquire(context.Background(), time.Second) {
						o := accepted
						if (g+i)%17 == 0 {
							o = throttled
						}
						a.Record(context.Background(), o)
					}
					time.Sleep(time.Millisecond)
				}
			})
		}
		wg.Wait()
		assert.Greater(t, a.Rate(), 0.0)
	})
}

func TestAdaptiveLineIsSafeForConcurrentCallersThatGiveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := limit.NewAdaptive(limit.AdaptiveConfig{Timeouts: true})
		require.NoError(t, err)
		for range 20 {
			a.Record(context.Background(), accepted)
		}
		time.Sleep(time.Second)
		a.Record(context.Background(), limit.Outcome{Result: limit.TimedOut}) // 18 a second
		var wg sync.WaitGroup
		var sent atomic.Int64
		for g := range 8 {
			wg.Go(func() {
				for i := range 100 {
					// Some give up at once, some after waiting, some wait their turn.
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(g*i%7)*50*time.Millisecond)
					if a.Acquire(ctx, time.Duration(i%5)*100*time.Millisecond) {
						sent.Add(1)
					}
					cancel()
				}
			})
		}
		wg.Wait()
		start := time.Now()
		require.True(t, a.Acquire(context.Background(), time.Minute))
		assert.LessOrEqual(t, time.Since(start), time.Second/18+time.Millisecond,
			"with everyone gone, one turn at most: no place left held (%d sent)", sent.Load())
	})
}

func TestAdaptiveConfigIsValidated(t *testing.T) {
	tests := []struct {
		name    string
		c       limit.AdaptiveConfig
		wantErr string
	}{
		{"a negative minimum rate", limit.AdaptiveConfig{MinRate: -1}, "limit.AdaptiveConfig.MinRate = -1: must be in (0, 1e9] attempts per second"},
		{"a beta of one", limit.AdaptiveConfig{Beta: 1}, "limit.AdaptiveConfig.Beta = 1: must be in (0, 1)"},
		{"a negative scale", limit.AdaptiveConfig{Scale: -0.4}, "limit.AdaptiveConfig.Scale = -0.4: must be in (0, 1e9]"},
		{"a negative probe", limit.AdaptiveConfig{Probe: -1}, "limit.AdaptiveConfig.Probe = -1: must be in (0, 1000]"},
		{"a negative burst", limit.AdaptiveConfig{Burst: -1}, "limit.AdaptiveConfig.Burst = -1ns: must not be negative"},
		{"a negative hold", limit.AdaptiveConfig{Hold: -1}, "limit.AdaptiveConfig.Hold = -1ns: must not be negative"},
		{"a window too short", limit.AdaptiveConfig{Window: time.Millisecond}, "limit.AdaptiveConfig.Window = 1ms: must be at least 10ms"},
		{"a negative start", limit.AdaptiveConfig{Start: -1}, "limit.AdaptiveConfig.Start = -1: must be in [0, 1e9] attempts per second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := limit.NewAdaptive(tt.c)
			assert.Nil(t, a)
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}

func TestAdaptiveOutgrowsALimitMeasuredFarTooLow(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	c.now += time.Second
	a.Record(context.Background(), throttled) // nothing accepted in the last second
	assert.Equal(t, limit.AdaptiveConfig{}.WithDefaults().MinRate, a.Rate())
	feed(a, c, 2000, 20*time.Second)
	assert.Greater(t, a.Rate(), 100.0, "grown again as CUBIC does, after Patience")
}

func TestAdaptiveWaitsForAMeasurementBeforeItsFirstCut(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	c.now += 10 * time.Millisecond
	a.Record(context.Background(), throttled) // the first answer is a 429
	assert.True(t, a.Rate() > 1e300, "10ms say nothing of the server's rate")
	feed(a, c, 20, 200*time.Millisecond)
	a.Record(context.Background(), throttled)
	assert.InDelta(t, 0.9*20/0.21, a.Rate(), 5, "the next one cuts, to the rate accepted since")
}

func TestAdaptiveTakesATimeoutAsAThrottleOnlyWhenToldTo(t *testing.T) {
	timedOut := limit.Outcome{Result: limit.TimedOut}
	t.Run("by default a timeout says nothing of the rate", func(t *testing.T) {
		c := &clock{}
		a := newAdaptive(t, c)
		feed(a, c, 200, 2*time.Second)
		a.Record(context.Background(), timedOut)
		assert.True(t, a.Rate() > 1e300, "no limit set")
	})
	t.Run("with Timeouts a timeout cuts to the accepted rate", func(t *testing.T) {
		c := &clock{}
		a := newTimeouts(t, c)
		feed(a, c, 200, 2*time.Second) // the dependency answers 100 a second in time
		a.Record(context.Background(), timedOut)
		assert.InDelta(t, 90, a.Rate(), 1, "0.9 of the rate answered in time")
	})
}

func newTimeouts(t *testing.T, c *clock) *limit.Adaptive {
	t.Helper()
	a, err := limit.NewAdaptive(limit.AdaptiveConfig{Now: c.Now, Timeouts: true})
	require.NoError(t, err)
	return a
}

// stalled is a limiter with Timeouts whose dependency answered 100 a
// second in time for 2s, then stopped answering: 1s later, the first
// attempt sent into the stall times out, and more time out for 5s.
func stalled(t *testing.T) (*limit.Adaptive, *clock) {
	c := &clock{}
	a := newTimeouts(t, c)
	feed(a, c, 200, 2*time.Second)
	c.now += time.Second
	for range 50 {
		a.Record(context.Background(), limit.Outcome{Result: limit.TimedOut})
		c.now += 100 * time.Millisecond
	}
	return a, c
}

func TestAdaptiveStallCutsToTheMinimumAndReturnsToTheRateBefore(t *testing.T) {
	a, c := stalled(t)
	assert.Equal(t, limit.AdaptiveConfig{}.WithDefaults().MinRate, a.Rate(), "nothing answered in time: as little as it may")
	feed(a, c, 5, 100*time.Millisecond) // answers in time again
	assert.InDelta(t, 90, a.Rate(), 5, "back on the curve to the 100 a second it took before the stall")
	feed(a, c, 300, 3*time.Second)
	assert.InDelta(t, 100, a.Rate(), 2, "there k = cbrt(100·0.1/0.4) ≈ 2.9s after the cut")
}

func TestAdaptiveTimeoutCutGrowsAsTheCubeBeyondTheRateBefore(t *testing.T) {
	// After a throttled answer the rate probes 2% a second past the last
	// accepted rate for Patience (TestAdaptiveGrowsBackAlongCubicThenProbesSlowly);
	// after a timeout it grows as CUBIC does at once: capacity comes back.
	a, c := stalled(t)
	feed(a, c, 2400, 8*time.Second) // the callers would send 300 a second
	// 8s after the cut, x = 8 − 2.9 past the curve's plateau at 100.
	x := 8 - 2.92
	assert.InDelta(t, 100+2*x+0.4*x*x*x, a.Rate(), 6)
}

func newStarting(t *testing.T, c *clock) *limit.Adaptive {
	t.Helper()
	a, err := limit.NewAdaptive(limit.AdaptiveConfig{Start: 10, Now: c.Now})
	require.NoError(t, err)
	return a
}

// use takes every token due in d, in steps of a millisecond, and answers
// each at once with o; it returns how many went.
func use(a *limit.Adaptive, c *clock, d time.Duration, o limit.Outcome) int {
	n := 0
	for end := c.now + d; c.now < end; c.now += time.Millisecond {
		for {
			tk, w := a.Take()
			if w > 0 {
				a.Return(tk)
				break
			}
			n++
			a.Record(context.Background(), o)
		}
	}
	return n
}

func TestAdaptiveWithAStartLimitsFromTheFirstAttemptAndDoublesWhileUsed(t *testing.T) {
	c := &clock{}
	a := newStarting(t, c)
	assert.Equal(t, 10.0, a.Rate(), "limits at once")
	_, w := a.Take()
	assert.Zero(t, w, "a full bucket: one token at 10 a second")
	_, w = a.Take()
	assert.InDelta(t, 0.1*math.Log2(1+math.Ln2), w.Seconds(), 1e-6,
		"the next is due in 100ms at 10 a second, less the doubling it expects")
	use(a, c, 450*time.Millisecond, accepted)
	assert.Equal(t, 160.0, a.Rate(), "doubled every 100ms while its callers used it")
}

func TestAdaptiveWithAStartDoesNotGrowARateItsCallersDoNotUse(t *testing.T) {
	c := &clock{}
	a := newStarting(t, c)
	for range 10 { // one answer in 500ms: a fifth of the rate
		c.now += 500 * time.Millisecond
		a.Record(context.Background(), accepted)
	}
	assert.Equal(t, 10.0, a.Rate())
}

func TestAdaptiveStartEndsWithTheFirstCut(t *testing.T) {
	c := &clock{}
	a := newStarting(t, c)
	use(a, c, 450*time.Millisecond, accepted) // 160 a second
	c.now += 10 * time.Millisecond
	a.Record(context.Background(), throttled)
	// Over the whole start, 27 accepted in 460ms: 0.9·58. Over its last
	// Hold (and the step before it), at 40, 80 and 160 a second: more.
	assert.Greater(t, a.Rate(), 0.9*80, "cut to 0.9 of the rate accepted lately, not over the whole start")
	assert.Less(t, a.Rate(), 0.9*160)
	cut := a.Rate()
	c.now += 200 * time.Millisecond
	use(a, c, time.Second, accepted)
	assert.Less(t, a.Rate(), 1.5*cut, "no more doubling: back on CUBIC's curve")
}

func TestAdaptiveWithAStartHoldsItsRateOnAThrottleTooSoonToMeasure(t *testing.T) {
	c := &clock{}
	a := newStarting(t, c)
	c.now += 20 * time.Millisecond
	a.Record(context.Background(), throttled) // a 429 at once says nothing of the rate
	assert.Equal(t, 10.0, a.Rate())
	c.now += 90 * time.Millisecond
	a.Record(context.Background(), accepted)
	assert.Equal(t, 10.0, a.Rate(), "but it is no time to double")
}

func TestAdaptiveWithAStartCountsItsGrowthInTheWaitOfALongLine(t *testing.T) {
	c := &clock{}
	a := newStarting(t, c)
	var w time.Duration
	for range 1000 {
		_, w = a.Take()
	}
	// 999 tokens at 10 a second doubling every 100ms: 0.1·log2(1 + 99.9·ln2/0.1).
	assert.InDelta(t, 0.1*math.Log2(1+99.9*math.Ln2/0.1), w.Seconds(), 0.01, "not 100s at 10 a second")
}
