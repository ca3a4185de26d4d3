package grpcretry_test

import (
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/limit"
	"google.golang.org/grpc"
)

// limitedPerMethod is the README's rate limiter snippet for gRPC, compiled
// here: the root module's README test checks that it is in this file line
// for line.
func limitedPerMethod() ([]grpc.DialOption, error) {
	keyed, err := limit.NewKeyed(breaker.KeyOf, func(breaker.Key) (limit.Limiter, error) {
		return limit.NewAdaptive(limit.AdaptiveConfig{})
	}, 0)
	if err != nil {
		return nil, err
	}
	r, err := retry.New(retry.WithLimiter(keyed))
	if err != nil {
		return nil, err
	}
	i, err := grpcretry.New(r)
	if err != nil {
		return nil, err
	}
	return i.DialOptions()
}

var _ = limitedPerMethod
