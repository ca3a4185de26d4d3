package grpcretry

import (
	"context"

	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/internal/argerr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// Unary is a grpc.UnaryClientInterceptor: it makes the call through the
// Retrier, each attempt under the call's context (its deadline, and the
// Retrier's attempt timeout if any), and returns nil or the *retry.Error
// that ended the call. status.Code and status.FromError see the last
// attempt's status through it.
func (i *Interceptor) Unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	i, err := i.ready()
	switch {
	case err != nil:
		return err
	case ctx == nil:
		return argerr.New("grpcretry.Interceptor.Unary", nil, "the context must not be nil")
	case invoker == nil:
		return argerr.New("grpcretry.Interceptor.Unary", nil, "the invoker must not be nil")
	}
	if ctx, err = keyed(ctx); err != nil {
		return err
	}
	c := unary{i: i, ctx: ctx, method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: opts}
	c.idempotent = i.isIdempotent(method)
	if i.breakers != nil || i.cooldowns != nil {
		c.key = callKey(cc, method)
	}
	return i.run(ctx, c.key, c.attempt)
}

// callKey is the breaker and cooldown key of a call: its target and method.
func callKey(cc *grpc.ClientConn, method string) breaker.HostModel {
	if cc == nil {
		return breaker.HostModel{Model: method}
	}
	return breaker.HostModel{Host: cc.Target(), Model: method}
}

// unary is one unary call: one call of the retry loop.
type unary struct {
	i          *Interceptor
	ctx        context.Context // the caller's, with the call's key
	method     string
	req, reply any
	cc         *grpc.ClientConn
	invoker    grpc.UnaryInvoker
	opts       []grpc.CallOption
	key        breaker.HostModel
	idempotent bool
	seen       seen
}

// seen is what an attempt tells about itself through call options: its
// peer, set only if it had a transport stream (the server may have seen
// it), and its trailer (the server's pushback). One allocation per call
// holds both, and the options when the caller passed none.
type seen struct {
	peer    peer.Peer
	trailer metadata.MD
	own     [2]grpc.CallOption
}

// options returns the caller's options and the two that fill s, and clears
// what a previous attempt left.
func (s *seen) options(caller []grpc.CallOption) []grpc.CallOption {
	s.peer, s.trailer = peer.Peer{}, nil
	if len(caller) == 0 {
		s.own = [2]grpc.CallOption{grpc.Peer(&s.peer), grpc.Trailer(&s.trailer)}
		return s.own[:]
	}
	return append(caller[:len(caller):len(caller)], grpc.Peer(&s.peer), grpc.Trailer(&s.trailer))
}

func (s *seen) sent() bool { return s.peer.Addr != nil }

// attempt makes one attempt: checked against the cooldowns, then invoked.
func (c *unary) attempt(actx context.Context) error {
	if cd := c.i.cooldowns; cd != nil {
		if err := cd.Check(c.key); err != nil {
			return err // local: nothing sent
		}
	}
	err := c.invoker(actx, c.method, c.req, c.reply, c.cc, c.seen.options(c.opts)...)
	if err == nil {
		return nil
	}
	err = c.i.failed(c.ctx, err, c.seen.trailer, c.seen.sent(), c.idempotent)
	c.i.observe(c.key, err)
	return err
}
