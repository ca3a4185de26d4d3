package main

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// A model serves one attempt: it returns after the attempt's latency, or
// when ctx ends, whichever comes first.
type model interface {
	name() string
	serve(ctx context.Context, rng *rand.Rand) error
	start() // called inside the bubble before the calls
	stop()  // after them: every goroutine of the model ends
}

// hiccup draws a log-uniform latency in [lo, hi]: the paper's "hiccups"
// (daemons, garbage collection, queueing behind a slow request, §
// "Variability in latency"), equally likely at every order of magnitude.
func hiccup(rng *rand.Rand, lo, hi float64) time.Duration {
	return ms(lo * math.Pow(hi/lo, rng.Float64()))
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// heavy is the paper's case: most requests take a few milliseconds
// (1 ms + Exp(2 ms)), and 2% hit a hiccup of 50 ms to 2 s, independent from
// one request to the next (the hiccup is the server's, not the request's,
// so a copy sent elsewhere is most likely fast). Unhedged, its 99.9th
// percentile is near the paper's 1,800 ms.
type heavy struct{}

func (heavy) name() string { return "heavy-tailed" }
func (heavy) start()       {}
func (heavy) stop()        {}
func (heavy) serve(ctx context.Context, rng *rand.Rand) error {
	d := ms(1 + rng.ExpFloat64()*2)
	if rng.Float64() < 0.02 {
		d = hiccup(rng, 50, 2000)
	}
	return sleep(ctx, d)
}

// light is a service without hiccups: 5 ms + Exp(1 ms). Its tail is only
// a few milliseconds beyond its median, so a hedge, which must wait for the
// p95 before it starts, cannot gain much (the paper: hedging pays when the
// variability is in the servers, not in the work).
type light struct{}

func (light) name() string { return "light-tailed" }
func (light) start()       {}
func (light) stop()        {}
func (light) serve(ctx context.Context, rng *rand.Rand) error {
	return sleep(ctx, ms(5+rng.ExpFloat64()))
}

// queueing is a pool of servers, each a FIFO queue served one request at a
// time: service takes 1 ms + Exp(2 ms), and 2% of services are hiccups of
// 50 to 500 ms that hold up everything queued behind them (a pause). Calls
// arrive as a Poisson stream sized for 50% utilisation before hedging; a
// hedge goes to another server chosen at random and adds to its queue — the
// load the paper warns about. A cancelled request still queued is dropped
// (as the paper's tied requests are); one in service runs to its end.
type queueing struct {
	servers int
	queues  []chan *request
	wg      sync.WaitGroup
}

type request struct {
	service   time.Duration
	done      chan struct{}
	mu        sync.Mutex
	cancelled bool
}

// meanService is 0.98·3 ms + 0.02·(500−50)/ln(10) ms.
const meanService = 0.98*3 + 0.02*450/math.Ln10

func (q *queueing) name() string { return "queueing" }

func (q *queueing) start() {
	q.queues = make([]chan *request, q.servers)
	for i := range q.queues {
		q.queues[i] = make(chan *request, 1<<14)
		q.wg.Go(func() { serveQueue(q.queues[i]) })
	}
}

func (q *queueing) stop() {
	for _, c := range q.queues {
		close(c)
	}
	q.wg.Wait()
}

func serveQueue(c chan *request) {
	for req := range c {
		req.mu.Lock()
		skip := req.cancelled
		req.mu.Unlock()
		if !skip {
			time.Sleep(req.service)
		}
		close(req.done)
	}
}

func (q *queueing) serve(ctx context.Context, rng *rand.Rand) error {
	req := &request{service: ms(1 + rng.ExpFloat64()*2), done: make(chan struct{})}
	if rng.Float64() < 0.02 {
		req.service = hiccup(rng, 50, 500)
	}
	q.queues[rng.IntN(q.servers)] <- req
	select {
	case <-req.done:
		return nil
	case <-ctx.Done():
		req.mu.Lock()
		req.cancelled = true
		req.mu.Unlock()
		return ctx.Err()
	}
}

// interarrival is the mean time between calls: light traffic for the
// independent models, 50% utilisation of the pool for the queueing one.
func interarrival(m model, keys int) time.Duration {
	if q, ok := m.(*queueing); ok {
		return ms(meanService * float64(keys) / (0.5 * float64(q.servers)))
	}
	return ms(0.1 * float64(keys))
}
