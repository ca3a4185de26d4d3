package httpretry_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/httpretry"
)

// canned answers every request in memory with a new 200 and an empty body,
// as http.Transport hands back a new response: the case HTTPSuccess of the
// bench module, so that the transport's own cost shows.
type canned struct{ header http.Header }

func (c canned) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{Status: "OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: c.header, Body: http.NoBody, Request: req}, nil
}

// BenchmarkHTTPSuccess is a GET that succeeds at once: plain is the canned
// transport alone, the others a Transport over it — with the default
// Retrier; asking for the Result; with cooldowns, which read the call key.
func BenchmarkHTTPSuccess(b *testing.B) {
	base := canned{header: http.Header{"Content-Type": {"text/plain"}}}
	cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	if err != nil {
		b.Fatal(err)
	}
	var res httpretry.Result
	withResult, err := httpretry.WithResult(context.Background(), &res)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		opts []retry.Option
		ctx  context.Context
	}{
		{"plain", nil, context.Background()},
		{"retry", nil, context.Background()},
		{"retry_result", nil, withResult},
		{"retry_keyed", []retry.Option{retry.WithCooldowns(cd)}, context.Background()},
	} {
		rt := http.RoundTripper(base)
		if bc.name != "plain" {
			r, err := retry.New(bc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			if rt, err = httpretry.New(r, httpretry.WithBase(base)); err != nil {
				b.Fatal(err)
			}
		}
		req, err := http.NewRequestWithContext(bc.ctx, http.MethodGet, "http://api.example/v1/items/7", nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
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
}
