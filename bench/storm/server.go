package main

import "time"

// The dependency: capacity 1,000 requests a second, as 10 workers taking
// 10 ms each, fed by one unbounded FIFO queue. It never drops a request: one
// whose client has given up is still processed when its turn comes.
const (
	workers = 10
	service = 10 * time.Millisecond
)

// The trigger: from triggerFrom to triggerTo the dependency stalls (every
// worker stops, even mid-request) or runs at half speed.
const (
	triggerFrom = 30 * time.Second
	triggerTo   = 40 * time.Second
)

// trigger is what happens to the dependency between triggerFrom and
// triggerTo.
type trigger uint8

const (
	noTrigger trigger = iota
	stall             // no progress at all
	half              // half the capacity: each request takes twice as long
)

func (t trigger) String() string {
	return [...]string{"none", "stall", "half"}[t]
}

// speed is the share of its normal pace at which a worker works during the
// trigger.
func (t trigger) speed() float64 {
	return [...]float64{1, 0, 0.5}[t]
}

// server is the dependency. As its queue is FIFO and its workers identical,
// a request's completion is known when it is enqueued: it starts when the
// earliest worker is free (and not before it arrives) and ends once 10 ms of
// work is done at the speed of the moment. So the server needs no events of
// its own.
type server struct {
	trig  trigger
	free  [workers]time.Duration // when each worker is next free
	queue []time.Duration        // start times of the requests enqueued and not started, in order
	head  int
	peak  int // the longest queue seen
}

// enqueue takes a request at time at and returns when it will be done.
func (s *server) enqueue(at time.Duration) time.Duration {
	w := 0
	for i := 1; i < workers; i++ {
		if s.free[i] < s.free[w] {
			w = i
		}
	}
	start := max(at, s.free[w])
	done := s.finish(start, service)
	s.free[w] = done
	s.count(at, start)
	return done
}

// count keeps the queue length at time at, after a request that starts at
// start was enqueued: starts are in order, so the requests not started by
// at are the tail of the list.
func (s *server) count(at, start time.Duration) {
	for s.head < len(s.queue) && s.queue[s.head] <= at {
		s.head++
	}
	if s.head > 4096 && s.head*2 > len(s.queue) {
		s.queue = append(s.queue[:0], s.queue[s.head:]...)
		s.head = 0
	}
	if start > at {
		s.queue = append(s.queue, start)
	}
	s.peak = max(s.peak, len(s.queue)-s.head)
}

// finish returns when work started at start is done, the trigger's speed
// applying between triggerFrom and triggerTo.
func (s *server) finish(start, work time.Duration) time.Duration {
	if s.trig == noTrigger || start >= triggerTo || start+work <= triggerFrom {
		return start + work
	}
	t := start
	if t < triggerFrom { // the part done before the trigger
		work -= triggerFrom - t
		t = triggerFrom
	}
	if v := s.trig.speed(); v > 0 {
		if slow := time.Duration(float64(work) / v); t+slow <= triggerTo {
			return t + slow
		}
		work -= time.Duration(float64(triggerTo-t) * v)
	}
	return triggerTo + work
}
