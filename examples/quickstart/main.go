// Command quickstart retries a flaky in-process function, then an HTTP server
// that answers 503, then 429 with Retry-After, then 200 — and prints the
// attempts and the waits. It needs no server: the HTTP one runs in-process.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/observe"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	r, err := retry.New(retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
		if e.Kind == observe.RetryScheduled {
			fmt.Fprintf(w, "  attempt %d failed (%s): waiting %v\n", e.Attempt, e.Decision.Reason, e.Delay.Round(time.Microsecond))
		}
	})))
	if err != nil {
		return err
	}
	if err := flakyFunction(ctx, w, r); err != nil {
		return err
	}
	return flakyServer(ctx, w, r)
}

// flakyFunction fails twice with a connection reset, then succeeds.
func flakyFunction(ctx context.Context, w io.Writer, r *retry.Retrier) error {
	fmt.Fprintln(w, "flaky function:")
	calls := 0
	stats, err := r.Run(ctx, func(context.Context) error {
		if calls++; calls <= 2 {
			return fmt.Errorf("send: %w", syscall.ECONNRESET)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  ok after %d attempts, waited %v\n", stats.Attempts, stats.Waited.Round(time.Microsecond))
	return nil
}

// flakyServer calls a server that answers 503, then 429 with Retry-After: 1,
// then 200.
func flakyServer(ctx context.Context, w io.Writer, r *retry.Retrier) error {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		switch hits.Add(1) {
		case 1:
			http.Error(rw, "overloaded", http.StatusServiceUnavailable)
		case 2:
			rw.Header().Set("Retry-After", "1")
			http.Error(rw, "slow down", http.StatusTooManyRequests)
		default:
			fmt.Fprint(rw, "hello")
		}
	}))
	defer srv.Close()

	fmt.Fprintln(w, "flaky server:")
	body, stats, err := retry.Value(ctx, r, func(ctx context.Context) (string, error) {
		return get(ctx, srv.URL)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %q after %d attempts, waited %v (the server asked for 1s)\n", body, stats.Attempts, stats.Waited.Round(100*time.Millisecond))
	return nil
}

// get returns the body of a 2xx response, or a *classify.StatusError that
// carries the status and the Retry-After header.
func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if err := classify.ResponseError(resp); err != nil {
		return "", err
	}
	return string(body), nil
}
