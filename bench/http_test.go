package bench

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/failsafehttp"
	retryablehttp "github.com/hashicorp/go-retryablehttp"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/jitter"
)

// canned is the base transport of the HTTP case: it answers every request
// in memory with a new 200 and an empty body, as http.Transport hands back a
// new response, so that the network does not drown the HTTP clients' own
// cost. Each implementation wraps the same canned transport; plain calls it
// directly.
type canned struct {
	header http.Header
	calls  *atomic.Int64 // counted only by the tests, nil in the benchmarks
	fail   int64         // the first fail calls answer 503
}

func (c *canned) RoundTrip(req *http.Request) (*http.Response, error) {
	status := http.StatusOK
	if c.calls != nil && c.calls.Add(1) <= c.fail {
		status = http.StatusServiceUnavailable
	}
	return &http.Response{Status: http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: c.header, Body: http.NoBody, Request: req}, nil
}

func newCanned() *canned { return &canned{header: http.Header{"Content-Type": {"text/plain"}}} }

// The HTTP clients, each with the success policy in its own idiom (3
// attempts, exponential from 100 ms doubling to 10 s) and nothing else: no
// logger, no observer.

func httpRetry(base http.RoundTripper, r *retry.Retrier) http.RoundTripper {
	return must(httpretry.New(r, httpretry.WithBase(base)))
}

// httpRetryablehttp is go-retryablehttp's RoundTripper (what its
// StandardClient uses) over an http.Client with the canned transport: its
// Client.Do sends every attempt through an http.Client.
func httpRetryablehttp(base http.RoundTripper, wait time.Duration) http.RoundTripper {
	c := retryablehttp.NewClient()
	c.HTTPClient = &http.Client{Transport: base}
	c.RetryMax = attempts - 1
	c.RetryWaitMin, c.RetryWaitMax = wait, successCap
	c.Logger = nil // its default logs every request to stderr
	return &retryablehttp.RoundTripper{Client: c}
}

func httpFailsafe(base http.RoundTripper, wait time.Duration) http.RoundTripper {
	rp := failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(attempts).WithBackoff(wait, successCap).Build()
	return failsafehttp.NewRoundTripper(base, rp)
}

// httpImpls names the implementations of the HTTP case.
var httpImpls = []string{"retry", "retryablehttp", "failsafehttp", "plain"}

// httpImpl returns the implementation name over base; wait is the first
// backoff delay (successBase in the benchmark).
func httpImpl(name string, base http.RoundTripper, r *retry.Retrier, wait time.Duration) http.RoundTripper {
	switch name {
	case "retry":
		return httpRetry(base, r)
	case "retryablehttp":
		return httpRetryablehttp(base, wait)
	case "failsafehttp":
		return httpFailsafe(base, wait)
	}
	return base
}

// BenchmarkHTTPSuccess is a GET that succeeds at once, sent through each
// HTTP client's RoundTripper over the canned transport: the cost of the
// retrying client itself. plain is the canned transport alone; the
// overhead of a client is its time above plain's.
func BenchmarkHTTPSuccess(b *testing.B) {
	req := must(http.NewRequest(http.MethodGet, "http://api.example/v1/items/7", nil))
	for _, name := range httpImpls {
		rt := httpImpl(name, newCanned(), successRetry(), successBase)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
	// retry_result is retry for a caller that asks for the call's Result:
	// the cost of reporting it. Its context is made once; a caller who makes
	// one per call spends an allocation more (context.WithValue).
	b.Run("retry_result", func(b *testing.B) {
		var res httpretry.Result
		ctx := must(httpretry.WithResult(context.Background(), &res))
		req := must(http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/v1/items/7", nil))
		rt := httpImpl("retry", newCanned(), successRetry(), successBase)
		b.ReportAllocs()
		for b.Loop() {
			resp, err := rt.RoundTrip(req)
			if err != nil || res.Attempts != 1 {
				b.Fatal(err, res)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	})
}

// TestHTTPImplsRetryAndSucceed checks that every client of the HTTP case
// really retries (a 503, then a 200: two calls of the base) and sends a
// success once (one call).
func TestHTTPImplsRetryAndSucceed(t *testing.T) {
	quick := must(retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithJitter(jitter.None{})))
	for _, fail := range []int64{0, 1} {
		for _, name := range httpImpls {
			base := newCanned()
			base.calls, base.fail = new(atomic.Int64), fail
			req := must(http.NewRequest(http.MethodGet, "http://api.example/v1/items/7", nil))
			resp, err := httpImpl(name, base, quick, time.Millisecond).RoundTrip(req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			resp.Body.Close()
			want := fail + 1
			if name == "plain" {
				want = 1
			}
			if got := base.calls.Load(); got != want {
				t.Errorf("%s with %d failure(s): %d call(s) of the base, want %d", name, fail, got, want)
			}
		}
	}
}
