package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/idempotency"
)

// crash is where a delivery's worker dies, leaving its message unacknowledged
// so that the queue delivers it again.
type crash int

const (
	noCrash     crash = iota
	afterLLM          // the answer is lost: the redelivery calls the model again
	afterSave         // the answer is saved: the redelivery goes on to the email
	afterClaim        // the email is claimed and not sent
	afterSend         // the email went out (or failed), and nobody recorded it
	beforeAck         // the job ended; only the acknowledgement was lost
	crashPoints = iota - 1
)

var errCrashed = errors.New("worker died before acknowledging the message")

// maxDeliveries is the queue's redrive limit: a message is delivered at most
// this many times, and its last delivery dead-letters a job it cannot end.
const maxDeliveries = 5

func (c crash) String() string {
	return [...]string{"", "after the LLM call", "after saving the answer", "after claiming the email",
		"after sending the email", "before acknowledging"}[c]
}

// delivery is one delivery of a job's message.
type delivery struct {
	job     int
	n       int   // 1 for the first delivery
	crash   crash // where this delivery's worker dies; noCrash for most
	unknown bool  // the previous delivery could not tell whether the email went out
}

// firstDelivery is the first delivery of job: a share -redeliver of them die
// somewhere, at a point drawn for the job.
func (c chaos) firstDelivery(job int) delivery {
	d := delivery{job: job, n: 1}
	r := c.rand(job, drawCrash, 0)
	if r.Float64() < c.redeliver {
		d.crash = crash(1 + r.IntN(crashPoints))
	}
	return d
}

// pipeline runs jobs: its fields are shared by every worker and safe for
// concurrent use.
type pipeline struct {
	jobs    jobsDB
	letters dlq.Queue
	r       retriers
	chaos   chaos
	client  *http.Client
	llmURL  string
	mailURL string
	speed   int64 // the run's clock: see onRunClock
	claim   bool  // false with -no-claim
	events  *events

	recording sync.Mutex // see deadLetter
}

// pass delivers ds with the given number of workers and returns the
// deliveries left unacknowledged — their worker died, or could not tell
// whether the email went out — to be delivered again.
func (p *pipeline) pass(ctx context.Context, ds []delivery, workers int) ([]delivery, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	queue := make(chan delivery)
	var (
		mu    sync.Mutex
		again []delivery
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for d := range queue {
				err := p.deliver(ctx, d)
				crashed, unknown := errors.Is(err, errCrashed), errors.Is(err, errUnknown)
				switch {
				case crashed || unknown:
					mu.Lock()
					again = append(again, delivery{job: d.job, n: d.n + 1, unknown: unknown})
					mu.Unlock()
					p.events.leftUnacknowledged(d.crash, unknown)
				case err != nil:
					cancel(err)
				}
			}
		})
	}
