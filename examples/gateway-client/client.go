package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/policy"
	"github.com/retrykit/retry/stream"
)

// Client is what an SDK for the gateway would be, built from the library:
// one Retrier holds the policy and a cooldown per (host, model); completions
// go through httpretry (the gateway's error kinds, Retry-After), streams
// through stream.Open (retried only before their first chunk). It never mints an idempotency key: the
// caller chooses one per logical call, and the same key goes with every
// retry of it.
type Client struct {
	url    string
	r      *retry.Retrier
	http   *http.Client // completions: retried inside its transport
	stream *http.Client // streams: one request per attempt of OpenStream
}

// ClientOptions configures NewClient.
type ClientOptions struct {
	URL    string            // the gateway's base URL
	Base   http.RoundTripper // sends each attempt; nil means http.DefaultTransport
	Logger *slog.Logger      // hears every wait: INFO from 1s, DEBUG below
	// RetryUpstreamErrors is the gateway's retry_upstream_errors: a 502
	// upstream-error gets one extra attempt, whatever MaxAttempts says.
	RetryUpstreamErrors bool
}

// NewClient returns a Client for the gateway at o.URL.
func NewClient(o ClientOptions) (*Client, error) {
	if o.Base == nil {
		o.Base = http.DefaultTransport
	}
	r, err := newRetrier(o.Logger, o.RetryUpstreamErrors)
	if err != nil {
		return nil, err
	}
	// The transport keys each request by (host, model) for the Retrier's
	// cooldowns, reading the model from the body.
	hc, err := httpretry.NewClient(r, httpretry.WithBase(o.Base),
		httpretry.WithKind(errorKind), httpretry.WithModel(modelOf))
	if err != nil {
		return nil, err
	}
	return &Client{url: o.URL, r: r, http: hc, stream: &http.Client{Transport: errorAnswers{o.Base}}}, nil
}

// newRetrier is the LLM preset — strict: a generation is billed, so only
// failures known to be transient are retried — scaled down to run in
// seconds, with a cooldown per call key: a 503 with Retry-After stops every
// call to that (host, model) until the server's time, and other models go on.
func newRetrier(logger *slog.Logger, retryUpstream bool) (*retry.Retrier, error) {
	cooldowns, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	if err != nil {
		return nil, err
	}
	opts := []retry.Option{
		retry.WithPolicy(policy.LLMCall()),
		retry.WithBackoff(backoff.Exponential{Base: 50 * time.Millisecond, MaxDelay: time.Second}), // the preset: 2s → 60s
		retry.WithMaxDelay(2 * time.Second),        // max_backoff: a longer Retry-After is returned, not slept
		retry.WithAttemptTimeout(clientTimeout),    // a timed-out attempt is retried only when keyed
		retry.WithClassifier(idempotency.Classify), // 409 in-progress: wait and collect; key reuse: never
		retry.WithCooldowns(cooldowns),
		retry.WithLogger(logger), // also logs each cooldown as it starts
	}
	if retryUpstream {
		opts = append(opts, retry.WithClassifier(classify.UpstreamOnce))
	}
	return retry.New(opts...)
}

// ChatRequest is one completion.
type ChatRequest struct {
	Model, Prompt string
	// IdempotencyKey, if set, goes with every attempt: a retry then collects
	// the first attempt's result instead of paying for a second generation,
	// which also makes a timed-out call safe to retry.
	IdempotencyKey string
}

// Completion is the answer to a ChatRequest.
type Completion struct {
	ID   string // the generation that produced Text
	Text string
	Meta Meta
}

// Meta describes a call — on failure too: a call that waited and then
// failed is the one whose duration most needs explaining.
type Meta struct {
	Attempts  int
	Waited    time.Duration
	RequestID string
	// IdempotentReplay reports a stored result sent again: no model ran for
	// this request and nothing was billed; IdempotentReplayOf is the
	// generation that was.
	IdempotentReplay   bool
	IdempotentReplayOf string
}

