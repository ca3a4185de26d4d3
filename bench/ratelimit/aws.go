package main

import (
	"context"
	"math"
	"time"

	"github.com/retrykit/retry/limit"
)

// awsPort is a faithful port of the AWS SDK for Go v2's adaptive rate
// limiter (aws/retry/adaptive_ratelimit.go and its token bucket), the
// anchor the library's limit.Adaptive is compared with, on the simulated
// clock. Its constants are the SDK's. It is single-threaded: the simulation
// is.
type awsPort struct {
	now func() time.Duration

	enabled        bool
	fillRate       float64
	calculatedRate float64
	lastRefilled   time.Duration
	refilledOnce   bool
	measuredTxRate float64
	lastTxBucket   float64
	requestCount   int64
	lastMaxRate    float64
	lastThrottle   time.Duration
	timeWindow     float64
	tokens, cap    float64 // the SDK's adaptiveTokenBucket
}

const (
	awsSmooth      = 0.8
	awsBeta        = 0.7
	awsScale       = 0.4
	awsMinFillRate = 0.5
)

func newAWSPort(now func() time.Duration) *awsPort {
	t := now()
	return &awsPort{now: now, lastTxBucket: math.Floor(t.Seconds()), lastThrottle: t}
}

// acquire is AcquireToken(1): a token, or the wait before asking again.
func (a *awsPort) acquire() (bool, time.Duration) {
	if !a.enabled {
		return true, 0
	}
	a.refill()
	if a.tokens < 1 {
		return false, time.Duration((1 - a.tokens) / a.fillRate * float64(time.Second))
	}
	a.tokens--
	return true, 0
}

// Acquire and Record make it a limit.Limiter for the simulation's
// bookkeeping; the simulation calls acquire, the SDK's loop, instead.
func (a *awsPort) Acquire(context.Context, time.Duration) bool {
	ok, _ := a.acquire()
	return ok
}

// Record is the SDK's Update(throttled).
func (a *awsPort) Record(_ context.Context, o limit.Outcome) {
	a.updateMeasuredRate()
	if o.Result == limit.Throttled {
		rateToUse := a.measuredTxRate
		if a.enabled {
			rateToUse = math.Min(a.measuredTxRate, a.fillRate)
		}
		a.lastMaxRate = rateToUse
		a.calculateTimeWindow()
		a.lastThrottle = a.now()
		a.calculatedRate = rateToUse * awsBeta
		a.enabled = true
	} else {
		a.calculateTimeWindow()
		dt := (a.now() - a.lastThrottle).Seconds()
		a.calculatedRate = awsScale*math.Pow(dt-a.timeWindow, 3) + a.lastMaxRate
	}
	a.updateRate(math.Min(a.calculatedRate, 2*a.measuredTxRate))
}

func (a *awsPort) calculateTimeWindow() {
	a.timeWindow = math.Pow(a.lastMaxRate*(1-awsBeta)/awsScale, 1./3)
}

func (a *awsPort) updateRate(r float64) {
	a.refill()
	a.fillRate = math.Max(r, awsMinFillRate)
	// The SDK's bucket: Resize(r) sets the capacity to r, keeping at most r
	// tokens.
	a.cap = math.Max(r, 1)
	a.tokens = math.Min(a.tokens, a.cap)
}

func (a *awsPort) updateMeasuredRate() {
	t := a.now().Seconds()
	bucket := math.Floor(t*2) / 2
	a.requestCount++
	if bucket > a.lastTxBucket {
		current := float64(a.requestCount) / (bucket - a.lastTxBucket)
		a.measuredTxRate = current*awsSmooth + a.measuredTxRate*(1-awsSmooth)
		a.requestCount = 0
		a.lastTxBucket = bucket
	}
}

func (a *awsPort) refill() {
	now := a.now()
	if !a.refilledOnce {
		a.refilledOnce, a.lastRefilled = true, now
		return
	}
	a.tokens = math.Min(a.cap, a.tokens+(now-a.lastRefilled).Seconds()*a.fillRate)
	a.lastRefilled = now
}