feed:
	for _, d := range ds {
		select {
		case queue <- d:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	slices.SortFunc(again, func(a, b delivery) int { return a.job - b.job })
	return again, nil
}

// deliver runs one delivery of a job. nil means the message may be
// acknowledged: the job ended (done, partial or dead-lettered), or had ended
// before this duplicate delivery.
func (p *pipeline) deliver(ctx context.Context, d delivery) error {
	var j job
	var fresh bool
	err := p.r.db.Do(ctx, func(ctx context.Context) (err error) {
		j, fresh, err = p.jobs.start(ctx, d.job)
		return err
	})
	if err != nil {
		return err
	}
	if !fresh {
		p.events.duplicate() // the job ended in an earlier delivery: acknowledge and drop
		return nil
	}
	if err := p.process(ctx, d, j); err != nil {
		return err
	}
	if d.crash == beforeAck {
		return errCrashed
	}
	return nil
}

// process takes the job from where an earlier delivery left it to its end.
func (p *pipeline) process(ctx context.Context, d delivery, j job) error {
	if !j.saved() {
		if err := p.analyse(ctx, d, &j); err != nil {
			return err
		}
		if !j.saved() {
			return nil // dead-lettered
		}
	}
	return p.email(ctx, d, j)
}

// analyse calls the model and saves its answer in j. A job whose call or
// write fails for good is dead-lettered, and j stays unsaved.
//
// The call carries an idempotency key derived from the job and its request:
// every attempt, and every delivery of the job, sends the same key, so that a
// redelivery whose worker died before saving the answer gets the stored
// generation back instead of paying for a second one.
func (p *pipeline) analyse(ctx context.Context, d delivery, j *job) error {
	body, _ := json.Marshal(llmRequest{Job: j.id, Prompt: j.prompt})
	key, err := idempotency.DeriveKey(strconv.Itoa(j.id), "llm", idempotency.NewFingerprint(body).String())
	if err != nil {
		return err
	}
	if ctx, err = retry.WithIdempotencyKey(ctx, key); err != nil {
		return err
	}
	// An empty or filtered answer is the model's final word: accepted, never
	// retried (a new generation would be billed and say the same).
	final := func(c completion) classify.Decision { return classify.Completion(c.Content, c.FinishReason) }
	c, stats, err := retry.Value(ctx, p.r.llm, classify.CheckResult(func(ctx context.Context) (completion, error) {
		return p.complete(ctx, body)
	}, final))
	if err != nil {
		return p.deadLetter(ctx, *j, stats.Attempts, err)
	}
	if d.crash == afterLLM {
		return errCrashed
	}
	if err := p.save(ctx, d, c, stats.Attempts); err != nil {
		return p.deadLetter(ctx, *j, stats.Attempts, err)
	}
	j.result.String, j.result.Valid = c.Content, true
	if d.crash == afterSave {
		return errCrashed
	}
	return nil
}

// save writes the answer under the database policy; some attempts fail as
// if another writer held the lock.
func (p *pipeline) save(ctx context.Context, d delivery, c completion, llmAttempts int) error {
	n := 0
	return p.r.db.Do(ctx, func(ctx context.Context) error {
		n++
		// Writes are numbered across deliveries (10 per delivery is more than
		// enough), so that a redelivery's writes draw their own faults.
		if p.chaos.saveFails(d.job, 10*(d.n-1)+n) {
			return classify.Retryable(errors.New("database is locked (SQLITE_BUSY, injected)"))
		}
		return p.jobs.saveResult(ctx, d.job, c, llmAttempts, n)
	})
}

// complete makes one call to the LLM gateway, with the call's idempotency
// key.
func (p *pipeline) complete(ctx context.Context, body []byte) (completion, error) {
	key, _ := retry.IdempotencyKey(ctx)
	resp, err := p.post(ctx, p.llmURL, key, body)
	if err != nil {
		return completion{}, err
	}
	defer resp.Body.Close()
	var c completion
	err = json.NewDecoder(resp.Body).Decode(&c)
	return c, err
}

// post sends one request, with an Idempotency-Key if key is not empty, and
// turns an error status into a *classify.StatusError, which carries the
// status and Retry-After for the retry loop, its Retry-After read on the
// run's clock.
func (p *pipeline) post(ctx context.Context, url, key string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(idempotency.HeaderKey, key)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	if err := classify.ResponseError(resp); err != nil {
		drain(resp)
		return nil, onRunClock(err, p.speed)
	}
	return resp, nil
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// deadLetter stores the job in the dead letter queue with every attempt's
// error, then marks it dead-lettered. If the letter could not be stored the
// error is returned and the message is not acknowledged.
//
// Letters are stored one at a time, so that the size alert counts each letter
// as it arrives and the README's output can name the count exactly.
func (p *pipeline) deadLetter(ctx context.Context, j job, llmAttempts int, cause error) error {
	job := dlq.Job{ID: strconv.Itoa(j.id), Source: "llm-jobs", Payload: []byte(j.prompt)}
	p.recording.Lock()
	err := dlq.Record(ctx, p.letters, job, cause)
	p.recording.Unlock()
	if !errors.Is(err, dlq.ErrDeadLettered) {
		return err
	}
	letter := dlq.LetterID(job.Source, job.ID)
	return p.r.db.Do(ctx, func(ctx context.Context) error {
		return p.jobs.markDead(ctx, j.id, llmAttempts, letter, lastError(cause))
	})
}

// lastError is the last attempt's error of a retried call.
func lastError(err error) string {
	var rerr *retry.Error
	if errors.As(err, &rerr) && rerr.Last != nil {
		return rerr.Last.Error()
	}
	return err.Error()
}
