package otelretry_test

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// sdk is a real meter provider read by a ManualReader, and a real tracer
// provider whose ended spans a SpanRecorder keeps.
type sdk struct {
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
}

func newSDK(t *testing.T) *sdk {
	t.Helper()
	s := &sdk{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	s.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	t.Cleanup(func() {
		_ = s.mp.Shutdown(context.Background())
		_ = s.tp.Shutdown(context.Background())
	})
	return s
}

// point is one series' value: a counter's or gauge's value, or a
// histogram's count and sum.
type point struct {
	Value float64
	Count uint64
	Sum   float64
}

// collect returns every series the reader sees now, keyed
// `name{k=v,k=v}` with the attributes sorted.
func (s *sdk) collect(t *testing.T) map[string]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, s.reader.Collect(context.Background(), &rm))
	out := map[string]point{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			addPoints(out, m)
		}
	}
	return out
}

func addPoints(out map[string]point, m metricdata.Metrics) {
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out[key(m.Name, p.Attributes)] = point{Value: float64(p.Value)}
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out[key(m.Name, p.Attributes)] = point{Value: p.Value}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out[key(m.Name, p.Attributes)] = point{Value: float64(p.Value)}
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out[key(m.Name, p.Attributes)] = point{Value: p.Value}
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			out[key(m.Name, p.Attributes)] = point{Count: p.Count, Sum: float64(p.Sum)}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out[key(m.Name, p.Attributes)] = point{Count: p.Count, Sum: p.Sum}
		}
	}
}

func key(name string, set attribute.Set) string {
	var kv []string
	for _, a := range set.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.Emit())
	}
	sort.Strings(kv)
	return name + "{" + strings.Join(kv, ",") + "}"
}

// only keeps the series of the metrics named.
func only(all map[string]point, names ...string) map[string]point {
	out := map[string]point{}
	for k, v := range all {
		for _, n := range names {
			if strings.HasPrefix(k, n+"{") {
				out[k] = v
			}
		}
	}
	return out
}

func httpErr(code, retryAfter int) error {
	h := http.Header{}
	if retryAfter >= 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	return &classify.StatusError{Code: code, Header: h}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
