package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// account answers as the client its credentials say it is, and sets a
// session cookie for it: what one client must never receive from another's
// record.
type account struct {
	runs atomic.Int32
	big  int // bytes of padding in each response
}

func (a *account) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := a.runs.Add(1)
	who := r.Header.Get("Authorization") + r.Header.Get("Proxy-Authorization") + r.Header.Get("Cookie")
	http.SetCookie(w, &http.Cookie{Name: "session", Value: fmt.Sprintf("s%d", n)})
	w.Header().Set("Authentication-Info", fmt.Sprintf(`nextnonce="n%d"`, n))
	status := http.StatusCreated
	fmt.Sscan(r.URL.Query().Get("status"), &status)
	pad := a.big
	fmt.Sscan(r.URL.Query().Get("pad"), &pad)
	w.WriteHeader(status)
	fmt.Fprintf(w, "run %d for %q%s", n, who, strings.Repeat("p", pad))
}

// as is a request from the client with the given credential header fields
// ("Authorization: x", "Cookie: a=b"…).
type as []string

func (a as) send(h http.Handler, key, target, body string) *httptest.ResponseRecorder {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://api.test"+target, strings.NewReader(body))
	if err != nil {
		panic(err) // the tests' own targets
	}
	for _, f := range a {
		switch name, value, _ := strings.Cut(f, ": "); name {
		case "Remote-Addr": // where the request comes from, not a header field
			req.RemoteAddr = value
		case "Host":
			req.Host = value
		default:
			req.Header.Add(name, value)
		}
	}
	if key != "" {
		req.Header.Set(idempotency.HeaderKey, key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func guarded(t *testing.T, h http.Handler, store idempotency.Store, opts ...idempotency.Option) http.Handler {
	t.Helper()
	if store == nil {
		store = newMemory(t)
	}
	guard, err := idempotency.Middleware(store, opts...)
	require.NoError(t, err)
	return guard(h)
}

func TestMiddlewareNeverGivesOneClientAnothersResponse(t *testing.T) {
	alice, bob := as{"Authorization: Bearer alice"}, as{"Authorization: Bearer bob"}
	t.Run("the same key and body from another client runs the handler for it, and each retry replays its own", func(t *testing.T) {
		a := &account{}
		h := guarded(t, a, nil)
		first := alice.send(h, "order-1", "/orders", `{"item":"book"}`)
		other := bob.send(h, "order-1", "/orders", `{"item":"book"}`)
		require.Equal(t, http.StatusCreated, other.Code)
		assert.Equal(t, `run 2 for "Bearer bob"`, other.Body.String())
		assert.Empty(t, other.Header().Get(headerReplay))
		assert.Equal(t, "session=s2", other.Header().Get("Set-Cookie"), "bob gets his own session, never alice's")
		assert.Equal(t, int32(2), a.runs.Load())

		again := alice.send(h, "order-1", "/orders", `{"item":"book"}`)
		assert.Equal(t, first.Body.String(), again.Body.String())
		assert.Equal(t, "true", again.Header().Get(headerReplay))
		assert.Equal(t, `run 2 for "Bearer bob"`, bob.send(h, "order-1", "/orders", `{"item":"book"}`).Body.String())
		assert.Equal(t, int32(2), a.runs.Load())
	})
	t.Run("the same key with another body from another client is no 422: for it the key is new", func(t *testing.T) {
		a := &account{}
		h := guarded(t, a, nil)
		alice.send(h, "order-1", "/orders", `{"item":"book"}`)
		r := bob.send(h, "order-1", "/orders", `{"item":"pen"}`)
		require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
		assert.Equal(t, `run 2 for "Bearer bob"`, r.Body.String())
	})
	for _, tt := range []struct {
		name        string
		opts        []idempotency.Option
		first, next as
		apart       bool
	}{
		{"Proxy-Authorization is a credential", nil, as{"Proxy-Authorization: Basic a"}, as{"Proxy-Authorization: Basic b"}, true},
		{"cookies are credentials by default", nil, as{"Cookie: sid=1"}, as{"Cookie: sid=2"}, true},
		{"requests without credentials share one client", nil, as{}, as{}, false},
		{"credentials and none are two clients", nil, as{"Authorization: Bearer alice"}, as{}, true},
		{"with WithScopeCookies, the named cookie tells clients apart", opts(idempotency.WithScopeCookies("sid")),
			as{"Cookie: sid=1; theme=dark"}, as{"Cookie: sid=2; theme=dark"}, true},
		{"with WithScopeCookies, other cookies may change between a request and its retry", opts(idempotency.WithScopeCookies("sid")),
			as{"Cookie: sid=1; theme=dark"}, as{"Cookie: theme=light; sid=1"}, false},
		{"WithScopeCookies with no names leaves cookies out", opts(idempotency.WithScopeCookies()),
			as{"Cookie: sid=1"}, as{"Cookie: sid=2"}, false},
		{"with WithScopeCookies, a session cookie Go's parser drops still tells clients apart", opts(idempotency.WithScopeCookies("sid")),
			as{"Cookie: sid=ålice; theme=dark"}, as{"Cookie: sid=bøb; theme=dark"}, true},
		{"with WithScopeCookies, a quoted or spaced session cookie still tells clients apart", opts(idempotency.WithScopeCookies("sid")),
			as{`Cookie: sid="a b"`}, as{`Cookie: sid="a c"`}, true},
		{"requests without credentials from two addresses are one client", nil,
			as{"Remote-Addr: 198.51.100.1:1000"}, as{"Remote-Addr: 203.0.113.9:2000"}, false},
		{"WithScope replaces the credentials' digest", opts(idempotency.WithScope(func(r *http.Request) string { return r.URL.Query().Get("acct") })),
			as{"Authorization: Bearer old"}, as{"Authorization: Bearer refreshed"}, false},
		{"WithScope returning \"\" is one scope for all: a single-tenant service", opts(idempotency.WithScope(func(*http.Request) string { return "" })),
			alice, bob, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &account{}
			h := guarded(t, a, nil, tt.opts...)
			tt.first.send(h, "order-1", "/orders?acct=42", "{}")
			r := tt.next.send(h, "order-1", "/orders?acct=42", "{}")
			require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
			if tt.apart {
				assert.Empty(t, r.Header().Get(headerReplay), "another client: no replay")
				assert.Equal(t, int32(2), a.runs.Load())
			} else {
				assert.Equal(t, "true", r.Header().Get(headerReplay), "the same client: a replay")
				assert.Equal(t, int32(1), a.runs.Load())
			}
		})
	}
}

func TestMiddlewareStoresTheResponseNotTheSession(t *testing.T) {
	t.Run("Set-Cookie and Authentication-Info reach the first client and are never replayed", func(t *testing.T) {
		h := guarded(t, &account{}, nil)
		me := as{"Authorization: Bearer alice"}
		first := me.send(h, "k1", "/orders", "{}")
		assert.Equal(t, "session=s1", first.Header().Get("Set-Cookie"))
		assert.Equal(t, `nextnonce="n1"`, first.Header().Get("Authentication-Info"))
		again := me.send(h, "k1", "/orders", "{}")
		require.Equal(t, "true", again.Header().Get(headerReplay))
		assert.Empty(t, again.Header().Values("Set-Cookie"))
		assert.Empty(t, again.Header().Values("Authentication-Info"))
		assert.Equal(t, first.Body.String(), again.Body.String())
	})
	t.Run("WithUnstoredHeaders replaces the list", func(t *testing.T) {
		h := guarded(t, &account{}, nil, idempotency.WithUnstoredHeaders("Authentication-Info"))
		as{}.send(h, "k1", "/orders", "{}")
		again := as{}.send(h, "k1", "/orders", "{}")
		assert.Equal(t, "session=s1", again.Header().Get("Set-Cookie"), "the application chose to replay its cookie")
		assert.Empty(t, again.Header().Get("Authentication-Info"))
	})
}

func TestMiddlewareReleasesTheKeyOfAnAuthenticationFailure(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired} {
		for _, keep := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d, KeepFailures %v", status, keep), func(t *testing.T) {
				var o []idempotency.Option
				if keep {
					o = append(o, idempotency.KeepFailures())
				}
				a := &account{}
				// One account whatever its token, so that only the release
				// lets the retry through.
				h := guarded(t, a, nil, append(o, idempotency.WithScope(func(*http.Request) string { return "acct-1" }))...)
				target := fmt.Sprintf("/orders?status=%d", status)
				require.Equal(t, status, as{"Authorization: Bearer expired"}.send(h, "k1", target, "{}").Code)
				r := as{"Authorization: Bearer fresh"}.send(h, "k1", target, "{}")
				assert.Empty(t, r.Header().Get(headerReplay), "the retry with fresh credentials ran")
				assert.Equal(t, int32(2), a.runs.Load())
			})
		}
	}
}

