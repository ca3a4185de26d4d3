package chaos

import (
	"context"
	"io"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
)

// Wrap returns op under s's faults: each call draws its faults, waits its
// latency, then fails as its fault says or runs op (see each Fault for
// which run op). With s nil or disabled the call is op's own, plus one
// atomic load. A nil op is reported, on each call, as a *retry.InvalidError.
func Wrap(s *Scenario, op func(context.Context) error) func(context.Context) error {
	if op == nil {
		return func(context.Context) error { return argerr.New("chaos.Wrap", nil, "the function must not be nil") }
	}
	return func(ctx context.Context) error {
		if !s.Enabled() {
			return op(ctx)
		}
		p, err := s.begin(ctx)
		switch {
		case err != nil:
			return err
		case p.fault.kind == value:
			return nil
		case !p.fault.sends():
			_, err = instead[struct{}](p.fault)
			return err
		}
		return s.after(ctx, p.fault, op(ctx))
	}
}

// WrapValue is Wrap for a function that returns a value. A Value fault
// returns its value instead of running fn. A call whose answer a fault
// lost returns the zero value.
func WrapValue[T any](s *Scenario, fn func(context.Context) (T, error)) func(context.Context) (T, error) {
	if fn == nil {
		return func(context.Context) (T, error) {
			var zero T
			return zero, argerr.New("chaos.WrapValue", nil, "the function must not be nil")
		}
	}
	return func(ctx context.Context) (T, error) {
		if !s.Enabled() {
			return fn(ctx)
		}
		var zero T
		p, err := s.begin(ctx)
		switch {
		case err != nil:
			return zero, err
		case !p.fault.sends():
			return instead[T](p.fault)
		}
		v, err := fn(ctx)
		if err = s.after(ctx, p.fault, err); p.fault.kind != none {
			return zero, err
		}
		return v, err
	}
}

// begin draws the call's plan and waits its latency.
func (s *Scenario) begin(ctx context.Context) (plan, error) {
	p := s.next()
	return p, sleep(ctx, p.wait)
}

// instead returns what a fault that does not reach the target returns
// instead of a call's result.
func instead[T any](f Fault) (T, error) {
	var zero T
	switch f.kind {
	case errorKind:
		return zero, f.err
	case throttle, respond:
		if f.code >= 400 {
			return zero, &classify.StatusError{Code: f.code, Header: f.header()}
		}
		return zero, nil
	case value:
		return valueOf[T](f)
	}
	return zero, connError(f.kind, "")
}

// after returns what a call that reached the target returns under f: its
// own error, or the fault's, once the target's answer was lost.
func (s *Scenario) after(ctx context.Context, f Fault, err error) error {
	s.stats.processed.Add(1)
	if f.kind == none {
		return err
	}
	s.stats.lost.Add(1)
	switch f.kind {
	case truncate:
		return io.ErrUnexpectedEOF
	case timeout, stall:
		if err := sleep(ctx, f.d); err != nil {
			return err
		}
	}
	return connError(f.kind, "")
}
