package memnet_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry/examples/internal/memnet"
)

// TestTimersFireInTheOrderOfTheirDeadlines is why the package exists: a
// server that takes 800ms and a client that waits 400ms, in a bubble, end the
// same way every run — the client gives up, at 400ms of fake time.
func TestTimersFireInTheOrderOfTheirDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := memnet.Listen()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(800 * time.Millisecond)
			io.WriteString(w, "late")
		})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		tr := ln.Transport()
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}

		ctx, cancel := context.WithTimeout(t.Context(), 400*time.Millisecond)
		defer cancel()
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://anywhere/", nil)
		_, err := client.Do(req)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 400*time.Millisecond {
			t.Errorf("after %v: %v; want the client's deadline at 400ms", time.Since(start), err)
		}
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, "http://anywhere/", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "late" {
			t.Errorf("body %q, want the handler's", body)
		}
		if err := srv.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
}

func TestAClosedListenerRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := memnet.Listen()
		ln.Close()
		if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v; want net.ErrClosed", err)
		}
		if _, err := ln.DialContext(t.Context(), "tcp", "x:1"); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Dial after Close: %v; want net.ErrClosed", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := memnet.Listen().DialContext(ctx, "tcp", "x:1"); !errors.Is(err, context.Canceled) {
			t.Errorf("Dial with a cancelled context and nobody accepting: %v; want context.Canceled", err)
		}
	})
}
