package grpcretry

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/internal/breakerset"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Interceptor holds the unary and stream client interceptors that retry
// gRPC calls: each call is one call of a *retry.Retrier's loop. Build it
// with New and install it with DialOptions. It is safe for concurrent use.
//
// The zero Interceptor is ready to use: the default retry policy
// (retry.New()), descriptors from protoregistry.GlobalFiles, no breakers or
// cooldowns. A nil *Interceptor, or one whose options New refused, fails
// every call with a *retry.InvalidError.
type Interceptor struct {
	r           *retry.Retrier
	classifiers []classify.Func
	idempotent  map[string]bool // declared by WithIdempotentMethods
	replayable  map[string]bool // declared by WithReplayableStreams
	files       *protoregistry.Files
	breakers    *breakerset.Set
	cooldowns   *breaker.Cooldowns[breaker.HostModel]
	keyCtx      bool // WithTargetMethodContext: the loop's context carries the (target, method)
	// known caches each method's idempotency, copied on write: a lookup on
	// every call is a plain map read, with no lock and no allocation.
	known atomic.Pointer[map[string]bool]
	built bool
	err   *retry.InvalidError
}

// MetadataKey is the outgoing metadata key that carries a call's idempotency
// key, the same on every attempt.
const MetadataKey = "idempotency-key"

var defaultInterceptor = mustNew()

func mustNew() *Interceptor {
	i, err := New()
	if err != nil {
		panic(err) // New without options cannot fail
	}
	return i
}

// New returns an Interceptor configured by opts, or the first bad option as
// a *retry.InvalidError. An Interceptor whose options were refused is still
// returned, and fails every call with that error without making it.
func New(opts ...Option) (*Interceptor, error) {
	i := &Interceptor{r: new(retry.Retrier), files: protoregistry.GlobalFiles, built: true}
	for _, o := range opts {
		if o == nil {
			err := argerr.New("grpcretry.New", nil, "an Option must not be nil")
			return &Interceptor{built: true, err: err}, err
		}
		if err := o(i); err != nil {
			return &Interceptor{built: true, err: err}, err
		}
	}
	return i, nil
}

// DialOptions returns the dial options that install i's interceptors and
// disable grpc-go's own retries (grpc.WithDisableRetry), so that the two
// loops never multiply: with both on, a call that keeps failing is made
// grpc-go's maxAttempts times i's. grpc-go's transparent retry of a call
// that never left the client stays on, as it must: it repeats nothing.
// Interceptors chained after these run once per attempt; those chained
// before them, once per call.
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
		return nil, argerr.New("grpcretry.Interceptor", nil, "must not be nil (use New, or a zero Interceptor)")
	case i.err != nil:
		return nil, i.err
	case !i.built:
		return defaultInterceptor, nil
	}
	return i, nil
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
// carries it both ways: the loop reads it from the context, the server from
// the metadata.
func keyed(ctx context.Context) (context.Context, error) {
	ctxKey, inCtx := retry.IdempotencyKey(ctx)
	if vs := metadata.ValueFromOutgoingContext(ctx, MetadataKey); len(vs) > 0 {
		if len(vs) > 1 {
			return ctx, argerr.New("grpcretry.Interceptor", fmt.Sprintf("%d values of the outgoing metadata %q", len(vs), MetadataKey),
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

// failed turns an attempt's error into a classified one. sent reports that
// the attempt had a transport stream: the server may have seen it.
func (i *Interceptor) failed(ctx context.Context, err error, trailer metadata.MD, sent bool, method string) error {
	d := i.decision(ctx, err, trailer)
	if d.Verdict == classify.NoOpinion {
		return err // not a status: the Retrier's classifiers decide
	}
	if d.Verdict == classify.Retry {
		// The idempotency gate: a call that reached the server may have been
		// processed; a Timeout decision is retried only for idempotent or
		// keyed work (the loop checks the key and retry.Idempotent()).
		// One that never left the client repeats nothing.
		d.Timeout = sent && !i.isIdempotent(method)
	}
	return classify.Mark(err, d)
}

// decision asks the caller's classifiers, then the table.
func (i *Interceptor) decision(ctx context.Context, err error, trailer metadata.MD) classify.Decision {
	for _, f := range i.classifiers {
		if d := f(err); d.Verdict != classify.NoOpinion {
			return d
		}
	}
	s, ok := statusOf(err)
	switch {
	case !ok:
		return classify.Decision{}
	case s.Code() == codes.DeadlineExceeded && pastDeadline(ctx):
		// The context's timer fires any moment now: wait for it, so that the
		// call ends with the caller's own deadline, as when it came first.
		if done := ctx.Done(); done != nil {
			<-done
		}
		return classify.Decision{Verdict: classify.Stop, Reason: ReasonCallerDeadline}
	}
	return decide(s, trailer)
}

// observe starts the key's cooldown after an UNAVAILABLE with a server wait.
func (i *Interceptor) observe(key breaker.HostModel, err error) {
	d := classify.Markers(err)
	if i.cooldowns == nil || d.Reason != ReasonUnavailable || d.RetryAfter <= 0 {
		return
	}
	// The cooldown registry starts on the HTTP 503 reason; the gRPC
	// equivalent is told in its terms.
	i.cooldowns.Observe(key, classify.Mark(err, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnavailable, RetryAfter: d.RetryAfter}))
}

// run runs op through the key's breaker, if any, and the Retrier.
func (i *Interceptor) run(ctx context.Context, key breaker.HostModel, op func(context.Context) error) error {
	if i.breakers == nil {
		return i.r.Do(ctx, op)
	}
	b, err := i.breakers.Get(i.r, key)
	switch {
	case err != nil:
		return err
	case b == nil: // the set is full: this key runs without a breaker
		return i.r.Do(ctx, op)
	}
	return b.Do(ctx, op)
}
