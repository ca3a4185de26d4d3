package idempotency

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// middlewareConfig configures one Middleware.
type middlewareConfig struct {
	execConfig
	err         error
	keyOptional bool
	methods     []string
	maxBody     int64
	fingerprint func(*http.Request, []byte) Fingerprint
	scope       func(*http.Request) string
	cookies     []string // the credential cookies; nil: the whole Cookie field
	sessionHdrs []string // WithUnstoredHeaders
	unstored    map[string]bool
	retryAfter  time.Duration
	hook        func(*http.Request, Event)
}

// sessionHeaders are the response header fields the middleware keeps out of
// its records by default: those that act on the client's session or
// credentials rather than describe the response. A replay answers the
// request again; it does not log anyone in.
var sessionHeaders = []string{"Set-Cookie", "Set-Cookie2", "Authentication-Info", "Proxy-Authentication-Info"}

// neverStored are the fields no record keeps, whatever the options: hop-by-hop
// fields, fields the server computes again for the replay, and the replay
// markers themselves.
var neverStored = []string{
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Content-Length", "Date", HeaderReplay, HeaderReplayOf,
}

func newMiddlewareConfig(opts []MiddlewareOption) (*middlewareConfig, error) {
	c := &middlewareConfig{
		execConfig: defaultExec(), methods: []string{http.MethodPost, http.MethodPatch},
		maxBody: DefaultMaxRequestBody, fingerprint: requestFingerprint, retryAfter: DefaultRetryAfter,
		sessionHdrs: sessionHeaders,
	}
	c.failValue = func(v []byte, _ error) []byte { return v }
	applyAll("idempotency.MiddlewareOption", opts, &c.err, func(o MiddlewareOption) { o.applyMiddleware(c) })
	if c.err == nil && c.scope != nil && c.cookies != nil {
		c.err = argerr.New("idempotency.WithScopeCookies", c.cookies, "has no effect with WithScope, which replaces the credentials' digest")
	}
	c.unstored = make(map[string]bool)
	for _, name := range slices.Concat(neverStored, c.sessionHdrs) {
		c.unstored[http.CanonicalHeaderKey(name)] = true
	}
	return c, c.err
}

type middlewareOption struct{ setting[middlewareConfig] }

func (o middlewareOption) applyMiddleware(c *middlewareConfig) { o.apply(c, &c.err) }

// tokens refuses an empty list of names, or a name that is not a token.
func tokens(names []string, what string) error {
	if len(names) == 0 {
		return errors.New("needs at least one " + what)
	}
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, " \t\r\n:;,=\"") {
			return errors.New("a " + what + " must be a non-empty token")
		}
	}
	return nil
}

// KeyOptional lets requests without an Idempotency-Key through to the
// handler, unguarded. By default a guarded request without a key is refused
// with 400.
func KeyOptional() MiddlewareOption {
	return middlewareOption{setting[middlewareConfig]{"idempotency.KeyOptional", true, nil,
		func(c *middlewareConfig) { c.keyOptional = true }}}
}

// WithMethods sets the request methods the middleware guards; requests with
// other methods pass through. The default is POST and PATCH, the methods
// that are not idempotent by themselves.
func WithMethods(methods ...string) MiddlewareOption {
	return middlewareOption{setting[middlewareConfig]{"idempotency.WithMethods", methods, tokens(methods, "method"),
		func(c *middlewareConfig) { c.methods = append([]string(nil), methods...) }}}
}

// WithMaxRequestBody sets the largest request body the middleware reads to
// fingerprint a request, in bytes; a larger one is refused with 413. At
// least 0; the default is 1 MiB.
func WithMaxRequestBody(n int64) MiddlewareOption {
	return middlewareOption{setting[middlewareConfig]{"idempotency.WithMaxRequestBody", n, notNegative(n),
		func(c *middlewareConfig) { c.maxBody = n }}}
}

// WithFingerprint sets how the middleware fingerprints a request, given the
// request and its body as received. The default hashes the method, the path,
// the raw query and the body bytes — what the client sent, never a parsed
// model with defaults filled in.
func WithFingerprint(f func(r *http.Request, body []byte) Fingerprint) MiddlewareOption {
	return middlewareOption{setting[middlewareConfig]{"idempotency.WithFingerprint", funcValue(f == nil), nilFunc(f == nil),
		func(c *middlewareConfig) { c.fingerprint = f }}}
}

