package grpcretry

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/retrykit/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// Unary is a grpc.UnaryClientInterceptor: it makes the call through the
// Retrier — or its Hedger, with WithHedging — each attempt under the call's
// context (its deadline, and the Retrier's attempt timeout if any), and
// returns nil or the *retry.Error that ended the call; status.Code and
// status.FromError see the last attempt's status through it. When the
// caller's context ended the call, the *retry.Error comes in an
// *EndedError, whose status is the context's; when the client refused the
// call itself — its limiter, its breaker — the status says so (see the
// package documentation).
func (i *Interceptor) Unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	i, err := i.ready()
	switch {
	case err != nil:
		return err
	case ctx == nil:
		return invalid("grpcretry.Interceptor.Unary", nil, "the context must not be nil")
	case invoker == nil:
		return invalid("grpcretry.Interceptor.Unary", nil, "the invoker must not be nil")
	}
	if ctx, err = i.callContext(ctx, cc, method); err != nil {
		return err
	}
	if h := i.hedger(method); h != nil && hedgeable(reply, opts) {
		c := &unary{i: i, ctx: ctx, method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: opts}
		return callError(ctx, c.hedge(h))
	}
	c := unary{i: i, ctx: ctx, method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: opts}
	c.seen = seenPool.Get().(*seen)
	defer c.seen.release()
	if err := i.r.Do(ctx, c.attempt); err != nil {
		return callError(ctx, err)
	}
	return nil
}

// unary is one unary call: one call of the Retrier. Without hedging it
// stays on Unary's stack: the Retrier keeps no reference to its operation.
type unary struct {
	i          *Interceptor
	ctx        context.Context // the caller's, with the call's keys
	method     string
	req, reply any
	cc         *grpc.ClientConn
	invoker    grpc.UnaryInvoker
	opts       []grpc.CallOption
	seen       *seen        // every attempt's, one at a time
	started    atomic.Int32 // attempts started: hedged ones start on several goroutines
}

// seen is what an attempt tells about itself through a grpc.Trailer call
// option: the server's trailer (its pushback) and, by its presence, that
// the attempt had a transport stream — the server may have seen it. grpc-go
// fills a trailer option only for an attempt that had one, with a new,
// non-nil map. The seen values are pooled, with room for the caller's
// options: a call that succeeds allocates nothing here (the pool, and
// reading the Peer as well, cost 1 and 3 allocations per call in
// bench: GRPCSuccess/retry, 2026-12-01).
type seen struct {
	trailer metadata.MD
	opt     grpc.CallOption // grpc.Trailer(&trailer), made once
	own     [4]grpc.CallOption
}

var seenPool = sync.Pool{New: func() any {
	s := new(seen)
	s.opt = grpc.Trailer(&s.trailer)
	return s
}}

// options returns the caller's options and the trailer's, and clears what a
// previous attempt left.
func (s *seen) options(caller []grpc.CallOption) []grpc.CallOption {
	s.trailer = nil
	return append(append(s.own[:0], caller...), s.opt)
}

func (s *seen) sent() bool { return s.trailer != nil }

// release returns s to the pool, keeping nothing of the call.
func (s *seen) release() {
	s.trailer, s.own = nil, [4]grpc.CallOption{}
	seenPool.Put(s)
}

// attempt makes one attempt of the plain loop.
func (c *unary) attempt(actx context.Context) error {
	return c.try(actx, c.reply, c.seen)
}

// try invokes the call once, into reply, and classifies its failure. A
// retried or hedged attempt says how many were sent before it (gRFC A6's
// grpc-previous-rpc-attempts); the first says nothing.
func (c *unary) try(actx context.Context, reply any, s *seen) error {
	if n := c.started.Add(1) - 1; n > 0 {
		actx = metadata.AppendToOutgoingContext(actx, previousAttempts, strconv.Itoa(int(n)))
	}
	err := c.invoker(actx, c.method, c.req, reply, c.cc, s.options(c.opts)...)
	if err == nil {
		return nil
	}
	// Whether the method is idempotent matters only now: a call that
	// succeeds does not look it up (a map lookup, 20 ns of 115).
	return c.i.failed(c.ctx, err, s.trailer, s.sent(), c.method)
}

// hedge makes the call through h. Attempts that run at once each answer
// into a reply of their own; the winner's is copied into the caller's.
func (c *unary) hedge(h *retry.Hedger) error {
	won, _, err := retry.HedgeValue(c.ctx, h, func(actx context.Context) (proto.Message, error) {
		reply := c.reply.(proto.Message).ProtoReflect().New().Interface()
		s := seenPool.Get().(*seen)
		defer s.release()
		return reply, c.try(actx, reply, s)
	})
	if err != nil {
		return err
	}
	proto.Reset(c.reply.(proto.Message))
	proto.Merge(c.reply.(proto.Message), won)
	return nil
}

// hedgeable reports whether a call's attempts can run at once: each needs
// a reply of its own, which only a proto message can make; and a caller's
// option that receives an attempt's header, trailer or peer would be
// written by several attempts at once. Such a call makes its attempts one
// at a time.
func hedgeable(reply any, opts []grpc.CallOption) bool {
	if _, ok := reply.(proto.Message); !ok {
		return false
	}
	for _, o := range opts {
		switch o.(type) {
		case grpc.HeaderCallOption, grpc.TrailerCallOption, grpc.PeerCallOption:
			return false
		}
	}
	return true
}
