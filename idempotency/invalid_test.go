package idempotency_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryExportedCallRefusesNilAndZeroArguments walks the package's
// exported functions and methods with nil and zero-value arguments that have
// no documented meaning: each returns an error matching retry.ErrInvalid,
// without panicking and before doing any work (nothing runs, nothing is
// stored).
func TestEveryExportedCallRefusesNilAndZeroArguments(t *testing.T) {
	var ctx context.Context // nil
	live := t.Context()
	s := newMemory(t)
	ran := false
	fn := func(context.Context) ([]byte, error) { ran = true; return nil, nil }
	effect := func(context.Context) error { ran = true; return nil }
	claim := idempotency.Record{Status: idempotency.InProgress, Token: "t"}
	done := idempotency.Record{Status: idempotency.Succeeded, Token: "t"}
	k := idempotency.StoreKey{Key: "k"}
	var nilRecord *idempotency.Record
	stores := map[string]memStore{"the memory store": s}

	tests := []struct {
		name string
		call func() error
	}{
		{"Do with a nil context", func() error { _, err := idempotency.Do(ctx, s, "k", fp, fn); return err }},
		{"Do with a nil store", func() error { _, err := idempotency.Do(live, nil, "k", fp, fn); return err }},
		{"Do with an empty key", func() error { _, err := idempotency.Do(live, s, "", fp, fn); return err }},
		{"Do with a nil fn", func() error { _, err := idempotency.Do(live, s, "k", fp, nil); return err }},
		{"Do with a nil option", func() error { _, err := idempotency.Do(live, s, "k", fp, fn, nil); return err }},
		{"Once with a nil context", func() error { _, err := idempotency.Once(ctx, s, "k", effect); return err }},
		{"Once with a nil store", func() error { _, err := idempotency.Once(live, nil, "k", effect); return err }},
		{"Once with an empty key", func() error { _, err := idempotency.Once(live, s, "", effect); return err }},
		{"Once with a nil effect", func() error { _, err := idempotency.Once(live, s, "k", nil); return err }},
		{"Once with a nil option", func() error { _, err := idempotency.Once(live, s, "k", effect, nil); return err }},
		{"Middleware with a nil store", func() error { _, err := idempotency.Middleware(nil); return err }},
		{"Middleware with a nil option", func() error { _, err := idempotency.Middleware(s, nil); return err }},
		{"DeriveKey with no parts", func() error { _, err := idempotency.DeriveKey(); return err }},
		{"DeriveKey with an empty part", func() error { _, err := idempotency.DeriveKey(""); return err }},
		{"ValidateKey of an empty key", func() error { return idempotency.ValidateKey("") }},
		{"Record.Validate of the zero record", func() error { return idempotency.Record{}.Validate() }},
		{"Record.MarshalBinary of the zero record", func() error { _, err := idempotency.Record{}.MarshalBinary(); return err }},
		{"Record.UnmarshalBinary of nil bytes", func() error { return new(idempotency.Record).UnmarshalBinary(nil) }},
		{"Record.UnmarshalBinary into a nil record", func() error { b, _ := done.MarshalBinary(); return nilRecord.UnmarshalBinary(b) }},
		{"WithLease(0)", func() error { _, err := idempotency.Do(live, s, "k", fp, fn, idempotency.WithLease(0)); return err }},
		{"WithRetention(0)", func() error { _, err := idempotency.Do(live, s, "k", fp, fn, idempotency.WithRetention(0)); return err }},
		{"WithPollInterval(0)", func() error {
			_, err := idempotency.Do(live, s, "k", fp, fn, idempotency.WithPollInterval(0))
			return err
		}},
		{"WithMethods()", func() error { _, err := idempotency.Middleware(s, idempotency.WithMethods()); return err }},
		{"WithFingerprint(nil)", func() error { _, err := idempotency.Middleware(s, idempotency.WithFingerprint(nil)); return err }},
		{"WithScope(nil)", func() error { _, err := idempotency.Middleware(s, idempotency.WithScope(nil)); return err }},
		{"WithHostAliases()", func() error { _, err := idempotency.Middleware(s, idempotency.WithHostAliases()); return err }},
		{"WithHostAliases with a port", func() error {
			_, err := idempotency.Middleware(s, idempotency.WithHostAliases("a.test:443"))
			return err
		}},
		{"WithHostAliases with WithFingerprint", func() error {
			_, err := idempotency.Middleware(s, idempotency.WithHostAliases("a.test"),
				idempotency.WithFingerprint(func(*http.Request, []byte) idempotency.Fingerprint { return fp }))
			return err
		}},
		{"WithObserver(nil)", func() error { _, err := idempotency.Middleware(s, idempotency.WithObserver(nil)); return err }},
		{"WithObserver of a nil observe.Func", func() error {
			var f observe.Func
			_, err := idempotency.Middleware(s, idempotency.WithObserver(f))
			return err
		}},
		{"WithRetryAfter(0)", func() error { _, err := idempotency.Middleware(s, idempotency.WithRetryAfter(0)); return err }},
		{"MemoryConfig.MaxEntries -1", func() error {
			_, err := idempotency.NewMemoryStore(idempotency.MemoryConfig{MaxEntries: -1})
			return err
		}},
		{"MemoryConfig.MaxBytes 1", func() error { _, err := idempotency.NewMemoryStore(idempotency.MemoryConfig{MaxBytes: 1}); return err }},
		{"MemoryConfig.ScopeShare 2", func() error {
			_, err := idempotency.NewMemoryStore(idempotency.MemoryConfig{ScopeShare: 2})
			return err
		}},
	}
	for name, st := range stores {
		tests = append(tests, []struct {
			name string
			call func() error
		}{
			{name + " Claim with a nil context", func() error { _, _, err := st.Claim(ctx, k, claim, time.Minute); return err }},
			{name + " Claim of the zero key", func() error { _, _, err := st.Claim(live, idempotency.StoreKey{}, claim, time.Minute); return err }},
			{name + " Claim of the zero record", func() error { _, _, err := st.Claim(live, k, idempotency.Record{}, time.Minute); return err }},
			{name + " Claim for a zero lease", func() error { _, _, err := st.Claim(live, k, claim, 0); return err }},
			{name + " Extend with a nil context", func() error { return st.Extend(ctx, k, "t", time.Minute) }},
			{name + " Extend of the zero key", func() error { return st.Extend(live, idempotency.StoreKey{}, "t", time.Minute) }},
			{name + " Extend for a zero lease", func() error { return st.Extend(live, k, "t", 0) }},
			{name + " Complete with a nil context", func() error { return st.Complete(ctx, k, done, time.Minute) }},
			{name + " Complete of the zero key", func() error { return st.Complete(live, idempotency.StoreKey{}, done, time.Minute) }},
			{name + " Complete of the zero record", func() error { return st.Complete(live, k, idempotency.Record{}, time.Minute) }},
			{name + " Complete for a zero retention", func() error { return st.Complete(live, k, done, 0) }},
			{name + " Release with a nil context", func() error { return st.Release(ctx, k, "t") }},
			{name + " Release of the zero key", func() error { return st.Release(live, idempotency.StoreKey{}, "t") }},
			{name + " Wait with a nil context", func() error { return st.Wait(ctx, k) }},
			{name + " Wait of the zero key", func() error { return st.Wait(live, idempotency.StoreKey{}) }},
		}...)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tt.call() })
			require.ErrorIs(t, err, retry.ErrInvalid)
			assert.False(t, ran, "the work ran")
			assert.Zero(t, s.Len(), "something was stored")
		})
	}
}

