// Package eventq is the event queue of the bench's discrete-event
// simulations (herd, ratelimit, storm): a binary min-heap ordered by a caller's
// before function — by time, then by the order events were scheduled, so
// that a run is deterministic for its seed.
package eventq

// Queue is a min-heap of events. The zero Queue is not usable: make one
// with New.
type Queue[E any] struct {
	h      []E
	before func(a, b E) bool
}

// New returns an empty queue ordered by before, with room for n events.
func New[E any](before func(a, b E) bool, n int) *Queue[E] {
	return &Queue[E]{h: make([]E, 0, n), before: before}
}

// Len returns the number of events queued.
func (q *Queue[E]) Len() int { return len(q.h) }

// Push queues e.
func (q *Queue[E]) Push(e E) {
	h := append(q.h, e)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.before(h[i], h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	q.h = h
}

// Pop removes and returns the first event. The queue must not be empty.
func (q *Queue[E]) Pop() E {
	h := q.h
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && q.before(h[l], h[small]) {
			small = l
		}
		if r < len(h) && q.before(h[r], h[small]) {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	q.h = h
	return top
}
