package httpretry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/stream"
)

func ExampleNewClient() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	r, _ := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)))
	client, _ := httpretry.NewClient(httpretry.WithRetrier(r))
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	res, _ := httpretry.ResultOf(resp)
	fmt.Println(resp.StatusCode, string(body), res.Attempts)
	// Output: 200 hello 3
}

func ExampleNewClient_post() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	client, _ := httpretry.NewClient()

	// Without an Idempotency-Key a POST is sent once: repeating it could
	// create two orders.
	resp, _ := client.Post(srv.URL+"/orders", "application/json", strings.NewReader(`{}`))
	resp.Body.Close()
	res, _ := httpretry.ResultOf(resp)
	fmt.Println(hits.Load(), res.Attempts)
	fmt.Println(strings.Contains(res.Err.Error(), "not safe to repeat"))
	// Output:
	// 1 1
	// true
}

func ExampleOpenSSE() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: Hello\n\ndata: world\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	r, err := retry.New()
	if err != nil {
		panic(err)
	}
	s, err := stream.Open(context.Background(), r, httpretry.OpenSSE(nil, req))
	if err != nil {
		fmt.Println(err) // refused before the first event, after retries
		return
	}
	defer s.Close()
	for e, err := range s.All() {
		if err != nil {
			fmt.Println(err) // broke after the first event: not retried, partial output attached
			break
		}
		fmt.Println(e.Data)
	}
	// Output:
	// Hello
	// world
}

func ExampleRedact() {
	u, _ := http.NewRequest(http.MethodGet, "https://user:pass@api.example/v1/chat?api_key=sk-123", nil)
	fmt.Println(httpretry.Redact(u.URL))
	// Output: https://api.example/v1/chat?api_key=REDACTED
}
