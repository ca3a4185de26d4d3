package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
)

// email sends the job's email at most once, and ends the job: done when it
// was sent, partial_success when the mail server refused every attempt.
func (p *pipeline) email(ctx context.Context, d delivery, j job) error {
	if p.claim {
		mine, err := p.claimEmail(ctx, d, j)
		if err != nil || !mine {
			return err
		}
	}
	if d.crash == afterClaim {
		return errCrashed
	}
	stats, unknown, err := p.sendOnce(ctx, j)
	if d.crash == afterSend {
		return errCrashed
	}
	switch {
	case err == nil:
		return p.r.db.Do(ctx, func(ctx context.Context) error { return p.jobs.emailSent(ctx, j.id, stats.Attempts) })
	case ctx.Err() != nil:
		return err // stopped, not failed: leave the message to be redelivered
	case unknown:
		return p.unknownFate(ctx, d, j, err)
	}
	cause := lastError(err)
	err = p.r.db.Do(ctx, func(ctx context.Context) error {
		return p.jobs.emailFailed(ctx, j.id, stats.Attempts, cause)
	})
	if err == nil {
		p.events.supportAlert(j.id, stats.Attempts, cause)
	}
	return err
}

// errUnknown marks a delivery that could not tell whether the job's email
// went out: its message is left unacknowledged, to be delivered again.
var errUnknown = errors.New("the email may have gone out and the message log did not say")

// unknownFate ends a delivery that cannot tell whether the email went out: a
// send's answer was lost and the message log did not answer. Sending again
// could send it twice; recording it failed could lose it. So the claim stays
// held and the message unacknowledged: its redelivery, after the visibility
// timeout, asks the log again. The last delivery the queue allows
// dead-letters the job instead, the claim still held.
func (p *pipeline) unknownFate(ctx context.Context, d delivery, j job, cause error) error {
	if ctx.Err() != nil {
		return cause
	}
	if d.n < maxDeliveries {
		return fmt.Errorf("%w: %w", errUnknown, cause)
	}
	p.events.unknownDeadLettered()
	return p.deadLetter(ctx, j, 0, cause)
}

// claimEmail takes the right to send j's email with the exercise's
// conditional UPDATE, and reports whether this delivery may send it.
//
// When the claim is already taken, an earlier delivery of the job claimed the
// email and died, or could not learn, before recording what happened: the
// redelivery of a message comes after its visibility timeout, longer than a
// delivery can take. Resending blindly could send it twice; giving up could
// lose it. So ask the mail server's message log: delivered means record it
// and stop; not delivered means take the claim over and send; no answer
// means the question stays open (unknownFate).
func (p *pipeline) claimEmail(ctx context.Context, d delivery, j job) (bool, error) {
	var mine bool
	err := p.r.db.Do(ctx, func(ctx context.Context) (err error) {
		mine, err = p.jobs.claimEmail(ctx, j.id)
		return err
	})
	if err != nil || mine {
		return mine, err
	}
	var sent bool
	err = p.r.lookup.Do(ctx, func(ctx context.Context) (err error) {
		sent, err = p.delivered(ctx, j.id)
		return err
	})
	if err != nil {
		return false, p.unknownFate(ctx, d, j, err)
	}
	p.events.orphanClaim(d.unknown, sent)
	err = p.r.db.Do(ctx, func(ctx context.Context) (err error) {
		if sent {
			return p.jobs.emailSent(ctx, j.id, 0)
		}
		mine, err = p.jobs.takeOverClaim(ctx, j.id, j.emailSentAt.String)
		return err
	})
	return mine, err
}

// sendOnce sends the job's email under the email policy. The claim keeps
// deliveries to one sender, not that sender's retries to one send: the
// message carries no key and the mail server does not deduplicate, so an
// attempt whose answer was lost (a reset, a timeout) may have delivered it.
// The next attempt asks the message log first, and sends only if it was not.
// unknown reports that the last attempt left the question open: its answer
// was lost and the log did not answer, or was not asked because the policy
// does not retry the error (a timeout: the server may still be at work).
func (p *pipeline) sendOnce(ctx context.Context, j job) (stats retry.Stats, unknown bool, err error) {
	stats, err = p.r.email.Run(ctx, func(ctx context.Context) error {
		if unknown {
			sent, err := p.delivered(ctx, j.id)
			if err != nil {
				return err
			}
			unknown = false
			if sent {
				return nil // the send whose answer was lost got through
			}
		}
		err := p.send(ctx, j)
		unknown = err != nil && !answered(err)
		return err
	})
	return stats, unknown, err
}

// answered reports whether err is the mail server's answer, which it gives
// before delivering, rather than no answer at all.
func answered(err error) bool {
	var status *classify.StatusError
	return errors.As(err, &status)
}

// send makes one attempt to send the job's email.
func (p *pipeline) send(ctx context.Context, j job) error {
	subject := "Your analysis is ready"
	if j.result.String == "" {
		subject = "We could not analyse your request" // an empty or filtered answer
	}
	body, _ := json.Marshal(email{ID: messageID(j.id), Job: j.id, To: fmt.Sprintf("user%d@example.com", j.id),
		Subject: subject, Body: j.result.String})
	resp, err := p.post(ctx, p.mailURL+"/messages", "", body) // no key: see sendOnce
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// delivered asks the mail server's message log whether the job's email was
// delivered.
func (p *pipeline) delivered(ctx context.Context, job int) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.mailURL+"/messages/"+messageID(job), nil)
	if err != nil {
		return false, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return false, err
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err := classify.ResponseError(resp); err != nil {
		return false, onRunClock(err, p.speed)
	}
	return true, nil
}
