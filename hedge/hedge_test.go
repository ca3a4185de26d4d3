package hedge_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAdaptiveValidatesEveryField(t *testing.T) {
	for _, tc := range []struct {
		cfg  hedge.AdaptiveConfig
		name string
	}{
		{hedge.AdaptiveConfig{Percentile: 1}, "hedge.AdaptiveConfig.Percentile"},
		{hedge.AdaptiveConfig{Percentile: -0.1}, "hedge.AdaptiveConfig.Percentile"},
		{hedge.AdaptiveConfig{Floor: -1}, "hedge.AdaptiveConfig.Floor"},
		{hedge.AdaptiveConfig{Cap: -1}, "hedge.AdaptiveConfig.Cap"},
		{hedge.AdaptiveConfig{Floor: time.Second, Cap: time.Millisecond}, "hedge.AdaptiveConfig.Cap"},
		{hedge.AdaptiveConfig{Window: 3}, "hedge.AdaptiveConfig.Window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := hedge.NewAdaptive(tc.cfg)
			assert.Nil(t, a)
			var ae *argerr.Error
			require.ErrorAs(t, err, &ae)
			assert.ErrorIs(t, err, argerr.ErrInvalid)
			assert.Equal(t, tc.name, ae.Name)
		})
	}
}

func TestNilAndZeroValuesAreInvalidAndDoNothing(t *testing.T) {
	var nilA *hedge.Adaptive
	for name, err := range map[string]error{
		"nil Adaptive":  nilA.Validate(),
		"zero Adaptive": new(hedge.Adaptive).Validate(),
		"zero Fixed":    hedge.Fixed(0).Validate(),
		"negative":      hedge.Fixed(-1).Validate(),
	} {
		assert.True(t, errors.Is(err, argerr.ErrInvalid), name)
	}
	nilA.Observe(time.Second)
	assert.Zero(t, nilA.Next())
	assert.Zero(t, nilA.Config())
}

func TestAdaptiveDefaults(t *testing.T) {
	a, err := hedge.NewAdaptive(hedge.AdaptiveConfig{})
	require.NoError(t, err)
	assert.Equal(t, hedge.AdaptiveConfig{Percentile: 0.95, Floor: time.Millisecond, Cap: time.Second, Window: 1024}, a.Config())
	assert.Equal(t, time.Second, a.Next(), "the cap until the first estimate")
}

func TestAdaptiveEstimatesWithinItsResolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
		a, err := hedge.NewAdaptive(hedge.AdaptiveConfig{Percentile: q, Floor: time.Microsecond, Cap: time.Minute})
		require.NoError(t, err)
		// Exponential latencies with a mean of 10ms: the q-quantile is
		// -10ms·ln(1-q).
		for range 1024 * 4 {
			a.Observe(time.Duration(rng.ExpFloat64() * float64(10*time.Millisecond)))
		}
		want := -10 * float64(time.Millisecond) * log1m(q)
		assert.InEpsilon(t, want, float64(a.Next()), 0.2, "q=%v", q)
	}
}

func TestAdaptiveFollowsAChange(t *testing.T) {
	a, err := hedge.NewAdaptive(hedge.AdaptiveConfig{Window: 64})
	require.NoError(t, err)
	for range 640 {
		a.Observe(50 * time.Millisecond)
	}
	for range 640 {
		a.Observe(5 * time.Millisecond)
	}
	assert.InEpsilon(t, float64(5*time.Millisecond), float64(a.Next()), 0.1)
}

func TestAdaptiveFloorAndCap(t *testing.T) {
	a, err := hedge.NewAdaptive(hedge.AdaptiveConfig{Floor: 2 * time.Millisecond, Cap: 20 * time.Millisecond, Window: 16})
	require.NoError(t, err)
	for range 64 {
		a.Observe(time.Microsecond)
	}
	assert.Equal(t, 2*time.Millisecond, a.Next())
	for range 64 {
		a.Observe(time.Hour)
	}
	assert.Equal(t, 20*time.Millisecond, a.Next())
}

func TestAdaptiveIsSafeForConcurrentUse(t *testing.T) {
	a, err := hedge.NewAdaptive(hedge.AdaptiveConfig{Window: 16})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				a.Observe(time.Duration(g*1000+i) * time.Microsecond)
				_ = a.Next()
			}
		})
	}
	wg.Wait()
	assert.Positive(t, a.Next())
}

func BenchmarkAdaptiveObserve(b *testing.B) {
	a, _ := hedge.NewAdaptive(hedge.AdaptiveConfig{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		d := time.Millisecond
		for pb.Next() {
			a.Observe(d)
			d += time.Microsecond
		}
	})
}

func log1m(q float64) float64 { return math.Log(1 - q) }
