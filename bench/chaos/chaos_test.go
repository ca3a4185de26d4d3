package chaosbench

import (
	"context"
	"net/http"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/httpretry"
)

// off is a scenario with a fault on every call, switched off.
func off(b *testing.B) *chaos.Scenario {
	s, err := chaos.New(chaos.Config{Rules: []chaos.Rule{{Fault: chaos.ResetAfterSend()}}})
	if err != nil {
		b.Fatal(err)
	}
	s.Enable(false)
	return s
}

// ok is the function of the function rows: it succeeds at once.
func ok(context.Context) error { return nil }

// canned answers every request in memory with a new 200, so that the
// network does not drown the wrappers' own cost.
type canned struct{}

func (canned) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

// BenchmarkChaosOffFunc: the bare function, the same wrapped by a disabled
// scenario, and both under a Retrier's Do (no retry budget, as in a test).
func BenchmarkChaosOffFunc(b *testing.B) {
	r, err := retry.New(retry.WithoutBudget())
	if err != nil {
		b.Fatal(err)
	}
	wrapped := chaos.Wrap(off(b), ok)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"bare", func() error { return ok(ctx) }},
		{"chaos-off", func() error { return wrapped(ctx) }},
		{"retry/bare", func() error { return r.Do(ctx, ok) }},
		{"retry/chaos-off", func() error { return r.Do(ctx, wrapped) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.call()
			}
		})
	}
}

// BenchmarkChaosOffHTTP: the canned transport, the same under a disabled
// scenario, and both as the base of httpretry.
func BenchmarkChaosOffHTTP(b *testing.B) {
	r, err := retry.New(retry.WithoutBudget())
	if err != nil {
		b.Fatal(err)
	}
	tr := func(base http.RoundTripper) http.RoundTripper {
		t, err := httpretry.New(r, httpretry.WithBase(base))
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	s := off(b)
	req, err := http.NewRequest(http.MethodGet, "http://example.com/", nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"bare", canned{}},
		{"chaos-off", s.Transport(canned{})},
		{"httpretry/bare", tr(canned{})},
		{"httpretry/chaos-off", tr(s.Transport(canned{}))},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, _ := c.rt.RoundTrip(req)
				_ = resp.Body.Close()
			}
		})
	}
}
