package limit

import "time"

// meterSize is how many measurements a meter keeps: a Window's worth at
// one every Window/10, with room for the extra ones a cut takes.
const meterSize = 16

// sample is the cumulative counts at one time.
type sample struct {
	t                  time.Duration
	accepted, answered int64
}

// meter measures rates from cumulative counts sampled every step. It is
// not safe for concurrent use: its owner's lock guards it.
type meter struct {
	window, step time.Duration
	ring         [meterSize]sample
	n            int // samples taken
}

func (m *meter) init(window time.Duration) {
	m.window, m.step = window, window/10
}

// add takes a sample at now if the last one is at least a step old, or if
// force is set.
func (m *meter) add(now time.Duration, accepted, answered int64, force bool) {
	if m.n > 0 && !force && now-m.last().t < m.step {
		return
	}
	m.ring[m.n%meterSize] = sample{now, accepted, answered}
	m.n++
}

func (m *meter) last() sample { return m.ring[(m.n-1)%meterSize] }

// since returns the newest sample at or before from, or the oldest kept.
func (m *meter) since(from time.Duration) sample {
	oldest := max(m.n-meterSize, 0)
	for i := m.n - 1; i > oldest; i-- {
		if s := m.ring[i%meterSize]; s.t <= from {
			return s
		}
	}
	return m.ring[oldest%meterSize]
}

// rates returns the accepted and answered rates, per second, between the
// sample at or before from (at most a window back) and now, where the
// counts are accepted and answered, and the time they were measured over.
func (m *meter) rates(now, from time.Duration, accepted, answered int64) (float64, float64, time.Duration) {
	if m.n == 0 {
		return 0, 0, 0
	}
	s := m.since(max(from, now-m.window))
	span := now - s.t
	if span <= 0 {
		return 0, 0, 0
	}
	return float64(accepted-s.accepted) / seconds(span), float64(answered-s.answered) / seconds(span), span
}
