package httpretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
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

	r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)))
	if err != nil {
		panic(err)
	}
	client, err := httpretry.NewClient(r)
	if err != nil {
		panic(err)
	}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body), hits.Load())
	// Output: 200 hello 3
}

func ExampleNewClient_post() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	r, err := retry.New()
	if err != nil {
		panic(err)
	}
	client, err := httpretry.NewClient(r)
	if err != nil {
		panic(err)
	}

	// Without an Idempotency-Key a POST is sent once: repeating it could
	// create two orders. The Result says so.
	var res httpretry.Result
	ctx, err := httpretry.WithResult(context.Background(), &res)
	if err != nil {
		panic(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader(`{}`))
	if err != nil {
		panic(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(hits.Load(), res.Attempts)
	fmt.Println(strings.Contains(res.Err.Error(), "not safe to repeat"))
	// Output:
	// 1 1
	// true
}

func ExampleMintKeys() {
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get(idempotency.HeaderKey))
		if len(keys) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	// For a server that honours Idempotency-Key: a POST without a key gets
	// one, the same on every attempt, so it may be retried.
	r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)))
	if err != nil {
		panic(err)
	}
	client, err := httpretry.NewClient(r, httpretry.MintKeys())
	if err != nil {
		panic(err)
	}
	resp, err := client.Post(srv.URL+"/orders", "application/json", strings.NewReader(`{"sku":1}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, len(keys), keys[0] == keys[1], len(keys[0]))
	// Output: 201 2 true 26
}

func ExampleNew() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	// The Retrier holds the policy and every stage; its observer hears each
	// attempt of every request — here, counted by status class, as a metric
	// would. An error status reaches it as a *classify.StatusError.
	byClass := func(_ context.Context, e observe.Event) {
		if e.Kind != observe.AttemptDone {
			return
		}
		class := "2xx"
		var se *classify.StatusError
		if errors.As(e.Err, &se) {
			class = strconv.Itoa(se.Code/100) + "xx"
		}
		fmt.Println("attempt", e.Attempt, class)
	}
	r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithObserver(observe.Func(byClass)))
	if err != nil {
		panic(err)
	}
	tr, err := httpretry.New(r)
	if err != nil {
		panic(err)
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/items?token=secret")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// attempt 1 5xx
	// attempt 2 2xx
	// 200
}

// A Retrier with breakers and cooldowns, keyed by each request's (host,
// model): a 503 with Retry-After cools its model down, for this call and
// every other, while another model of the same host is still served.
func ExampleWithModel() {
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		if r.Header.Get("X-Model") == "qwen3" {
			w.Header().Set("Retry-After", "600") // ten minutes: longer than the Retrier's MaxDelay
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	breakers, err := breaker.New(breaker.Config{})
	if err != nil {
		panic(err)
	}
	cooldowns, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	if err != nil {
		panic(err)
	}
	r, err := retry.New(retry.WithBreakers(breakers), retry.WithCooldowns(cooldowns))
	if err != nil {
		panic(err)
	}
	client, err := httpretry.NewClient(r, httpretry.WithModel(func(req *http.Request) string { return req.Header.Get("X-Model") }))
	if err != nil {
		panic(err)
	}
	defer client.CloseIdleConnections()
	ask := func(model string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/chat", nil)
		req.Header.Set("X-Model", model)
		resp, err := client.Do(req)
		switch {
		case errors.Is(err, breaker.ErrCooldown):
			fmt.Println(model+": cooling down, not sent; sent so far:", sent.Load())
		case err != nil:
			fmt.Println(model+":", err)
		default:
			resp.Body.Close()
			fmt.Println(model+":", resp.StatusCode, "sent so far:", sent.Load())
		}
	}
	ask("qwen3") // a 503 asking for ten minutes: returned, not slept
	ask("qwen3") // the model cools down
	ask("llama") // another model of the host is served
	// Output:
	// qwen3: 503 sent so far: 1
	// qwen3: cooling down, not sent; sent so far: 1
	// llama: 200 sent so far: 2
}

func ExampleWithResult() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer srv.Close()

	r, err := retry.New()
	if err != nil {
		panic(err)
	}
	client, err := httpretry.NewClient(r)
	if err != nil {
		panic(err)
	}
	var res httpretry.Result // filled in before Do returns
	ctx, err := httpretry.WithResult(context.Background(), &res)
	if err != nil {
		panic(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		panic(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	// The server asked for two minutes, more than the policy's 30s MaxDelay:
	// the transport returns the 429 at once, with the wait for the caller.
	var rerr *retry.Error
	if errors.As(res.Err, &rerr) {
		fmt.Println(resp.StatusCode, res.Attempts, rerr.RetryAfter, errors.Is(res.Err, retry.ErrWaitTooLong))
	}
	// Output: 429 1 2m0s true
}

func ExampleTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	// The zero Transport sends through http.DefaultTransport under the
	// default retry policy, as http.Client's zero value does.
	client := &http.Client{Transport: &httpretry.Transport{}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
	// Output: hello
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