// TestAFloodCannotEvictAnotherClientsRecord floods the middleware over the
// default memory store from one client, as an attacker would, and checks that
// a victim's completed record survives: its retry replays instead of running
// the handler again.
func TestAFloodCannotEvictAnotherClientsRecord(t *testing.T) {
	tests := []struct {
		name     string
		requests int
		big      int // bytes of padding in each of the attacker's responses
	}{
		{"64 requests with responses of about 1 MB", 64, 1_000_000},
		{"300,000 requests with small responses", 300_000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newMemory(t)
			var refused atomic.Int32
			observer := idempotency.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
				if e.Detail.(idempotency.Event).Outcome == "scope full" {
					refused.Add(1)
				}
			}))
			victimApp, attackerApp := &account{}, &account{big: tt.big}
			victim := guarded(t, victimApp, store, observer)
			attacker := guarded(t, attackerApp, store, observer)
			alice, mallory := as{"Authorization: Bearer alice"}, as{"Authorization: Bearer mallory"}

			first := alice.send(victim, "order-1", "/orders", `{"item":"book"}`)
			require.Equal(t, http.StatusCreated, first.Code)
			codes := flood(t, tt.requests, func(i int) *httptest.ResponseRecorder {
				return mallory.send(attacker, fmt.Sprint("flood-", i), "/orders", "{}")
			})
			t.Logf("the attacker's answers: %v; the store holds %d records", codes, store.Len())

			again := alice.send(victim, "order-1", "/orders", `{"item":"book"}`)
			assert.Equal(t, "true", again.Header().Get(headerReplay), "the victim's record survived the flood")
			assert.Equal(t, first.Body.String(), again.Body.String())
			assert.Equal(t, int32(1), victimApp.runs.Load(), "the victim's handler ran once")
			other := as{"Authorization: Bearer carol"}.send(victim, "order-1", "/orders", "{}")
			assert.Equal(t, http.StatusCreated, other.Code, "a third client is served")
			if tt.big == 0 {
				assert.Equal(t, 10_000, codes[http.StatusCreated], "the attacker got its share, a tenth of the store's 100,000 records")
				assert.Equal(t, int32(tt.requests-10_000), refused.Load(), "and 429 beyond it")
			} else {
				retained := 0
				for i := range tt.requests {
					if mallory.send(attacker, fmt.Sprint("flood-", i), "/orders", "{}").Header().Get(headerReplay) == "true" {
						retained++
					}
				}
				assert.Equal(t, 6, retained, "a tenth of 64 MiB holds six of its responses; the rest were not retained")
				assert.Equal(t, int32(tt.requests), attackerApp.runs.Load(), "none of its requests ran twice")
			}
		})
	}
}

