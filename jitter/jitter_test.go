package jitter_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/jitter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	ms     = time.Millisecond
	maxDur = time.Duration(math.MaxInt64)
)

// extremes are the random numbers at both ends of the range and in between.
var extremes = []uint64{0, 1, 1 << 63, math.MaxUint64 - 1, math.MaxUint64}

func TestBoundsAtTheExtremesOfTheRandomNumber(t *testing.T) {
	const d = time.Second
	tests := []struct {
		name   string
		j      jitter.Jitter
		prev   time.Duration
		lo, hi time.Duration // inclusive bounds
	}{
		{"none returns the nominal delay", jitter.None{}, 0, d, d},
		{"full stays in [0, d)", jitter.Full{}, 0, 0, d - 1},
		{"equal stays in [d/2, d)", jitter.Equal{}, 0, d / 2, d - 1},
		{"proportional 0.5 stays in [d/2, 3d/2)", jitter.Proportional(0.5), 0, d / 2, 3 * d / 2},
		{"proportional 0 is exact", jitter.Proportional(0), 0, d, d},
		{"decorrelated starts in [base, 3*base)", jitter.Decorrelated{Base: 100 * ms, MaxDelay: 10 * d}, 0, 100 * ms, 300 * ms},
		{"decorrelated grows from prev", jitter.Decorrelated{Base: 100 * ms, MaxDelay: 10 * d}, d, 100 * ms, 3 * d},
		{"decorrelated stops at the cap", jitter.Decorrelated{Base: 100 * ms, MaxDelay: 2 * d}, 5 * d, 100 * ms, 2 * d},
		{"decorrelated without a base uses the nominal delay", jitter.Decorrelated{}, 0, d, 3 * d},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range extremes {
				got := tt.j.Apply(d, tt.prev, r)
				assert.GreaterOrEqual(t, got, tt.lo, "r=%d", r)
				assert.LessOrEqual(t, got, tt.hi, "r=%d", r)
			}
		})
	}
}

func TestZeroAndHugeDelaysNeitherGoNegativeNorOverflow(t *testing.T) {
	all := []jitter.Jitter{jitter.None{}, jitter.Full{}, jitter.Equal{}, jitter.Proportional(1), jitter.Proportional(0.3), jitter.Decorrelated{}, jitter.Decorrelated{Base: ms}}
	for _, j := range all {
		for _, d := range []time.Duration{0, 1, maxDur / 2, maxDur - 1, maxDur} {
			for _, prev := range []time.Duration{0, d, maxDur} {
				for _, r := range extremes {
					got := j.Apply(d, prev, r)
					require.GreaterOrEqual(t, got, time.Duration(0), "%#v d=%v prev=%v r=%d", j, d, prev, r)
				}
			}
		}
	}
	assert.Equal(t, maxDur, jitter.Proportional(1).Apply(maxDur, 0, math.MaxUint64), "saturates")
}

func TestFullJitterIsUniform(t *testing.T) {
	// With a seeded source the mean of many draws is close to d/2 and every
	// tenth of the range is hit about as often as the others.
	src := jitter.NewSeeded(42)
	const d, n = 1000 * ms, 100_000
	var sum time.Duration
	var buckets [10]int
	for range n {
		v := jitter.Full{}.Apply(d, 0, src.Uint64())
		sum += v
		buckets[v/(d/10)]++
	}
	assert.InDelta(t, float64(d/2), float64(sum/n), float64(5*ms))
	for i, c := range buckets {
		assert.InDelta(t, n/10, c, n/100, "bucket %d", i)
	}
}

func TestSeededSourceRepeatsItsSequence(t *testing.T) {
	a, b := jitter.NewSeeded(7), jitter.NewSeeded(7)
	c := jitter.NewSeeded(8)
	same, differ := true, false
	for range 100 {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		same = same && x == y
		differ = differ || x != z
	}
	assert.True(t, same, "the same seed gives the same sequence")
	assert.True(t, differ, "another seed gives another sequence")
}

func TestSeededSourceIsSafeForConcurrentUse(t *testing.T) {
	// Under -race: many goroutines share one source, and no number repeats.
	src := jitter.NewSeeded(1)
	var mu sync.Mutex
	seen := make(map[uint64]bool)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			local := make([]uint64, 1000)
			for i := range local {
				local[i] = src.Uint64()
			}
			mu.Lock()
			defer mu.Unlock()
			for _, v := range local {
				seen[v] = true
			}
		})
	}
	wg.Wait()
	assert.Len(t, seen, 8000)
}

func TestRuntimeSourceVaries(t *testing.T) {
	var src jitter.Runtime
	assert.NotEqual(t, src.Uint64(), src.Uint64())
}

func TestValidate(t *testing.T) {
	type validator interface{ Validate() error }
	tests := []struct {
		name    string
		j       validator
		wantErr string
	}{
		{"proportional above one", jitter.Proportional(1.5), "jitter.Proportional(1.5): must be in [0, 1]"},
		{"negative proportional", jitter.Proportional(-0.1), "jitter.Proportional(-0.1): must be in [0, 1]"},
		{"NaN proportional", jitter.Proportional(math.NaN()), "jitter.Proportional(NaN): must be in [0, 1]"},
		{"decorrelated negative base", jitter.Decorrelated{Base: -1}, "jitter.Decorrelated.Base = -1ns: must not be negative"},
		{"decorrelated cap below base", jitter.Decorrelated{Base: ms, MaxDelay: 1}, "jitter.Decorrelated.MaxDelay = 1ns: must be 0 (no cap) or at least Base (1ms)"},
		{"a nil seeded source", (*jitter.Seeded)(nil), "jitter.Seeded(<nil>): must be made by NewSeeded"},
		{"proportional one", jitter.Proportional(1), ""},
		{"decorrelated zero", jitter.Decorrelated{}, ""},
		{"a seeded source", jitter.NewSeeded(1), ""},
		{"the zero seeded source", new(jitter.Seeded), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.j.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, argerr.ErrInvalid, "an invalid argument, as retry.ErrInvalid")
		})
	}
}

func TestZeroAndNilValuesDoNotPanic(t *testing.T) {
	const d = time.Second
	tests := []struct {
		name string
		j    jitter.Jitter
		want time.Duration
	}{
		{"the zero proportional is exact", jitter.Proportional(0), d},
		{"the zero decorrelated starts at the nominal delay", jitter.Decorrelated{}, d},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.j.Apply(d, 0, 0))
		})
	}
	t.Run("nil and zero sources", func(t *testing.T) {
		var nilSeeded *jitter.Seeded
		assert.NotEqual(t, nilSeeded.Uint64(), nilSeeded.Uint64(), "a nil *Seeded draws from Runtime")
		assert.Equal(t, jitter.NewSeeded(0).Uint64(), new(jitter.Seeded).Uint64(), "the zero Seeded is seed 0")
	})
}

var sink time.Duration

func BenchmarkFull(b *testing.B) {
	b.ReportAllocs()
	var j jitter.Jitter = jitter.Full{}
	r := uint64(0x9e3779b97f4a7c15)
	for i := range b.N {
		sink = j.Apply(time.Duration(i), 0, r*uint64(i))
	}
}
