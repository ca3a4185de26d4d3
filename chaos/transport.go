package chaos

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/retrykit/retry/internal/argerr"
)

// Transport returns an http.RoundTripper that sends requests through base
// (nil: http.DefaultTransport) under s's faults. A fault that does not reach
// the server closes the request's body, as a RoundTripper must, and sends
// nothing; one that does sends the request through base, then loses, cuts
// or stalls its answer. Put it under the retrying transport (as the base of
// httpretry.New), where the network would be. With s nil or disabled a
// request costs base's RoundTrip plus one atomic load.
func (s *Scenario) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{s: s, base: base}
}

type transport struct {
	s    *Scenario
	base http.RoundTripper
}

// RoundTrip sends req under the scenario's faults.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.s.Enabled() || req == nil || req.URL == nil {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	p, err := t.s.begin(ctx)
	switch {
	case err != nil:
		closeBody(req)
		return nil, err
	case !p.fault.sends():
		closeBody(req)
		return t.instead(req, p.fault)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err // a real failure: it says what it says
	}
	t.s.stats.processed.Add(1)
	return t.after(ctx, req, p.fault, resp)
}

// CloseIdleConnections closes base's idle connections, if it has any.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t *transport) instead(req *http.Request, f Fault) (*http.Response, error) {
	switch f.kind {
	case errorKind:
		return nil, f.err
	case throttle, respond:
		return response(req, f), nil
	case value:
		return nil, argerr.New("chaos.Value", f.value, "a transport cannot return a value: use Respond")
	}
	return nil, connError(f.kind, addrOf(req))
}

// after loses, cuts or stalls resp as f says.
func (t *transport) after(ctx context.Context, req *http.Request, f Fault, resp *http.Response) (*http.Response, error) {
	switch f.kind {
	case none:
		return resp, nil
	case truncate, stall:
		resp.Body = &body{rc: resp.Body, ctx: ctx, f: f, left: int64(f.n), addr: addrOf(req), lost: &t.s.stats.lost}
		return resp, nil
	}
	// The server answered; the client never reads it.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	t.s.stats.lost.Add(1)
	if f.kind == timeout {
		if err := sleep(ctx, f.d); err != nil {
			return nil, err
		}
	}
	return nil, connError(f.kind, addrOf(req))
}

func response(req *http.Request, f Fault) *http.Response {
	text := f.bodyText()
	return &http.Response{
		Status:        strconv.Itoa(f.code) + " " + http.StatusText(f.code),
		StatusCode:    f.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        f.header(),
		Body:          io.NopCloser(strings.NewReader(text)),
		ContentLength: int64(len(text)),
		Request:       req,
	}
}

// addrOf is the host:port the request goes to.
func addrOf(req *http.Request) string {
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(host, port)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// body lets f.n bytes of a response's body through, then fails: at once
// with io.ErrUnexpectedEOF (Truncate), or after a stall (Stall). A body
// that ends within its n bytes reads whole, and lost nothing.
type body struct {
	rc   io.ReadCloser
	ctx  context.Context
	f    Fault
	left int64
	addr string
	lost *atomic.Int64
	err  error
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		return 0, b.cut()
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

// cut fails the body, once it has let its bytes through, if any are left.
func (b *body) cut() error {
	var one [1]byte
	if n, _ := io.ReadFull(b.rc, one[:]); n == 0 {
		b.err = io.EOF // the body was no longer than the fault's bytes
		return b.err
	}
	b.lost.Add(1)
	b.err = io.ErrUnexpectedEOF
	if b.f.kind == stall {
		if err := sleep(b.ctx, b.f.d); err != nil {
			b.err = err
		} else {
			b.err = connError(stall, b.addr)
		}
	}
	return b.err
}

func (b *body) Close() error { return b.rc.Close() }
