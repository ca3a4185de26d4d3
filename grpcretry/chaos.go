package grpcretry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/classify"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Chaos returns a grpc.UnaryClientInterceptor that injects s's faults into
// unary calls, for tests. Chain it after the Interceptor's, nearest the
// network (grpc.WithChainUnaryInterceptor(i.Unary, grpcretry.Chaos(s))),
// so that every attempt draws its own faults.
//
// A fault ends the call as grpc-go would end it for real: a refused
// connection or a reset before sending is UNAVAILABLE, and the call never
// reached the server; a reset after sending, a timeout or a stall is
// UNAVAILABLE after the server processed the call, and a truncated answer
// INTERNAL ("unexpected EOF"), as grpc-go reports a message cut short; a
// context that ended is DEADLINE_EXCEEDED or CANCELLED. Throttle(429, d)
// is RESOURCE_EXHAUSTED and Throttle(503, d) UNAVAILABLE, with d in the
// grpc-retry-pushback-ms trailer; other Respond codes map as gRPC maps HTTP
// statuses. Value(m) with a proto message answers m. With s nil or
// disabled, the interceptor calls invoker and nothing else.
func Chaos(s *chaos.Scenario) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if !s.Enabled() {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		// Whether the call reached the server, the Interceptor reads from
		// its trailer option, which only a real invoker (or setTrailer) fills.
		v, err := chaos.WrapValue(s, func(ctx context.Context) (any, error) {
			return nil, invoker(ctx, method, req, reply, cc, opts...)
		})(ctx)
		if err != nil {
			return chaosStatus(err, opts)
		}
		return answerWith(v, reply)
	}
}

// answerWith copies a Value fault's message into reply.
func answerWith(v, reply any) error {
	if v == nil {
		return nil
	}
	m, ok := v.(proto.Message)
	r, rok := reply.(proto.Message)
	if !ok || !rok || m.ProtoReflect().Descriptor() != r.ProtoReflect().Descriptor() {
		return invalid("grpcretry.Chaos", v, "a chaos.Value must be a message of the call's reply type")
	}
	proto.Reset(r)
	proto.Merge(r, m)
	return nil
}

// chaosStatus turns a fault's error into the status grpc-go gives the real
// failure. An error that has a status (the server's, or a chaos.Error of
// the test's) is left as it is.
func chaosStatus(err error, opts []grpc.CallOption) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	var se *classify.StatusError
	var oe *net.OpError
	switch {
	case errors.As(err, &se):
		setTrailer(opts, se.RetryAfter())
		return status.Error(codeOfHTTP(se.Code), err.Error())
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return status.Error(codes.Internal, err.Error())
	case errors.As(err, &oe) && oe.Op == "dial":
		return status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: `+err.Error()+`"`)
	case errors.As(err, &oe):
		return status.Error(codes.Unavailable, "error reading from server: "+err.Error())
	}
	return err
}

// setTrailer fills the call's trailer options, as a server's answer does:
// with the pushback of a throttled call, if it has one.
func setTrailer(opts []grpc.CallOption, wait time.Duration) {
	md := metadata.MD{}
	if ms := wait.Milliseconds(); ms > 0 {
		md.Set(pushbackTrailer, strconv.FormatInt(ms, 10))
	}
	for _, o := range opts {
		if t, ok := o.(grpc.TrailerCallOption); ok && t.TrailerAddr != nil {
			*t.TrailerAddr = md
		}
	}
}

// codeOfHTTP maps an HTTP status as gRPC's HTTP-to-gRPC table does, except
// for 429, which a gRPC server's quota answers as RESOURCE_EXHAUSTED.
func codeOfHTTP(code int) codes.Code {
	switch code {
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusBadRequest:
		return codes.Internal
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.Unimplemented
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return codes.Unavailable
	}
	return codes.Unknown
}