// TestNilAndZeroValuesWithAMeaningDoWhatTheDocumentationSays covers the nil
// and zero arguments that mean something: they must not panic either.
func TestNilAndZeroValuesWithAMeaningDoWhatTheDocumentationSays(t *testing.T) {
	s := newMemory(t)
	guard, err := idempotency.Middleware(s)
	require.NoError(t, err)
	var nilErr *idempotency.Error
	tests := []struct {
		name string
		call func(t *testing.T)
	}{
		{"KeyOf(nil) is no key", func(t *testing.T) {
			key, err := idempotency.KeyOf(nil)
			assert.Empty(t, key)
			assert.NoError(t, err)
		}},
		{"ResponseError(nil) is no error", func(t *testing.T) { assert.NoError(t, idempotency.ResponseError(nil)) }},
		{"ReplayOf(nil) is no replay", func(t *testing.T) {
			_, replay := idempotency.ReplayOf(nil)
			assert.False(t, replay)
		}},
		{"Classify(nil) has no opinion", func(t *testing.T) { assert.Zero(t, idempotency.Classify(nil)) }},
		{"NewFingerprint() hashes nothing", func(t *testing.T) { assert.NotZero(t, idempotency.NewFingerprint()) }},
		{"the zero Fingerprint is not fingerprinted", func(t *testing.T) {
			assert.Len(t, idempotency.Fingerprint{}.String(), 64)
		}},
		{"the zero Status has a label", func(t *testing.T) {
			assert.Equal(t, "status(0)", idempotency.Status(0).String())
			assert.False(t, idempotency.Status(0).Final())
		}},
		{"the zero MemoryConfig is the default store", func(t *testing.T) {
			_, err := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
			assert.NoError(t, err)
		}},
		{"the zero StoreKey reads as empty", func(t *testing.T) { assert.Empty(t, idempotency.StoreKey{}.String()) }},
		{"a nil or zero *Error reads as one", func(t *testing.T) {
			assert.Equal(t, "idempotency: <nil>", nilErr.Error())
			assert.Nil(t, nilErr.Unwrap())
			assert.Equal(t, "idempotency: unknown reason", (&idempotency.Error{}).Error())
			assert.Empty(t, (&idempotency.Error{}).Unwrap())
		}},
		{"a middleware around a nil handler answers 500", func(t *testing.T) {
			h := guard(nil)
			rec := &recorder{}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)
			h.ServeHTTP(rec, req)
			assert.Equal(t, http.StatusInternalServerError, rec.code)
		}},
		{"the middleware's handler given no request answers nothing", func(t *testing.T) {
			guard(http.NotFoundHandler()).ServeHTTP(nil, nil)
			guard(http.NotFoundHandler()).ServeHTTP(&recorder{}, &http.Request{})
		}},
		{"WithMaxResultSize(0), WithMaxWait(0), WithMaxRequestBody(0), WithScopeCookies() and WithUnstoredHeaders() are valid", func(t *testing.T) {
			_, err := idempotency.Do(t.Context(), s, "k", fp, (&counter{}).fn, idempotency.WithMaxResultSize(0), idempotency.WithMaxWait(0))
			assert.NoError(t, err)
			_, err = idempotency.Middleware(s, idempotency.WithMaxRequestBody(0), idempotency.WithScopeCookies(), idempotency.WithUnstoredHeaders())
			assert.NoError(t, err)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotPanics(t, func() { tt.call(t) })
		})
	}
}

