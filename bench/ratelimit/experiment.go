package main

import (
	"math/rand/v2"
	"runtime"
	"sync"
)

// config is one experiment: every strategy at every client count.
type config struct {
	seed    uint64
	jobs    int
	clients []int
}

// row is one strategy at one client count.
type row struct {
	strategy, scope          string
	clients, calls           int
	throttledPct, goodputPct float64
	completionS, p99S        float64
	refused, exhausted       int
	accepted                 int // jobs done
}

// experiment runs every (strategy, client count) pair, in parallel, each
// from its own generator seeded from the seed and the pair, so the result
// depends on the seed alone.
func experiment(c config) []row {
	rows := make([]row, len(strategies)*len(c.clients))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				si, n := j/len(c.clients), c.clients[j%len(c.clients)]
				rng := rand.New(rand.NewPCG(c.seed, uint64(si)<<32|uint64(n)))
				rows[j] = measure(&strategies[si], n, run(&strategies[si], model{clients: n, jobs: c.jobs}, rng))
			}
		})
	}
	for j := range rows {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	return rows
}

func measure(s *strategy, n int, r result) row {
	out := row{strategy: s.name, scope: s.scope, clients: n, calls: r.calls, refused: r.refused, exhausted: r.exhausted, accepted: r.accepted,
		completionS: r.complete.Seconds(), p99S: r.p99().Seconds()}
	if r.calls > 0 {
		out.throttledPct = 100 * float64(r.throttled) / float64(r.calls)
	}
	if r.complete > 0 {
		out.goodputPct = 100 * float64(r.accepted) / r.complete.Seconds() / limitRPS
	}
	return out
}
