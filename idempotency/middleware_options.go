package idempotency

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/observe"
)

// guardConfig is what the options of the middleware alone set.
type guardConfig struct {
	keyOptional bool
	methods     []string
	maxBody     int64
	fingerprint func(*http.Request, []byte) Fingerprint // nil: the default
	hosts       map[string]string                       // WithHostAliases: a name to the first
	scope       func(*http.Request) string
	cookies     []string // the credential cookies; nil: the whole Cookie field
	sessionHdrs []string // WithUnstoredHeaders
	unstored    map[string]bool
	retryAfter  time.Duration
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
	"Content-Length", "Date", headerReplay, headerReplayOf,
}

func newMiddlewareConfig(opts []Option) (*config, error) {
	c := &config{execConfig: defaultExec(), middleware: true, guardConfig: guardConfig{
		methods: []string{http.MethodPost, http.MethodPatch}, maxBody: defaultMaxRequestBody,
		retryAfter: defaultRetryAfter, sessionHdrs: sessionHeaders,
	}}
	c.failValue = func(v []byte, _ error) []byte { return v }
	if err := c.apply(opts); err != nil {
		return nil, err
	}
	g := &c.guardConfig
	if g.scope != nil && g.cookies != nil {
		return nil, argerr.New("idempotency.WithScopeCookies", g.cookies, "has no effect with WithScope, which replaces the credentials' digest")
	}
	if g.hosts != nil && g.fingerprint != nil {
		return nil, argerr.New("idempotency.WithHostAliases", slices.Sorted(maps.Keys(g.hosts)), "has no effect with WithFingerprint, which replaces the default fingerprint")
	}
	g.unstored = make(map[string]bool)
	for _, name := range slices.Concat(neverStored, g.sessionHdrs) {
		g.unstored[http.CanonicalHeaderKey(name)] = true
	}
	return c, nil
}

// storable reports whether a record may keep, and a replay send, the
// header field or trailer name.
func (c *guardConfig) storable(name string) bool { return storable(name, c.unstored) }

// guardOption is an option of the middleware only.
func guardOption(name string, value any, bad error, set func(*guardConfig)) Option {
	return option(name, value, bad, forMiddleware, func(c *config) { set(&c.guardConfig) })
}

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
func KeyOptional() Option {
	return guardOption("idempotency.KeyOptional", true, nil, func(c *guardConfig) { c.keyOptional = true })
}

// WithMethods sets the request methods the middleware guards; requests with
// other methods pass through. The default is POST and PATCH, the methods
// that are not idempotent by themselves.
func WithMethods(methods ...string) Option {
	return guardOption("idempotency.WithMethods", methods, tokens(methods, "method"),
		func(c *guardConfig) { c.methods = append([]string(nil), methods...) })
}

// WithMaxRequestBody sets the largest request body the middleware reads to
// fingerprint a request, in bytes; a larger one is refused with 413. At
// least 0; the default is 1 MiB.
func WithMaxRequestBody(n int64) Option {
	return guardOption("idempotency.WithMaxRequestBody", n, notNegative(n), func(c *guardConfig) { c.maxBody = n })
}

// WithFingerprint sets how the middleware fingerprints a request, given the
// request and its body as received. The default hashes the method, the host
// (see WithHostAliases), the path, the raw query and the body bytes — what
// the client sent, never a parsed model with defaults filled in.
func WithFingerprint(f func(r *http.Request, body []byte) Fingerprint) Option {
	return guardOption("idempotency.WithFingerprint", funcValue(f == nil), nilFunc(f == nil),
		func(c *guardConfig) { c.fingerprint = f })
}

// WithHostAliases names the hosts that are one service, for a server that
// answers under several names (a regional and a global name; a new domain
// and an old one), so that a retry sent to another of the names replays
// instead of being refused. The default fingerprint includes the request's
// host — in lower case, without a trailing dot or the scheme's default port
// — so that a server answering for several hosts never replays one host's
// response on another: the same key sent to another host is a different
// request (422). With WithHostAliases, a request to any of hosts is
// fingerprinted as a request to the first; other hosts stay apart. Hosts are
// names without a port, at least one; it is refused with WithFingerprint,
// which replaces the default fingerprint.
func WithHostAliases(hosts ...string) Option {
	return guardOption("idempotency.WithHostAliases", hosts, hostNames(hosts), func(c *guardConfig) {
		c.hosts = make(map[string]string, len(hosts))
		first := normalHost(hosts[0])
		for _, h := range hosts {
			c.hosts[normalHost(h)] = first
		}
	})
}

func normalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// hostNames refuses an empty list of hosts, or a name that is not a host.
func hostNames(hosts []string) error {
	if len(hosts) == 0 {
		return errors.New("needs at least one host")
	}
	for _, h := range hosts {
		if h == "" || strings.ContainsAny(h, " \t\r\n/:;,@?#") {
			return errors.New("a host must be a name or an IPv4 address, without a port")
		}
	}
	return nil
}

