package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/dashboard"
	dlqredis "github.com/retrykit/retry/dlq/redis"
)

// serve runs the dashboard until ctx ends (Ctrl-C).
func serve(ctx context.Context, e *env, args []string) error {
	fs := newFlags("dlq serve", e.globals)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on this `ADDRESS`; any but a loopback one needs a token")
	tokenFile := fs.String("token-file", "", "require the token in this `FILE` (default: $DLQ_TOKEN, if set)")
	command := fs.String("exec", "", "replay through this shell command (payload on stdin); the default for Redis is the job's source list, for SQLite no replay")
	if err := e.command("serve", fs, args, 0); err != nil {
		return err
	}
	token, err := readToken(*tokenFile)
	if err != nil {
		return err
	}
	if token == "" && !loopback(*addr) {
		return fmt.Errorf("%w: --addr %s is not a loopback address: anyone who reaches it could replay and purge letters; give a token (--token-file FILE or DLQ_TOKEN), or listen on 127.0.0.1", errUsage, *addr)
	}
	q, closeQ, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer closeQ()
	opts := []dashboard.Option{}
	if token != "" {
		opts = append(opts, dashboard.WithToken(token))
	}
	d, err := dashboard.New(q, serveTarget(q, *command, e), opts...)
	if err != nil {
		return err
	}
	defer d.Close()
	return listen(ctx, e, *addr, d)
}

// serveTarget is where the dashboard's replays go: the command, Redis's
// source lists, or nowhere (replay off) for SQLite without a command.
func serveTarget(q dlq.Queue, command string, e *env) dlq.Enqueuer {
	if command != "" {
		return execEnqueuer{command: command, stderr: e.errw}
	}
	if rq, ok := q.(*dlqredis.Queue); ok {
		return rq.ToSource()
	}
	fmt.Fprintln(e.errw, "dlq: replay is off: a SQLite queue knows no source queue (give --exec CMD to enqueue each job)")
	return nil
}

func readToken(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv("DLQ_TOKEN")), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("%w: --token-file %s is empty", errUsage, file)
	}
	return t, nil
}

// loopback reports whether addr listens on a loopback interface only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listen serves h on addr until ctx ends, then shuts down: requests in
// flight get 5s to finish, then every connection left is closed.
func listen(ctx context.Context, e *env, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(e.errw, "dlq: serving the dashboard of %s at http://%s/\n", e.queueName(), ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shut)
	if errors.Is(err, context.DeadlineExceeded) {
		// A browser keeps connections it opened ahead of need, and a
		// connection that has not sent a request counts as busy for its
		// first 5s: close what is left rather than fail the exit.
		fmt.Fprintln(e.errw, "dlq: connections still open 5s after the interrupt: closed")
		err = srv.Close()
	}
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
