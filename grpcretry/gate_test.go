package grpcretry_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/observe"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

var unavailable = status.Error(codes.Unavailable, "scripted: unavailable")

// A call that reached the server and is neither idempotent nor keyed is not
// repeated: the server may have processed it.
func TestAnUnavailableCallThatReachedTheServerIsNotRepeatedUnlessIdempotentOrKeyed(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {}}}
	client := dial(t, serve(t, srv), interceptor(t, fast(t, nil)))
	_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrNotIdempotent) {
		t.Errorf("err = %v, want ErrNotIdempotent", err)
	}
	if got := len(srv.seen()); got != 1 {
		t.Errorf("server saw %d calls, want 1", got)
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("status.Code(err) = %v", status.Code(err))
	}
}

func TestAKeyedCallIsRepeatedWithTheSameKeyOnEveryAttempt(t *testing.T) {
	for name, keyed := range map[string]func(context.Context) context.Context{
		"retry.WithIdempotencyKey": func(ctx context.Context) context.Context {
			ctx, err := retry.WithIdempotencyKey(ctx, "order-42")
			if err != nil {
				t.Fatal(err)
			}
			return ctx
		},
		"outgoing metadata": func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(ctx, grpcretry.MetadataKey, "order-42")
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := &scripted{steps: []step{{err: unavailable}, {err: unavailable}, {}}}
			client := dial(t, serve(t, srv), interceptor(t, fast(t, nil)))
			if _, err := client.Check(keyed(context.Background()), &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}
			calls := srv.seen()
			if len(calls) != 3 {
				t.Fatalf("server saw %d calls, want 3", len(calls))
			}
			for n, c := range calls {
				if c.key != "order-42" {
					t.Errorf("attempt %d carried key %q, want order-42", n+1, c.key)
				}
			}
		})
	}
}

func TestAnIdempotentRetrierRepeatsACallThatReachedTheServer(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {}}}
	client := dial(t, serve(t, srv), interceptor(t, fast(t, nil, retry.Idempotent())))
	if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := len(srv.seen()); got != 2 {
		t.Errorf("server saw %d calls, want 2", got)
	}
}

// A call that never left the client (no connection: the picker failed it)
// repeats nothing, so it is retried whatever its idempotency.
func TestACallThatNeverLeftTheClientIsRetriedEvenIfNotIdempotent(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // nothing listens: every attempt is refused before it is sent
	var events []observe.Event
	client := dial(t, addr, interceptor(t, fast(t, &events)))
	_, err = client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted after 3 attempts", err)
	}
	var rerr *retry.Error
	if errors.As(err, &rerr) && (rerr.Attempts != 3 || rerr.Decision.Timeout) {
		t.Errorf("attempts = %d, decision = %v; want 3 attempts, none marked as maybe processed", rerr.Attempts, rerr.Decision)
	}
}
