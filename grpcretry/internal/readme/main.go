package main

import (
	"context"
	"fmt"
	"log"

	"github.com/retrykit/retry/grpcretry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	// Retries UNAVAILABLE after the server's pushback, and a call that may have reached the server only if it is
	// idempotent (idempotency_level in the .proto) or keyed. grpcretry.New(r, …) runs on your own Retrier.
	opts, err := (&grpcretry.Interceptor{}).DialOptions() // and grpc-go's own retry off: one layer retries
	if err != nil {
		log.Fatal(err)
	}
	conn, err := grpc.NewClient("localhost:50051", append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	res, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		log.Fatal(err) // a gRPC status; errors.As finds the *retry.Error with every attempt
	}
	fmt.Println("health:", res.GetStatus())
}
