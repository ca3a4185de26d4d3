package idempotency_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The checks over real servers, and every store, are in package storetest;
// these cover the framing rules one by one.
func TestOnlyACompletedResponseIsReplayed(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		handler http.HandlerFunc
		replay  bool
		broken  bool // the first response's connection fails
	}{
		{"a body as long as its Content-Length is replayed", http.MethodPost, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "5")
			_, _ = io.WriteString(w, "hello")
		}, true, false},
		{"a body longer than its Content-Length is not", http.MethodPost, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "3")
			_, _ = io.WriteString(w, "hello")
		}, false, false},
		{"a 204 with a Content-Length and no body is replayed", http.MethodPost, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "5")
			w.WriteHeader(http.StatusNoContent)
		}, true, false},
		{"a HEAD response with a Content-Length and no body is replayed", http.MethodHead, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "5")
			w.WriteHeader(http.StatusOK)
		}, true, false},
		{"a Content-Length that is not a number is ignored, as net/http ignores it", http.MethodPost, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "five")
			_, _ = io.WriteString(w, "hello")
		}, true, false},
		{"a Content-Length set after the status was sent does not count", http.MethodPost, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "hello")
			w.Header().Set("Content-Length", "40")
		}, true, false},
		{"a response whose handler answered a failure after it was sent is not", http.MethodPost, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "hel")
			w.WriteHeader(http.StatusInternalServerError)
		}, false, false},
		{"a response whose write failed is not", http.MethodPost, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "5")
			_, _ = io.WriteString(w, "hello")
		}, false, true},
		{"a stream whose write failed is not", http.MethodPost, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "hello")
		}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs int
			h := guarded(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs++
				tt.handler(w, r)
			}), nil, idempotency.WithMethods(http.MethodPost, http.MethodHead))
			send := func(broken bool) *httptest.ResponseRecorder {
				req := httptest.NewRequest(tt.method, "/orders", strings.NewReader("{}"))
				req.Header.Set(idempotency.HeaderKey, "k1")
				rec := httptest.NewRecorder()
				if broken {
					h.ServeHTTP(failing{rec}, req)
				} else {
					h.ServeHTTP(rec, req)
				}
				return rec
			}
			send(tt.broken)
			again := send(false)
			if tt.replay {
				assert.Equal(t, "true", again.Header().Get(headerReplay))
				assert.Equal(t, 1, runs)
			} else {
				assert.Empty(t, again.Header().Get(headerReplay))
				assert.Equal(t, 2, runs, "the key was released: the retry ran the handler")
			}
		})
	}
}

// failing is a ResponseWriter whose connection fails halfway through a
// write, as one to a client that left does.
type failing struct{ http.ResponseWriter }

func (f failing) Write(p []byte) (int, error) {
	n, _ := f.ResponseWriter.Write(p[:len(p)/2])
	return n, errors.New("write: broken pipe")
}

func TestAKeptIncompleteResponseIsAStoredFailureToItsClient(t *testing.T) {
	h := guarded(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "40")
		_, _ = io.WriteString(w, "20 bytes of 40......")
	}), nil, idempotency.KeepFailures())
	as{}.send(h, "k1", "/orders", "{}")
	r := as{}.send(h, "k1", "/orders", "{}")
	require.Equal(t, http.StatusInternalServerError, r.Code)
	assert.NotContains(t, r.Body.String(), "20 bytes", "never the fragment")
	assert.Equal(t, "application/problem+json", r.Header().Get("Content-Type"))
	resp := r.Result()
	resp.Request = httptest.NewRequest(http.MethodPost, "/orders", nil)
	err := idempotency.ResponseError(resp)
	require.ErrorIs(t, err, idempotency.ErrStoredFailure)
	assert.Equal(t, classify.Stop, idempotency.Classify(err).Verdict, "a retry would get the same answer")
}

// BenchmarkMiddleware measures a guarded request against the handler alone,
// in the same run: a first request (claim, run, record) and a replay.
func BenchmarkMiddleware(b *testing.B) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"order":1}`)
	})
	guard, err := idempotency.Middleware(newMemory(b), idempotency.WithRetention(time.Millisecond))
	require.NoError(b, err)
	guarded := guard(handler)
	send := func(b *testing.B, h http.Handler, key string) {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(`{"item":"book"}`))
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set(idempotency.HeaderKey, key)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	b.Run("the handler alone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			send(b, handler, "k")
		}
	})
	b.Run("a first request", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			send(b, guarded, strconv.Itoa(i%5000)) // records expire: keys are reused
		}
	})
	b.Run("a replay", func(b *testing.B) {
		g, _ := idempotency.Middleware(newMemory(b))
		h := g(handler)
		send(b, h, "k")
		b.ReportAllocs()
		for b.Loop() {
			send(b, h, "k")
		}
	})
}
