package grpcretry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/grpcretry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// dialRetrying is the README's snippet, verbatim: the README's own test
// type-checks the root module only, so this one keeps the snippet honest.
func dialRetrying(target string, r *retry.Retrier) (*grpc.ClientConn, error) {
	i, err := grpcretry.New(r,
		grpcretry.WithIdempotentMethods("/grpc.health.v1.Health/Check")) // or idempotency_level in the .proto
	if err != nil {
		return nil, err
	}
	opts, err := i.DialOptions() // the interceptors, and grpc-go's own retry off
	if err != nil {
		return nil, err
	}
	return grpc.NewClient(target, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
}

func TestTheREADMESnippetDials(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {}}}
	cc, err := dialRetrying(serve(t, srv), fast(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || len(srv.seen()) != 2 {
		t.Errorf("err = %v after %d calls, want success after 2", err, len(srv.seen()))
	}
}

// A key in the outgoing metadata is checked before anything is sent, as
// one from retry.WithIdempotencyKey is.
func TestAnInvalidKeyInTheMetadataIsRefusedBeforeSending(t *testing.T) {
	srv := &scripted{}
	client := dial(t, serve(t, srv), new(grpcretry.Interceptor))
	ctx := metadataKey(string(make([]byte, 300)))
	_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrInvalid) || len(srv.seen()) != 0 {
		t.Errorf("err = %v after %d calls, want an invalid key before any call", err, len(srv.seen()))
	}
}
