package classify

import "time"

// said wraps an error with what the server said about retrying it.
type said struct {
	err error
	d   Decision
}

func (s *said) Error() string { return s.err.Error() }
func (s *said) Unwrap() error { return s.err }

// Said marks err with what the server said about retrying it, which no
// classifier overrides: d's Verdict Stop when the server asked not to retry
// (a gRPC pushback that says so), or its RetryAfter when it asked for a
// wait. The retry loop applies it after every classifier (see Server): a
// classifier may still stop a call the server would let retry, but never
// retries one the server said not to, nor sooner than it asked. d's other
// fields are kept for Server. It returns nil for a nil err.
func Said(err error, d Decision) error {
	if err == nil {
		return nil
	}
	d.RetryAfter = max(d.RetryAfter, 0)
	return &said{err, d}
}

// Server returns what the server said about err: the decision of the
// outermost Said mark — Stop when it said not to retry — and the longest
// wait it asked for, from that mark, a WithRetryAfter mark, or an error's
// RetryAfter() time.Duration method (an HTTP StatusError's Retry-After, say).
// It has no opinion when the server said nothing.
func Server(err error) Decision {
	if err == nil {
		return Decision{}
	}
	f := scan(err)
	var d Decision
	if f.said != nil {
		d = f.said.d
	}
	d.RetryAfter = max(d.RetryAfter, f.wait())
	return d
}

// wait is the longest wait the server asked for, outside a Said mark.
func (f *facts) wait() time.Duration {
	var wait time.Duration
	if f.retryAfter != nil {
		wait = f.retryAfter.RetryAfter()
	}
	if f.marker != nil && f.marker.d.Verdict == Retry {
		wait = max(wait, f.marker.d.RetryAfter)
	}
	return max(wait, 0)
}

// server applies a Said mark to d, the decision of Default's rules: the
// server's "do not retry" stops; its wait is the shortest wait of a retry,
// and rides along a NoOpinion, for the fallback that retries it.
func (f *facts) server(d Decision) Decision {
	if f.said == nil {
		return d
	}
	s := f.said.d
	if s.Verdict == Stop {
		return s
	}
	if d.Verdict != Stop {
		d.RetryAfter = max(d.RetryAfter, s.RetryAfter)
	}
	return d
}
