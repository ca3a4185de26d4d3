package storetest

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
)

// The middleware's checks: over the store, on real HTTP/1.1 and HTTP/2
// servers, only a completed response is replayed, and a response's
// session fields never are, as header or trailer.
var middlewareChecks = []check{
	{"the middleware never replays a body shorter than its Content-Length", shortWrite},
	{"the middleware never replays a stream its client cut off", cutStream},
	{"the middleware never replays a body its client's disconnect cut off", cutBody},
	{"the middleware replays a body its handler finished after its client left", finishedAfterLeaving},
	{"the middleware never replays a response whose handler panicked", panicked},
	{"the middleware keeps an incomplete response as a problem, with KeepFailures", keptIncomplete},
	{"the middleware replays trailers as headers, and session fields never", trailers},
}

// wait bounds every wait of the middleware's checks for something that
// must happen: a disconnect seen, an execution recorded.
const wait = 10 * time.Second

// site is a handler behind the middleware over a store, served on a real
// server.
type site struct {
	srv      *httptest.Server
	client   *http.Client
	executed chan idempotency.Event // each execution, once its outcome is recorded
}

// serve serves h behind the middleware over s: over HTTP/2 with TLS when h2
// is set, otherwise over HTTP/1.1.
func serve(t *testing.T, s idempotency.Store, h2 bool, h http.HandlerFunc, opts ...idempotency.Option) *site {
	t.Helper()
	st := &site{executed: make(chan idempotency.Event, 16)}
	opts = append(opts, idempotency.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
		if d, ok := e.Detail.(idempotency.Event); ok && d.Outcome == "executed" {
			st.executed <- d
		}
	})))
	guard, err := idempotency.Middleware(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	st.srv = httptest.NewUnstartedServer(guard(h))
	st.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handlers' panics are on purpose
	if h2 {
		st.srv.EnableHTTP2 = true
		st.srv.StartTLS()
	} else {
		st.srv.Start()
	}
	st.client = st.srv.Client()
	t.Cleanup(func() {
		st.client.CloseIdleConnections()
		st.srv.Close()
	})
	return st
}

// executedOnce waits until the middleware recorded an execution.
func (st *site) executedOnce(t *testing.T) idempotency.Event {
	t.Helper()
	select {
	case e := <-st.executed:
		return e
	case <-time.After(wait):
		t.Fatal("no execution was recorded")
		return idempotency.Event{}
	}
}

// answer is a response as its client read it.
type answer struct {
	status  int
	header  http.Header
	trailer http.Header
	body    string
	err     error // reading the body
}

func (a answer) replay() bool { return a.header.Get("Idempotent-Replay") == "true" }

func (a answer) String() string {
	return fmt.Sprintf("%d %q (replay %v, read error %v)", a.status, a.body, a.replay(), a.err)
}

