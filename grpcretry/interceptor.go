package grpcretry

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Interceptor holds the unary and stream client interceptors that retry
// gRPC calls: each call is one call of a *retry.Retrier, which holds the
// policy and every stage — budget, limiter, breakers, cooldowns, observers.
// Build it with New and install it with DialOptions. It is safe for
// concurrent use.
//
// The zero Interceptor is ready to use: the default Retrier (retry.New()),
// descriptors from protoregistry.GlobalFiles, no hedging. Every zero
// Interceptor of a process runs on that one Retrier and so shares its retry
// budget: a target that fails long enough closes it for every target, whose
// retries stop while their first attempts go on. Give each target an
// Interceptor of its own (New) to keep their budgets apart. A nil
// *Interceptor, or one whose arguments New refused, fails every call with a
// *retry.InvalidError.
type Interceptor struct {
	r          *retry.Retrier
	keyed      bool            // a stage of r reads the call key: each call carries one
	idempotent map[string]bool // declared by WithIdempotentMethods
	replayable map[string]bool // declared by WithReplayableStreams
	files      *protoregistry.Files
	// hedgeAny hedges the calls r's policy lets run twice at once (keyed
	// ones, or all under retry.Idempotent); hedgeIdem, built from r with
	// retry.Idempotent, those of idempotent methods. nil: no hedging.
	hedgeAny, hedgeIdem *retry.Hedger
	// known caches each method's idempotency, copied on write: a lookup on
	// every call is a plain map read, with no lock and no allocation.
	known atomic.Pointer[map[string]bool]
	built bool
	err   *retry.InvalidError
}

// MetadataKey is the outgoing metadata key that carries a call's idempotency
// key, the same on every attempt.
const MetadataKey = "idempotency-key"

// previousAttempts is the metadata of a retried or hedged attempt that says
// how many attempts of the call were sent before it (gRFC A6). grpc-go sets
// it for its own retries only, which DialOptions turns off; it sends the
// metadata as given (the key is not among its reserved headers).
const previousAttempts = "grpc-previous-rpc-attempts"

var defaultInterceptor = mustNew()

func mustNew() *Interceptor {
	r, err := retry.New()
	if err == nil {
		var i *Interceptor
		if i, err = New(r); err == nil {
			return i
		}
	}
	panic(err) // the defaults cannot be refused
}

// New returns an Interceptor that makes every call through r, configured
// by opts, or a *retry.InvalidError for a nil or refused r, the first bad
// option, or a hedging setting retry.NewHedger refuses. An Interceptor
// whose arguments were refused is still returned, and fails every call with
// that error without making it.
func New(r *retry.Retrier, opts ...Option) (*Interceptor, error) {
	if r == nil {
		return refused(invalid("grpcretry.New", nil, "the Retrier must not be nil (build one with retry.New)"))
	}
	c := config{files: protoregistry.GlobalFiles}
	for _, o := range opts {
		if o == nil {
			return refused(invalid("grpcretry.New", nil, "an Option must not be nil"))
		}
		if err := o(&c); err != nil {
			return refused(err)
		}
	}
	return build(r, c)
}

func refused(err *retry.InvalidError) (*Interceptor, error) {
	return &Interceptor{built: true, err: err}, err
}

// build makes the Interceptor of r and c, and its Hedgers: one from r, and
// one from r with retry.Idempotent for the methods known to be idempotent,
// sharing r's stages.
func build(r *retry.Retrier, c config) (*Interceptor, error) {
	i := &Interceptor{r: r, keyed: r.Keyed(), idempotent: c.idempotent, replayable: c.replayable, files: c.files, built: true}
	idem, err := r.With(retry.Idempotent()) // also reports a refused r
	if err != nil {
		return refused(&retry.InvalidError{Name: "grpcretry.New", Value: "a refused *retry.Retrier", Err: err})
	}
	if c.delay == nil {
		return i, nil
	}
	if i.hedgeAny, err = retry.NewHedger(r, c.delay, c.maxInFlight); err == nil {
		i.hedgeIdem, err = retry.NewHedger(idem, c.delay, c.maxInFlight)
	}
	if err != nil {
		bad := &retry.InvalidError{Name: "grpcretry.WithHedging", Value: c.delay, Err: err}
		if ie, ok := err.(*retry.InvalidError); ok {
			bad.Value, bad.Err = ie.Value, ie.Err
		}
		return refused(bad)
	}
	return i, nil
}

