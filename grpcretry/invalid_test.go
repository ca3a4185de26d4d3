package grpcretry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/hedge"
	"google.golang.org/grpc"
)

// Every exported function and method, given nil or zero arguments without
// a documented meaning, returns an error matching retry.ErrInvalid before
// doing any work.
func TestNilAndZeroArgumentsAreInvalid(t *testing.T) {
	ran := 0
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { ran++; return nil }
	streamer := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		ran++
		return nil, nil
	}
	refused, _ := grpcretry.New(nil)
	badRetrier, _ := retry.New(retry.WithMaxAttempts(0))
	var nilI *grpcretry.Interceptor
	ctx := context.Background()
	desc := &grpc.StreamDesc{ServerStreams: true}
	r, err := retry.New()
	if err != nil {
		t.Fatal(err)
	}
	newWith := func(o grpcretry.Option) func() error {
		return func() error { _, err := grpcretry.New(r, o); return err }
	}
	rows := []struct {
		name string
		call func() error
	}{
		{"grpcretry.New(nil)", func() error { _, err := grpcretry.New(nil); return err }},
		{"grpcretry.New(a refused Retrier)", func() error { _, err := grpcretry.New(badRetrier); return err }},
		{"grpcretry.New(r, nil)", newWith(nil)},
		{"grpcretry.WithFiles(nil)", newWith(grpcretry.WithFiles(nil))},
		{"grpcretry.WithHedging(nil, 2)", newWith(grpcretry.WithHedging(nil, 2))},
		{"grpcretry.WithHedging(d, 1)", newWith(grpcretry.WithHedging(hedge.Fixed(time.Millisecond), 1))},
		{"grpcretry.WithHedging(hedge.Fixed(0), 2)", newWith(grpcretry.WithHedging(hedge.Fixed(0), 2))},
		{"grpcretry.WithHedging(a zero hedge.Adaptive, 2)", newWith(grpcretry.WithHedging(new(hedge.Adaptive), 2))},
		{`grpcretry.WithIdempotentMethods("")`, newWith(grpcretry.WithIdempotentMethods(""))},
		{`grpcretry.WithIdempotentMethods("Check")`, newWith(grpcretry.WithIdempotentMethods("Check"))},
		{`grpcretry.WithReplayableStreams("/svc")`, newWith(grpcretry.WithReplayableStreams("/svc"))},
		{"(*Interceptor)(nil).DialOptions", func() error { _, err := nilI.DialOptions(); return err }},
		{"(*Interceptor)(nil).Unary", func() error { return nilI.Unary(ctx, "/s.S/M", nil, nil, nil, invoker) }},
		{"(*Interceptor)(nil).Stream", func() error { _, err := nilI.Stream(ctx, desc, nil, "/s.S/M", streamer); return err }},
		{"a refused Interceptor's DialOptions", func() error { _, err := refused.DialOptions(); return err }},
		{"a refused Interceptor's Unary", func() error { return refused.Unary(ctx, "/s.S/M", nil, nil, nil, invoker) }},
		{"a refused Interceptor's Stream", func() error { _, err := refused.Stream(ctx, desc, nil, "/s.S/M", streamer); return err }},
		{"Unary with a nil context", func() error { return new(grpcretry.Interceptor).Unary(nil, "/s.S/M", nil, nil, nil, invoker) }}, //nolint:staticcheck // the nil context is the point
		{"Unary with a nil invoker", func() error { return new(grpcretry.Interceptor).Unary(ctx, "/s.S/M", nil, nil, nil, nil) }},
		{"Stream with a nil desc", func() error {
			_, err := new(grpcretry.Interceptor).Stream(ctx, nil, nil, "/s.S/M", streamer)
			return err
		}},
		{"Stream with a nil streamer", func() error { _, err := new(grpcretry.Interceptor).Stream(ctx, desc, nil, "/s.S/M", nil); return err }},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if err := row.call(); !errors.Is(err, retry.ErrInvalid) {
				t.Errorf("err = %v, want one matching retry.ErrInvalid", err)
			}
			if ran != 0 {
				t.Errorf("the invoker or streamer ran %d times", ran)
			}
		})
	}
}

// The option names its value and the reason, qualified with the package.
func TestABadOptionNamesItself(t *testing.T) {
	for _, row := range []struct {
		opt  grpcretry.Option
		want string
	}{
		{grpcretry.WithIdempotentMethods("/a.B/C", "Check"), `grpcretry.WithIdempotentMethods("Check"): method 1 must be a full method name, /package.Service/Method`},
		{grpcretry.WithHedging(hedge.Fixed(time.Millisecond), 1), `grpcretry.WithHedging(1): at most in flight must be at least 2: an attempt and its hedge`},
		{grpcretry.WithHedging(hedge.Fixed(-time.Millisecond), 2), `grpcretry.WithHedging(-1ms): hedge.Fixed(-1ms): must be positive`},
	} {
		_, err := grpcretry.New(new(retry.Retrier), row.opt)
		if err == nil || err.Error() != row.want {
			t.Errorf("err = %v, want %s", err, row.want)
		}
	}
}

// The zero and nil EndedError do not panic.
func TestAZeroEndedErrorIsUsable(t *testing.T) {
	for _, e := range []*grpcretry.EndedError{nil, {}} {
		if e.Error() == "" || e.GRPCStatus() == nil || e.Unwrap() != nil {
			t.Errorf("%#v: %q, %v, %v", e, e.Error(), e.GRPCStatus(), e.Unwrap())
		}
	}
}