// open sends a POST with key and returns the response unread.
func (st *site) open(t *testing.T, ctx context.Context, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.srv.URL+"/orders", strings.NewReader(`{"item":"book"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(idempotency.HeaderKey, key)
	req.Header.Set("Authorization", "Bearer storetest")
	resp, err := st.client.Do(req)
	if err != nil {
		t.Fatalf("POST with key %q: %v", key, err)
	}
	return resp
}

// post sends a POST with key and reads the whole response.
func (st *site) post(t *testing.T, key string) answer {
	t.Helper()
	resp := st.open(t, t.Context(), key)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, trailer: resp.Trailer, body: string(b), err: err}
}

// leave sends a POST with key, reads n bytes of its body, and hangs up.
func (st *site) leave(t *testing.T, key string, n int) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp := st.open(t, ctx, key)
	defer resp.Body.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		t.Fatalf("reading the first %d bytes: %v", n, err)
	}
	return string(b)
}

// protocols runs f over HTTP/1.1 and over HTTP/2.
func protocols(t *testing.T, s idempotency.Store, f func(t *testing.T, s idempotency.Store, h2 bool)) {
	for _, h2 := range []bool{false, true} {
		name := "HTTP/1.1"
		if h2 {
			name = "HTTP/2"
		}
		t.Run(name, func(t *testing.T) { f(t, s, h2) })
	}
}

// keyFor gives each subtest a key of its own in the store the subtests share.
func keyFor(t *testing.T) string { return "order-" + t.Name() }

// whole is the response of every handler below when it completes: 40 bytes.
const whole = "0123456789abcdefghij" + "ABCDEFGHIJKLMNOPQRST"

// replayedWhole checks that a third request replays the second, whole.
func replayedWhole(t *testing.T, st *site, key string, runs *atomic.Int32) {
	t.Helper()
	if a := st.post(t, key); !a.replay() || a.status != http.StatusCreated || a.body != whole {
		t.Errorf("the request after a completed run got %v; want the whole response replayed", a)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the handler ran %d times; want 2", n)
	}
}

// ranAgain checks that a retry after an incomplete first response ran the
// handler again and got the whole response, not a replay of a fragment.
func ranAgain(t *testing.T, st *site, key string, runs *atomic.Int32) {
	t.Helper()
	a := st.post(t, key)
	if a.replay() || a.status != http.StatusCreated || a.body != whole || a.err != nil {
		t.Fatalf("the retry after an incomplete response got %v; want a fresh run's whole response", a)
	}
	st.executedOnce(t)
	replayedWhole(t, st, key, runs)
}

func shortWrite(t *testing.T, s idempotency.Store) {
	protocols(t, s, func(t *testing.T, s idempotency.Store, h2 bool) {
		var runs atomic.Int32
		st := serve(t, s, h2, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "40")
			w.WriteHeader(http.StatusCreated)
			if runs.Add(1) == 1 {
				_, _ = io.WriteString(w, whole[:20]) // and returns, 20 bytes short
				return
			}
			_, _ = io.WriteString(w, whole)
		})
		key := keyFor(t)
		st.post(t, key) // its client reads a truncated body
		st.executedOnce(t)
		ranAgain(t, st, key, &runs)
	})
}

func cutStream(t *testing.T, s idempotency.Store) {
	protocols(t, s, func(t *testing.T, s idempotency.Store, h2 bool) {
		var runs atomic.Int32
		st := serve(t, s, h2, func(w http.ResponseWriter, r *http.Request) {
			n := runs.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusCreated)
			for i := range 2 {
				_, _ = io.WriteString(w, whole[i*20:i*20+20])
				_ = http.NewResponseController(w).Flush()
				if n == 1 { // a stream stops when its client leaves
					select {
					case <-r.Context().Done():
					case <-time.After(wait):
					}
					return
				}
			}
		})
		key := keyFor(t)
		if got := st.leave(t, key, 20); got != whole[:20] {
			t.Fatalf("the first event: %q", got)
		}
		st.executedOnce(t)
		ranAgain(t, st, key, &runs)
	})
}

func cutBody(t *testing.T, s idempotency.Store) {
	protocols(t, s, func(t *testing.T, s idempotency.Store, h2 bool) {
		var runs atomic.Int32
		st := serve(t, s, h2, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "40")
			w.WriteHeader(http.StatusCreated)
			if runs.Add(1) == 1 {
				_, _ = io.WriteString(w, whole[:20])
				_ = http.NewResponseController(w).Flush()
				select { // and gives up with its client
				case <-r.Context().Done():
				case <-time.After(wait):
				}
				return
			}
			_, _ = io.WriteString(w, whole)
		})
		key := keyFor(t)
		st.leave(t, key, 20)
		st.executedOnce(t)
		ranAgain(t, st, key, &runs)
	})
}

func finishedAfterLeaving(t *testing.T, s idempotency.Store) {
	protocols(t, s, func(t *testing.T, s idempotency.Store, h2 bool) {
		var runs atomic.Int32
		st := serve(t, s, h2, func(w http.ResponseWriter, r *http.Request) {
			runs.Add(1)
			w.Header().Set("Content-Length", "40")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, whole[:20])
			_ = http.NewResponseController(w).Flush()
			select { // its client leaves, and it finishes all the same
			case <-r.Context().Done():
			case <-time.After(wait):
			}
			_, _ = io.WriteString(w, whole[20:])
		})
		key := keyFor(t)
		st.leave(t, key, 20)
		st.executedOnce(t)
		// Over HTTP/1.1 the rest went into the connection's buffer: the
		// response is whole, and replayed. Over HTTP/2 the write after the
		// stream's reset failed: the handler runs again. Either way the
		// retry gets the whole response.
		a := st.post(t, key)
		if a.status != http.StatusCreated || a.body != whole {
			t.Errorf("the retry got %v; want the whole response", a)
		}
	})
}

func panicked(t *testing.T, s idempotency.Store) {
	recovered := func(next http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if recover() != nil {
					http.Error(w, "internal error", http.StatusInternalServerError)
				}
			}()
			next(w, r)
		}
	}
	for _, tt := range []struct {
		name string
		wrap func(http.HandlerFunc) http.HandlerFunc
	}{
		{"the panic reaches the server", func(h http.HandlerFunc) http.HandlerFunc { return h }},
		{"a recovering middleware behind it answers 500", recovered},
	} {
		t.Run(tt.name, func(t *testing.T) {
			protocols(t, s, func(t *testing.T, s idempotency.Store, h2 bool) {
				var runs atomic.Int32
				st := serve(t, s, h2, tt.wrap(func(w http.ResponseWriter, _ *http.Request) {
					w.WriteHeader(http.StatusCreated)
					if runs.Add(1) == 1 {
						_, _ = io.WriteString(w, whole[:20])
						_ = http.NewResponseController(w).Flush()
						panic("the handler fails half-way")
					}
					_, _ = io.WriteString(w, whole)
				}))
				key := keyFor(t)
				st.post(t, key) // the panic is over once its client has read all it will get
				if tt.name != "the panic reaches the server" {
					st.executedOnce(t)
				}
				ranAgain(t, st, key, &runs)
			})
		})
	}
}

func keptIncomplete(t *testing.T, s idempotency.Store) {
	protocols(t, s, func(t *testing.T, s idempotency.Store, h2 bool) {
		var runs atomic.Int32
		st := serve(t, s, h2, func(w http.ResponseWriter, _ *http.Request) {
			runs.Add(1)
			w.Header().Set("Content-Length", "40")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, whole[:20])
		}, idempotency.KeepFailures())
		key := keyFor(t)
		st.post(t, key)
		st.executedOnce(t)
		a := st.post(t, key)
		if a.status != http.StatusInternalServerError || !strings.Contains(a.body, `"kind":"idempotency-response-incomplete"`) {
			t.Errorf("the retry got %v; want the problem of an incomplete response", a)
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("the handler ran %d times; want once: KeepFailures keeps its outcome", n)
		}
	})
}

// sessionFields are the fields a replay never carries, as header or trailer.
var sessionFields = []string{"Set-Cookie", "Set-Cookie2", "Authentication-Info", "Proxy-Authentication-Info"}

func trailers(t *testing.T, s idempotency.Store) {
	protocols(t, s, func(t *testing.T, s idempotency.Store, h2 bool) {
		st := serve(t, s, h2, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Trailer", "X-Checksum")
			for _, f := range sessionFields[:2] { // announced before the header is sent
				w.Header().Set(http.TrailerPrefix+f, "session=trailer")
			}
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, whole)
			w.Header().Set("X-Checksum", "sum-40")
			w.Header().Set(http.TrailerPrefix+"X-Late", "late")
			for _, f := range sessionFields[2:] { // or set at the end
				w.Header().Set(http.TrailerPrefix+f, "session=trailer")
			}
		})
		key := keyFor(t)
		first := st.post(t, key)
		if got := first.trailer.Get("Set-Cookie"); got != "session=trailer" {
			t.Fatalf("the first response's Set-Cookie trailer is %q (%v); want it sent", got, first)
		}
		st.executedOnce(t)
		a := st.post(t, key)
		if !a.replay() || a.body != whole {
			t.Fatalf("the retry got %v; want a replay", a)
		}
		for _, f := range sessionFields {
			if v := a.trailer.Values(f); len(v) > 0 {
				t.Errorf("the replay carries the trailer %s: %q", f, v)
			}
			if v := a.header.Values(f); len(v) > 0 {
				t.Errorf("the replay carries the header %s: %q", f, v)
			}
		}
		for name, want := range map[string]string{"X-Checksum": "sum-40", "X-Late": "late"} {
			if got := a.trailer.Get(name); got != want {
				t.Errorf("the replay's trailer %s = %q; want %q, as the first response had it", name, got, want)
			}
		}
	})
}
