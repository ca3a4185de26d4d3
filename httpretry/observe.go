package httpretry

import (
	"time"
)

// Attempt is what the transport reports after each attempt (WithHook): what
// only it knows — the request's method and the response's status, and why a
// request is sent once — and never a header, a body or a credential.
type Attempt struct {
	Method string // the request's method ("GET" for "")
	URL    string // the request's URL, redacted (Redact)
	Number int    // 1 for the first attempt of the call
	Status int    // the response's status code; 0 when no response came
	// Err is why no response came: the base transport's error, or a local
	// refusal (a cooldown) for an attempt that sent nothing; nil when a
	// response came, whatever its status.
	Err error
	// Once says why the request is sent only once — it is not safe to
	// repeat — and is empty when the transport may retry it.
	Once    string
	Elapsed time.Duration // from the attempt's start to its response's header, or its error
}

// StatusClass returns the status class — "1xx", "2xx", "3xx", "4xx" or
// "5xx" — or "error" when no response came (or its status was outside
// 100–599): the label for counting attempts by status class.
func (a Attempt) StatusClass() string {
	if a.Status < 100 || a.Status > 599 {
		return "error"
	}
	return statusClasses[a.Status/100-1]
}

var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// report tells the hooks about the attempt that just ended.
func (c *call) report(start time.Time, status int, err error) {
	if len(c.t.hooks) == 0 {
		return
	}
	a := Attempt{Method: methodOf(c.req), URL: Redact(c.req.URL), Number: c.attempts, Status: status,
		Once: c.once, Elapsed: time.Since(start)}
	if status == 0 {
		a.Err = err
	}
	ctx := c.req.Context()
	for _, h := range c.t.hooks {
		h(ctx, a)
	}
}
