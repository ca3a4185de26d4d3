package main

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/bench/internal/eventq"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
)

// The model of the AWS Architecture Blog post "Exponential Backoff And
// Jitter" (2015): every network hop takes |Normal(10 ms, 2 ms)|, and backoff
// starts at 5 ms and is capped at 2 s.
const (
	hopMean = 10 * time.Millisecond
	hopSD   = 2 * time.Millisecond
	base    = 5 * time.Millisecond
	maxWait = 2 * time.Second
)

// schedule is the nominal backoff every backing-off strategy starts from.
var schedule = backoff.Exponential{Base: base, Factor: 2, MaxDelay: maxWait}

// A strategy is how a client waits after a failed write: a retry policy whose
// Delay is exactly the wait the retry loop would sleep.
type strategy struct {
	name string
	p    policy.Policy
}

// strategies are the five of the post, in the order of its graphs' legends.
// Every wait is computed by the library's own schedule and jitters.
var strategies = []strategy{
	{"nobackoff", policy.Policy{Backoff: backoff.Constant(0), Jitter: jitter.None{}, MaxDelay: maxWait}},
	{"exponential", policy.Policy{Backoff: schedule, Jitter: jitter.None{}, MaxDelay: maxWait}},
	{"full", policy.Policy{Backoff: schedule, Jitter: jitter.Full{}, MaxDelay: maxWait}},
	{"equal", policy.Policy{Backoff: schedule, Jitter: jitter.Equal{}, MaxDelay: maxWait}},
	{"decorrelated", policy.Policy{Backoff: schedule, Jitter: jitter.Decorrelated{Base: base, MaxDelay: maxWait}, MaxDelay: maxWait}},
}

// outcome is what one run measured: the writes the server saw and when the
// last client finished.
type outcome struct {
	calls    int
	complete time.Duration
}

// The events of the simulation. Each is a message arriving somewhere.
const (
	readAtServer  = iota // a client's read reaches the server
	readReply            // the server's answer (the row's version) reaches the client
	writeAtServer        // a client's conditional write reaches the server
	writeReply           // the server's verdict reaches the client
)

type event struct {
	at     time.Duration
	seq    uint64 // breaks ties in time, so that runs are deterministic
	kind   uint8
	client int32
	value  int64 // the version read, or 1 for a successful write
}

// client is one of the N clients: it must update the row once.
type client struct {
	attempt int           // failed writes so far
	prev    time.Duration // the last wait, for decorrelated jitter
}

// sim is one run: N clients, one server holding one row, and a queue of
// messages in flight, on virtual time.
type sim struct {
	rng     *rand.Rand
	p       *policy.Policy
	queue   *eventq.Queue[event]
	seq     uint64
	clients []client
	version int64
	out     outcome
}

// run simulates n clients that all start at time 0 under strategy s, with
// randomness from rng, and returns what the server saw.
func run(s *strategy, n int, rng *rand.Rand) outcome {
	m := sim{rng: rng, p: &s.p, clients: make([]client, n), queue: eventq.New(event.before, n)}
	for i := range n {
		m.send(0, readAtServer, int32(i), 0)
	}
	for m.queue.Len() > 0 {
		m.handle(m.queue.Pop())
	}
	return m.out
}

// send puts a message on the network at time t; it arrives one hop later.
func (m *sim) send(t time.Duration, kind uint8, c int32, value int64) {
	m.seq++
	m.queue.Push(event{at: t + m.hop(), seq: m.seq, kind: kind, client: c, value: value})
}

// hop is the duration of one network hop: |Normal(10 ms, 2 ms)|.
func (m *sim) hop() time.Duration {
	return time.Duration(math.Abs(float64(hopMean) + m.rng.NormFloat64()*float64(hopSD)))
}

func (m *sim) handle(e event) {
	switch e.kind {
	case readAtServer:
		m.send(e.at, readReply, e.client, m.version)
	case readReply:
		m.send(e.at, writeAtServer, e.client, e.value)
	case writeAtServer:
		m.out.calls++
		ok := int64(0)
		if e.value == m.version { // the row has not changed since the client read it
			m.version++
			ok = 1
		}
		m.send(e.at, writeReply, e.client, ok)
	case writeReply:
		if e.value == 1 {
			m.out.complete = max(m.out.complete, e.at)
			return
		}
		c := &m.clients[e.client]
		c.attempt++
		wait := m.p.Delay(c.attempt, c.prev, 0, m.rng.Uint64())
		c.prev = wait
		m.send(e.at+wait, readAtServer, e.client, 0)
	}
}

// before orders events by time, then by the order they were scheduled.
func (e event) before(o event) bool { return e.at < o.at || (e.at == o.at && e.seq < o.seq) }