// Complete sends a completion. On failure the Completion still carries the
// Meta, and the error is an *APIError if the gateway answered.
func (c *Client) Complete(ctx context.Context, cr ChatRequest) (Completion, error) {
	var res httpretry.Result // the call's attempts and waits, filled in by the transport
	ctx, err := httpretry.WithResult(ctx, &res)
	if err != nil {
		return Completion{}, err
	}
	req, err := c.newRequest(ctx, cr, false)
	if err != nil {
		return Completion{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Completion{Meta: metaOf(err)}, err
	}
	defer resp.Body.Close()
	meta := Meta{Attempts: res.Attempts, Waited: res.Waited, RequestID: resp.Header.Get("X-Request-Id")}
	if resp.StatusCode >= 400 {
		return Completion{Meta: meta}, newAPIError(resp, res.Err)
	}
	meta.IdempotentReplayOf, meta.IdempotentReplay = idempotency.ReplayOf(resp)
	var body struct{ ID, Text string }
	err = json.NewDecoder(resp.Body).Decode(&body)
	return Completion{ID: body.ID, Text: body.Text, Meta: meta}, err
}

// Stream streams a completion and reads it whole. A refusal before the first
// chunk is retried like any failure; a break after it is not — it is a
// *stream.Error, and the Completion holds the partial text.
func (c *Client) Stream(ctx context.Context, cr ChatRequest) (Completion, error) {
	req, err := c.newRequest(ctx, cr, true)
	if err != nil {
		return Completion{}, err
	}
	s, err := stream.Open(ctx, c.r, httpretry.OpenSSE(c.stream, req))
	if err != nil {
		return Completion{Meta: metaOf(err)}, err
	}
	defer s.Close()
	var text strings.Builder
	for e, err := range s.All() {
		if err != nil {
			return Completion{Text: text.String(), Meta: statsMeta(s.Stats())}, err
		}
		var chunk struct{ Delta string }
		_ = json.Unmarshal([]byte(e.Data), &chunk)
		text.WriteString(chunk.Delta)
	}
	return Completion{Text: text.String(), Meta: statsMeta(s.Stats())}, nil
}

func (c *Client) newRequest(ctx context.Context, cr ChatRequest, stream bool) (*http.Request, error) {
	body, err := json.Marshal(chatRequest{Model: cr.Model, Prompt: cr.Prompt, Stream: stream})
	if err != nil {
		return nil, err
	}
	// An in-memory body gives the request GetBody: every attempt resends it whole.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if cr.IdempotencyKey != "" {
		req.Header.Set(idempotency.HeaderKey, cr.IdempotencyKey)
	}
	return req, nil
}

// modelOf reads the model from the request's JSON body, for the call key of
// the cooldowns: one per (host, model), so that one model's outage does not
// stop the others.
func modelOf(req *http.Request) string {
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	var r chatRequest
	_ = json.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&r)
	return r.Model
}

// metaOf reads the attempts and waits of a call that got no answer to
// return: a *retry.Error has them; a request sent once made one attempt;
// anything else (a key refused before sending) made none.
func metaOf(err error) Meta {
	var rerr *retry.Error
	var once *httpretry.NotRetriedError
	switch {
	case errors.As(err, &rerr):
		return statsMeta(rerr.Stats)
	case errors.As(err, &once):
		return Meta{Attempts: 1}
	}
	return Meta{}
}

func statsMeta(s retry.Stats) Meta { return Meta{Attempts: s.Attempts, Waited: s.Waited} }

// APIError is the gateway's error answer. It carries what the classifiers
// read (status, kind, Retry-After) and what a platform team asks for: the
// request and trace ids.
type APIError struct {
	*classify.StatusError
	Message, RequestID, TraceID string
	// Why is why the client stopped retrying: a *retry.Error or an
	// *httpretry.NotRetriedError; nil for a stream's refusal, which the
	// stream's own retry loop judges.
	Why error
}

// errorBody is the gateway's error envelope.
type errorBody struct {
	Error struct {
		Kind      string `json:"kind"`
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
		TraceID   string `json:"trace_id"`
	} `json:"error"`
}

// errorKind gives httpretry the gateway's error kind, so that a 502
// upstream-error or a 429 spend-cap-exceeded is not taken for its status.
func errorKind(_ *http.Response, body []byte) string {
	var b errorBody
	_ = json.Unmarshal(body, &b)
	return b.Error.Kind
}

// newAPIError reads an error response.
func newAPIError(resp *http.Response, why error) *APIError {
	var b errorBody
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&b)
	return &APIError{
		StatusError: &classify.StatusError{Code: resp.StatusCode, Header: resp.Header, Kind: b.Error.Kind},
		Message:     b.Error.Message, RequestID: b.Error.RequestID, TraceID: b.Error.TraceID, Why: why,
	}
}

// Error returns "gateway: 502 upstream-error: <message> (request_id=…,
// trace_id=…)".
func (e *APIError) Error() string {
	return fmt.Sprintf("gateway: %d %s: %s (request_id=%s, trace_id=%s)", e.Code, e.Kind, e.Message, e.RequestID, e.TraceID)
}

// Unwrap returns the status (for errors.Is with classify.ErrSpendCap and
// classify.ErrUpstream) and why the client stopped.
func (e *APIError) Unwrap() []error {
	if e.Why == nil {
		return []error{e.StatusError}
	}
	return []error{e.StatusError, e.Why}
}

// errorAnswers turns the gateway's error answers into *APIError for the
// streaming path: httpretry.OpenSSE judges a refused stream by its status
// alone, and a 429 spend-cap-exceeded with a Retry-After would be retried
// like a rate limit.
type errorAnswers struct{ base http.RoundTripper }

func (t errorAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	defer resp.Body.Close()
	return nil, newAPIError(resp, nil)
}
