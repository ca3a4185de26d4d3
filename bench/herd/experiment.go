package main

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
)

// config is one experiment: every strategy at every client count, each point
// the mean of runs simulations.
type config struct {
	seed    uint64
	runs    int
	clients []int
}

// point is one strategy at one client count, averaged over the runs.
type point struct {
	strategy     string
	clients      int
	calls        float64 // mean writes the server saw
	completionMS float64 // mean time the last client finished, in milliseconds
}

// experiment runs every (strategy, client count) pair and returns the points
// in strategy order, then client order. Pairs run in parallel, one per core,
// but each run draws from its own generator, seeded from the seed, the
// strategy, the client count and the run's number, so the result depends on
// the seed alone.
func experiment(c config) []point {
	points := make([]point, len(strategies)*len(c.clients))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				points[j] = measure(c, j/len(c.clients), c.clients[j%len(c.clients)])
			}
		})
	}
	for j := range points {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	return points
}

// measure averages c.runs simulations of n clients under strategy si.
func measure(c config, si, n int) point {
	var calls int
	var complete time.Duration
	for r := range c.runs {
		stream := uint64(si)<<48 | uint64(n)<<24 | uint64(r)
		o := run(&strategies[si], n, newRand(c.seed, stream))
		calls += o.calls
		complete += o.complete
	}
	runs := float64(c.runs)
	return point{
		strategy:     strategies[si].name,
		clients:      n,
		calls:        float64(calls) / runs,
		completionMS: float64(complete) / float64(time.Millisecond) / runs,
	}
}

// newRand returns the generator of one run: PCG, seeded with the
// experiment's seed and the run's own stream.
func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
