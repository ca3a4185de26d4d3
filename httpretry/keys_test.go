package httpretry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cases of the idempotency client (idempotency.Client and Transport,
// removed) ported to the one HTTP retry client.

func TestEachCallHasOneKey(t *testing.T) {
	ok := []reply{{status: 503}, {status: 200}}
	tests := []struct {
		name     string
		header   string // the request's Idempotency-Key header
		ctxKey   string // retry.WithIdempotencyKey
		mint     bool
		wantKey  string // "" for none, "new" for a minted one
		wantSent int
	}{
		{"the header's key goes with every attempt", "from-header", "", false, "from-header", 2},
		{"the context's key goes with every attempt", "", "from-ctx", false, "from-ctx", 2},
		{"a key in the header wins over the context's", "from-header", "from-ctx", false, "from-header", 2},
		{"a structured-field key is read as the middleware reads it", `"quoted"`, "", false, `"quoted"`, 2},
		{"without a key no key is minted, and a POST is sent once", "", "", false, "", 1},
		{"with MintKeys a POST gets a new key, the same on every attempt", "", "", true, "new", 2},
		{"MintKeys never replaces the caller's key", "", "from-ctx", true, "from-ctx", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &fakeRT{script: ok}
			opts := []httpretry.Option{httpretry.WithBase(rt)}
			if tt.mint {
				opts = append(opts, httpretry.MintKeys())
			}
			ctx := t.Context()
			if tt.ctxKey != "" {
				ctx, _ = retry.WithIdempotencyKey(ctx, tt.ctxKey)
			}
			req := post(t, ctx, "http://api.test/orders", `{"item":"book"}`)
			if tt.header != "" {
				req.Header.Set(idempotency.HeaderKey, tt.header)
			}
			resp, err := transport(t, defaults(t), opts...).RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			sent := rt.requests()
			require.Len(t, sent, tt.wantSent)
			for i, s := range sent {
				assert.Equal(t, sent[0].key, s.key, "attempt %d carries the call's one key", i+1)
				assert.Equal(t, `{"item":"book"}`, s.body, "attempt %d carries the whole body", i+1)
			}
			switch tt.wantKey {
			case "new":
				assert.Len(t, sent[0].key, 26, "a key from idempotency.NewKey")
			default:
				assert.Equal(t, tt.wantKey, sent[0].key)
			}
			assert.Equal(t, tt.header, req.Header.Get(idempotency.HeaderKey), "the caller's request is not modified")
		})
	}
}

func TestANewCallGetsANewMintedKey(t *testing.T) {
	rt := &fakeRT{script: []reply{{status: 200}}}
	tr := transport(t, defaults(t), httpretry.WithBase(rt), httpretry.MintKeys())
	for range 2 {
		resp, err := tr.RoundTrip(post(t, t.Context(), "http://api.test/orders", "{}"))
		require.NoError(t, err)
		resp.Body.Close()
	}
	sent := rt.requests()
	require.Len(t, sent, 2)
	assert.NotEqual(t, sent[0].key, sent[1].key, "one key per logical call")
}

func TestMintKeysLeavesIdempotentMethodsAlone(t *testing.T) {
	rt := &fakeRT{script: []reply{{status: 200}}}
	tr := transport(t, defaults(t), httpretry.WithBase(rt), httpretry.MintKeys())
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/orders/7", nil)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Empty(t, rt.requests()[0].key)
}

func TestABadKeyFailsBeforeSending(t *testing.T) {
	for name, key := range map[string]string{
		"over 255 characters":    strings.Repeat("k", 256),
		"a control character":    "a\tb",
		"a broken quoted string": `"unterminated`,
	} {
		t.Run(name, func(t *testing.T) {
			rt := &fakeRT{script: []reply{{status: 200}}}
			body := &closeCounter{Reader: strings.NewReader("{}")}
			req, _ := http.NewRequest(http.MethodPost, "http://api.test/orders", body)
			req.Header.Set(idempotency.HeaderKey, key)
			_, err := transport(t, defaults(t), httpretry.WithBase(rt)).RoundTrip(req)
			require.ErrorIs(t, err, retry.ErrInvalid)
			assert.Contains(t, err.Error(), "not sent")
			assert.Zero(t, rt.count())
			assert.Equal(t, 1, body.closed, "the body is closed, as a RoundTripper must")
		})
	}
}

