// Command gateway-client calls an LLM gateway that it fakes itself, with a
// client that follows the gateway's rules for retrying: only failures that
// generated nothing are retried; a timed-out call only when it carries an
// idempotency key, with the gateway's "in progress" answer waited out and the
// stored result collected; a stream only before its first chunk; a 503 with
// Retry-After cools its model down; every call reports its attempts and
// waits, failed ones included.
//
//	go run ./examples/gateway-client      # -v also logs the short waits (DEBUG)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/stream"
)

func main() {
	logs := flag.Bool("log", false, "also print the library's log on stderr: long waits, cooldowns, give-ups")
	verbose := flag.Bool("v", false, "with -log, log short waits too (DEBUG)")
	flag.Parse()
	logger := slog.New(slog.DiscardHandler) // the story on stdout says what happened; the log only when asked for
	if *logs {
		level := slog.LevelInfo
		if *verbose {
			level = slog.LevelDebug
		}
		logger = newLogger(os.Stderr, level)
	}
	if err := runOnLoopback(context.Background(), os.Stdout, logger); err != nil {
		fmt.Fprintln(os.Stderr, "gateway-client:", err)
		os.Exit(1)
	}
}

// runOnLoopback runs the tour against a gateway on a free loopback port.
func runOnLoopback(ctx context.Context, w io.Writer, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := http.DefaultTransport.(*http.Transport).Clone() // its own pool, closed on return
	return run(ctx, w, logger, ln, base)
}

// newLogger logs without timestamps, for output that reads the same every run.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
}

// run serves the fake gateway on ln, makes the tour's calls through base,
// and prints one line per call, then the gateway's side.
func run(ctx context.Context, w io.Writer, logger *slog.Logger, ln net.Listener, base *http.Transport) error {
	gw := newGateway()
	stop := serve(gw, ln)
	defer stop()
	defer base.CloseIdleConnections()
	url := "http://" + ln.Addr().String()
	client, err := NewClient(ClientOptions{URL: url, Base: base, Logger: logger})
	if err != nil {
		return err
	}
	optIn, err := NewClient(ClientOptions{URL: url, Base: base, Logger: logger, RetryUpstreamErrors: true})
	if err != nil {
		return err
	}
	for _, s := range scenarios(client, optIn) {
		c, err := s.call(ctx)
		fmt.Fprintf(w, "%-40s attempts=%d waited=%-5v  %s: %s\n",
			s.asked, c.Meta.Attempts, c.Meta.Waited.Round(10*time.Millisecond), outcome(c, err), why(c, err))
	}
	base.CloseIdleConnections()    // so that the server's shutdown finds no connection open
	if err := stop(); err != nil { // waits for the generations still running
		return err
	}
	summary(w, gw.stats())
	return ctx.Err()
}

// serve serves h on ln. stop closes ln and waits for the requests still
// running — generations whose client has given up included — to finish; it
// may be called more than once.
func serve(h http.Handler, ln net.Listener) (stop func() error) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return sync.OnceValue(func() error {
		err := srv.Shutdown(context.Background())
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		return err
	})
}

// scenario is one call: what is asked, and the call.
type scenario struct {
	asked string
	call  func(context.Context) (Completion, error)
}

