package main

import (
	"time"

	"github.com/retrykit/retry/budget"
)

// ratio is budget.Ratio's rule with its defaults, on the run's clock.
// budget.Ratio reads the process's monotonic clock itself (Record calls
// time.Since, Allow time.Now) and has no clock to inject, so it cannot run
// on virtual time; this is its algorithm (budget/ratio.go), not its code:
// the window (RatioConfig.Window, 10 s) is cut into ten ratioSlices; Record
// counts a call's first attempt in the current slice when the attempt ends;
// Allow lets a retry through, and counts it, while the window's retries are
// below Percent (0.2) of its first attempts, rounded down, plus
// MinPerSecond (10) × the window in seconds.
type ratio struct {
	now     func() time.Duration
	calls   [ratioSlices]counter
	retries [ratioSlices]counter
}

const (
	ratioSlices  = 10
	ratioWindow  = 10 * time.Second
	ratioPercent = 0.2
	ratioReserve = 10 * 10 // MinPerSecond × the window's seconds
)

// counter counts the events of one slice, epoch telling which.
type counter struct {
	epoch int64
	n     int64
}

var _ budget.Budget = (*ratio)(nil)

func (r *ratio) epoch() int64 { return int64(r.now() / (ratioWindow / ratioSlices)) }

func (r *ratio) Record(a budget.Attempt) {
	if !a.Retry {
		add(&r.calls, r.epoch())
	}
}

func (r *ratio) Allow() bool {
	e := r.epoch()
	if int64(ratioPercent*float64(sum(&r.calls, e)))+ratioReserve-sum(&r.retries, e) < 1 {
		return false
	}
	add(&r.retries, e)
	return true
}

func add(cs *[ratioSlices]counter, e int64) {
	c := &cs[e%ratioSlices]
	if c.epoch != e {
		*c = counter{epoch: e}
	}
	c.n++
}

// sum counts the events of the ratioSlices within the window ending at slice e.
func sum(cs *[ratioSlices]counter, e int64) int64 {
	var n int64
	for _, c := range cs {
		if e-c.epoch < ratioSlices {
			n += c.n
		}
	}
	return n
}