func TestInProgressIsWaitedOutInTheLoop(t *testing.T) {
	inProgress := func(ra string) reply { return problem(409, "idempotency-in-progress", ra) }
	replay := reply{status: 201, header: http.Header{"Idempotent-Replay": {"true"}, "Idempotent-Replay-Of": {"exec-1"}}, body: "created"}
	tests := []struct {
		name       string
		script     []reply
		wantGaps   []time.Duration
		wantWaited time.Duration
	}{
		{"Retry-After sets each wait", []reply{inProgress("2"), inProgress("1"), replay},
			[]time.Duration{2 * time.Second, time.Second}, 3 * time.Second},
		{"without Retry-After the waits follow the Retrier's backoff", []reply{inProgress(""), inProgress(""), replay},
			[]time.Duration{10 * ms, 10 * ms}, 20 * ms},
		{"Retry-After: 0 does not make the client hammer the server", []reply{inProgress("0"), replay},
			[]time.Duration{10 * ms}, 10 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := &fakeRT{script: tt.script}
				tr := transport(t, exact(t, 10*ms), httpretry.WithBase(rt))
				ctx, _ := retry.WithIdempotencyKey(t.Context(), "order-1")
				req, res := asking(t, post(t, ctx, "http://api.test/orders", `{"item":"book"}`))
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				assert.Equal(t, 201, resp.StatusCode)
				of, replayed := idempotency.ReplayOf(resp)
				assert.True(t, replayed)
				assert.Equal(t, "exec-1", of)
				assert.Equal(t, int64(len(tt.script)-1), rt.closed.Load(), "every 409 was drained and closed")
				assert.Equal(t, "created", readAll(t, resp))
				gaps := rt.gaps()
				require.Len(t, gaps, len(tt.wantGaps))
				for i, want := range tt.wantGaps { // a Retry-After is waited, plus at most a tenth
					assert.GreaterOrEqual(t, gaps[i], want)
					assert.LessOrEqual(t, gaps[i], want+want/10)
				}
				assert.Equal(t, len(tt.script), res.Attempts)
				assert.GreaterOrEqual(t, res.Waited, tt.wantWaited, "the in-progress waits are in the call's Stats")
				assert.LessOrEqual(t, res.Waited, tt.wantWaited+tt.wantWaited/10)
				for _, s := range rt.requests() {
					assert.Equal(t, "order-1", s.key)
					assert.Equal(t, `{"item":"book"}`, s.body)
				}
			})
		})
	}
}

func TestInProgressWaitsAreBounded(t *testing.T) {
	t.Run("a Retry-After longer than MaxDelay is returned, not slept", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &fakeRT{script: []reply{problem(409, "idempotency-in-progress", "99999999999999999999")}}
			tr := transport(t, exact(t, 10*ms), httpretry.WithBase(rt))
			start := time.Now()
			req, res := asking(t, keyed(t, t.Context(), "k"))
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Zero(t, time.Since(start), "not slept, not even a little")
			assert.Equal(t, 409, resp.StatusCode)
			assert.Contains(t, readAll(t, resp), "idempotency-in-progress", "the 409 keeps its body")
			var rerr *retry.Error
			require.ErrorAs(t, res.Err, &rerr)
			assert.ErrorIs(t, res.Err, retry.ErrWaitTooLong)
			assert.ErrorIs(t, res.Err, idempotency.ErrInProgress)
			assert.Equal(t, time.Duration(1<<63-1), rerr.RetryAfter, "the wait saturates, and reaches the caller")
			assert.Equal(t, 1, rt.count())
		})
	})
	t.Run("a wait that would outlast the deadline returns the 409 at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &fakeRT{script: []reply{problem(409, "idempotency-in-progress", "5")}}
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			start := time.Now()
			req, res := asking(t, keyed(t, ctx, "k"))
			resp, err := transport(t, defaults(t), httpretry.WithBase(rt)).RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Zero(t, time.Since(start))
			assert.ErrorIs(t, res.Err, retry.ErrDeadline)
			assert.Equal(t, classify.Retry, idempotency.Classify(res.Err).Verdict, "the caller may wait and ask again")
		})
	})
	t.Run("MaxAttempts bounds the polls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &fakeRT{script: []reply{problem(409, "idempotency-in-progress", "1")}}
			req, res := asking(t, keyed(t, t.Context(), "k"))
			resp, err := transport(t, defaults(t), httpretry.WithBase(rt)).RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.ErrorIs(t, res.Err, retry.ErrExhausted)
			assert.Equal(t, 3, rt.count())
		})
	})
}

