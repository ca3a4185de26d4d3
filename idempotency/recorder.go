package idempotency

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// recorder passes a response through to the client and keeps a copy of it,
// up to limit bytes of body, with what it takes to tell whether the
// response the client was sent is whole.
type recorder struct {
	http.ResponseWriter
	client   context.Context // the request's: done when its client leaves
	head     bool            // a HEAD request: no body, whatever the header says
	limit    int
	unstored map[string]bool
	status   int
	header   http.Header // as it was when the status was written
	body     []byte
	overflow bool
	declared int64 // the handler's Content-Length; -1 if it declared none
	written  int64 // the bytes of body the connection took
	begun    bool  // bytes went out while the client was there
	broken   error // why the response cannot be whole, if it cannot
}

func newRecorder(w http.ResponseWriter, r *http.Request, limit int, unstored map[string]bool) *recorder {
	return &recorder{ResponseWriter: w, client: r.Context(), head: r.Method == http.MethodHead,
		limit: limit, unstored: unstored, declared: -1}
}

func (rw *recorder) WriteHeader(code int) {
	switch {
	case code < 200: // 1xx pass through unrecorded
	case rw.status == 0:
		rw.status, rw.header = code, headerOnly(rw.Header())
		rw.declared = contentLength(rw.header)
	case code != rw.status && (failedStatus(code) || authFailure(code)):
		// A failure after the answer was sent — a recovered panic,
		// typically: what was sent is not the handler's answer.
		rw.breaks(fmt.Errorf("the handler answered %d after it had sent %d", code, rw.status))
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(p []byte) (int, error) {
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	n, err := rw.ResponseWriter.Write(p)
	n = min(max(n, 0), len(p))
	rw.keep(p[:n])
	if err != nil && !errors.Is(err, http.ErrBodyNotAllowed) { // that one loses nothing: there is no body
		rw.breaks(err)
	}
	return n, err
}

func (rw *recorder) keep(p []byte) {
	if len(p) == 0 {
		return
	}
	rw.written += int64(len(p))
	rw.sent()
	if rw.overflow {
		return
	}
	if len(rw.body)+len(p) > rw.limit {
		rw.overflow, rw.body = true, nil
	} else {
		rw.body = append(rw.body, p...)
	}
}

// FlushError lets streaming handlers flush through the recorder, and tells
// it when a flush fails.
func (rw *recorder) FlushError() error {
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	err := http.NewResponseController(rw.ResponseWriter).Flush()
	switch {
	case err == nil:
		rw.sent()
	case !errors.Is(err, http.ErrNotSupported):
		rw.breaks(err)
	}
	return err
}

// Flush is FlushError for http.Flusher.
func (rw *recorder) Flush() { _ = rw.FlushError() }

// Unwrap gives http.ResponseController the underlying writer.
func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// sent notes that the response reached the connection, and whether its
// client was still there.
func (rw *recorder) sent() {
	if !rw.begun && rw.client.Err() == nil {
		rw.begun = true
	}
}

func (rw *recorder) breaks(err error) {
	if rw.broken == nil {
		rw.broken = err
	}
}

var errCutOff = errors.New("its client left while the response, without a Content-Length, was being sent")

// incomplete says why the response the handler wrote is not whole, or nil if
// it is: a write or flush failed; the handler changed its answer after it was
// sent; the body is not as long as its declared Content-Length; or, without
// one, its client left after it began and before the handler returned — a
// stream cut off.
func (rw *recorder) incomplete() error {
	switch {
	case rw.broken != nil:
		return rw.broken
	case rw.declared >= 0 && rw.hasBody() && rw.written != rw.declared:
		return fmt.Errorf("the handler declared a Content-Length of %d and wrote %d bytes", rw.declared, rw.written)
	case rw.declared < 0 && rw.begun && rw.client.Err() != nil:
		return errCutOff
	}
	return nil
}

func (rw *recorder) hasBody() bool {
	return !rw.head && rw.status != http.StatusNoContent && rw.status != http.StatusNotModified
}

var errIncomplete = errors.New("the handler's response is incomplete")

// outcome is what the handler's answer means for the key, once it returned:
// nothing to record if it gave up with its request, an incomplete response
// (a failure whose kept form is a problem), a failure that releases the key,
// or a response to store.
func (rw *recorder) outcome(ctx context.Context) (output, error) {
	if rw.status == 0 && ctx.Err() != nil {
		return output{}, context.Cause(ctx) // it answered nothing: not a result to replay
	}
	if rw.status == 0 { // the handler wrote nothing: net/http sends 200
		rw.status, rw.header = http.StatusOK, headerOnly(rw.Header())
	}
	if why := rw.incomplete(); why != nil {
		return output{value: incompleteProblem()}, fmt.Errorf("%w: %w", errIncomplete, why)
	}
	out := output{overflow: rw.overflow}
	if !rw.overflow {
		out.value = encodeResponse(rw.status, rw.stored(), rw.body, rw.unstored)
		out.overflow = len(out.value) > rw.limit
	}
	switch {
	case authFailure(rw.status):
		out.release = true
		return out, errAuthFailed
	case failedStatus(rw.status):
		return out, errHandlerFailed
	}
	return out, nil
}

// stored is the header to record: the fields the status went out with, and
// the trailers as the handler left them, under http.TrailerPrefix — those it
// announced in its Trailer field and those it set with the prefix.
func (rw *recorder) stored() http.Header {
	h := rw.header // the recorder's own copy, used once
	live := rw.Header()
	for _, v := range rw.header.Values("Trailer") {
		for name := range strings.SplitSeq(v, ",") {
			name = http.CanonicalHeaderKey(strings.TrimSpace(name))
			if values := live[name]; len(values) > 0 {
				h[http.TrailerPrefix+name] = values
			}
		}
	}
	for k, values := range live {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok && len(values) > 0 {
			h[http.TrailerPrefix+http.CanonicalHeaderKey(name)] = values
		}
	}
	return h
}

// headerOnly is a copy of h without the trailers set in it by name
// (http.TrailerPrefix): those are read when the handler is done.
func headerOnly(h http.Header) http.Header {
	c := h.Clone()
	for k := range c {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			delete(c, k)
		}
	}
	return c
}

// contentLength is the Content-Length h declares, or -1: net/http ignores
// one that is not a number, and so does the recorder.
func contentLength(h http.Header) int64 {
	v := h.Get("Content-Length")
	if v == "" {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}
