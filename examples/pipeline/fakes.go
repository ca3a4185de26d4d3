package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/retrykit/retry/idempotency"
)

// chaos decides every injected failure from (seed, job, what, n) alone — never
// from a shared random stream — so that a run's outcome does not depend on how
// the workers happened to be scheduled.
type chaos struct {
	seed      uint64
	failRate  float64
	redeliver float64
}

// What a draw is for; each has its own stream.
const (
	drawLLM       = iota + 1 // one LLM call: does the gateway fail it?
	drawPrompt               // the prompt itself, the same on every call
	drawSave                 // one write of a job's result
	drawMail                 // one send: does the mail server fail it?
	drawRecipient            // the recipient, the same on every send
	drawCrash                // where the first delivery's worker dies, if it does
)

func (c chaos) rand(job, what, n int) *rand.Rand {
	return rand.New(rand.NewPCG(c.seed, uint64(job)<<32|uint64(what)<<24|uint64(n)))
}

// fault is what a fake does with one request instead of answering it well.
type fault struct {
	status     int // 0: no fault
	retryAfter int // seconds, for a 429
}

// mix is the kinds of failure of a dependency, each with its share.
type mix []struct {
	status int
	share  float64
}

// llmFailures: half of the gateway's failures are overloads, three tenths
// rate limits (with Retry-After), the rest bad gateways.
func llmFailures() mix {
	return mix{{503, 0.5}, {429, 0.3}, {502, 0.2}}
}

// mailFailures: the mail server is unavailable, or behind a bad gateway.
func mailFailures() mix {
	return mix{{503, 0.7}, {502, 0.3}}
}

// transient returns the failure, if any, of call n of a job to a dependency:
// one call in failRate fails, with a kind of m chosen by its share.
func (c chaos) transient(job, what, n int, m mix) fault {
	r := c.rand(job, what, n)
	if r.Float64() >= c.failRate {
		return fault{}
	}
	u := r.Float64()
	k := len(m) - 1
	for i := range m {
		if u < m[i].share {
			k = i
			break
		}
		u -= m[i].share
	}
	f := fault{status: m[k].status}
	if f.status == http.StatusTooManyRequests {
		f.retryAfter = 1 + r.IntN(5) // seconds of simulated time
	}
	return f
}

// prompt is what the model does with a job's prompt when the gateway is
// healthy. A few prompts (in proportion to the fail rate) are refused as
// invalid (400), filtered, or get an empty answer — on every call, as a
// model would.
func (c chaos) prompt(job int) string {
	u := c.rand(job, drawPrompt, 0).Float64()
	switch {
	case u < c.failRate*0.02:
		return "invalid"
	case u < c.failRate*0.07:
		return "content_filter"
	case u < c.failRate*0.09:
		return "empty"
	}
	return "ok"
}

// recipientRejected says whether the mail server rejects a job's recipient
// (422), on every send: a few do, in proportion to the fail rate.
func (c chaos) recipientRejected(job int) bool {
	return c.rand(job, drawRecipient, 0).Float64() < c.failRate*0.02
}

// saveFails says whether write n of a job's result fails as if the database
// were locked by another writer: at a third of the fail rate, since a local
// database fails less often than a remote API.
func (c chaos) saveFails(job, n int) bool {
	return c.rand(job, drawSave, n).Float64() < c.failRate/3
}

// calls counts requests per job, so that a fake knows which attempt of the job
// it is answering: a job's requests never overlap, so the count, and what the
// fake does with it, are the same whatever the scheduling.
type calls struct {
	mu     sync.Mutex
	perJob map[int]int
	total  int
	byCode map[int]int
}

func newCalls() *calls { return &calls{perJob: map[int]int{}, byCode: map[int]int{}} }

// next counts a request of job and returns its number for that job, from 1.
func (c *calls) next(job int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	c.perJob[job]++
	return c.perJob[job]
}

func (c *calls) answered(code int) {
	c.mu.Lock()
	c.byCode[code]++
	c.mu.Unlock()
}

// snapshot returns the total and a copy of the counts by status code.
func (c *calls) snapshot() (int, map[int]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	codes := make(map[int]int, len(c.byCode))
	for k, v := range c.byCode {
		codes[k] = v
	}
	return c.total, codes
}

func writeFault(w http.ResponseWriter, f fault) {
	if f.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
	}
	http.Error(w, http.StatusText(f.status), f.status)
}

// llmRequest and completion are the gateway's wire format.
type llmRequest struct {
	Job    int    `json:"job"`
	Prompt string `json:"prompt"`
}

type completion struct {
	Content      string `json:"content"`
	FinishReason string `json:"finish_reason"`
}

// gateway is the fake LLM gateway. Like a real one, it bills each
// generation, and keeps the generation made for an Idempotency-Key: a repeat
// of the request with the key gets it back, marked Idempotent-Replay, and is
// not billed again. A failure generated nothing, and keeps nothing.
type gateway struct {
	chaos chaos
	calls *calls

	mu          sync.Mutex
	generations map[int]int          // billed generations per job
	keys        map[string]generated // idempotency key → its generation
	replays     int                  // keyed repeats answered from keys: not billed
}

