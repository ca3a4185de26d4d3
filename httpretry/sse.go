package httpretry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/stream"
)

// maxEventLine bounds one line of an event stream.
const maxEventLine = 4 << 20

// Event is one server-sent event.
type Event struct {
	ID    string
	Event string        // the event type; "" means "message"
	Data  string        // the data lines, joined with "\n"
	Retry time.Duration // the reconnection time the server asked for, if any
}

// EventError is an error the server sent inside the stream, after it began:
// an event of type "error", or data that is a JSON object with an "error"
// member (the convention of LLM APIs).
type EventError struct {
	Event   Event
	Message string
}

// Error returns "httpretry: the stream reported an error: <message>".
func (e *EventError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return "httpretry: the stream reported an error: " + e.Message
}

// sse reads a text/event-stream body as a stream of events (NewSSE).
type sse struct {
	body io.ReadCloser
	sc   *bufio.Scanner
	id   string // the last event ID, kept across events
}

// NewSSE reads a text/event-stream body as a stream of events: Next returns
// the next event, io.EOF at the end of the stream (the data "[DONE]" ends
// it too), or an in-band error as an *EventError; Close closes body. A line
// may be at most 4 MiB long. A nil body gives a stream whose Next returns a
// *retry.InvalidError.
func NewSSE(body io.ReadCloser) stream.Chunks[Event] {
	if body == nil {
		return &sse{}
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	sc.Split(scanLines)
	return &sse{body: body, sc: sc}
}

// Next returns the next event, io.EOF at the end of the stream, or the
// in-band error as an *EventError.
func (s *sse) Next() (Event, error) {
	if s.sc == nil {
		return Event{}, argerr.New("httpretry.NewSSE", nil, "the stream has no body")
	}
	var e Event
	var data strings.Builder
	seen := false
	for s.sc.Scan() {
		line := s.sc.Text()
		if line == "" { // dispatch
			if !seen {
				continue
			}
			e.ID = s.id
			e.Data = strings.TrimSuffix(data.String(), "\n")
			return s.dispatch(e)
		}
		if s.field(line, &e, &data) {
			seen = true
		}
	}
	if err := s.sc.Err(); err != nil {
		return Event{}, err
	}
	return Event{}, io.EOF // a final event without its blank line is dropped, as the spec says
}

// field applies one line; it reports whether the line was part of an event.
func (s *sse) field(line string, e *Event, data *strings.Builder) bool {
	if strings.HasPrefix(line, ":") {
		return false // a comment
	}
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch name {
	case "data":
		data.WriteString(value)
		data.WriteByte('\n')
	case "event":
		e.Event = value
	case "id":
		if !strings.ContainsRune(value, 0) {
			s.id = value
		}
	case "retry":
		if ms, err := strconv.ParseUint(value, 10, 31); err == nil {
			e.Retry = time.Duration(ms) * time.Millisecond
		}
	default:
		return false
	}
	return true
}

func (s *sse) dispatch(e Event) (Event, error) {
	if e.Data == "[DONE]" {
		return Event{}, io.EOF
	}
	if msg, ok := inBandError(e); ok {
		return e, &EventError{Event: e, Message: msg}
	}
	return e, nil
}

// inBandError recognises an error event and returns its message.
func inBandError(e Event) (string, bool) {
	if e.Event == "error" {
		return errorMessage(e.Data), true
	}
	if !strings.HasPrefix(strings.TrimSpace(e.Data), "{") {
		return "", false
	}
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(e.Data), &body) != nil || len(body.Error) == 0 || string(body.Error) == "null" {
		return "", false
	}
	return errorMessage(string(body.Error)), true
}

// errorMessage extracts {"message": …} (or {"error": {"message": …}}), or
// returns the text as it is.
func errorMessage(text string) string {
	var v struct {
		Message string `json:"message"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(text), &v) == nil {
		if v.Message != "" {
			return v.Message
		}
		if v.Error.Message != "" {
			return v.Error.Message
		}
	}
	var s string
	if json.Unmarshal([]byte(text), &s) == nil {
		return s
	}
	return text
}

// Close closes the body.
func (s *sse) Close() error {
	if s.body == nil {
		return nil
	}
	return s.body.Close()
}

// scanLines splits on "\r\n", "\n" or "\r", as the event stream format
// allows.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\r' {
			if i+1 == len(data) && !atEOF {
				return 0, nil, nil // wait: it may be "\r\n"
			}
			if i+1 < len(data) && data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
		}
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// OpenSSE returns the open function of stream.Open for one event-stream
// request: each attempt sends req (with its body rewound) through client. A
// response with an error status is a *classify.StatusError — retried, with
// its Retry-After, before the stream begins; a 2xx that is not an event
// stream is a permanent error.
//
// With a client whose transport is a Transport, the request goes through
// that transport's Retrier — its stages, keyed by the request's (host,
// model) — and error kinds (WithKind), and its retries stand for the
// stream's: the stream's loop does not retry what the transport gave up on
// (retry in one layer).
//
// A nil client means http.DefaultClient. A nil request, or one without a URL,
// makes every attempt fail at once, before anything is sent, with a
// *retry.InvalidError marked permanent.
func OpenSSE(client *http.Client, req *http.Request) func(context.Context) (stream.Chunks[Event], error) {
	if client == nil {
		client = http.DefaultClient
	}
	if err := checkRequest(req); err != nil {
		bad := classify.Permanent(argerr.New("httpretry.OpenSSE", nil, "the request must not be nil, and must have a URL"))
		return func(context.Context) (stream.Chunks[Event], error) { return nil, bad }
	}
	attempt := 0
	return func(ctx context.Context) (stream.Chunks[Event], error) {
		if ctx == nil {
			return nil, classify.Permanent(argerr.New("httpretry.OpenSSE", nil, "the context must not be nil"))
		}
		attempt++
		var res Result // a Transport's verdict on an error response
		r := req.Clone(context.WithValue(ctx, resultKey{}, &res))
		if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, classify.Permanent(errors.New("httpretry: the request body cannot be rewound (no GetBody)"))
			}
			body, err := req.GetBody()
			if err != nil {
				return nil, classify.Permanent(err)
			}
			r.Body = body
		}
		if r.Header.Get("Accept") == "" {
			r.Header.Set("Accept", "text/event-stream")
		}
		resp, err := client.Do(r)
		if err != nil {
			return nil, err
		}
		if err := classify.ResponseError(resp); err != nil {
			if res.Err != nil {
				err = res.Err // sent through a Transport: its classified error (kind, retries) says more
			}
			drain(resp.Body, defaultDrainLimit)
			return nil, err
		}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
			drain(resp.Body, defaultDrainLimit)
			return nil, classify.Permanent(fmt.Errorf("httpretry: %s %s answered %q, not an event stream",
				req.Method, Redact(req.URL), resp.Header.Get("Content-Type")))
		}
		return NewSSE(resp.Body), nil
	}
}
