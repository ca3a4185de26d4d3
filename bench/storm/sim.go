package main

import (
	"math/rand/v2"
	"time"

	"github.com/retrykit/retry/bench/internal/eventq"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/policy"
)

// The load: open-loop Poisson arrivals spread over 1,000 clients, each
// request one call whose every attempt times out after 1 s, counted from
// when the attempt is sent (after any wait for a limiter). Every failure a
// client sees is a timeout; the calls are idempotent, so timeouts are
// retried. A run lasts 240 s.
const (
	clients = 1000
	timeout = time.Second
	horizon = 240 * time.Second
	// maxWait is the longest a call waits for a limiter before it is
	// refused locally: the policy's MaxDelay (no caller deadline is
	// modelled), as the Retrier's allowance is.
	maxWait = policy.DefaultMaxDelay
	// bin is the resolution of the goodput series.
	bin = 100 * time.Millisecond
)

// scenario is one load and trigger.
type scenario struct {
	lambda float64 // requests a second
	trig   trigger
}

// The events of the simulation.
const (
	arrive  = iota // a request arrives (the next one is drawn)
	gate           // a backoff ended: the request's next attempt asks the limiter, if any, and goes
	recheck        // a wait for the limiter's ticket ended: ask again, a cut may have pushed it back
	answer         // the attempt's answer arrives within its timeout
	expire         // the attempt timed out
)

type event struct {
	at   time.Duration
	seq  uint64 // breaks ties in time, so that runs are deterministic
	kind uint8
	req  int32
}

// request is one call and the state of its retries.
type request struct {
	start    time.Duration // when it arrived
	client   int32
	attempts int32         // attempts sent
	prev     time.Duration // the previous wait
	interval time.Duration // cenkalti: the current interval
	held     uint          // AWS: the retry tokens the attempt in flight holds
	ticket   limit.Ticket  // the attempt's place in the limiter's line
	waited   time.Duration // how long the attempt has waited for the limiter
	budget   budget.Budget // a Retrier built for this call alone: its budget
}

// behaviour is one row's client side: what it does after a timeout, what it
// learns from an answer, and the limiter its attempts wait for.
type behaviour interface {
	// limiter is the limiter q's attempts ask before they are sent; nil:
	// none.
	limiter(q *request) *limit.Adaptive
	// answered learns that q's last attempt was answered in time.
	answered(q *request)
	// timedOut learns that q's last attempt timed out at now, and returns
	// the wait before the next attempt, or false: the call fails.
	timedOut(q *request, now time.Duration) (time.Duration, bool)
}

// env is what a behaviour may use: the run's random numbers and clock.
type env struct {
	rng *rand.Rand
	now func() time.Duration
}

// result is what one run counted.
type result struct {
	offered, sent     int // requests arrived; attempts sent
	succeeded, failed int // calls answered; calls that gave up (refused included)
	refused           int // calls a limiter refused locally
	processed, wasted int // requests the dependency finished by the end; of them, those whose attempt had timed out
	peak              int // the longest queue
	good, arrived     []int32
	latencies         []time.Duration // of the calls answered, from their arrival
}

// sim is one run on virtual time.
type sim struct {
	sc    scenario
	load  *rand.Rand // the arrivals: the same for every row of a seed and scenario
	now   time.Duration
	queue *eventq.Queue[event]
	seq   uint64
	srv   server
	reqs  []request
	b     behaviour
	out   result
}

// run simulates row r under sc; seed picks the arrivals (shared by every
// row) and the clients' random numbers.
func run(r *row, sc scenario, seed uint64) result {
	nb := int(horizon / bin)
	x := &sim{sc: sc, load: rand.New(rand.NewPCG(seed, uint64(sc.lambda)<<8|uint64(sc.trig))),
		queue: eventq.New(event.before, 1<<12), srv: server{trig: sc.trig},
		reqs: make([]request, 0, int(sc.lambda*horizon.Seconds()*1.05)),
		out:  result{good: make([]int32, nb), arrived: make([]int32, nb)}}
	e := env{rng: rand.New(rand.NewPCG(seed, 1<<40|uint64(r.index))), now: func() time.Duration { return x.now }}
	x.b = r.make(e)
	x.at(x.nextArrival(), arrive, -1)
	for x.queue.Len() > 0 {
		ev := x.queue.Pop()
		if ev.at >= horizon {
			break
		}
		x.now = ev.at
		x.handle(ev)
	}
	x.out.peak = x.srv.peak
	return x.out
}

func (x *sim) at(t time.Duration, kind uint8, req int32) {
	x.seq++
	x.queue.Push(event{at: t, seq: x.seq, kind: kind, req: req})
}

// nextArrival draws when the next request arrives.
func (x *sim) nextArrival() time.Duration {
	return x.now + time.Duration(x.load.ExpFloat64()/x.sc.lambda*float64(time.Second))
}

func (x *sim) handle(e event) {
	switch e.kind {
	case arrive:
		x.arrive()
	case gate:
		x.admit(e.req)
	case recheck:
		q := &x.reqs[e.req]
		l := x.b.limiter(q)
		x.due(e.req, l, l.Due(q.ticket))
	case answer:
		x.answered(e.req)
	case expire:
		x.expired(e.req)
	}
}

// arrive starts a request and draws the next arrival.
func (x *sim) arrive() {
	id := int32(len(x.reqs))
	x.reqs = append(x.reqs, request{start: x.now, client: int32(x.load.IntN(clients))})
	x.out.offered++
	x.out.arrived[x.now/bin]++
	x.at(x.nextArrival(), arrive, -1)
	x.admit(id)
}

// admit runs the stage before an attempt: the limiter, if any, as Acquire
// does on a clock of its own (take a ticket, wait until it is due, asking
// again after each wait, within maxWait).
func (x *sim) admit(id int32) {
	q := &x.reqs[id]
	l := x.b.limiter(q)
	if l == nil {
		x.send(id)
		return
	}
	var wait time.Duration
	q.ticket, wait = l.Take()
	q.waited = 0
	x.due(id, l, wait)
}

// due sends request id's attempt if its ticket is due, waits for it, or
// refuses the call if the wait would pass maxWait (retry.ErrLimited: the
// attempt is never sent).
func (x *sim) due(id int32, l *limit.Adaptive, wait time.Duration) {
	q := &x.reqs[id]
	switch {
	case wait == 0:
		x.send(id)
	case q.waited+wait > maxWait:
		l.Return(q.ticket)
		x.out.refused++
		x.out.failed++
	default:
		q.waited += wait
		x.at(x.now+wait, recheck, id)
	}
}

// send sends an attempt: its timeout starts now.
func (x *sim) send(id int32) {
	q := &x.reqs[id]
	q.attempts++
	x.out.sent++
	done := x.srv.enqueue(x.now)
	late := done-x.now > timeout
	if done <= horizon {
		x.out.processed++
		if late {
			x.out.wasted++
		}
	}
	if late {
		x.at(x.now+timeout, expire, id)
		return
	}
	x.at(done, answer, id)
}

func (x *sim) answered(id int32) {
	q := &x.reqs[id]
	x.out.succeeded++
	x.out.good[x.now/bin]++
	x.out.latencies = append(x.out.latencies, x.now-q.start)
	x.b.answered(q)
}

func (x *sim) expired(id int32) {
	q := &x.reqs[id]
	wait, ok := x.b.timedOut(q, x.now)
	if !ok {
		x.out.failed++
		return
	}
	q.prev = wait
	x.at(x.now+wait, gate, id)
}
