package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The fake gateway's timings, scaled down from a real gateway's so that the
// example runs in seconds.
const (
	slowGeneration = 800 * time.Millisecond // a long completion
	clientTimeout  = 400 * time.Millisecond // the client's per-attempt timeout: shorter
)

// gateway is a fake LLM gateway that answers the way an LLM gateway's
// documentation says it does. It takes its misbehaviour from the prompt: the
// n-th request with a prompt (and idempotency key) gets the n-th word of the
// prompt as its answer, and once the words are used up the model generates.
// The words:
//
//	503        backend-unavailable, no Retry-After: nothing was generated
//	429        rate-limited, Retry-After: 1
//	502        upstream-error: the gateway's own retries of the backend failed
//	spend-cap  a 429 spend-cap-exceeded, Retry-After: 1: still not retryable
//	down-30s   backend-unavailable, Retry-After: 30
//	slow       a generation that takes longer than the client waits
//	break      a stream that breaks after three chunks
//
// Any other word generates. Requests with an Idempotency-Key follow the
// gateway's rules: a repeat while the first is generating is a 409
// idempotency-in-progress, a repeat after it is the stored result marked
// Idempotent-Replay, and the key with another request is a 409
// idempotency-key-reuse. A failure that generated nothing does not keep the
// key.
type gateway struct {
	mu          sync.Mutex
	requests    int                // every request, for request ids
	generations int                // billed
	abandoned   int                // generations that finished after their client had left
	replays     int                // stored results sent again: not billed
	perModel    map[string]int     // requests per model
	hits        map[string]int     // requests per (prompt, key) that reached the script
	keys        map[string]*keyRun // idempotency key → its generation
}

// keyRun is what the gateway keeps for an idempotency key.
type keyRun struct {
	prompt string // what the key was first used with: its fingerprint
	gen    string // the generation's id
	text   string // its result, once done
	done   bool
}

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	Stream bool   `json:"stream,omitempty"`
}

func newGateway() *gateway {
	return &gateway{perModel: map[string]int{}, hits: map[string]int{}, keys: map[string]*keyRun{}}
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	word, run, stop := g.admit(w, req, key)
	if stop {
		return
	}
	switch word {
	case "503":
		fail(w, http.StatusServiceUnavailable, "backend-unavailable", "", "no backend for the model right now")
	case "429":
		fail(w, http.StatusTooManyRequests, "rate-limited", "1", "request rate limit reached")
	case "502":
		fail(w, http.StatusBadGateway, "upstream-error", "", "the backend failed three times")
	case "spend-cap":
		fail(w, http.StatusTooManyRequests, "spend-cap-exceeded", "1", "monthly spend cap reached")
	case "down-30s":
		fail(w, http.StatusServiceUnavailable, "backend-unavailable", "30", "backend restarting")
	default:
		g.generate(w, r, req, key, run, word)
	}
}

// admit gives the request its ids, applies the idempotency rules, and
// returns the script's word for it, with the key's run if it now holds one.
// stop reports that the request was answered already.
func (g *gateway) admit(w http.ResponseWriter, req chatRequest, key string) (word string, run *keyRun, stop bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", g.requests))
	w.Header().Set("X-Trace-Id", fmt.Sprintf("trace_%03d", g.requests))
	g.perModel[req.Model]++
	if key != "" && g.replayOrConflict(w, req, key) {
		return "", nil, true
	}
	hit := req.Prompt + "\x00" + key
	g.hits[hit]++
	if words := strings.Fields(req.Prompt); g.hits[hit] <= len(words) {
		word = words[g.hits[hit]-1]
	}
	if key != "" && !isFailure(word) {
		run = &keyRun{prompt: req.Prompt}
		g.keys[key] = run
	}
	return word, run, false
}

// replayOrConflict answers a request whose key the gateway knows; the caller
// holds g.mu.
func (g *gateway) replayOrConflict(w http.ResponseWriter, req chatRequest, key string) bool {
	run, ok := g.keys[key]
	switch {
	case !ok:
		return false
	case run.prompt != req.Prompt:
		fail(w, http.StatusConflict, "idempotency-key-reuse", "", "the key was used with a different request")
	case !run.done:
		fail(w, http.StatusConflict, "idempotency-in-progress", "1", "a request with this key is still generating")
	default:
		g.replays++
		w.Header().Set("Idempotent-Replay", "true")
		w.Header().Set("Idempotent-Replay-Of", run.gen)
		writeJSON(w, http.StatusOK, map[string]string{"id": run.gen, "text": run.text})
	}
	return true
}

func isFailure(word string) bool {
	switch word {
	case "503", "429", "502", "spend-cap", "down-30s":
		return true
	}
	return false
}

// generate runs the model: billed from here on, whether or not the client
// is still there to receive the answer.
func (g *gateway) generate(w http.ResponseWriter, r *http.Request, req chatRequest, key string, run *keyRun, word string) {
	g.mu.Lock()
	g.generations++
	gen := fmt.Sprintf("gen_%d", g.generations)
	if run != nil {
		run.gen = gen
	}
	g.mu.Unlock()
	text := "Order 4417 ships on Monday."
	if req.Stream {
		sendStream(w, text, word == "break")
		return
	}
	if word == "slow" {
		time.Sleep(slowGeneration) // the backend goes on even if the client leaves
	}
	g.finish(r, run, text)
	writeJSON(w, http.StatusOK, map[string]string{"id": gen, "text": text})
}

// finish stores a keyed generation's result and counts the generations
// nobody was waiting for any more.
func (g *gateway) finish(r *http.Request, run *keyRun, text string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if run != nil {
		run.text, run.done = text, true
	}
	if r.Context().Err() != nil {
		g.abandoned++
	}
}

// sendStream sends text as server-sent events, one word each, or breaks after
// three words with an in-band error: the headers are sent, so the failure
// can only travel inside the stream.
func sendStream(w http.ResponseWriter, text string, breaks bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	for i, word := range strings.SplitAfter(text, " ") {
		if breaks && i == 3 {
			fmt.Fprint(w, `data: {"error":{"kind":"engine-error","message":"the engine crashed mid-generation"}}`+"\n\n")
			return
		}
		delta, _ := json.Marshal(map[string]string{"delta": word})
		fmt.Fprintf(w, "data: %s\n\n", delta)
		if flusher != nil {
			flusher.Flush()
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// fail answers with the gateway's error envelope, which carries the kind and
// both ids.
func fail(w http.ResponseWriter, status int, kind, retryAfter, msg string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(w, status, map[string]any{"error": map[string]string{
		"kind": kind, "message": msg,
		"request_id": w.Header().Get("X-Request-Id"), "trace_id": w.Header().Get("X-Trace-Id"),
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// stats is what the gateway billed and saw, read once it has stopped.
type stats struct {
	requests, generations, abandoned, replays int
	perModel                                  map[string]int
}

func (g *gateway) stats() stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	per := make(map[string]int, len(g.perModel))
	for m, n := range g.perModel {
		per[m] = n
	}
	return stats{g.requests, g.generations, g.abandoned, g.replays, per}
}
