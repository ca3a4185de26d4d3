package otelretry

import (
	"context"
	"errors"

	"github.com/retrykit/retry/httpretry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Attribute keys of the HTTP client's metrics. KeyMethod is OpenTelemetry's
// semantic-convention attribute; a method outside the well-known set is
// reported as "_OTHER", as the conventions ask.
const (
	KeyClient      = attribute.Key("retry.http.name")         // the name given to NewHTTP
	KeyMethod      = attribute.Key("http.request.method")     // GET, POST, … or _OTHER
	KeyStatusClass = attribute.Key("retry.http.status_class") // 1xx … 5xx, or error
	KeyOnce        = attribute.Key("retry.http.once")         // true: the request is not safe to repeat
)

var (
	methods      = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE", "_OTHER"}
	statusClass  = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx", "error"}
	otherMethod  = len(methods) - 1
	errorClass   = len(statusClass) - 1
	httpOnceVals = [2]bool{false, true}
)

// HTTP observes the attempts of an httpretry client: pass Hook to
// httpretry.WithHook. It reports retry.http.attempts, a counter, and
// retry.http.attempt.duration, a histogram in seconds (to the response's
// header, or the error), both by method, status class and whether the request
// is sent once. Neither carries a URL, a header or a body. The waits and
// give-ups of the client's retry loop are the Retrier's: give an otelretry
// Retrier's Hook to the retry.Retrier the client uses.
type HTTP struct {
	attempts metric.Int64Counter
	duration metric.Float64Histogram
	add      [len(methods)][len(statusClass)][2]addOpts
	record   [len(methods)][len(statusClass)][2]recordOpts
}

// NewHTTP makes the instruments of the HTTP client named name (the
// retry.http.name attribute). It returns a *retry.InvalidError for an empty
// name or a bad option.
func NewHTTP(name string, opts ...Option) (*HTTP, error) {
	if err := checkName("otelretry.NewHTTP", name); err != nil {
		return nil, err
	}
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	o := &HTTP{}
	n := KeyClient.String(name)
	for i, m := range methods {
		for j, s := range statusClass {
			for k, once := range httpOnceVals {
				kvs := []attribute.KeyValue{n, KeyMethod.String(m), KeyStatusClass.String(s), KeyOnce.Bool(once)}
				o.add[i][j][k], o.record[i][j][k] = newAddOpts(kvs...), newRecordOpts(kvs...)
			}
		}
	}
	m := c.mp.Meter(scope)
	var err1, err2 error
	o.attempts, err1 = m.Int64Counter("retry.http.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("HTTP attempts the retrying client made, by method and status class."))
	o.duration, err2 = m.Float64Histogram("retry.http.attempt.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of an HTTP attempt, to its response's header or its error."),
		metric.WithExplicitBucketBoundaries(LatencyBuckets...))
	return o, errors.Join(err1, err2)
}

// Hook records a. Pass it to httpretry.WithHook.
func (o *HTTP) Hook(ctx context.Context, a httpretry.Attempt) {
	if o == nil || o.attempts == nil || ctx == nil {
		return
	}
	i, j, k := otherMethod, errorClass, 0
	for x, m := range methods[:otherMethod] {
		if a.Method == m {
			i = x
		}
	}
	sc := a.StatusClass()
	for x, s := range statusClass {
		if sc == s {
			j = x
		}
	}
	if a.Once != "" {
		k = 1
	}
	o.attempts.Add(ctx, 1, o.add[i][j][k]...)
	o.duration.Record(ctx, a.Elapsed.Seconds(), o.record[i][j][k]...)
}
