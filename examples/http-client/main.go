// Command http-client calls a flaky HTTP server that it starts itself,
// through httpretry: a GET that is retried, a POST sent once because it has
// no Idempotency-Key, the same POST retried because it has one, and a
// streamed response retried only before its first event. It prints what
// happened to each, attempts and waits included.
//
//	go run ./examples/http-client
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/stream"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "http-client:", err)
		os.Exit(1)
	}
}

// flaky fails the first two requests of every path — a 503, then a 502 —
// and answers the third. (A hang-up would not show: net/http itself resends
// an idempotent request once when a reused connection closes before any
// response.)
type flaky struct {
	mu   sync.Mutex
	hits map[string]int
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits[r.URL.Path]++
	n := f.hits[r.URL.Path]
	f.mu.Unlock()
	switch n {
	case 1:
		w.Header().Set("Retry-After", "0")
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	case 2:
		http.Error(w, "bad gateway", http.StatusBadGateway)
	default:
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: Hello\n\ndata: world\n\ndata: [DONE]\n\n")
			return
		}
		fmt.Fprintf(w, "ok %s %s", r.Method, r.URL.Path)
	}
}

func run(ctx context.Context, w io.Writer) error {
	srv := httptest.NewServer(&flaky{hits: map[string]int{}})
	defer srv.Close()
	client, r, err := newClient(http.DefaultTransport)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	for _, c := range []struct{ method, path, key string }{
		{http.MethodGet, "/users/7", ""},
		{http.MethodPost, "/orders", ""},
		{http.MethodPost, "/orders/keyed", "order-4417"},
	} {
		if err := call(ctx, w, client, srv.URL, c.method, c.path, c.key); err != nil {
			return err
		}
	}
	return streamEvents(ctx, w, r, srv.URL+"/stream")
}

// newClient returns the client of every call, sending through base, and its
// Retrier.
func newClient(base http.RoundTripper) (*http.Client, *retry.Retrier, error) {
	r, err := retry.New(retry.WithMaxAttempts(4), retry.WithBackoff(backoff.Exponential{Base: 50 * time.Millisecond}))
	if err != nil {
		return nil, nil, err
	}
	client, err := httpretry.NewClient(r, httpretry.WithBase(base))
	return client, r, err
}

func call(ctx context.Context, w io.Writer, client *http.Client, base, method, path, key string) error {
	var res httpretry.Result // the call's attempts and waits, filled in by the transport
	ctx, err := httpretry.WithResult(ctx, &res)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(`{"sku":1}`))
	if err != nil {
		return err
	}
	label := method + " " + path
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
		label += " (with a key)"
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(w, "%-32s failed: %v\n", label, err)
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Fprintf(w, "%-32s %d %q after %d attempt(s), waited %v\n", label, resp.StatusCode, body, res.Attempts, res.Waited.Round(10*time.Millisecond))
	var once *httpretry.NotRetriedError
	switch {
	case errors.As(res.Err, &once): // the short form: the whole error names the URL and the attempt again
		fmt.Fprintf(w, "%-32s why: sent once, not retried: %s\n", "", once.Reason)
	case res.Err != nil:
		fmt.Fprintf(w, "%-32s why: %v\n", "", res.Err)
	}
	return nil
}

func streamEvents(ctx context.Context, w io.Writer, r *retry.Retrier, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	s, err := stream.Open(ctx, r, httpretry.OpenSSE(nil, req))
	if err != nil {
		fmt.Fprintf(w, "%-32s failed: %v\n", "GET /stream", err)
		return nil
	}
	defer s.Close()
	var words []string
	for e, err := range s.All() {
		if err != nil {
			fmt.Fprintf(w, "%-32s broke: %v\n", "GET /stream", err)
			return nil
		}
		words = append(words, e.Data)
	}
	fmt.Fprintf(w, "%-32s %q after %d attempt(s), waited %v\n", "GET /stream (events)", strings.Join(words, " "), s.Stats().Attempts, s.Stats().Waited.Round(10*time.Millisecond))
	return nil
}
