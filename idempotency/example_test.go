package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
)

func ExampleDo() {
	store, _ := idempotency.NewMemoryStore()
	ctx := context.Background()
	request := []byte(`{"amount":4200,"currency":"EUR"}`)
	fp := idempotency.NewFingerprint(request)
	charge := func(context.Context) ([]byte, error) {
		fmt.Println("charging the card")
		return []byte("receipt-17"), nil
	}

	first, _ := idempotency.Do(ctx, store, "order-4417-charge", fp, charge)
	again, _ := idempotency.Do(ctx, store, "order-4417-charge", fp, charge) // a retry: no second charge
	fmt.Println(string(first.Value), first.Replay)
	fmt.Println(string(again.Value), again.Replay, again.ReplayOf == first.Execution)

	_, err := idempotency.Do(ctx, store, "order-4417-charge", idempotency.NewFingerprint([]byte(`{"amount":1}`)), charge)
	fmt.Println(errors.Is(err, idempotency.ErrKeyReuse))
	// Output:
	// charging the card
	// receipt-17 false
	// receipt-17 true true
	// true
}

func ExampleOnce() {
	store, _ := idempotency.NewMemoryStore()
	sendEmail := func(context.Context) error {
		fmt.Println("email sent")
		return nil
	}
	// A job that crashes after the email and is resumed runs this step again:
	// the email goes once.
	for range 2 {
		ran, err := idempotency.Once(context.Background(), store, "job-88/email", sendEmail)
		fmt.Println(ran, err)
	}
	// Output:
	// email sent
	// true <nil>
	// false <nil>
}

func ExampleKeepFailures() {
	store, _ := idempotency.NewMemoryStore()
	ctx := context.Background()
	validate := func(context.Context) ([]byte, error) { return nil, errors.New("card declined") }
	_, err := idempotency.Do(ctx, store, "k", idempotency.Fingerprint{}, validate, idempotency.KeepFailures())
	fmt.Println(err)
	_, err = idempotency.Do(ctx, store, "k", idempotency.Fingerprint{}, validate, idempotency.KeepFailures())
	fmt.Println(err)
	// Output:
	// card declined
	// idempotency: an earlier execution with this idempotency key failed (key "k"): card declined
}

func ExampleDeriveKey() {
	body := []byte(`{"model":"qwen3-0.6b","messages":[{"role":"user","content":"summarise order 4417"}]}`)
	key, _ := idempotency.DeriveKey("run-2026-11-29", "step-summarise", idempotency.NewFingerprint(body).String())
	resumed, _ := idempotency.DeriveKey("run-2026-11-29", "step-summarise", idempotency.NewFingerprint(body).String())
	fmt.Println(len(key), key == resumed)

	_, err := idempotency.DeriveKey("run-2026-11-29", "")
	fmt.Println(err)
	// Output:
	// 64 true
	// idempotency.DeriveKey(part 1): must not be empty: a missing id would make unrelated calls share a key
}

func ExampleNewKey() {
	key := idempotency.NewKey() // once per logical call, before its first attempt
	fmt.Println(len(key), idempotency.ValidateKey(key))
	// Output:
	// 26 <nil>
}

func ExampleNewFingerprint() {
	a := idempotency.NewFingerprint([]byte("POST"), []byte("/orders"), []byte(`{"item":"book"}`))
	b := idempotency.NewFingerprint([]byte("POST"), []byte("/orders"), []byte(`{"item":"book"}`))
	c := idempotency.NewFingerprint([]byte("POST"), []byte("/orders"), []byte(`{"item":"book","gift":null}`))
	fmt.Println(a == b, a == c, a.IsZero())
	// Output:
	// true false false
}

func ExampleNewMemoryStore() {
	store, err := idempotency.NewMemoryStore(idempotency.WithMaxEntries(10_000), idempotency.WithMaxBytes(16<<20))
	fmt.Println(store.Len(), err)
	_, err = idempotency.NewMemoryStore(idempotency.WithMaxEntries(0))
	fmt.Println(err)
	// Output:
	// 0 <nil>
	// idempotency.WithMaxEntries(0): must be at least 1
}

