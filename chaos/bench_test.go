package chaos_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/retrykit/retry/chaos"
)

// BenchmarkSwitchedOff compares a call through a disabled scenario with the
// bare call, in the same run: the function wrapper and the transport cost
// one atomic load and no allocation. "enabled" is a scenario whose one rule
// never applies (Rate 1e-9), for the cost of drawing.
func BenchmarkSwitchedOff(b *testing.B) {
	off := newScenario(b, chaos.Config{Rules: []chaos.Rule{{Fault: chaos.Refused()}}})
	off.Enable(false)
	quiet := newScenario(b, chaos.Config{Rules: []chaos.Rule{{Fault: chaos.Refused(), Rate: 1e-9}}})
	op := func(context.Context) error { return nil }
	ctx := context.Background()
	for _, f := range []struct {
		name string
		op   func(context.Context) error
	}{{"func/bare", op}, {"func/off", chaos.Wrap(off, op)}, {"func/enabled", chaos.Wrap(quiet, op)}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = f.op(ctx)
			}
		})
	}
	resp := &http.Response{StatusCode: 200}
	base := roundTripper(func(*http.Request) (*http.Response, error) { return resp, nil })
	req := get(b, "http://example.com/")
	for _, t := range []struct {
		name string
		rt   http.RoundTripper
	}{{"transport/bare", base}, {"transport/off", off.Transport(base)}, {"transport/enabled", quiet.Transport(base)}} {
		b.Run(t.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = t.rt.RoundTrip(req)
			}
		})
	}
}
