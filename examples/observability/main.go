// Command observability runs a flaky workload through a Retrier that holds a
// retry budget and a circuit breaker, all observed by one otelretry Observer,
// and serves
// the metrics on /metrics through OpenTelemetry's Prometheus exporter. It
// prints a few of the series it serves, read from its own endpoint the way
// Prometheus would scrape them.
//
//	go run ./examples/observability            # print, then exit
//	go run ./examples/observability -serve :9464  # keep serving /metrics
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/otelretry"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func main() {
	serve := flag.String("serve", "", "keep serving /metrics on this address after the workload (e.g. :9464)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *serve); err != nil {
		fmt.Fprintln(os.Stderr, "observability:", err)
		os.Exit(1)
	}
}

// run starts the metrics server, runs the workload, prints some series, and,
// with an address to serve on, serves until ctx ends.
func run(ctx context.Context, w io.Writer, serve string) error {
	addr := "127.0.0.1:0"
	if serve != "" {
		addr = serve
	}
	a, err := start(addr)
	if err != nil {
		return err
	}
	defer a.close()
	t, err := a.workload(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "200 calls to %q: one attempt in four fails with a 503 until call 150, then every attempt.\n", key.Target)
	fmt.Fprintf(w, "%d succeeded; the retry budget stopped %d; the breaker opened and refused %d at once.\n", t.ok, t.budget, t.open)
	if t.other > 0 {
		fmt.Fprintf(w, "%d failed otherwise.\n", t.other)
	}
	fmt.Fprintln(w, "What a dashboard reads of it, scraped from /metrics (otel_scope labels left out):")
	if err := a.print(ctx, w); err != nil {
		return err
	}
	if serve != "" {
		fmt.Fprintf(w, "serving http://%s/metrics until interrupted\n", a.ln.Addr())
		<-ctx.Done()
	}
	return nil
}

// app is the observed workload and the server of its metrics.
type app struct {
	mp      *sdkmetric.MeterProvider
	ln      net.Listener
	srv     *http.Server
	done    chan struct{}
	retrier *retry.Retrier
	obs     *otelretry.Observer
}

// key is the call key of the workload's calls: the Retrier's breakers keep
// one breaker per key, and the metrics name a breaker by its key.
var key = breaker.Key{Target: "inventory"}

// start builds the meter provider on a Prometheus registry of its own, the
// observed components, and the server of /metrics on addr.
func start(addr string) (*app, error) {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	a := &app{mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)), done: make(chan struct{})}
	if err := a.build(); err != nil {
		_ = a.mp.Shutdown(context.Background())
		return nil, err
	}
	if a.ln, err = net.Listen("tcp", addr); err != nil {
		a.close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(a.done)
		_ = a.srv.Serve(a.ln)
	}()
	return a, nil
}

// build makes the Retrier with its budget and its breakers, and the one
// otelretry Observer that hears of all of them: the calls, the budget's
// refusals, the breaker's changes and rejections. The budget's tokens are
// read when the metrics are collected (Watch).
func (a *app) build() error {
	var err error
	if a.obs, err = otelretry.New("inventory", otelretry.Config{MeterProvider: a.mp}); err != nil {
		return err
	}
	b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 100, Cost: 5})
	if err != nil {
		return err
	}
	if err := a.obs.Watch(b); err != nil {
		return err
	}
	breakers, err := breaker.New(breaker.Config{Timeout: time.Hour,
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 3 }})
	if err != nil {
		return err
	}
	a.retrier, err = retry.New(retry.WithObserver(a.obs), retry.WithBudget(b), retry.WithBreakers(breakers),
		retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithJitter(jitter.None{}))
	return err
}

// tally counts how the workload's calls ended.
type tally struct{ ok, budget, open, other int }

// workload makes 200 calls to a dependency that fails one attempt in four
// with a 503, then, from call 150 on, every attempt: the budget stops the
// retries, then the breaker opens and rejects the rest. The failures follow
// a fixed pattern, so every run (and the test) sees the same figures.
func (a *app) workload(ctx context.Context) (tally, error) {
	var t tally
	keyed := breaker.WithKey(ctx, key)
	for call := range 200 {
		attempt := 0
		err := a.retrier.Do(keyed, func(context.Context) error {
			attempt++
			if call >= 150 || (call*3+attempt)%4 == 0 {
				return &classify.StatusError{Code: http.StatusServiceUnavailable}
			}
			return nil
		})
		switch {
		case ctx.Err() != nil:
			return t, ctx.Err()
		case err == nil:
			t.ok++
		case errors.Is(err, retry.ErrBudget):
			t.budget++
		case errors.Is(err, retry.ErrBreakerOpen):
			t.open++
		default:
			t.other++
		}
	}
	return t, nil
}

// shown are the series print shows: what the README's questions read.
var shown = []string{
	"retry_call_duration_seconds_count",
	"retry_call_retries_sum",
	"retry_attempts_total",
	"retry_budget_tokens",
	"retry_budget_refusals_total",
	"retry_breaker_state",
	"retry_breaker_rejections_total",
}

// print scrapes the server's /metrics and prints the shown series.
func (a *app) print(ctx context.Context, w io.Writer) error {
	body, err := scrape(ctx, "http://"+a.ln.Addr().String()+"/metrics")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(body, "\n") {
		for _, name := range shown {
			if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
				fmt.Fprintln(w, "  "+stripScope(line))
			}
		}
	}
	return nil
}

// stripScope drops the otel_scope_* labels the exporter adds to every
// series, which say only that the series come from otelretry.
func stripScope(line string) string {
	open, end := strings.IndexByte(line, '{'), strings.LastIndexByte(line, '}')
	if open < 0 || end < open {
		return line
	}
	var keep []string
	for _, l := range strings.Split(line[open+1:end], ",") {
		if !strings.HasPrefix(l, "otel_scope_") {
			keep = append(keep, l)
		}
	}
	return line[:open+1] + strings.Join(keep, ",") + line[end:]
}

func scrape(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", errors.New("scrape: " + resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func (a *app) close() {
	if a.srv != nil {
		_ = a.srv.Close()
		<-a.done
	}
	if a.obs != nil {
		_ = a.obs.Unregister()
	}
	_ = a.mp.Shutdown(context.Background())
	http.DefaultClient.CloseIdleConnections()
}
