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

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
)

func ExampleDo() {
	store, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
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
	store, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
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
	store, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
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
	fmt.Println(a == b, a == c, a == idempotency.Fingerprint{})
	// Output:
	// true false false
}

func ExampleNewMemoryStore() {
	store, err := idempotency.NewMemoryStore(idempotency.MemoryConfig{
		MaxEntries: 10_000,
		MaxBytes:   16 << 20,
		ScopeShare: 0.25, // each client may hold a quarter of it
	})
	held := store.(interface{ Len() int }) // the records it holds, for tests and metrics
	fmt.Println(held.Len(), err)
	_, err = idempotency.NewMemoryStore(idempotency.MemoryConfig{MaxEntries: -1})
	fmt.Println(err)
	// Output:
	// 0 <nil>
	// idempotency.MemoryConfig.MaxEntries = -1: must not be negative (0 means 100,000)
}

func ExampleMiddleware() {
	store, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
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
		fmt.Printf("%d %s (replay: %q)\n", resp.StatusCode, b, resp.Header.Get("Idempotent-Replay"))
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

func ExampleMiddleware_clientsApart() {
	store, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
	guard, _ := idempotency.Middleware(store) // scoped by the request's credentials
	srv := httptest.NewServer(guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "for " + r.Header.Get("Authorization")})
		fmt.Fprintf(w, "order for %s", r.Header.Get("Authorization"))
	})))
	defer srv.Close()

	send := func(auth string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"item":"book"}`))
		req.Header.Set("Authorization", auth)
		req.Header.Set(idempotency.HeaderKey, "order-1") // the same key, the same body
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		_, replay := idempotency.ReplayOf(resp)
		fmt.Printf("%s: %q replay=%v cookies=%d\n", auth, b, replay, len(resp.Cookies()))
	}
	send("Bearer alice")
	send("Bearer bob")   // another client: the handler runs for it
	send("Bearer alice") // alice's retry: her response, without her session cookie
	// Output:
	// Bearer alice: "order for Bearer alice" replay=false cookies=1
	// Bearer bob: "order for Bearer bob" replay=false cookies=1
	// Bearer alice: "order for Bearer alice" replay=true cookies=0
}

func ExampleWithScope() {
	store, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
	type account struct{}
	// Behind authentication, the account is the client: a refreshed token
	// does not make its retry another client's request.
	guard, _ := idempotency.Middleware(store, idempotency.WithScope(func(r *http.Request) string {
		id, _ := r.Context().Value(account{}).(string)
		return id
	}))
	var runs atomic.Int32
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "run %d", runs.Add(1)) }))
	for _, token := range []string{"Bearer old-token", "Bearer refreshed-token"} {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader("{}"))
		req = req.WithContext(context.WithValue(req.Context(), account{}, "acct-42"))
		req.Header.Set("Authorization", token)
		req.Header.Set(idempotency.HeaderKey, "order-1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Body, "replay:", rec.Header().Get("Idempotent-Replay") == "true")
	}
	// Output:
	// run 1 replay: false
	// run 1 replay: true
}

func ExampleWithHostAliases() {
	store, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
	// One service under two names: a retry sent to the other name replays.
	guard, _ := idempotency.Middleware(store, idempotency.WithHostAliases("api.example.com", "api-eu.example.com"))
	var runs atomic.Int32
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "run %d", runs.Add(1)) }))
	for _, host := range []string{"api.example.com", "api-eu.example.com", "other.example.com"} {
		req := httptest.NewRequest(http.MethodPost, "https://"+host+"/orders", strings.NewReader("{}"))
		req.Header.Set(idempotency.HeaderKey, "order-1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if err := idempotency.ResponseError(rec.Result()); err != nil {
			fmt.Println(host, rec.Code, "key reuse:", errors.Is(err, idempotency.ErrKeyReuse))
			continue
		}
		fmt.Println(host, rec.Code, rec.Body, "replay:", rec.Header().Get("Idempotent-Replay") == "true")
	}
	// Output:
	// api.example.com 200 run 1 replay: false
	// api-eu.example.com 200 run 1 replay: true
	// other.example.com 422 key reuse: true
}

func ExampleWithObserver() {
	store, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
	counts := map[string]int{} // observers run on the request's goroutine
	metrics := observe.Func(func(ctx context.Context, e observe.Event) {
		if e.Kind != observe.Request { // the same observer may watch a Retrier too
			return
		}
		req := e.Detail.(idempotency.Event)
		counts[req.Outcome]++
		fmt.Println(req.Outcome, req.Status, req.Key, e.Err)
	})
	guard, _ := idempotency.Middleware(store, idempotency.WithObserver(metrics))
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }))
	for _, body := range []string{"book", "book", "pen"} {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
		req.Header.Set(idempotency.HeaderKey, "order-1")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	fmt.Println(counts["executed"], counts["replayed"], counts["key reuse"])
	// Output:
	// executed 201 order-1 <nil>
	// replayed 201 order-1 <nil>
	// key reuse 422 order-1 <nil>
	// 1 1 1
}

func ExampleKeyOf() {
	h := http.Header{}
	key, err := idempotency.KeyOf(h)
	fmt.Printf("%q %v\n", key, err) // no key: the client may make one (NewKey)
	h.Set(idempotency.HeaderKey, `"order \"4417\""`)
	key, err = idempotency.KeyOf(h)
	fmt.Printf("%q %v\n", key, err)
	h.Set(idempotency.HeaderKey, `"order-4417`)
	_, err = idempotency.KeyOf(h)
	fmt.Println(errors.Is(err, retry.ErrInvalid), err)
	// Output:
	// "" <nil>
	// "order \"4417\"" <nil>
	// true idempotency.KeyOf("order-4417): unterminated quoted string
}

func ExampleClassify() {
	inProgress := &classify.StatusError{Code: 409, Kind: "idempotency-in-progress", Header: http.Header{"Retry-After": {"2"}}}
	reuse := &classify.StatusError{Code: 409, Kind: "idempotency-key-reuse"}
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
	resp.Header.Set("Idempotent-Replay", "true")
	resp.Header.Set("Idempotent-Replay-Of", "gen-8812")
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
