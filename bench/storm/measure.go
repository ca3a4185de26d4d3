package main

import (
	"slices"
	"time"
)

// never is the recovery of a run whose goodput was still short at its end.
const never = time.Duration(-1)

// The recovery criterion: goodput over a window of recoveryWindow, slid by
// bin, at least goodShare of the requests that arrived in the same window:
// λ's realisation. At 700/s a second holds 700 ± 26 arrivals (Poisson), so
// one second in ten falls short of 95 % of λ itself with nothing wrong,
// while goodput follows the arrivals within a few requests.
const (
	recoveryWindow = time.Second
	goodShare      = 0.95
)

// measures are what a run is judged by.
type measures struct {
	amplification float64       // attempts sent ÷ requests offered
	recovery      time.Duration // after the trigger's end, until goodput stays at least goodShare of the load; never
	wastedPct     float64       // processed requests whose attempt had already timed out, % of processed
	failedPct     float64       // calls that gave up or were refused, % of offered
	refusedPct    float64       // calls refused locally by a limiter, % of offered
	peak          int           // the longest queue
	p99           time.Duration // of the calls answered, from arrival to answer
}

func measure(r *result) measures {
	m := measures{peak: r.peak, recovery: recovery(r.good, r.arrived), p99: p99(r.latencies)}
	if r.offered > 0 {
		m.amplification = float64(r.sent) / float64(r.offered)
		m.failedPct = 100 * float64(r.failed) / float64(r.offered)
		m.refusedPct = 100 * float64(r.refused) / float64(r.offered)
	}
	if r.processed > 0 {
		m.wastedPct = 100 * float64(r.wasted) / float64(r.processed)
	}
	return m
}

// recovery is how long after the trigger's end goodput began to stay at
// least goodShare of the requests offered, over every window from then to
// the end of the run; never if the last window falls short.
func recovery(good, arrived []int32) time.Duration {
	w := int(recoveryWindow / bin)
	from, last := int(triggerTo/bin), len(good)-w
	var g, a int64
	for i := from; i < from+w; i++ {
		g, a = g+int64(good[i]), a+int64(arrived[i])
	}
	lastShort := -1
	for k := from; ; k++ {
		if float64(g) < goodShare*float64(a) {
			lastShort = k
		}
		if k == last {
			break
		}
		g += int64(good[k+w]) - int64(good[k])
		a += int64(arrived[k+w]) - int64(arrived[k])
	}
	switch {
	case lastShort == last:
		return never
	case lastShort < 0:
		return 0
	}
	return time.Duration(lastShort+1-from) * bin
}

func p99(ls []time.Duration) time.Duration {
	if len(ls) == 0 {
		return 0
	}
	s := slices.Clone(ls)
	slices.Sort(s)
	return s[(len(s)*99+99)/100-1]
}