// WithScope sets the scope of a request's key: the client it belongs to,
// whose keys no other client shares. f replaces the default, a digest of the
// request's credentials (see Middleware and WithScopeCookies); give it when
// the application knows its clients better — the authenticated account (so
// that a client whose token was refreshed between two retries is still the
// same client), an API key's id, the caller's address for a public service.
// f runs for every guarded request with a key, before the handler; the
// middleware placed after authentication can read what it stored in the
// request's context.
//
// f returning "" puts the request in the one unscoped key space that Do and
// Once use, which no per-scope share bounds: WithScope(func(*http.Request)
// string { return "" }) is how a single-tenant service, whose clients are
// all trusted alike, says that any client may replay any response. The
// scope is written into the store's keys: give an opaque id, not a secret.
func WithScope(f func(r *http.Request) string) MiddlewareOption {
	return middlewareOption{setting[middlewareConfig]{"idempotency.WithScope", funcValue(f == nil), nilFunc(f == nil),
		func(c *middlewareConfig) { c.scope = f }}}
}

// WithScopeCookies names the cookies that identify a client in the default
// scope, with the Authorization and Proxy-Authorization fields: the session
// cookie, typically, so that other cookies — preferences, analytics — can
// change between a request and its retry without making it another
// client's. By default the whole Cookie field counts; given no names, no
// cookie does. It is refused with WithScope, which replaces the digest.
func WithScopeCookies(names ...string) MiddlewareOption {
	var bad error
	if len(names) > 0 {
		bad = tokens(names, "cookie name")
	}
	return middlewareOption{setting[middlewareConfig]{"idempotency.WithScopeCookies", names, bad,
		func(c *middlewareConfig) { c.cookies = append([]string{}, names...) }}}
}

// WithUnstoredHeaders sets the response header fields kept out of stored
// responses, and so never replayed, in place of the default list
// (Set-Cookie, Set-Cookie2, Authentication-Info, Proxy-Authentication-Info).
// The first response carries them to its client as the handler wrote them.
// Hop-by-hop fields, Content-Length, Date and the replay markers are never
// stored, whatever the list; given no names, every other field is.
func WithUnstoredHeaders(names ...string) MiddlewareOption {
	var bad error
	if len(names) > 0 {
		bad = tokens(names, "header name")
	}
	return middlewareOption{setting[middlewareConfig]{"idempotency.WithUnstoredHeaders", names, bad,
		func(c *middlewareConfig) { c.sessionHdrs = append([]string(nil), names...) }}}
}

// WithRetryAfter sets the Retry-After the middleware sends with a 409 for a
// request whose key is in progress (when the client should check again), a
// 429 for a client over its share of the store, and a 503. Whole seconds, at
// least 1s; the default is 1s.
func WithRetryAfter(d time.Duration) MiddlewareOption {
	return middlewareOption{setting[middlewareConfig]{"idempotency.WithRetryAfter", d,
		refuseIf(d < time.Second || d%time.Second != 0, "must be a whole number of seconds, at least 1s"),
		func(c *middlewareConfig) { c.retryAfter = d }}}
}

// WithHook sets a function the middleware calls once for every guarded
// request it answers or runs, with what it did (see Event): the observation
// point for metrics and traces. It is called synchronously, after the
// response was written — for an execution, after its outcome was recorded —
// and must be quick. Requests it passes through unguarded (other methods;
// no key with KeyOptional) and handlers that panic are not reported.
func WithHook(f func(r *http.Request, e Event)) MiddlewareOption {
	return middlewareOption{setting[middlewareConfig]{"idempotency.WithHook", funcValue(f == nil), nilFunc(f == nil),
		func(c *middlewareConfig) { c.hook = f }}}
}

// funcValue is how an option's function shows in its error.
func funcValue(isNil bool) any {
	if isNil {
		return nil
	}
	return "func"
}

func nilFunc(isNil bool) error {
	if isNil {
		return errNil
	}
	return nil
}
