package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/otelretry"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestOTelCoversGRPCCalls makes real gRPC calls through grpcretry's
// interceptors, to the flaky health server on a loopback port, with
// otelretry's Observer on the Retrier and a real SDK meter provider: each call
// is one retry.call.duration with its outcome, its retries are counted, and
// each attempt is counted by grpcretry's reason (retry.class), not "other".
func TestOTelCoversGRPCCalls(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	o, err := otelretry.New("health", otelretry.Config{MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := serve()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	client := dialObserved(t, addr, o)

	ctx := t.Context()
	for _, service := range []string{"warming", "throttled", "quota"} {
		_, _ = client.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	}
	_, _ = client.List(ctx, &healthpb.HealthListRequest{}) // not idempotent: sent once
	keyed, err := retry.WithIdempotencyKey(ctx, "list-7")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = client.List(keyed, &healthpb.HealthListRequest{})

	const name = "retry.name=health"
	got, sums := collect(t, reader)
	want := map[string]string{
		// warming (3 attempts), throttled (2), the keyed List (2)
		"retry.call.duration{" + name + ",retry.outcome=success}":    "count 3",
		"retry.call.retries{" + name + ",retry.outcome=success}":     "count 3 sum 4",
		"retry.call.retry_delay{" + name + ",retry.outcome=success}": "count 3",
		// quota: a pushback of two minutes, longer than MaxDelay, returned
		"retry.call.duration{" + name + ",retry.outcome=wait-too-long}": "count 1",
		// List without a key: UNAVAILABLE after the request was sent
		"retry.call.duration{" + name + ",retry.outcome=not-idempotent}":                                            "count 1",
		"retry.attempts{" + name + ",retry.verdict=success}":                                                        "3",
		"retry.attempts{retry.class=" + classify.ReasonGRPCUnavailable + "," + name + ",retry.verdict=retry}":       "4",
		"retry.attempts{retry.class=" + classify.ReasonGRPCResourceExhausted + "," + name + ",retry.verdict=retry}": "2",
		"retry.retry_after{" + name + ",retry.retry_after.action=slept}":                                            "1",
		"retry.retry_after{" + name + ",retry.retry_after.action=returned}":                                         "1",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected series %s = %s", k, got[k])
		}
	}
	// The waits the loop decided: 2×20ms of backoff (warming), the
	// server's 50ms and up to a tenth more (throttled: the loop spreads
	// the clients a server told to come back at once), 20ms (the keyed List).
	if d := sums["retry.call.retry_delay{"+name+",retry.outcome=success}"]; d < 0.11-1e-9 || d > 0.115+1e-9 {
		t.Errorf("retry.call.retry_delay of the calls that succeeded sums to %gs, want 0.11s to 0.115s", d)
	}
}

// dialObserved connects as dial does, with o observing the Retrier, and no
// jitter: the waits are exact.
func dialObserved(t *testing.T, addr string, o *otelretry.Observer) healthpb.HealthClient {
	t.Helper()
	r, err := retry.New(retry.WithMaxAttempts(4), retry.WithBackoff(backoff.Constant(20*time.Millisecond)),
		retry.WithJitter(jitter.None{}), retry.WithMaxDelay(10*time.Second), retry.WithObserver(o))
	if err != nil {
		t.Fatal(err)
	}
	i, err := grpcretry.New(r, grpcretry.WithIdempotentMethods("/grpc.health.v1.Health/Check"))
	if err != nil {
		t.Fatal(err)
	}
	opts, err := i.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return healthpb.NewHealthClient(cc)
}

// collect returns every series the reader sees, keyed `name{k=v,…}`
// (attributes sorted): a counter's value, a count histogram's "count N sum
// S", a duration histogram's "count N" (its sum, which varies with the
// machine, in sums).
func collect(t *testing.T, reader *sdkmetric.ManualReader) (map[string]string, map[string]float64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out, sums := map[string]string{}, map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[series(m.Name, p.Attributes.ToSlice())] = fmt.Sprint(p.Value)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					out[series(m.Name, p.Attributes.ToSlice())] = fmt.Sprintf("count %d sum %d", p.Count, p.Sum)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					k := series(m.Name, p.Attributes.ToSlice())
					out[k], sums[k] = fmt.Sprintf("count %d", p.Count), p.Sum
				}
			}
		}
	}
	return out, sums
}

func series(name string, kvs []attribute.KeyValue) string {
	s := make([]string, len(kvs)) // sorted by key already
	for i, kv := range kvs {
		s[i] = string(kv.Key) + "=" + kv.Value.Emit()
	}
	return name + "{" + strings.Join(s, ",") + "}"
}

// observedDialOptions is the README's snippet: the dial options of
// grpcretry's interceptors on a Retrier that otelretry observes.
func observedDialOptions() ([]grpc.DialOption, error) {
	obs, err := otelretry.New("inventory-grpc", otelretry.Config{}) // the global meter provider
	if err != nil {
		return nil, err
	}
	r, err := retry.New(retry.WithObserver(obs))
	if err != nil {
		return nil, err
	}
	i, err := grpcretry.New(r)
	if err != nil {
		return nil, err
	}
	return i.DialOptions() // grpc.NewClient(target, opts...)
}

func TestObservedDialOptions(t *testing.T) {
	opts, err := observedDialOptions()
	if err != nil || len(opts) == 0 {
		t.Fatalf("observedDialOptions() = %d options, %v", len(opts), err)
	}
}