// DialOptions returns the dial options that install i's interceptors and
// disable grpc-go's own retries (grpc.WithDisableRetry), so that the two
// loops never multiply: with both on, a call that keeps failing is made
// grpc-go's maxAttempts times i's. grpc-go's transparent retry of a call
// that never reached the server's application stays on, as it must: it
// repeats nothing. Interceptors chained after these run once per attempt;
// those chained before them, once per call.
func (i *Interceptor) DialOptions() ([]grpc.DialOption, error) {
	if _, err := i.ready(); err != nil {
		return nil, err
	}
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(i.Unary),
		grpc.WithChainStreamInterceptor(i.Stream),
		grpc.WithDisableRetry(),
	}, nil
}

// ready returns the Interceptor to run with: i, the defaults for the zero
// Interceptor, or the reason i cannot run.
func (i *Interceptor) ready() (*Interceptor, error) {
	switch {
	case i == nil:
		return nil, invalid("grpcretry.Interceptor", nil, "must not be nil (use New, or a zero Interceptor)")
	case i.err != nil:
		return nil, i.err
	case !i.built:
		return defaultInterceptor, nil
	}
	return i, nil
}

// callContext returns the context a call runs with: the caller's, with its
// idempotency key both ways (see keyed), and the call key when a stage of
// the Retrier reads it — only then, since a context value is an allocation.
func (i *Interceptor) callContext(ctx context.Context, cc *grpc.ClientConn, method string) (context.Context, error) {
	ctx, err := keyed(ctx)
	if err != nil || !i.keyed {
		return ctx, err
	}
	k := breaker.Key{Operation: method}
	if cc != nil {
		k.Target = cc.Target()
	}
	return breaker.WithKey(ctx, k), nil
}

// hedger returns the Hedger of a call to method, or nil without hedging.
// The Hedger decides whether the call may run twice at once: a method
// known to be idempotent goes to the one built with retry.Idempotent; any
// other to the one built from the Retrier, which hedges it if it is keyed
// (or the Retrier says every call is idempotent), and otherwise makes its
// attempts one at a time.
func (i *Interceptor) hedger(method string) *retry.Hedger {
	switch {
	case i.hedgeAny == nil:
		return nil
	case i.isIdempotent(method):
		return i.hedgeIdem
	}
	return i.hedgeAny
}

// isIdempotent reports whether method was declared idempotent, or its
// descriptor says it has no side effects or is idempotent. The answer is
// cached: descriptors are registered at init.
func (i *Interceptor) isIdempotent(method string) bool {
	known := i.known.Load()
	if known != nil {
		if v, ok := (*known)[method]; ok {
			return v
		}
	}
	v := i.idempotent[method] || descriptorIdempotent(i.files, method)
	for { // copy on write; a lost race only repeats the copy
		old := i.known.Load()
		next := make(map[string]bool, 1)
		if old != nil {
			for k, b := range *old {
				next[k] = b
			}
		}
		next[method] = v
		if i.known.CompareAndSwap(old, &next) {
			return v
		}
	}
}

// descriptorIdempotent reads the idempotency_level of the method's
// descriptor; grpc-go itself ignores it.
func descriptorIdempotent(files *protoregistry.Files, method string) bool {
	service, name, ok := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	if !ok {
		return false
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(service + "." + name))
	if err != nil {
		return false
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return false
	}
	opts, ok := md.Options().(*descriptorpb.MethodOptions)
	if !ok {
		return false
	}
	switch opts.GetIdempotencyLevel() {
	case descriptorpb.MethodOptions_NO_SIDE_EFFECTS, descriptorpb.MethodOptions_IDEMPOTENT:
		return true
	}
	return false
}

// keyed finds the call's idempotency key — in the outgoing metadata, or in
// the context (retry.WithIdempotencyKey) — and returns a context that
// carries it both ways: the Retrier reads it from the context, the server
// from the metadata.
func keyed(ctx context.Context) (context.Context, error) {
	ctxKey, inCtx := retry.IdempotencyKey(ctx)
	if vs := metadata.ValueFromOutgoingContext(ctx, MetadataKey); len(vs) > 0 {
		if len(vs) > 1 {
			return ctx, invalid("grpcretry.Interceptor", fmt.Sprintf("%d values of the outgoing metadata %q", len(vs), MetadataKey),
				"a call has one idempotency key")
		}
		if vs[0] == ctxKey {
			return ctx, nil
		}
		return retry.WithIdempotencyKey(ctx, vs[0])
	}
	if inCtx {
		return metadata.AppendToOutgoingContext(ctx, MetadataKey, ctxKey), nil
	}
	return ctx, nil
}
