// Command idempotent-server is an HTTP server whose POST /orders is guarded
// by the idempotency middleware on the in-memory store: a request with a key
// it has seen replays the stored response instead of placing the order again.
// It serves until interrupted; README.md walks through it with curl.
//
//	go run ./examples/idempotent-server -addr 127.0.0.1:8080
//	curl -si -X POST -H 'Idempotency-Key: order-1' -d '{"item":"book"}' localhost:8080/orders
//
// Placing an order increments a counter (the side effect); ?delay=200ms holds
// the request in flight that long after it. GET /stats reports the counter.
//
// The endpoint is public: no credential means anything to it, so its
// clients are told apart by their address (idempotency.WithScope), and one
// that floods it — with junk cookies, junk credentials or none — holds one
// share of the store, a tenth, while every other address is served.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/retrykit/retry/idempotency"
)

// maxDelay bounds ?delay, so that a request cannot hold the server for
// long; shutdown waits for requests in flight up to shutdownGrace.
const (
	maxDelay      = 10 * time.Second
	shutdownGrace = maxDelay + 5*time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "idempotent-server:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, then shuts down gracefully. It prints the
// address it listens on first, so that -addr 127.0.0.1:0 can be used.
func run(ctx context.Context, args []string, out io.Writer) error {
	flags := flag.NewFlagSet("idempotent-server", flag.ContinueOnError)
	flags.SetOutput(out)
	addr := flags.String("addr", "127.0.0.1:8080", "address to listen on")
	if err := flags.Parse(args); err != nil {
		return err
	}
	handler, err := newHandler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "listening on http://%s\n", ln.Addr())
	return serve(ctx, &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}, ln)
}

func serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// orders places orders: its side effect is the count of executions.
type orders struct {
	executions atomic.Int64
}

func newHandler() (http.Handler, error) {
	store, err := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
	if err != nil {
		return nil, err
	}
	guard, err := idempotency.Middleware(store, idempotency.WithScope(clientAddress))
	if err != nil {
		return nil, err
	}
	o := &orders{}
	mux := http.NewServeMux()
	mux.Handle("POST /orders", guard(http.HandlerFunc(o.place)))
	mux.HandleFunc("GET /stats", o.stats)
	return mux, nil
}

// clientAddress is a request's client on this public endpoint: its address,
// or for IPv6 its /64, what one subscriber gets. Whatever else a client
// sends — cookies, credentials — it stays one client, with one share of the
// store. (Behind a proxy every request comes from the proxy: use the address
// the proxy forwards instead, if it overwrites any that a client sent.)
func clientAddress(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// place places an order: it counts one execution, then holds the request
// for ?delay, then answers 201 with the order's number and what was ordered.
func (o *orders) place(w http.ResponseWriter, r *http.Request) {
	delay, err := parseDelay(r.URL.Query().Get("delay"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unreadable body"})
		return
	}
	n := o.executions.Add(1)
	// The order is placed: finish the response even if the client has gone,
	// so that the middleware stores it and the client's retry gets it back
	// instead of placing the order again.
	time.Sleep(delay)
	writeJSON(w, http.StatusCreated, map[string]any{"order": n, "request": string(body)})
}

func parseDelay(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxDelay {
		return 0, fmt.Errorf("delay %q: want a duration between 0 and %v, e.g. 200ms", s, maxDelay)
	}
	return d, nil
}

func (o *orders) stats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]int64{"executions": o.executions.Load()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