func TestKeyReuseAndNotRetainedAreNeverRetried(t *testing.T) {
	for _, tt := range []struct {
		kind   string
		status int
		reason error
	}{
		{"idempotency-key-reuse", 409, idempotency.ErrKeyReuse},
		{"idempotency-key-reuse", 422, idempotency.ErrKeyReuse},
		{"idempotency-response-not-retained", 409, idempotency.ErrNotRetained},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			rt := &fakeRT{script: []reply{problem(tt.status, tt.kind, "1"), {status: 200}}}
			tr := transport(t, exact(t, 0), httpretry.WithBase(rt), httpretry.MintKeys())
			req := post(t, t.Context(), "http://api.test/orders", `{"item":"pen"}`)
			req.Header.Set(idempotency.HeaderKey, "k1")
			req, res := asking(t, req)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.ErrorIs(t, res.Err, tt.reason)
			assert.ErrorIs(t, res.Err, retry.ErrPermanent)
			var ie *idempotency.Error
			require.ErrorAs(t, res.Err, &ie)
			assert.Equal(t, "k1", ie.Key)
			assert.Equal(t, 1, res.Attempts)
			assert.Equal(t, []seen{{"POST", "/orders", "", "k1", `{"item":"pen"}`}}, rt.requests(), "one request, and no new key")
		})
	}
}

func TestAKindOnlyMattersForAKeyedRequest(t *testing.T) {
	rt := &fakeRT{script: []reply{problem(409, "idempotency-in-progress", "1"), {status: 200}}}
	req, _ := http.NewRequest(http.MethodPut, "http://api.test/doc", nil)
	resp, err := transport(t, defaults(t), httpretry.WithBase(rt)).RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 409, resp.StatusCode, "a 409 to a request without a key is a conflict like any other")
	assert.Equal(t, 1, rt.count())
}

// slowServer is an in-memory server that honours Idempotency-Key: the first
// request of a key starts work that takes a second, whether or not its
// client waits; a request for a key whose work runs answers 409 in progress
// with Retry-After 1; one for a key whose work is done gets the stored
// answer, marked as a replay.
type slowServer struct {
	mu   sync.Mutex
	runs int
	done map[string]chan struct{}
}

func (s *slowServer) RoundTrip(req *http.Request) (*http.Response, error) {
	key := req.Header.Get(idempotency.HeaderKey)
	s.mu.Lock()
	done, seen := s.done[key]
	if !seen {
		done = make(chan struct{})
		s.done[key] = done
		s.runs++
		time.AfterFunc(time.Second, func() { close(done) })
	}
	s.mu.Unlock()
	if !seen {
		select {
		case <-done:
			return answer(req, 201, http.Header{}, "created"), nil
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	select {
	case <-done:
		return answer(req, 201, http.Header{"Idempotent-Replay": {"true"}}, "created"), nil
	default:
		p := problem(409, "idempotency-in-progress", "1")
		return answer(req, p.status, p.header, p.body), nil
	}
}

func answer(req *http.Request, status int, h http.Header, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: req}
}

func TestATimedOutAttemptCollectsTheFirstExecutionsResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &slowServer{done: map[string]chan struct{}{}}
		var waits []string
		r := exact(t, 100*ms, retry.WithMaxAttempts(4), retry.WithAttemptTimeout(300*ms),
			retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
				if e.Kind == observe.RetryScheduled {
					waits = append(waits, e.Decision.Reason)
				}
			})))
		tr := transport(t, r, httpretry.WithBase(srv), httpretry.MintKeys())
		start := time.Now()
		req, res := asking(t, post(t, t.Context(), "http://api.test/generate", `{"prompt":"hi"}`))
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.Equal(t, 201, resp.StatusCode)
		_, replayed := idempotency.ReplayOf(resp)
		assert.True(t, replayed, "the result is the first execution's, replayed")
		assert.Equal(t, "created", readAll(t, resp))
		assert.Equal(t, 1, srv.runs, "the work ran once")
		assert.Equal(t, []string{classify.ReasonTimeout, classify.ReasonKeyInProgress}, waits,
			"a timeout (retried: the call is keyed), then in progress (waited out)")
		assert.Equal(t, 3, res.Attempts)
		took := time.Since(start) // 300ms timeout + 100ms + a 1s Retry-After (plus at most a tenth)
		assert.GreaterOrEqual(t, took, 1400*ms)
		assert.LessOrEqual(t, took, 1500*ms)
	})
}

// keyed is a POST carrying key in its context.
func keyed(t *testing.T, ctx context.Context, key string) *http.Request {
	t.Helper()
	ctx, err := retry.WithIdempotencyKey(ctx, key)
	require.NoError(t, err)
	return post(t, ctx, "http://api.test/orders", "{}")
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	mu     sync.Mutex
	closed int
}

func (c *closeCounter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed++
	return nil
}

func TestAKeyedAnswerIsReadWhateverTheDrainLimit(t *testing.T) {
	rt := &fakeRT{script: []reply{problem(409, "idempotency-in-progress", ""), {status: 201}}}
	tr := transport(t, exact(t, 0), httpretry.WithBase(rt), httpretry.WithDrainLimit(0))
	resp, err := tr.RoundTrip(keyed(t, t.Context(), "k"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, 2, rt.count())
}
