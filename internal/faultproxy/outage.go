package faultproxy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Log records the calls of an outage test, for its three checks: no call
// blocks past its deadline plus a margin (Overshoot), and service recovers
// within a stated time after the outage ends (Recovery). (The third, that
// nothing acknowledged is lost, is the backend's to check: Log returns what
// was acknowledged.) Its methods are safe for concurrent use.
type Log struct {
	mu     sync.Mutex
	calls  []Call
	healed time.Time
}

// Call is one call a Log recorded.
type Call struct {
	Start, End time.Time
	Deadline   time.Duration // the deadline it was given, from Start
	Err        error         // what it returned
	// Noticed is when a goroutine waiting on the call's context saw it end,
	// if it ended before the call returned: on a loaded machine, later than
	// the deadline, as it is for the call's own goroutines.
	Noticed time.Time
}

// Do runs f with a context whose deadline is deadline from now, records
// the call, and returns it (f's error in its Err).
func (l *Log) Do(ctx context.Context, deadline time.Duration, f func(context.Context) error) Call {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	c := Call{Start: time.Now(), Deadline: deadline}
	noticed := make(chan time.Time, 1)
	go func() { <-ctx.Done(); noticed <- time.Now() }()
	c.Err = f(ctx)
	c.End = time.Now()
	cancel()
	if t := <-noticed; !t.After(c.End) { // noticed before the call returned
		c.Noticed = t
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	return c
}

// Overshoot returns how long c took past its deadline (negative if it
// returned before), counted from when the deadline could be noticed if that
// was later (Noticed): the scheduler's delay on a loaded machine is not the
// call's.
func (c Call) Overshoot() time.Duration {
	from := c.Start.Add(c.Deadline)
	if c.Noticed.After(from) {
		from = c.Noticed
	}
	return c.End.Sub(from)
}

// Healed marks now as the end of the outage.
func (l *Log) Healed() {
	l.mu.Lock()
	l.healed = time.Now()
	l.mu.Unlock()
}

// Calls returns the calls recorded so far, in the order they ended.
func (l *Log) Calls() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Call(nil), l.calls...)
}

// Overshoot returns the longest time a call took past its deadline (0 if
// none did), and that call; see Call.Overshoot.
func (l *Log) Overshoot() (time.Duration, Call) {
	var worst time.Duration
	var which Call
	for _, c := range l.Calls() {
		if d := c.Overshoot(); d > worst {
			worst, which = d, c
		}
	}
	return worst, which
}

// Lateness returns the longest time by which a call's deadline was noticed
// late (Call.Noticed): the scheduler's delay, which Overshoot leaves out.
func (l *Log) Lateness() time.Duration {
	var worst time.Duration
	for _, c := range l.Calls() {
		if !c.Noticed.IsZero() {
			worst = max(worst, c.Noticed.Sub(c.Start.Add(c.Deadline)))
		}
	}
	return worst
}

// Recovery returns how long after Healed service came back: to the end of
// the first success among the calls started after Healed (in the order they
// started) that no failure follows. ok is false if there is none (no
// Healed, or the last call started failed).
func (l *Log) Recovery() (d time.Duration, ok bool) {
	l.mu.Lock()
	healed := l.healed
	l.mu.Unlock()
	var after []Call
	for _, c := range l.Calls() {
		if !healed.IsZero() && !c.Start.Before(healed) {
			after = append(after, c)
		}
	}
	slices.SortFunc(after, func(a, b Call) int { return a.Start.Compare(b.Start) })
	for i := len(after) - 1; i >= 0 && after[i].Err == nil; i-- {
		d, ok = after[i].End.Sub(healed), true
	}
	return d, ok
}

// Through runs 4 callers, each calling call again and again with keys of
// its own ("k-<caller>-<n>"), pausing 10ms after a call that failed, as a
// caller does before its next request: for 300ms, then through an outage
// (start; 600ms; end, and Healed), and for after once it has ended. It
// returns when every caller's last call has returned. call makes its
// request with l.Do and returns its error.
func (l *Log) Through(start, end func(), after time.Duration, call func(key string) error) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := call(fmt.Sprintf("k-%d-%d", w, i)); err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	start()
	time.Sleep(600 * time.Millisecond)
	end()
	l.Healed()
	time.Sleep(after)
	close(stop)
	wg.Wait()
}
