package idempotency

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// storeKey returns where the request's key lives: in WithScope's scope, or
// in the digest of its credentials, counted against its owner's share.
func (c *guardConfig) storeKey(r *http.Request, key string) StoreKey {
	if c.scope != nil {
		return StoreKey{Scope: c.scope(r), Key: key}
	}
	return StoreKey{Scope: c.digest(r), Key: key, Owner: c.owner(r)}
}

// digest is the default scope: a digest of every credential the request
// carries, so that requests whose credentials differ in any way are apart.
func (c *guardConfig) digest(r *http.Request) string {
	h := sha256.New()
	writePart(h, []byte("idempotency scope v1")) // a digest of this, not a bare hash of a token
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		for _, v := range r.Header.Values(name) {
			writePart(h, []byte(name))
			writePart(h, []byte(v))
		}
	}
	if c.cookies == nil {
		for _, v := range r.Header.Values("Cookie") {
			writePart(h, []byte("Cookie"))
			writePart(h, []byte(v))
		}
	} else {
		for name, value := range c.sessionCookies(r) {
			writePart(h, []byte(name))
			writePart(h, []byte(value))
		}
	}
	return sum(h)
}

// owner is whose share the default scope's records count against: the
// client's first credential — its first Authorization, or else its first
// session cookie (WithScopeCookies) — or, without one, its address. A client
// can vary everything else it sends, and each variation is a scope of its
// own, but not another share.
func (c *guardConfig) owner(r *http.Request) string {
	h := sha256.New()
	writePart(h, []byte("idempotency owner v1"))
	if v := r.Header.Values("Authorization"); len(v) > 0 {
		writePart(h, []byte("Authorization"))
		writePart(h, []byte(v[0]))
		return sum(h)
	}
	for name, value := range c.sessionCookies(r) {
		writePart(h, []byte(name))
		writePart(h, []byte(value))
		return sum(h)
	}
	writePart(h, []byte("address"))
	writePart(h, []byte(addressOf(r.RemoteAddr)))
	return sum(h)
}

func sum(h hash.Hash) string {
	var s [sha256.Size]byte
	return hex.EncodeToString(h.Sum(s[:0])[:16])
}

// sessionCookies yields the cookies WithScopeCookies names, in the order
// sent, read from the Cookie fields as they are: a value that Go's cookie
// parser drops (a space, a quote, a byte beyond ASCII) still counts, so that
// such a session does not fall out of the digest and make its clients one.
func (c *guardConfig) sessionCookies(r *http.Request) func(yield func(name, value string) bool) {
	return func(yield func(name, value string) bool) {
		for _, line := range r.Header.Values("Cookie") {
			for part := range strings.SplitSeq(line, ";") {
				name, value, _ := strings.Cut(part, "=")
				name = strings.TrimSpace(name)
				if slices.Contains(c.cookies, name) && !yield(name, strings.TrimSpace(value)) {
					return
				}
			}
		}
	}
}

// addressOf is the client part of a remote address: its IP, or for IPv6 its
// /64 (what one subscriber gets).
func addressOf(remote string) string {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return remote
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// hostOf is the request's host as the fingerprint reads it: in lower case,
// without a trailing dot or the scheme's default port, and named by its
// first alias (WithHostAliases).
func (c *guardConfig) hostOf(r *http.Request) string {
	host := strings.ToLower(r.Host)
	port := ""
	if h, p, err := net.SplitHostPort(host); err == nil {
		host, port = h, p
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if alias, ok := c.hosts[host]; ok {
		host = alias
	}
	if port == "" || port == "80" && r.TLS == nil || port == "443" && r.TLS != nil {
		port = ""
	}
	switch {
	case port != "":
		return net.JoinHostPort(host, port)
	case strings.Contains(host, ":"): // an IPv6 literal
		return "[" + host + "]"
	}
	return host
}

// legacyMatch reports whether fp is the request's default fingerprint as
// the versions before the host was part of it computed it, so that a retry
// of a request stored by one of them still replays (for the retention
// window, after which no such record is left) instead of being refused as
// another request. With WithFingerprint nothing changed: there is none.
func (c *guardConfig) legacyMatch(fp Fingerprint, r *http.Request, body []byte) bool {
	return c.fingerprint == nil &&
		fp == NewFingerprint([]byte(r.Method), []byte(r.URL.EscapedPath()), []byte(r.URL.RawQuery), body)
}

// fingerprintOf is WithFingerprint's fingerprint of the request, or the
// default: what the client sent — the method, the host, the path, the query
// and the body bytes, never a parsed model with defaults filled in.
func (c *guardConfig) fingerprintOf(r *http.Request, body []byte) Fingerprint {
	if c.fingerprint != nil {
		return c.fingerprint(r, body)
	}
	return NewFingerprint([]byte(r.Method), []byte(c.hostOf(r)), []byte(r.URL.EscapedPath()), []byte(r.URL.RawQuery), body)
}
