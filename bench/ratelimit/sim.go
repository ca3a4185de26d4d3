package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/bench/internal/eventq"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/limit"
)

// The model: C clients, each one sequential worker, share jobs
// of one API call each against an API that admits R requests a second (a
// token bucket of capacity R, full at the start) and answers 429 with
// Retry-After: 1 beyond it. A network hop takes 10 ms ± 2.5 ms (uniform);
// a throttled call waits the Retry-After plus full-jitter backoff (base
// 100 ms, cap 20 s) and gives up after 10 attempts. A limiter's wait longer
// than maxWait (the policy's MaxDelay) is a local refusal, as is a
// throttler's refusal: the job ends without being sent again.
const (
	limitRPS    = 100.0
	bucketSize  = 100.0
	retryAfter  = time.Second
	hopMean     = 10 * time.Millisecond
	hopSpread   = 2500 * time.Microsecond
	maxAttempts = 10
	maxWait     = 20 * time.Second
)

var schedule = backoff.Exponential{Base: 100 * time.Millisecond, Factor: 2, MaxDelay: 20 * time.Second}

// model is one run's parameters.
type model struct {
	clients, jobs int
}

// result is what one run measured.
type result struct {
	calls, throttled, accepted, refused, exhausted int
	complete                                       time.Duration
	latencies                                      []time.Duration // per finished job, from its start
}

// The events of the simulation.
const (
	send     = iota // a client sends an attempt (after any wait)
	atServer        // the attempt reaches the server
	reply           // the server's answer reaches the client
	ask             // a client asks its limiter again (the AWS port's loop)
	retry           // a client's backoff ended: the next attempt of its job
	recheck         // a client's wait for its ticket ended
)

type event struct {
	at     time.Duration
	seq    uint64 // breaks ties in time, so that runs are deterministic
	kind   uint8
	client int32
	ok     bool // reply: accepted
}

// worker is one client's state: the job it is on.
type worker struct {
	start   time.Duration // when the job started
	attempt int           // attempts made for the job
	prev    time.Duration
	busy    bool

	ticket      limit.Ticket  // the attempt's place in an Adaptive's line
	waitedTotal time.Duration // the attempt's wait for its ticket so far
}

// sim is one run on virtual time.
type sim struct {
	m       model
	rng     *rand.Rand
	now     time.Duration
	queue   *eventq.Queue[event]
	seq     uint64
	workers []worker
	next    int // the next job to start
	tokens  float64
	filled  time.Duration
	lim     func(c int32) limit.Limiter // nil: retry only
	out     result
}

// run simulates the model under strategy s with randomness from rng.
func run(s *strategy, m model, rng *rand.Rand) result {
	x := &sim{m: m, rng: rng, workers: make([]worker, m.clients), tokens: bucketSize, queue: eventq.New(event.before, m.clients)}
	x.lim = s.make(m.clients, func() time.Duration { return x.now }, rng)
	for c := range m.clients {
		x.startJob(int32(c))
	}
	for x.queue.Len() > 0 {
		e := x.queue.Pop()
		x.now = e.at
		x.handle(e)
	}
	return x.out
}

func (x *sim) at(t time.Duration, kind uint8, c int32, ok bool) {
	x.seq++
	x.queue.Push(event{at: t, seq: x.seq, kind: kind, client: c, ok: ok})
}

// hop is one network hop: uniform in 10 ms ± 2.5 ms.
func (x *sim) hop() time.Duration {
	return hopMean - hopSpread + time.Duration(x.rng.Int64N(int64(2*hopSpread)))
}

func (x *sim) startJob(c int32) {
	w := &x.workers[c]
	if x.next >= x.m.jobs {
		w.busy = false
		return
	}
	x.next++
	*w = worker{start: x.now, busy: true}
	x.attempt(c)
}

// attempt asks the limiter, if any, then sends.
func (x *sim) attempt(c int32) {
	var l limit.Limiter
	if x.lim != nil {
		l = x.lim(c)
	}
	switch l := l.(type) {
	case nil:
		x.at(x.now, send, c, false)
	case *awsPort:
		x.askAWS(c, l)
	case *limit.Adaptive:
		// Acquire's own loop, on the simulated clock: take a ticket, wait
		// until it is due — asking again after each wait, since a cut may
		// have pushed it back — within maxWait.
		var wait time.Duration
		x.workers[c].ticket, wait = l.Take()
		x.due(c, l, wait)
	default:
		if !l.Acquire(context.Background(), maxWait) {
			x.out.refused++
			x.finish(c)
			return
		}
		x.at(x.now, send, c, false)
	}
}

// due sends client c's attempt if its ticket is due, or waits for it.
func (x *sim) due(c int32, l *limit.Adaptive, wait time.Duration) {
	w := &x.workers[c]
	switch {
	case wait == 0:
		x.at(x.now, send, c, false)
	case w.waitedTotal+wait > maxWait:
		l.Return(w.ticket)
		x.out.refused++
		x.finish(c)
	default:
		w.waitedTotal += wait
		x.at(x.now+wait, recheck, c, false)
	}
}

// askAWS is the AWS SDK's GetAttemptToken: ask, sleep the wait it returns,
// ask again, until a token comes. Its waits are not bounded.
func (x *sim) askAWS(c int32, a *awsPort) {
	if ok, wait := a.acquire(); !ok {
		x.at(x.now+max(wait, time.Microsecond), ask, c, false)
		return
	}
	x.at(x.now, send, c, false)
}

func (x *sim) handle(e event) {
	switch e.kind {
	case retry:
		x.attempt(e.client)
	case recheck:
		l := x.lim(e.client).(*limit.Adaptive)
		x.due(e.client, l, l.Due(x.workers[e.client].ticket))
	case ask:
		x.askAWS(e.client, x.lim(e.client).(*awsPort))
	case send:
		x.workers[e.client].waitedTotal = 0
		x.workers[e.client].attempt++
		x.out.calls++
		x.at(x.now+x.hop(), atServer, e.client, false)
	case atServer:
		x.at(x.now+x.hop(), reply, e.client, x.admit())
	case reply:
		x.replied(e.client, e.ok)
	}
}

// admit is the server's token bucket.
func (x *sim) admit() bool {
	x.tokens = min(bucketSize, x.tokens+(x.now-x.filled).Seconds()*limitRPS)
	x.filled = x.now
	if x.tokens >= 1 {
		x.tokens--
		return true
	}
	return false
}

func (x *sim) replied(c int32, ok bool) {
	o := limit.Outcome{Result: limit.Accepted}
	if !ok {
		o = limit.Outcome{Result: limit.Throttled, RetryAfter: retryAfter}
		x.out.throttled++
	}
	if x.lim != nil {
		x.lim(c).Record(context.Background(), o)
	}
	w := &x.workers[c]
	switch {
	case ok:
		x.out.accepted++
		x.finish(c)
	case w.attempt >= maxAttempts:
		x.out.exhausted++
		x.finish(c)
	default:
		wait := retryAfter + jitter.Full{}.Apply(schedule.Delay(w.attempt), w.prev, x.rng.Uint64())
		w.prev = wait
		x.at(x.now+wait, retry, c, false)
	}
}

// finish ends the worker's job and starts its next one.
func (x *sim) finish(c int32) {
	x.out.latencies = append(x.out.latencies, x.now-x.workers[c].start)
	x.out.complete = max(x.out.complete, x.now)
	x.startJob(c)
}

// p99 is the 99th percentile of the job latencies.
func (r *result) p99() time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[(len(s)*99+99)/100-1]
}
