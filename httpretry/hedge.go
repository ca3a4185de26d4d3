package httpretry

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/retrykit/retry"
)

// hedgedCall runs a request through the transport's Hedger (WithHedging):
// its attempts may be in flight at the same time, so each works on a copy
// of the call, and what the caller gets back — the first success, or the
// last error response — is gathered here. Every other response is drained
// and closed.
type hedgedCall struct {
	c    call // a copy: a pointer to the caller's would move it to the heap for every request
	n    atomic.Int64
	mu   sync.Mutex
	resp *http.Response // the first success
	last *http.Response // the latest error response, when nothing succeeded
	sent bool           // attempt 1 sent the caller's body
}

// runHedged is run for a Transport that hedges, for a request it may
// repeat (a request sent once runs through the Retrier with one attempt).
// Attempts after the first rewind the body with GetBody, as retries do.
func (c *call) runHedged() (retry.Stats, error) {
	h := &hedgedCall{c: *c}
	st, err := c.t.hedger.Run(c.ctx, h.attempt)
	c.attempts = st.Attempts
	c.bodySent = h.sent
	if h.resp != nil {
		c.resp = h.resp
		h.discard(h.last)
		return st, nil
	}
	c.last = h.last
	return st, err
}

// attempt sends attempt n on a copy of the call, and keeps its response if
// it is the one the caller will get.
func (h *hedgedCall) attempt(actx context.Context) error {
	a := h.c
	a.attempts = int(h.n.Add(1)) - 1 // call.attempt counts it
	a.resp, a.last = nil, nil
	err := a.attempt(actx)
	h.mu.Lock()
	defer h.mu.Unlock()
	if a.bodySent {
		h.sent = true
	}
	switch {
	case a.resp != nil && h.resp == nil:
		h.resp = a.resp
	case a.resp != nil: // a second success, too late: the first one won
		h.discard(a.resp)
	case a.last != nil:
		h.discard(h.last)
		h.last = a.last
	}
	return err
}

func (h *hedgedCall) discard(resp *http.Response) {
	if resp != nil {
		drain(resp.Body, h.c.t.drainLimit)
	}
}