// generated is what the gateway keeps for a key: the request it answered
// (to refuse the key with another) and its answer.
type generated struct {
	request    idempotency.Fingerprint
	completion completion
}

func newGateway(c chaos) *gateway {
	return &gateway{chaos: c, calls: newCalls(), generations: map[int]int{}, keys: map[string]generated{}}
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req llmRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := g.calls.next(req.Job)
	if f := g.chaos.transient(req.Job, drawLLM, n, llmFailures()); f.status != 0 {
		g.calls.answered(f.status)
		writeFault(w, f)
		return
	}
	key := r.Header.Get(idempotency.HeaderKey)
	status, replay, c := g.answer(req, key, idempotency.NewFingerprint(body))
	g.calls.answered(status)
	switch {
	case status == http.StatusBadRequest:
		http.Error(w, "prompt exceeds the context window", status)
	case status == http.StatusUnprocessableEntity:
		http.Error(w, "the Idempotency-Key was used with another request", status)
	default:
		if replay {
			w.Header().Set("Idempotent-Replay", "true")
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(c)
	}
}

// answer replays the key's generation, or runs the model (billed) and keeps
// its answer under the key.
func (g *gateway) answer(req llmRequest, key string, fp idempotency.Fingerprint) (status int, replay bool, c completion) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if kept, ok := g.keys[key]; ok && key != "" {
		if kept.request != fp {
			return http.StatusUnprocessableEntity, false, c
		}
		g.replays++
		return http.StatusOK, true, kept.completion
	}
	c = completion{Content: "Summary of " + req.Prompt + ": all good.", FinishReason: "stop"}
	switch g.chaos.prompt(req.Job) {
	case "invalid":
		return http.StatusBadRequest, false, completion{} // refused before the model ran
	case "content_filter":
		c = completion{FinishReason: "content_filter"}
	case "empty":
		c.Content = ""
	}
	g.generations[req.Job]++
	if key != "" {
		g.keys[key] = generated{request: fp, completion: c}
	}
	return http.StatusOK, false, c
}

// billed returns the generations billed, in all and beyond the first of a
// job, and the replays, which were not.
func (g *gateway) billed() (generations, duplicates, replays int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range g.generations {
		generations += n
		duplicates += n - 1
	}
	return generations, duplicates, g.replays
}

// email is the mail server's wire format. ID is the Message-ID the sender
// chose; the server keeps a log of delivered messages by it.
type email struct {
	ID      string `json:"id"`
	Job     int    `json:"job"`
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

func messageID(job int) string { return fmt.Sprintf("job-%d", job) }

// mailServer is the fake mail provider. It does not deduplicate: a message
// sent twice is delivered twice, and counted, so duplicates cannot hide.
type mailServer struct {
	chaos chaos
	calls *calls

	mu        sync.Mutex
	delivered map[int]int // messages delivered per job
	lookups   int
}

func newMailServer(c chaos) *mailServer {
	return &mailServer{chaos: c, calls: newCalls(), delivered: map[int]int{}}
}

func (m *mailServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /messages", m.send)
	mux.HandleFunc("GET /messages/{id}", m.lookup)
	return mux
}

// send fails before delivering or delivers: every refusal here means the
// message was not delivered.
func (m *mailServer) send(w http.ResponseWriter, r *http.Request) {
	var e email
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := m.calls.next(e.Job)
	if f := m.chaos.transient(e.Job, drawMail, n, mailFailures()); f.status != 0 {
		m.calls.answered(f.status)
		writeFault(w, f)
		return
	}
	if m.chaos.recipientRejected(e.Job) {
		m.calls.answered(http.StatusUnprocessableEntity)
		http.Error(w, "recipient rejected", http.StatusUnprocessableEntity)
		return
	}
	m.mu.Lock()
	m.delivered[e.Job]++
	m.mu.Unlock()
	m.calls.answered(http.StatusAccepted)
	w.WriteHeader(http.StatusAccepted)
}

// lookup answers whether the message with the id was delivered: the
// provider's message log, which a sender consults when it does not know.
func (m *mailServer) lookup(w http.ResponseWriter, r *http.Request) {
	job, err := strconv.Atoi(strings.TrimPrefix(r.PathValue("id"), "job-"))
	if err != nil {
		http.Error(w, "no such message", http.StatusNotFound)
		return
	}
	m.mu.Lock()
	m.lookups++
	n := m.delivered[job]
	m.mu.Unlock()
	if n == 0 {
		http.Error(w, "no such message", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// deliveries returns a copy of the messages delivered per job, and the number
// of lookups in the message log.
func (m *mailServer) deliveries() (perJob map[int]int, lookups int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	perJob = make(map[int]int, len(m.delivered))
	for k, v := range m.delivered {
		perJob[k] = v
	}
	return perJob, m.lookups
}