// flood sends n requests from 8 goroutines, as a client in a hurry would,
// and counts their statuses. The first 429 must be a clear problem.
func flood(t *testing.T, n int, send func(i int) *httptest.ResponseRecorder) map[int]int {
	const workers = 8
	counts := make([]map[int]int, workers)
	var first sync.Once
	var wg sync.WaitGroup
	for w := range workers {
		counts[w] = map[int]int{}
		wg.Go(func() {
			for i := w; i < n; i += workers {
				r := send(i)
				counts[w][r.Code]++
				if r.Code == http.StatusTooManyRequests {
					first.Do(func() {
						assert.Equal(t, "idempotency-scope-full", decodeProblem(t, r)["kind"])
						assert.Equal(t, "1", r.Header().Get("Retry-After"))
					})
				}
			}
		})
	}
	wg.Wait()
	total := map[int]int{}
	for _, c := range counts {
		for code, k := range c {
			total[code] += k
		}
	}
	return total
}

func decodeProblem(t *testing.T, r *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	return reply{status: r.Code, header: r.Header(), body: r.Body.String()}.problem(t)
}

func TestMiddlewareReportsEachOutcomeToItsObservers(t *testing.T) {
	type seen struct {
		outcome string
		status  int
		err     bool
	}
	type ctxKey struct{}
	// record is an observer that checks each event's kind, context and
	// errors, and keeps what it says.
	record := func(t *testing.T, got *[]seen) idempotency.Option {
		return idempotency.WithObserver(observe.Func(func(ctx context.Context, e observe.Event) {
			assert.Equal(t, observe.Request, e.Kind)
			assert.Equal(t, "the request's", ctx.Value(ctxKey{}), "the observer gets the request's context")
			d, ok := e.Detail.(idempotency.Event)
			require.True(t, ok, "the Detail is an idempotency.Event: %T", e.Detail)
			assert.Equal(t, d.Err, e.Err, "the event carries the store's failure too")
			*got = append(*got, seen{d.Outcome, d.Status, d.Err != nil})
		}))
	}
	withCtx := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, "the request's")))
		})
	}
	run := func(t *testing.T, store idempotency.Store, opts []idempotency.Option, sends func(h http.Handler)) []seen {
		var got []seen
		sends(withCtx(guarded(t, &account{}, store, append(opts, record(t, &got))...)))
		return got
	}
	me := as{"Authorization: Bearer alice"}
	t.Run("executions, replays, key reuse, not retained and rejections", func(t *testing.T) {
		got := run(t, nil, opts(idempotency.WithMaxResultSize(200)), func(h http.Handler) {
			me.send(h, "k1", "/orders?status=200", "{}")
			me.send(h, "k1", "/orders?status=200", "{}")
			me.send(h, "k1", "/orders?status=200", `{"other":1}`)
			me.send(h, "k2", "/orders?pad=300", "{}") // over the cap
			me.send(h, "k2", "/orders?pad=300", "{}")
			me.send(h, "", "/orders", "{}")
			me.send(h, strings.Repeat("k", 256), "/orders", "{}")
		})
		assert.Equal(t, []seen{
			{"executed", 200, false},
			{"replayed", 200, false},
			{"key reuse", 422, false},
			{"executed", 201, false},
			{"not retained", 409, false},
			{"rejected", 400, false},
			{"rejected", 400, false},
		}, got)
	})
	t.Run("a request in progress", func(t *testing.T) {
		store := newMemory(t)
		var got []seen
		var h http.Handler
		h = withCtx(guarded(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(got) == 0 { // the first request, while it runs
				me.send(h, "k1", "/orders", "{}")
			}
			w.WriteHeader(http.StatusCreated)
		}), store, record(t, &got)))
		me.send(h, "k1", "/orders", "{}")
		assert.Equal(t, []seen{{"in progress", 409, false}, {"executed", 201, false}}, got)
	})
	t.Run("store failures, a full scope, and a record that could not be kept", func(t *testing.T) {
		got := run(t, &faulty{Store: newMemory(t), completeErr: errors.New("connection reset")}, nil, func(h http.Handler) {
			me.send(h, "k1", "/orders", "{}")
		})
		got = append(got, run(t, newBounded(t, idempotency.MemoryConfig{MaxEntries: 10, ScopeShare: 0.1}), nil, func(h http.Handler) {
			me.send(h, "k2", "/orders", "{}")
			me.send(h, "k3", "/orders", "{}")
		})...)
		got = append(got, run(t, &faulty{Store: newMemory(t), claimErr: errors.New("connection refused")}, nil, func(h http.Handler) {
			me.send(h, "k4", "/orders", "{}")
		})...)
		assert.Equal(t, []seen{
			{"executed", 201, true},
			{"executed", 201, false},
			{"scope full", 429, true},
			{"store failed", 503, true},
		}, got)
	})
	t.Run("every observer hears every request, in the order given", func(t *testing.T) {
		var order []string
		named := func(name string) idempotency.Option {
			return idempotency.WithObserver(observe.Func(func(context.Context, observe.Event) { order = append(order, name) }))
		}
		h := guarded(t, &account{}, nil, named("first"), named("second"))
		me.send(h, "k1", "/orders", "{}")
		me.send(h, "", "/orders", "{}")
		assert.Equal(t, []string{"first", "second", "first", "second"}, order)
	})
	t.Run("requests it passes through unguarded are not reported", func(t *testing.T) {
		var got []seen
		h := guarded(t, &account{}, nil, idempotency.KeyOptional(), record(t, &got))
		me.send(h, "", "/orders", "{}")
		req := httptest.NewRequestWithContext(context.WithValue(t.Context(), ctxKey{}, "the request's"), http.MethodGet, "/orders", nil)
		h.ServeHTTP(httptest.NewRecorder(), req)
		assert.Empty(t, got)
	})
}

