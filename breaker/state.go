package breaker

import (
	"strconv"

	"github.com/sony/gobreaker/v2"
)

// State is a breaker's state: closed, half-open or open.
type State uint8

// The breaker's states.
const (
	StateClosed State = iota
	StateHalfOpen
	StateOpen
)

// String returns "closed", "half-open" or "open".
func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateHalfOpen:
		return "half-open"
	case StateOpen:
		return "open"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Counts are a breaker's counters, as ReadyToTrip sees them: cleared when
// the state changes, and every Interval while closed when one is set. An
// open breaker's counts are zero (it counts nothing while it rejects), so
// read them before it opens — in ReadyToTrip — to report the failures that
// opened it. Requests counts the calls let through, less those not counted
// (reported Excluded: cancelled, or nothing sent), so that a ratio of
// failures to requests is not diluted by them.
type Counts struct {
	Requests             uint32
	TotalSuccesses       uint32
	TotalFailures        uint32
	ConsecutiveSuccesses uint32
	ConsecutiveFailures  uint32
}

// StateOf converts a gobreaker state, for a Circuit built on gobreaker.
func StateOf(s gobreaker.State) State {
	switch s {
	case gobreaker.StateHalfOpen:
		return StateHalfOpen
	case gobreaker.StateOpen:
		return StateOpen
	}
	return StateClosed
}

// CountsOf converts gobreaker's counts, for a Circuit built on gobreaker.
func CountsOf(c gobreaker.Counts) Counts {
	requests := c.Requests - min(c.TotalExclusions, c.Requests)
	return Counts{requests, c.TotalSuccesses, c.TotalFailures, c.ConsecutiveSuccesses, c.ConsecutiveFailures}
}
