package chaos

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Config is a scenario: which faults calls suffer, and when. Its zero value
// injects nothing.
type Config struct {
	// Seed seeds every random choice: the same seed gives the same faults
	// in the same order of calls. 0 is a seed like any other.
	Seed uint64
	// Rules are asked in order for each call. A Latency or LatencyTail rule
	// that applies delays the call and the next rules are asked; any other
	// rule that applies decides the call's fate, and the rules after it are
	// not asked. A call no rule decides reaches the target untouched.
	Rules []Rule
}

// Rule says which calls suffer a fault: those within its schedule (by
// default, all), each with probability Rate (by default, every one).
type Rule struct {
	// Fault is what a call the rule applies to suffers. Set Fault or
	// Script, not both.
	Fault Fault
	// Script lists, in order, what the calls the rule applies to suffer:
	// the first such call Script[0], the next Script[1], and so on. Once
	// the script has run out, the rule applies to no call. A zero Fault in
	// it lets its call through untouched.
	Script []Fault
	// Rate is the probability, in [0, 1], that the rule applies to a call
	// within its schedule. 0 means 1: every call.
	Rate float64
	// Start, For and Every schedule the rule, from the moment New returned:
	// it applies from Start on, for For (0: for ever), and, when Every is
	// positive, again every Every — bursts of For that start every Every.
	Start, For, Every time.Duration
}

// Stats counts what a Scenario did while it was enabled.
type Stats struct {
	Calls  int64 // calls through the scenario
	Faults int64 // calls that suffered a fault, latency included
	// Processed counts the calls the target received: the wrapped function
	// ran, or the base transport returned a response. It is what the server
	// would have processed, whether or not the caller saw its answer.
	Processed int64
	// Lost counts the processed calls whose answer the caller never got
	// whole: reset after send, timed out, body truncated or stalled.
	Lost int64
}

// Scenario injects a Config's faults into the calls that go through its
// wrappers (Wrap, WrapValue), its transports (Transport) and the gRPC
// interceptor of the grpcretry module. It is safe for concurrent use. A
// Scenario is enabled when New returns it; disabled (Enable(false)), or nil,
// it lets every call through at the cost of one atomic load, without
// allocating.
type Scenario struct {
	off   atomic.Bool
	seed  uint64
	rules []rule
	start time.Time
	n     atomic.Uint64 // calls drawn so far: each call's index
	stats struct{ calls, faults, processed, lost atomic.Int64 }
}

type rule struct {
	Rule
	pos atomic.Int64 // the script's next step
}

// New returns an enabled Scenario for c, whose schedules start now (in a
// testing/synctest bubble, the bubble's now). A bad rule is reported as a
// *retry.InvalidError naming it, e.g. "chaos.Config.Rules[1].Rate".
func New(c Config) (*Scenario, error) {
	s := &Scenario{seed: c.Seed, rules: make([]rule, len(c.Rules)), start: time.Now()}
	for i, r := range c.Rules {
		if err := checkRule(i, r); err != nil {
			return nil, err
		}
		s.rules[i].Rule = r
		s.rules[i].Script = append([]Fault(nil), r.Script...)
	}
	return s, nil
}

func checkRule(i int, r Rule) error {
	name := fmt.Sprintf("chaos.Config.Rules[%d].", i)
	switch {
	case (r.Fault.kind == none) == (r.Script == nil):
		return argerr.Field(name+"Script", r.Script, "set Fault or Script, not both nor neither")
	case !(r.Rate >= 0 && r.Rate <= 1):
		return argerr.Field(name+"Rate", r.Rate, "must be in [0, 1]")
	case r.Start < 0 || r.For < 0 || r.Every < 0:
		return argerr.Field(name+"Start", fmt.Sprintf("%v, For %v, Every %v", r.Start, r.For, r.Every), "must not be negative")
	case r.Every > 0 && (r.For == 0 || r.For >= r.Every):
		return argerr.Field(name+"For", r.For, fmt.Sprintf("must be positive and shorter than Every (%v)", r.Every))
	}
	if why := r.Fault.check(); why != "" {
		return argerr.Field(name+"Fault", r.Fault, why)
	}
	for j, f := range r.Script {
		if why := f.check(); why != "" {
			return argerr.Field(fmt.Sprintf("%sScript[%d]", name, j), f, why)
		}
	}
	return nil
}

// Enable switches s on or off; calls already under way keep their faults.
func (s *Scenario) Enable(on bool) {
	if s != nil {
		s.off.Store(!on)
	}
}

// Enabled reports whether s injects faults: false for a nil Scenario.
func (s *Scenario) Enabled() bool { return s != nil && !s.off.Load() }

// Stats returns what s counted so far; a nil Scenario counted nothing.
func (s *Scenario) Stats() Stats {
	if s == nil {
		return Stats{}
	}
	st := &s.stats
	return Stats{Calls: st.calls.Load(), Faults: st.faults.Load(), Processed: st.processed.Load(), Lost: st.lost.Load()}
}

// plan is what one call suffers: a wait, then a fault (zero: none).
type plan struct {
	wait  time.Duration
	fault Fault
}

// next draws the plan of the next call. The n-th call's random numbers are
// a pure function of (seed, n, rule), so that concurrent calls draw without
// a lock and the same seed repeats the same faults in the same order.
func (s *Scenario) next() plan {
	n := s.n.Add(1) - 1
	s.stats.calls.Add(1)
	var p plan
	at := time.Since(s.start)
	for i := range s.rules {
		f, ok := s.rules[i].draw(at, uniform(s.seed, n, uint64(i)))
		if !ok {
			continue
		}
		if f.kind != latency && f.kind != latencyTail {
			p.fault = f
			break
		}
		p.wait += f.delay(uniform(s.seed^0x5bd1e995, n, uint64(i)))
	}
	if p.wait > 0 || p.fault.kind != none {
		s.stats.faults.Add(1)
	}
	return p
}

// draw returns the fault the rule gives a call made at, and whether it
// applies; u is the call's uniform number in (0, 1].
func (r *rule) draw(at time.Duration, u float64) (Fault, bool) {
	if !r.scheduled(at) || (r.Rate > 0 && u > r.Rate) {
		return Fault{}, false
	}
	if r.Script == nil {
		return r.Fault, true
	}
	k := r.pos.Add(1) - 1
	if k >= int64(len(r.Script)) {
		r.pos.Store(int64(len(r.Script))) // no wrap-around, however many calls
		return Fault{}, false
	}
	return r.Script[k], true
}

func (r *rule) scheduled(at time.Duration) bool {
	at -= r.Start
	switch {
	case at < 0:
		return false
	case r.Every > 0:
		return at%r.Every < r.For
	}
	return r.For == 0 || at < r.For
}

// uniform returns a number in (0, 1] that depends only on its arguments:
// splitmix64's finaliser over the three mixed together.
func uniform(seed, n, i uint64) float64 {
	x := seed + n*0x9e3779b97f4a7c15 + (i+1)*0xd1b54a32d192ed03
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11+1) / (1 << 53)
}

// sleep waits d on a real timer, or until ctx ends, with its cause. A nil
// ctx never ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