// WithScope sets the scope of a request's key: the client it belongs to,
// whose keys no other client shares, and whose records count against its
// own share of a bounded store. f replaces the default, a digest of the
// request's credentials (see Middleware and WithScopeCookies). It is the
// recommended form wherever the application knows its clients: placed after
// the authentication middleware, f reads the account it stored in the
// request's context — so that a client whose token was refreshed between
// two retries is still the same client, and a client's share is held
// whatever it sends. Give it too where identity travels where the default
// digest does not look: an API key's id for a client that sends X-Api-Key;
// the user an authenticating gateway names in a field such as
// X-Forwarded-User, if the gateway sets that field on every request and
// removes any copy a client sent (otherwise a client names itself); the
// caller's address for a public service, where no credential means anything.
// f runs for every guarded request with a key, before the handler.
//
// f returning "" puts the request in the one unscoped key space that Do and
// Once use, which no per-scope share bounds: WithScope(func(*http.Request)
// string { return "" }) is how a single-tenant service, whose clients are
// all trusted alike, says that any client may replay any response. The
// scope is written into the store's keys: give an opaque id, not a secret.
func WithScope(f func(r *http.Request) string) Option {
	return guardOption("idempotency.WithScope", funcValue(f == nil), nilFunc(f == nil),
		func(c *guardConfig) { c.scope = f })
}

// WithScopeCookies names the cookies that identify a client in the default
// scope, with the Authorization and Proxy-Authorization fields: the session
// cookie, typically, so that other cookies — preferences, analytics — can
// change between a request and its retry without making it another
// client's. The first of them is the client's first credential when it has
// no Authorization field, and so names its share of the store (see
// Middleware). Their values are read from the Cookie fields as sent, not
// through Go's cookie parser, which drops a value with a space, a quote or a
// byte beyond ASCII: such a session still tells its clients apart. By
// default the whole Cookie field counts; given no names, no cookie does. It
// is refused with WithScope, which replaces the digest.
func WithScopeCookies(names ...string) Option {
	var bad error
	if len(names) > 0 {
		bad = tokens(names, "cookie name")
	}
	return guardOption("idempotency.WithScopeCookies", names, bad,
		func(c *guardConfig) { c.cookies = append([]string{}, names...) })
}

// WithUnstoredHeaders sets the response header fields kept out of stored
// responses, and so never replayed, as header fields or as trailers, in
// place of the default list (Set-Cookie, Set-Cookie2, Authentication-Info,
// Proxy-Authentication-Info).
// The first response carries them to its client as the handler wrote them.
// Hop-by-hop fields, Content-Length, Date and the replay markers are never
// stored, whatever the list; given no names, every other field is.
func WithUnstoredHeaders(names ...string) Option {
	var bad error
	if len(names) > 0 {
		bad = tokens(names, "header name")
	}
	return guardOption("idempotency.WithUnstoredHeaders", names, bad,
		func(c *guardConfig) { c.sessionHdrs = append([]string(nil), names...) })
}

// WithRetryAfter sets the Retry-After the middleware sends with a 409 for a
// request whose key is in progress (when the client should check again), a
// 429 for a client over its share of the store, and a 503. Whole seconds, at
// least 1s; the default is 1s.
func WithRetryAfter(d time.Duration) Option {
	return guardOption("idempotency.WithRetryAfter", d,
		refuseIf(d < time.Second || d%time.Second != 0, "must be a whole number of seconds, at least 1s"),
		func(c *guardConfig) { c.retryAfter = d })
}

// WithObserver adds o to the observers, which are called in the order
// given, with an observe.Event of kind observe.Request whose Detail is an
// Event (outcome, status, key, execution) and whose Err is the store's
// failure, if any: the observation point for metrics and traces. The calls
// are synchronous and must be quick.
//
// The middleware reports each guarded request it answers or runs, with the
// request's context, after the response was written — for an execution,
// after its outcome was recorded, from another goroutine when the request's
// context ended before the store answered. Requests passed through
// unguarded (other methods; no key with KeyOptional) and handlers that
// panic are not reported.
//
// Do and Once report only an outcome they could not record after they
// returned (see Do), with the caller's context: outcome "executed", the
// store's failure in Err. The caller got fn's result, but the key is not
// recorded: once its claim's lease ends, fn may run again.
func WithObserver(o observe.Observer) Option {
	if f, ok := o.(observe.Func); ok && f == nil {
		o = nil
	}
	return option("idempotency.WithObserver", o, nilFunc(o == nil), forAll,
		func(c *config) { c.observers = append(c.observers, o) })
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
