package httpretry

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
)

func hasBody(req *http.Request) bool { return req.Body != nil && req.Body != http.NoBody }

func closeBody(req *http.Request) {
	if req != nil && req.Body != nil {
		_ = req.Body.Close()
	}
}

func methodOf(req *http.Request) string {
	if req.Method == "" {
		return http.MethodGet
	}
	return req.Method
}

// Redact returns u without its user information and with every query value
// replaced by "REDACTED", for logs and errors; "" for a nil u.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			q[k] = []string{"REDACTED"}
		}
		c.RawQuery = q.Encode()
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// drain reads at most limit bytes of body and closes it, so that its
// connection can be reused.
func drain(body io.ReadCloser, limit int64) {
	_, _ = io.CopyN(io.Discard, body, limit)
	_ = body.Close()
}

// peek reads up to limit bytes of resp's body and puts them back in front of
// the rest, so the body stays whole; a failed read is replayed after them.
func peek(resp *http.Response, limit int64) []byte {
	var buf bytes.Buffer
	_, err := io.CopyN(&buf, resp.Body, limit)
	if err == io.EOF {
		err = nil
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf.Bytes()), errReader{err}, resp.Body), resp.Body}
	return buf.Bytes()
}

// errReader returns err, or io.EOF when err is nil, so that a failed read of
// a peeked head is not lost.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}

// untied wraps the body of a response whose request context the transport
// made (see link): closing it ends that context. A body that can be written
// to (a 101 Switching Protocols) stays writable.
func untied(body io.ReadCloser, cancel context.CancelCauseFunc) io.ReadCloser {
	u := &untiedBody{ReadCloser: body, cancel: cancel}
	if w, ok := body.(io.Writer); ok {
		return untiedRW{u, w}
	}
	return u
}

type untiedBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *untiedBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

type untiedRW struct {
	*untiedBody
	io.Writer
}
