package grpcretry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/grpcretry"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// healthWithLevels builds, at run time, a descriptor of the health service
// whose Check has the given idempotency_level (the shipped one has none),
// in a registry of its own.
func healthWithLevels(t *testing.T, level descriptorpb.MethodOptions_IdempotencyLevel) *protoregistry.Files {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("retrykit/health_idempotent.proto"),
		Package:    proto.String("grpc.health.v1"),
		Dependency: []string{"grpc/health/v1/health.proto"},
		Syntax:     proto.String("proto3"),
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("Health"),
			Method: []*descriptorpb.MethodDescriptorProto{{
				Name:       proto.String("Check"),
				InputType:  proto.String(".grpc.health.v1.HealthCheckRequest"),
				OutputType: proto.String(".grpc.health.v1.HealthCheckResponse"),
				Options:    &descriptorpb.MethodOptions{IdempotencyLevel: level.Enum()},
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	files := new(protoregistry.Files)
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	return files
}

// grpc-go ignores idempotency_level; the interceptor reads it.
func TestTheDescriptorsIdempotencyLevelDecides(t *testing.T) {
	rows := []struct {
		level descriptorpb.MethodOptions_IdempotencyLevel
		calls int
	}{
		{descriptorpb.MethodOptions_NO_SIDE_EFFECTS, 3},
		{descriptorpb.MethodOptions_IDEMPOTENT, 3},
		{descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN, 1},
	}
	for _, row := range rows {
		t.Run(row.level.String(), func(t *testing.T) {
			srv := &scripted{steps: []step{{err: unavailable}}}
			i := interceptor(t, fast(t, nil), grpcretry.WithFiles(healthWithLevels(t, row.level)))
			_, err := dial(t, serve(t, srv), i).Check(context.Background(), &healthpb.HealthCheckRequest{})
			if got := len(srv.seen()); got != row.calls {
				t.Errorf("server saw %d calls, want %d (err %v)", got, row.calls, err)
			}
			if row.calls == 1 && !errors.Is(err, retry.ErrNotIdempotent) {
				t.Errorf("err = %v, want ErrNotIdempotent", err)
			}
		})
	}
}

// The shipped descriptor, in the global registry, has no level: Check is
// not idempotent by default.
func TestTheShippedHealthDescriptorSaysNothing(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}}}
	_, err := dial(t, serve(t, srv), interceptor(t, fast(t, nil))).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrNotIdempotent) {
		t.Errorf("err = %v, want ErrNotIdempotent", err)
	}
}
