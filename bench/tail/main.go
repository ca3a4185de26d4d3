// Command tail reproduces, on the retry library's own hedging code, the
// experiment behind "The Tail at Scale" (Jeffrey Dean and Luiz André
// Barroso, Communications of the ACM 56(2), February 2013): hedged requests
// — send a second copy of a request that has not answered within its 95th
// percentile of latency, use whichever answers first — cut the tail of a
// service whose slowness is transient, for a few per cent more requests.
// The paper's BigTable benchmark read 1,000 keys over 100 servers; a hedge
// after 10 ms cut the 99.9th percentile from 1,800 ms to 74 ms for 2% more
// requests.
//
// Three latency models (models.go), two workloads (single calls; one
// operation reading 1,000 keys over 100 servers, done when all are back) and
// several strategies (no hedging, a fixed 10 ms delay, the adaptive p95, up
// to two hedges, ...) each run thousands of calls through a retry.Hedger.
// It prints a table, and writes results.csv and tail.png beside this file.
//
// Virtual time. The calls run real library code — its timers, goroutines
// and contexts — inside a testing/synctest bubble, whose clock advances only
// when every goroutine in it is blocked: a second of simulated traffic takes
// milliseconds. synctest needs a *testing.T, so main hands the simulation to
// testing.Main, as a one-test program. (The alternative, a clock seam in the
// root package's hedged loop, would put a test-only indirection on its hot
// path.) Every random number is drawn from a generator seeded by -seed, the
// call and the attempt, so a run is deterministic for a seed, whatever order
// the goroutines of one instant run in.
//
// Usage:
//
//	go run ./tail [-seed 1] [-calls 20000] [-fanout 50] [-only model] [-out dir]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/synctest"
)

var (
	seed   = flag.Uint64("seed", 1, "seed of every random number")
	calls  = flag.Int("calls", 20000, "single calls per model and strategy")
	fanout = flag.Int("fanout", 50, "fan-out operations (1,000 keys each) per model and strategy")
	only   = flag.String("only", "", "run only the models whose name contains this")
	out    = flag.String("out", sourceDir(), "directory for results.csv and tail.png")
)

func main() {
	testing.Init()
	flag.Parse()
	if *calls < 1000 || *fanout < 1 {
		fmt.Fprintln(os.Stderr, "tail: -calls must be at least 1000 and -fanout at least 1")
		os.Exit(2)
	}
	testing.Main(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "TailAtScale", F: func(t *testing.T) {
			cfg := config{seed: *seed, calls: *calls, fanout: *fanout, only: *only}
			var rows []row
			synctest.Test(t, func(t *testing.T) { rows = experiment(cfg, os.Stdout) })
			if err := write(*out, rows); err != nil {
				t.Fatal(err)
			}
		}}}, nil, nil)
}

// sourceDir is the directory of this file when run from a checkout, else
// the working directory.
func sourceDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		if _, err := os.Stat(filepath.Dir(file)); err == nil {
			return filepath.Dir(file)
		}
	}
	return "."
}
