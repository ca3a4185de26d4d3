package httpretry_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryEntryPointRefusesNilAndZeroArguments walks the package's exported
// functions and methods with nil or zero arguments that have no documented
// meaning: each returns a *retry.InvalidError before doing any work, and
// none panics.
func TestEveryEntryPointRefusesNilAndZeroArguments(t *testing.T) {
	rt := &fakeRT{script: []reply{{status: 200}}}
	good := transport(t, defaults(t), httpretry.WithBase(rt))
	get := func() *http.Request { r, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil); return r }
	noURL := get()
	noURL.URL = nil
	refused, _ := httpretry.New(defaults(t), nil)
	refusedClient, _ := httpretry.NewClient(defaults(t), httpretry.WithDrainLimit(-1))
	nilRetrier, _ := httpretry.New(nil)
	nilRetrierClient, _ := httpretry.NewClient(nil)
	refusedRetrier, _ := retry.New(retry.WithMaxAttempts(0))
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"New(r, nil)", func() error { _, err := httpretry.New(defaults(t), nil); return err }},
		{"NewClient(r, nil)", func() error { _, err := httpretry.NewClient(defaults(t), nil); return err }},
		{"a nil Transport's RoundTrip", func() error { _, err := (*httpretry.Transport)(nil).RoundTrip(get()); return err }},
		{"a refused Transport's RoundTrip", func() error { _, err := refused.RoundTrip(get()); return err }},
		{"a refused client's Get", func() error { _, err := refusedClient.Get("http://api.test/x"); return err }},
		{"RoundTrip(nil)", func() error { _, err := good.RoundTrip(nil); return err }},
		{"RoundTrip of a request without a URL", func() error { _, err := good.RoundTrip(noURL); return err }},
		{"OpenSSE(nil, nil)", func() error { _, err := httpretry.OpenSSE(nil, nil)(t.Context()); return err }},
		{"OpenSSE's open with a nil context", func() error { _, err := httpretry.OpenSSE(nil, get())(nil); return err }},
		{"stream.Open of OpenSSE(nil, nil)", func() error {
			_, err := stream.Open(t.Context(), quick(t), httpretry.OpenSSE(nil, nil))
			return err
		}},
		{"WithResult(nil, res)", func() error { _, err := httpretry.WithResult(nil, new(httpretry.Result)); return err }},
		{"WithResult(ctx, nil)", func() error { _, err := httpretry.WithResult(t.Context(), nil); return err }},
		{"NewSSE(nil).Next", func() error { _, err := httpretry.NewSSE(nil).Next(); return err }},
		{"New(nil)", func() error { _, err := httpretry.New(nil); return err }},
		{"NewClient(nil)", func() error { _, err := httpretry.NewClient(nil); return err }},
		{"a Transport of a nil Retrier", func() error { _, err := nilRetrier.RoundTrip(get()); return err }},
		{"a client of a nil Retrier", func() error { _, err := nilRetrierClient.Get("http://api.test/x"); return err }},
		{"New of a refused Retrier", func() error { _, err := httpretry.New(refusedRetrier); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tt.call() })
			assert.ErrorIs(t, err, retry.ErrInvalid)
			var ie *retry.InvalidError
			require.ErrorAs(t, err, &ie)
			assert.True(t, strings.HasPrefix(ie.Name, "httpretry."), "named with its package: %q", ie.Name)
		})
	}
	assert.Zero(t, rt.count(), "nothing was sent")
}

func TestNilAndZeroValuesWithADocumentedMeaningDoNotPanic(t *testing.T) {
	assert.NotPanics(t, func() {
		(*httpretry.Transport)(nil).CloseIdleConnections()
		new(httpretry.Transport).CloseIdleConnections()
		assert.Empty(t, httpretry.Redact(nil))
		assert.NoError(t, httpretry.NewSSE(nil).Close())
		var nr *httpretry.NotRetriedError
		assert.Equal(t, "<nil>", nr.Error())
		assert.NoError(t, nr.Unwrap())
		_ = nr.LogValue()
		_ = new(httpretry.NotRetriedError).Error()
		_ = new(httpretry.NotRetriedError).LogValue()
		var ee *httpretry.EventError
		assert.Equal(t, "<nil>", ee.Error())
		key, err := idempotency.KeyOf(nil)
		assert.Empty(t, key)
		assert.NoError(t, err)
	})
}

func TestTheZeroTransportUsesTheDefaults(t *testing.T) {
	srv := newServer(t, reply{status: 503}, reply{status: 200, body: "ok"})
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)
	var tr httpretry.Transport // http.DefaultTransport, retry.New()'s policy
	req, res := get(t, srv.URL)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	assert.Equal(t, "ok", readAll(t, resp))
	assert.Equal(t, 2, res.Attempts)
}

func TestBadOptionsNameThemselvesAndTheirValue(t *testing.T) {
	refusedRetrier, _ := retry.New(retry.WithMaxAttempts(0))
	for _, tt := range []struct {
		r    *retry.Retrier
		opt  httpretry.Option
		want string
	}{
		{nil, httpretry.WithDrainLimit(0), "httpretry.New(<nil>): the Retrier must not be nil (build one with retry.New)"},
		{refusedRetrier, httpretry.WithDrainLimit(0), "httpretry.New: retry: WithMaxAttempts(0): must be at least 1"},
		{defaults(t), nil, "httpretry.New(<nil>): an Option must not be nil"},
		{defaults(t), httpretry.WithBase(nil), "httpretry.WithBase(<nil>): must not be nil"},
		{defaults(t), httpretry.WithModel(nil), "httpretry.WithModel(<nil>): must not be nil"},
		{defaults(t), httpretry.WithKind(nil), "httpretry.WithKind(<nil>): must not be nil"},
		{defaults(t), httpretry.WithDrainLimit(-1), "httpretry.WithDrainLimit(-1): must not be negative"},
		{defaults(t), httpretry.WithHedging(nil, 2), "httpretry.WithHedging(<nil>): must not be nil"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			tr, err := httpretry.New(tt.r, httpretry.WithDrainLimit(0), tt.opt, httpretry.MintKeys())
			require.ErrorIs(t, err, retry.ErrInvalid)
			var ie *retry.InvalidError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tt.want, err.Error())
			require.NotNil(t, tr, "a Transport that fails every request, not a nil one")
			body := &closeCounter{Reader: strings.NewReader("x")}
			req, _ := http.NewRequest(http.MethodPut, "http://api.test/x", body)
			_, rerr := tr.RoundTrip(req)
			assert.Equal(t, err, rerr, "every request fails with the error")
			assert.Equal(t, 1, body.closed)
		})
	}
}

func TestARoundTripperThatReturnsNothingIsAnError(t *testing.T) {
	rt := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
	_, err := transport(t, exact(t, 0), httpretry.WithBase(rt)).RoundTrip(req)
	assert.ErrorContains(t, err, "neither a response nor an error")
}
