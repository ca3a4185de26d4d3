package grpcretry

import (
	"strconv"
	"strings"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/internal/breakerset"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Option configures New. Options apply in order; a later one overrides an
// earlier one of the same kind (the method lists add). A bad option — nil, or
// given a value it refuses — makes New return a *retry.InvalidError naming it
// and its value.
type Option func(*Interceptor) *retry.InvalidError

// WithRetrier sets the retry policy, budget, hooks and logger: every call
// is one call of r's loop. The default is retry.New() with no options.
func WithRetrier(r *retry.Retrier) Option {
	return func(i *Interceptor) *retry.InvalidError {
		if r == nil {
			return argerr.New("grpcretry.WithRetrier", nil, "must not be nil")
		}
		i.r = r
		return nil
	}
}

// WithClassifier adds a classifier that runs before the status table, so
// that it can override any row; the first with an opinion wins. Its decision
// still goes through the idempotency gate: a retry of a call that may have
// reached the server needs an idempotent method, a key, or
// retry.Idempotent().
func WithClassifier(f classify.Func) Option {
	return func(i *Interceptor) *retry.InvalidError {
		if f == nil {
			return argerr.New("grpcretry.WithClassifier", nil, "must not be nil")
		}
		i.classifiers = append(i.classifiers, f)
		return nil
	}
}

// WithIdempotentMethods declares full method names ("/pkg.Service/Method")
// idempotent, in addition to those whose descriptor says so.
func WithIdempotentMethods(methods ...string) Option {
	return methodList("grpcretry.WithIdempotentMethods", methods, func(i *Interceptor) *map[string]bool { return &i.idempotent })
}

// WithReplayableStreams declares client-streaming and bidirectional methods
// whose sent messages may be sent again: such a stream keeps what it sent
// until the first message arrives, and a failure before that reopens the
// stream and sends them again, up to MaxReplay bytes. Messages are kept by
// reference: the caller must not modify one after sending it.
func WithReplayableStreams(methods ...string) Option {
	return methodList("grpcretry.WithReplayableStreams", methods, func(i *Interceptor) *map[string]bool { return &i.replayable })
}

func methodList(name string, methods []string, field func(*Interceptor) *map[string]bool) Option {
	return func(i *Interceptor) *retry.InvalidError {
		m := field(i)
		for n, method := range methods {
			if !validMethod(method) {
				return argerr.New(name, strconv.Quote(method), "method "+strconv.Itoa(n)+" must be a full method name, /package.Service/Method")
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
	return func(i *Interceptor) *retry.InvalidError {
		if files == nil {
			return argerr.New("grpcretry.WithFiles", nil, "must not be nil")
		}
		i.files = files
		return nil
	}
}

// WithBreakers gives every (target, method) its own circuit breaker around
// the retried call, with the settings that settings returns for it (its Name
// defaults to "target/method") and opts. The key is a breaker.HostModel whose
// Host is the connection's target and Model the full method name. At most
// 10,000 breakers are kept (breaker.DefaultMaxKeys); past that, a call for a
// new key runs without a breaker.
func WithBreakers(settings func(breaker.HostModel) breaker.Settings, opts ...breaker.Option) Option {
	return func(i *Interceptor) *retry.InvalidError {
		if settings == nil {
			return argerr.New("grpcretry.WithBreakers", nil, "the settings function must not be nil")
		}
		for n, o := range opts {
			if o == nil {
				return argerr.New("grpcretry.WithBreakers", "option "+strconv.Itoa(n), "must not be nil")
			}
		}
		i.breakers = breakerset.New("grpcretry", settings, 0, opts...)
		return nil
	}
}

// WithCooldowns checks every attempt against cd, keyed by (target, method):
// a key cooling down after an UNAVAILABLE with a server wait (pushback or
// RetryInfo) fails locally, without a call. The cooldowns report through
// cd's own CooldownSettings.OnCooldown.
func WithCooldowns(cd *breaker.Cooldowns[breaker.HostModel]) Option {
	return func(i *Interceptor) *retry.InvalidError {
		if cd == nil {
			return argerr.New("grpcretry.WithCooldowns", nil, "must not be nil")
		}
		i.cooldowns = cd
		return nil
	}
}
