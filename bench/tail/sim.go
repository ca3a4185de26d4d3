package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/hedge"
)

type config struct {
	seed          uint64
	calls, fanout int
	only          string // run the models whose name contains it
}

// strategy builds a fresh caller for one run: a new Adaptive learns from
// that run only.
type strategy struct {
	name  string
	build func() (caller, hedge.Delay)
}

// caller makes a call: a *retry.Hedger, or a *retry.Retrier without hedging.
type caller interface {
	Run(ctx context.Context, op func(context.Context) error) (retry.Stats, error)
}

// hedging hedges the calls of an idempotent Retrier after d, at most
// inFlight attempts in all.
func hedging(d hedge.Delay, inFlight int) (caller, hedge.Delay) {
	r, err := retry.New(retry.Idempotent(), retry.WithMaxAttempts(inFlight))
	if err != nil {
		panic(err)
	}
	h, err := retry.NewHedger(r, d, inFlight)
	if err != nil {
		panic(err)
	}
	return h, d
}

func adaptive(q float64) hedge.Delay {
	a, err := hedge.NewAdaptive(hedge.AdaptiveConfig{Percentile: q, Cap: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	return a
}

var strategies = []strategy{
	{"none", func() (caller, hedge.Delay) {
		r, _ := retry.New(retry.Idempotent(), retry.WithMaxAttempts(1))
		return r, nil
	}},
	{"fixed 10ms", func() (caller, hedge.Delay) { return hedging(hedge.Fixed(10*time.Millisecond), 2) }},
	{"adaptive p95", func() (caller, hedge.Delay) { return hedging(adaptive(0.95), 2) }},
	{"adaptive p95, 2 hedges", func() (caller, hedge.Delay) { return hedging(adaptive(0.95), 3) }},
	{"adaptive p99", func() (caller, hedge.Delay) { return hedging(adaptive(0.99), 2) }},
	{"fixed 10ms, 2 hedges", func() (caller, hedge.Delay) { return hedging(hedge.Fixed(10*time.Millisecond), 3) }},
	{"fixed 10ms, 3 hedges", func() (caller, hedge.Delay) { return hedging(hedge.Fixed(10*time.Millisecond), 4) }},
}

// row is one line of results.csv.
type row struct {
	model, workload, strategy string
	delayMS                   float64 // the hedging delay at the end of the run
	p50, p99, p999            float64 // milliseconds
	extraPct                  float64 // attempts beyond one per key, in % of keys
}

func experiment(c config, w io.Writer) []row {
	models := []func() model{
		func() model { return heavy{} },
		func() model { return &queueing{servers: 100} },
		func() model { return light{} },
	}
	var rows []row
	fmt.Fprintf(w, "%-12s %-7s %-24s %8s %9s %9s %9s %7s\n", "model", "load", "strategy", "delay", "p50", "p99", "p99.9", "extra")
	for mi, mk := range models {
		if !strings.Contains(mk().name(), c.only) {
			continue
		}
		for _, wl := range []struct {
			name      string
			ops, keys int
		}{{"single", c.calls, 1}, {"fan-out", c.fanout, 1000}} {
			for si, s := range strategies {
				m := mk()
				r := run(m, s, wl.ops, wl.keys, c.seed^uint64(mi<<16|si<<8))
				r.workload = wl.name
				fmt.Fprintf(w, "%-12s %-7s %-24s %6.1fms %7.1fms %7.1fms %7.1fms %6.1f%%\n",
					r.model, r.workload, r.strategy, r.delayMS, r.p50, r.p99, r.p999, r.extraPct)
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// run sends ops operations of keys calls each, arriving as a Poisson
// stream, and measures each operation from its start to its last answer.
// The first tenth of the operations warm the adaptive delay up and are not
// measured.
func run(m model, s strategy, ops, keys int, seed uint64) row {
	m.start()
	defer m.stop()
	r, d := s.build()
	arrivals := rand.New(rand.NewPCG(seed, 0))
	lat := make([]time.Duration, ops)
	var attempts atomic.Int64
	var wg sync.WaitGroup
	warm := ops / 10
	for i := range ops + warm {
		time.Sleep(time.Duration(arrivals.ExpFloat64() * float64(interarrival(m, keys))))
		wg.Go(func() {
			t0 := time.Now()
			n := operation(m, r, keys, seed, uint64(i))
			if i >= warm {
				lat[i-warm] = time.Since(t0)
				attempts.Add(int64(n))
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	res := row{model: m.name(), strategy: s.name, p50: pct(lat, 0.5), p99: pct(lat, 0.99), p999: pct(lat, 0.999),
		extraPct: 100 * float64(attempts.Load()-int64(ops*keys)) / float64(ops*keys)}
	if d != nil {
		res.delayMS = float64(d.Next()) / float64(time.Millisecond)
	}
	return res
}

// operation makes keys calls at once and returns the attempts they took.
// Key k starts k nanoseconds after the first, so that no two requests
// reach a server's queue at the same instant: the order of goroutines
// woken together would otherwise decide the order of the queue.
func operation(m model, r caller, keys int, seed, op uint64) int {
	if keys == 1 {
		return call(m, r, seed, op<<10)
	}
	var wg sync.WaitGroup
	var attempts atomic.Int64
	for k := range keys {
		wg.Go(func() {
			time.Sleep(time.Duration(k))
			attempts.Add(int64(call(m, r, seed, op<<10|uint64(k))))
		})
	}
	wg.Wait()
	return int(attempts.Load())
}

// call is one hedged call; attempt n of it draws from a generator seeded by
// (seed, id, n), so the draws do not depend on which goroutine runs first.
func call(m model, r caller, seed, id uint64) int {
	var n atomic.Uint64
	st, err := r.Run(context.Background(), func(ctx context.Context) error {
		rng := rand.New(rand.NewPCG(seed, id<<4|n.Add(1)))
		return m.serve(ctx, rng)
	})
	if err != nil {
		panic(err)
	}
	return st.Attempts
}

// pct is the q-quantile of sorted values, in milliseconds.
func pct(sorted []time.Duration, q float64) float64 {
	i := min(int(q*float64(len(sorted))), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Millisecond)
}