// scenarios are the calls of the tour. The prompts are the fake gateway's
// script (see gateway): "503 429 summary" is answered 503, then 429, then
// generated.
func scenarios(c, optIn *Client) []scenario {
	const qwen, llama = "qwen3-0.6b", "llama-70b"
	key := idempotency.NewKey // one key per logical call, kept across its retries
	return []scenario{
		{"503, then 429 + Retry-After 1s", complete(c, ChatRequest{qwen, "503 429 summary", "order-4417-summary"})},
		{"same key, another prompt", complete(c, ChatRequest{qwen, "translate it", "order-4417-summary"})},
		{"502 upstream-error", complete(c, ChatRequest{qwen, "502 502", key()})},
		{"502 upstream-error, opted in to a retry", complete(optIn, ChatRequest{qwen, "502 502 502", key()})},
		{"429 spend-cap-exceeded + Retry-After 1s", complete(c, ChatRequest{qwen, "spend-cap", key()})},
		{"slow generation, no key", complete(c, ChatRequest{qwen, "slow", ""})},
		{"slow generation, keyed", complete(c, ChatRequest{qwen, "slow", key()})},
		{"key of 300 characters", complete(c, ChatRequest{qwen, "hello", strings.Repeat("k", 300)})},
		{"llama-70b: 503 + Retry-After 30s", complete(c, ChatRequest{llama, "down-30s", key()})},
		{"llama-70b again", complete(c, ChatRequest{llama, "hello", key()})},
		{"qwen3-0.6b, same host", complete(c, ChatRequest{qwen, "hello", key()})},
		{"stream, refused once (503)", openStream(c, ChatRequest{qwen, "503", ""})},
		{"stream, breaks after 3 chunks", openStream(c, ChatRequest{qwen, "break", ""})},
	}
}

func complete(c *Client, cr ChatRequest) func(context.Context) (Completion, error) {
	return func(ctx context.Context) (Completion, error) { return c.Complete(ctx, cr) }
}

func openStream(c *Client, cr ChatRequest) func(context.Context) (Completion, error) {
	return func(ctx context.Context) (Completion, error) { return c.Stream(ctx, cr) }
}

// outcome says what came back.
func outcome(c Completion, err error) string {
	var api *APIError
	var broke *stream.Error[httpretry.Event]
	switch {
	case err == nil && c.Meta.IdempotentReplay:
		return fmt.Sprintf("ok %q, a replay of %s", c.Text, c.Meta.IdempotentReplayOf)
	case err == nil && c.ID != "":
		return fmt.Sprintf("ok %q from %s", c.Text, c.ID)
	case err == nil:
		return fmt.Sprintf("ok %q", c.Text)
	case errors.As(err, &broke):
		return fmt.Sprintf("broke, partial %q", c.Text)
	case errors.As(err, &api):
		return fmt.Sprintf("%d %s (%s, %s)", api.Code, api.Kind, api.RequestID, api.TraceID)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %v", clientTimeout)
	case errors.Is(err, breaker.ErrCooldown):
		return "failed locally, no request sent"
	case errors.Is(err, retry.ErrInvalid):
		return "refused before sending"
	}
	return "failed"
}

// why says why the call stopped, from the errors the library returned.
func why(c Completion, err error) string {
	var (
		broke *stream.Error[httpretry.Event]
		cool  *breaker.CooldownError
		once  *httpretry.NotRetriedError
		rerr  *retry.Error
		bad   *retry.InvalidError
	)
	switch {
	case err == nil && c.Meta.IdempotentReplay:
		return "collected the stored result: not billed again"
	case err == nil:
		return "answered"
	case errors.As(err, &broke):
		return fmt.Sprintf("not retried after the first chunk: %v", broke.Err)
	case errors.As(err, &cool):
		return fmt.Sprintf("%s cooling down (%v left)", cool.Key, cool.Left.Round(time.Second))
	case errors.As(err, &once) && errors.Is(err, context.DeadlineExceeded):
		return "not retried, no Idempotency-Key: the gateway is probably still generating it"
	case errors.As(err, &once):
		return "sent once: " + once.Reason
	case errors.As(err, &rerr) && rerr.RetryAfter > 0:
		return fmt.Sprintf("%v: Retry-After %v returned, not slept", rerr.Reason, rerr.RetryAfter.Round(time.Second))
	case errors.As(err, &rerr):
		return fmt.Sprintf("%v (%s)", rerr.Reason, rerr.Decision.Reason)
	case errors.As(err, &bad):
		return fmt.Sprintf("Idempotency-Key: %v", bad.Err)
	}
	return err.Error()
}

func summary(w io.Writer, s stats) {
	fmt.Fprintf(w, "gateway: %d requests (llama-70b: %d), %d generations billed (%d finished after their client had timed out), %d replay not billed\n",
		s.requests, s.perModel["llama-70b"], s.generations, s.abandoned, s.replays)
}