// recorder is the least http.ResponseWriter.
type recorder struct {
	h    http.Header
	code int
}

func (r *recorder) Header() http.Header {
	if r.h == nil {
		r.h = http.Header{}
	}
	return r.h
}
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// TestOptionsAreRefusedWhereTheyMeanNothing checks that an option given to
// a function it does not configure is an error naming it, not an option
// silently ignored.
func TestOptionsAreRefusedWhereTheyMeanNothing(t *testing.T) {
	s := newMemory(t)
	tests := []struct {
		name              string
		opt               idempotency.Option
		calls, middleware bool // what it configures
	}{
		{"idempotency.WithLease", idempotency.WithLease(time.Second), true, true},
		{"idempotency.WithRetention", idempotency.WithRetention(time.Hour), true, true},
		{"idempotency.WithMaxResultSize", idempotency.WithMaxResultSize(1), true, true},
		{"idempotency.KeepFailures", idempotency.KeepFailures(), true, true},
		{"idempotency.WithPollInterval", idempotency.WithPollInterval(time.Second), true, false},
		{"idempotency.WithMaxWait", idempotency.WithMaxWait(time.Second), true, false},
		{"idempotency.KeyOptional", idempotency.KeyOptional(), false, true},
		{"idempotency.WithMethods", idempotency.WithMethods("PUT"), false, true},
		{"idempotency.WithMaxRequestBody", idempotency.WithMaxRequestBody(1), false, true},
		{"idempotency.WithFingerprint", idempotency.WithFingerprint(func(*http.Request, []byte) idempotency.Fingerprint { return fp }), false, true},
		{"idempotency.WithScope", idempotency.WithScope(func(*http.Request) string { return "" }), false, true},
		{"idempotency.WithScopeCookies", idempotency.WithScopeCookies("sid"), false, true},
		{"idempotency.WithHostAliases", idempotency.WithHostAliases("a.test"), false, true},
		{"idempotency.WithUnstoredHeaders", idempotency.WithUnstoredHeaders("Set-Cookie"), false, true},
		{"idempotency.WithRetryAfter", idempotency.WithRetryAfter(time.Second), false, true},
		{"idempotency.WithObserver", idempotency.WithObserver(observe.Func(func(context.Context, observe.Event) {})), true, true},
	}
	// check checks what a function given the option returned: nothing if
	// the option configures it, else the refusal naming the option.
	check := func(t *testing.T, err error, configures bool, refusal string) {
		t.Helper()
		if configures {
			assert.NoError(t, err)
			return
		}
		require.ErrorIs(t, err, retry.ErrInvalid)
		assert.Contains(t, err.Error(), refusal)
	}
	const notCalls, notMiddleware = "configures Middleware, not Do or Once", "configures Do and Once, not Middleware"
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := idempotency.Do(t.Context(), s, fmt.Sprint("k", i), fp, (&counter{}).fn, tt.opt)
			check(t, err, tt.calls, tt.name+"(")
			check(t, err, tt.calls, notCalls)
			_, err = idempotency.Once(t.Context(), s, fmt.Sprint("once", i), func(context.Context) error { return nil }, tt.opt)
			check(t, err, tt.calls, notCalls)
			_, err = idempotency.Middleware(s, tt.opt)
			check(t, err, tt.middleware, tt.name+"(")
			check(t, err, tt.middleware, notMiddleware)
		})
	}
}
