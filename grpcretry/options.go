package grpcretry

import (
	"errors"
	"strconv"
	"strings"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/hedge"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Option configures New. Options apply in order; a later one overrides an
// earlier one of the same kind (the method lists add). A bad option — nil, or
// given a value it refuses — makes New return a *retry.InvalidError naming it
// and its value.
type Option func(*config) *retry.InvalidError

// config is what the options set; New builds the Interceptor from it.
type config struct {
	idempotent  map[string]bool // declared by WithIdempotentMethods
	replayable  map[string]bool // declared by WithReplayableStreams
	files       *protoregistry.Files
	delay       hedge.Delay // WithHedging; nil: no hedging
	maxInFlight int
}

// invalid reports a bad argument of the exported name, with its value.
func invalid(name string, value any, reason string) *retry.InvalidError {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}

// WithIdempotentMethods declares full method names ("/pkg.Service/Method")
// idempotent, in addition to those whose descriptor says so.
func WithIdempotentMethods(methods ...string) Option {
	return methodList("grpcretry.WithIdempotentMethods", methods, func(c *config) *map[string]bool { return &c.idempotent })
}

// WithReplayableStreams declares client-streaming and bidirectional methods
// whose sent messages may be sent again: such a stream keeps what it sent
// until the first message arrives, and a failure before that reopens the
// stream and sends them again, up to 256 KiB (grpc-go's retry buffer).
// Messages are kept by reference: the caller must not modify one after
// sending it.
func WithReplayableStreams(methods ...string) Option {
	return methodList("grpcretry.WithReplayableStreams", methods, func(c *config) *map[string]bool { return &c.replayable })
}

func methodList(name string, methods []string, field func(*config) *map[string]bool) Option {
	return func(c *config) *retry.InvalidError {
		m := field(c)
		for n, method := range methods {
			if !validMethod(method) {
				return invalid(name, strconv.Quote(method), "method "+strconv.Itoa(n)+" must be a full method name, /package.Service/Method")
			}
			if *m == nil {
				*m = make(map[string]bool)
			}
			(*m)[method] = true
		}
		return nil
	}
}

// validMethod accepts "/package.Service/Method".
func validMethod(m string) bool {
	service, method, ok := strings.Cut(strings.TrimPrefix(m, "/"), "/")
	return strings.HasPrefix(m, "/") && ok && service != "" && method != "" && !strings.Contains(method, "/")
}

// WithFiles sets where method descriptors are looked up for their
// idempotency_level. The default is protoregistry.GlobalFiles, where
// generated code registers itself.
func WithFiles(files *protoregistry.Files) Option {
	return func(c *config) *retry.InvalidError {
		if files == nil {
			return invalid("grpcretry.WithFiles", nil, "must not be nil")
		}
		c.files = files
		return nil
	}
}

// WithHedging hedges unary calls as gRFC A6's hedging policy does: when an
// attempt has not answered after the delay d gives (hedge.Fixed, or
// hedge.NewAdaptive to follow the latencies), another starts alongside it,
// up to maxInFlight at once (at least 2) and the Retrier's MaxAttempts in
// all; the first success wins and the others are cancelled. Only calls that
// may run twice at once are hedged: an idempotent method (its descriptor, or
// WithIdempotentMethods) or a keyed call; any other call makes its attempts
// one at a time. Streams are retried, not hedged. See the package
// documentation for how failures and the server's pushback steer the hedges.
func WithHedging(d hedge.Delay, maxInFlight int) Option {
	return func(c *config) *retry.InvalidError {
		switch {
		case d == nil:
			return invalid("grpcretry.WithHedging", nil, "the delay must not be nil (hedge.Fixed, or hedge.NewAdaptive)")
		case maxInFlight < 2:
			return invalid("grpcretry.WithHedging", maxInFlight, "at most in flight must be at least 2: an attempt and its hedge")
		}
		c.delay, c.maxInFlight = d, maxInFlight
		return nil
	}
}