func ExampleMiddleware() {
	store, _ := idempotency.NewMemoryStore()
	guard, _ := idempotency.Middleware(store)
	var orders atomic.Int32
	srv := httptest.NewServer(guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "order %d", orders.Add(1))
	})))
	defer srv.Close()

	send := func(key, body string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		if key != "" {
			req.Header.Set(idempotency.HeaderKey, key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := idempotency.ResponseError(resp); err != nil { // problem details → an error
			fmt.Println(resp.StatusCode, err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d %s (replay: %q)\n", resp.StatusCode, b, resp.Header.Get(idempotency.HeaderReplay))
	}
	send("k1", "book")
	send("k1", "book")
	send("k1", "pen")
	send("", "book")
	// Output:
	// 201 order 1 (replay: "")
	// 201 order 1 (replay: "true")
	// 422 idempotency: idempotency key reused with a different request (key "k1"): http 422 Unprocessable Entity (idempotency-key-reuse)
	// 400 idempotency: idempotency key required (pass one with retry.WithIdempotencyKey): http 400 Bad Request (idempotency-key-missing)
}

func ExampleClient() {
	store, _ := idempotency.NewMemoryStore()
	guard, _ := idempotency.Middleware(store)
	var calls atomic.Int32
	srv := httptest.NewServer(guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "overloaded", http.StatusServiceUnavailable) // a failure: the key is released
			return
		}
		fmt.Fprint(w, "summary of order 4417")
	})))
	defer srv.Close()

	client, _ := idempotency.NewClient(srv.Client(), retry.WithBackoff(backoff.Constant(10*time.Millisecond)))
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"order":4417}`))
	resp, err := client.Do(req) // one key for the call, kept across the retry
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body), calls.Load())
	// Output:
	// 200 summary of order 4417 2
}

func ExampleTransport() {
	var inFlight atomic.Bool
	inFlight.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("server got key", r.Header.Get(idempotency.HeaderKey))
		if inFlight.Swap(false) { // the first request with this key is still running
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"kind":"idempotency-in-progress"}`)
			return
		}
		w.Header().Set(idempotency.HeaderReplay, "true")
		fmt.Fprint(w, "stored result")
	}))
	defer srv.Close()

	transport, _ := idempotency.NewTransport(srv.Client().Transport, idempotency.WithPollInterval(10*time.Millisecond))
	client := &http.Client{Transport: transport}
	ctx, _ := retry.WithIdempotencyKey(context.Background(), "order-4417-summary")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	_, replay := idempotency.ReplayOf(resp)
	fmt.Println(resp.StatusCode, string(body), replay)
	// Output:
	// server got key order-4417-summary
	// server got key order-4417-summary
	// 200 stored result true
}

func ExampleClassify() {
	inProgress := &classify.StatusError{Code: 409, Kind: idempotency.KindInProgress, Header: http.Header{"Retry-After": {"2"}}}
	reuse := &classify.StatusError{Code: 409, Kind: idempotency.KindKeyReuse}
	fmt.Println(idempotency.Classify(inProgress))
	fmt.Println(idempotency.Classify(reuse))
	fmt.Println(classify.Default(inProgress)) // without Classify, a 409 is final
	// Output:
	// retry (idempotency key in progress, after 2s)
	// stop (idempotency key reused)
	// stop (http 4xx)
}

func ExampleResponseError() {
	resp := &http.Response{
		StatusCode: http.StatusConflict,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(`{"error":{"code":"idempotency-response-not-retained","message":"response above 1 MiB"}}`)),
	}
	err := idempotency.ResponseError(resp)
	fmt.Println(errors.Is(err, idempotency.ErrNotRetained))
	fmt.Println(err)
	// Output:
	// true
	// idempotency: result not retained: it exceeded the retention cap: http 409 Conflict (idempotency-response-not-retained)
}

func ExampleReplayOf() {
	resp := &http.Response{Header: http.Header{}}
	resp.Header.Set(idempotency.HeaderReplay, "true")
	resp.Header.Set(idempotency.HeaderReplayOf, "gen-8812")
	billed, replay := idempotency.ReplayOf(resp)
	fmt.Println(replay, billed)
	// Output:
	// true gen-8812
}

func ExampleRecord_MarshalBinary() {
	rec := idempotency.Record{Status: idempotency.Succeeded, Token: "exec-1", Value: []byte("ok")}
	b, _ := rec.MarshalBinary()
	var back idempotency.Record
	err := back.UnmarshalBinary(b)
	fmt.Println(len(b), back.Status, back.Token, string(back.Value), err)
	fmt.Println(back.UnmarshalBinary(b[:5]))
	// Output:
	// 43 succeeded exec-1 ok <nil>
	// corrupt idempotency record: 5 bytes, version 1
}