// TestAClientsShareHoldsWhateverItSends floods a small memory store (10,000
// records; a share of 1,000) from one client that varies what the default
// scope is made of with every request, as an attacker would, and checks that
// it gets one share, never the store: a victim's record survives, and every
// other client — with credentials, with cookies, or anonymous from another
// address — is served.
func TestAClientsShareHoldsWhateverItSends(t *testing.T) {
	const mallory = "Remote-Addr: 192.0.2.66:4444"
	tests := []struct {
		name    string
		request func(i int) as
	}{
		{"fixed credentials", func(int) as { return as{mallory, "Authorization: Bearer mallory"} }},
		{"a junk cookie with each request", func(i int) as {
			return as{mallory, "Authorization: Bearer mallory", fmt.Sprintf("Cookie: junk=%d", i)}
		}},
		{"a junk Proxy-Authorization with each request", func(i int) as {
			return as{mallory, "Authorization: Bearer mallory", fmt.Sprintf("Proxy-Authorization: Basic %d", i)}
		}},
		{"a second Authorization with each request", func(i int) as {
			return as{mallory, "Authorization: Bearer mallory", fmt.Sprintf("Authorization: Bearer junk-%d", i)}
		}},
		{"anonymous, with a junk cookie with each request", func(i int) as {
			return as{mallory, fmt.Sprintf("Cookie: junk=%d", i)}
		}},
		{"anonymous, with a junk Proxy-Authorization with each request", func(i int) as {
			return as{mallory, fmt.Sprintf("Proxy-Authorization: Basic %d", i)}
		}},
		{"anonymous", func(int) as { return as{mallory} }},
	}
	victims := []struct {
		name string
		as   as
	}{
		{"a client with a token", as{"Remote-Addr: 198.51.100.1:1000", "Authorization: Bearer carol"}},
		{"a client with a session cookie", as{"Remote-Addr: 198.51.100.2:1000", "Cookie: sid=dave"}},
		{"an anonymous client", as{"Remote-Addr: 198.51.100.3:1000"}},
		{"an anonymous client over IPv6", as{"Remote-Addr: [2001:db8:1::1]:1000"}},
	}
	const entries, share, requests = 10_000, 1_000, 11_000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newBounded(t, idempotency.MemoryConfig{MaxEntries: entries})
			victimApp := &account{}
			victim := guarded(t, victimApp, store)
			attacker := guarded(t, &account{}, store)
			alice := as{"Remote-Addr: 198.51.100.9:1000", "Authorization: Bearer alice"}
			first := alice.send(victim, "order-1", "/orders", `{"item":"book"}`)
			require.Equal(t, http.StatusCreated, first.Code)

			codes := flood(t, requests, func(i int) *httptest.ResponseRecorder {
				return tt.request(i).send(attacker, fmt.Sprint("flood-", i), "/orders", "{}")
			})
			assert.Equal(t, map[int]int{http.StatusCreated: share, http.StatusTooManyRequests: requests - share}, codes,
				"the attacker got one share, a tenth of the store, and 429 beyond it")

			again := alice.send(victim, "order-1", "/orders", `{"item":"book"}`)
			assert.Equal(t, "true", again.Header().Get(headerReplay), "the victim's record survived the flood")
			assert.Equal(t, int32(1), victimApp.runs.Load(), "the victim's handler ran once")
			for _, v := range victims {
				r := v.as.send(victim, "order-2", "/orders", "{}")
				assert.Equal(t, http.StatusCreated, r.Code, "%s is served: %s", v.name, r.Body)
			}
		})
	}
}
func TestTheHostIsPartOfTheFingerprint(t *testing.T) {
	me := as{"Authorization: Bearer alice"}
	for _, tt := range []struct {
		name        string
		opts        []idempotency.Option
		first, next string
		replay      bool
	}{
		{"the same key on another host is another request: 422", nil, "a.test", "b.test", false},
		{"a host is one whatever its case and default port", nil, "api.test", "API.Test:80", true},
		{"an IPv6 literal is one with or without its default port", nil, "[2001:DB8::1]", "[2001:db8::1]:80", true},
		{"another port is another host", nil, "api.test:8080", "api.test:8081", false},
		{"WithHostAliases makes several names one service", opts(idempotency.WithHostAliases("a.test", "b.test")), "a.test", "B.test", true},
		{"WithHostAliases keeps other hosts apart", opts(idempotency.WithHostAliases("a.test", "b.test")), "a.test", "c.test", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &account{}
			h := guarded(t, a, nil, tt.opts...)
			require.Equal(t, http.StatusCreated, append(as{"Host: " + tt.first}, me...).send(h, "k1", "/orders", "{}").Code)
			r := append(as{"Host: " + tt.next}, me...).send(h, "k1", "/orders", "{}")
			if tt.replay {
				assert.Equal(t, "true", r.Header().Get(headerReplay), r.Body.String())
			} else {
				assert.Equal(t, http.StatusUnprocessableEntity, r.Code, r.Body.String())
				assert.Equal(t, "idempotency-key-reuse", decodeProblem(t, r)["kind"])
			}
			assert.Equal(t, int32(1), a.runs.Load())
		})
	}
}
