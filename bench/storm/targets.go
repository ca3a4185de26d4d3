package main

import (
	"fmt"
	"io"
	"time"
)

// The targets. The default Retrier, shared by the process: under every
// trigger, its recovery no slower than without retries (within 10 %), and
// at most 5 % more attempts than requests. A fleet of a Retrier per process
// sharing one limiter with Timeouts (limit/redis's model): after a 10 s
// stall at 900/s, recovery within 15 s, no more attempts than requests, and
// at most 2 % of the dependency's work wasted.
const (
	defaultSlack   = 0.10
	defaultMaxAmpl = 1.05
	fleetRecovery  = 15 * time.Second
	fleetMaxAmpl   = 1.0
	fleetMaxWasted = 2.0 // %
	fleetLambda    = 900
	fleetTrigger   = stall
	defaultRow     = "retry-default"
	fleetRow       = "retry-fleet"
	noRetriesRow   = "no-retries"
)

var triggers = []scenario{{700, stall}, {900, stall}, {700, half}, {900, half}}

// target is one target checked on one measurement.
type target struct {
	what, measured string
	met            bool
}

// defaultTarget checks the default Retrier against no retries under sc.
func defaultTarget(def, none measures, sc scenario) target {
	met := def.amplification <= defaultMaxAmpl && def.recovery != never &&
		(none.recovery == never || float64(def.recovery) <= (1+defaultSlack)*float64(none.recovery))
	return target{
		what: fmt.Sprintf("default, shared: %s at %.0f/s: recovery ≤ no retries' + 10%%, amplification ≤ %.2f", sc.trig, sc.lambda, defaultMaxAmpl),
		measured: fmt.Sprintf("recovery %s (no retries %s), amplification %.3f",
			seconds(def.recovery), seconds(none.recovery), def.amplification),
		met: met,
	}
}

// fleetTarget checks the fleet sharing one limiter at 900/s after a stall.
func fleetTarget(m measures) target {
	met := m.recovery != never && m.recovery <= fleetRecovery && m.amplification <= fleetMaxAmpl && m.wastedPct <= fleetMaxWasted
	return target{
		what: fmt.Sprintf("fleet: stall at %d/s: recovery ≤ %v, amplification ≤ %.1f, wasted ≤ %.0f%%", fleetLambda, fleetRecovery, fleetMaxAmpl, fleetMaxWasted),
		measured: fmt.Sprintf("recovery %s, amplification %.3f, wasted %.2f%%",
			seconds(m.recovery), m.amplification, m.wastedPct),
		met: met,
	}
}

// targets checks every target on the summaries' medians.
func targets(ss []summary) []target {
	var out []target
	for _, sc := range triggers {
		def, ok1 := lookup(ss, defaultRow, shared, sc)
		none, ok2 := lookup(ss, noRetriesRow, noScope, sc)
		if ok1 && ok2 {
			out = append(out, defaultTarget(def.m, none.m, sc))
		}
	}
	if f, ok := lookup(ss, fleetRow, perClt, scenario{fleetLambda, fleetTrigger}); ok {
		out = append(out, fleetTarget(f.m))
	}
	return out
}

func printTargets(w io.Writer, ss []summary) {
	fmt.Fprintln(w, "\nTargets (medians of the seeds):")
	for _, t := range targets(ss) {
		met := "met"
		if !t.met {
			met = "NOT met"
		}
		fmt.Fprintf(w, "  %-7s %s — %s\n", met, t.what, t.measured)
	}
}
