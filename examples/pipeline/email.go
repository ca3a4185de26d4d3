package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/retrykit/retry/classify"
)

// email sends the job's email at most once, and ends the job: done when it
// was sent, partial_success when the mail server refused every attempt.
func (p *pipeline) email(ctx context.Context, d delivery, j job) error {
	if p.claim {
		mine, err := p.claimEmail(ctx, j)
		if err != nil || !mine {
			return err
		}
	}
	if d.crash == afterClaim {
		return errCrashed
	}
	stats, err := p.r.email.Run(ctx, func(ctx context.Context) error { return p.send(ctx, j) })
	if d.crash == afterSend {
		return errCrashed
	}
	if err == nil {
		return p.r.db.Do(ctx, func(ctx context.Context) error { return p.jobs.emailSent(ctx, j.id, stats.Attempts) })
	}
	if ctx.Err() != nil {
		return err // stopped, not failed: leave the message to be redelivered
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

// claimEmail takes the right to send j's email with the exercise's
// conditional UPDATE, and reports whether this delivery may send it.
//
// When the claim is already taken, an earlier delivery of the job claimed the
// email and died before recording what happened: the redelivery of a message
// comes after its visibility timeout, longer than a delivery can take.
// Resending blindly could send it twice; giving up could lose it. So ask the
// mail server's message log: delivered means record it and stop; not
// delivered means take the claim over and send.
func (p *pipeline) claimEmail(ctx context.Context, j job) (bool, error) {
	var mine bool
	err := p.r.db.Do(ctx, func(ctx context.Context) (err error) {
		mine, err = p.jobs.claimEmail(ctx, j.id)
		return err
	})
	if err != nil || mine {
		return mine, err
	}
	var sent bool
	err = p.r.email.Do(ctx, func(ctx context.Context) (err error) {
		sent, err = p.delivered(ctx, j.id)
		return err
	})
	if err != nil {
		return false, err
	}
	p.events.orphanClaim(sent)
	err = p.r.db.Do(ctx, func(ctx context.Context) (err error) {
		if sent {
			return p.jobs.emailSent(ctx, j.id, 0)
		}
		mine, err = p.jobs.takeOverClaim(ctx, j.id, j.emailSentAt.String)
		return err
	})
	return mine, err
}

// send makes one attempt to send the job's email.
func (p *pipeline) send(ctx context.Context, j job) error {
	subject := "Your analysis is ready"
	if j.result.String == "" {
		subject = "We could not analyse your request" // an empty or filtered answer
	}
	body, _ := json.Marshal(email{ID: messageID(j.id), Job: j.id, To: fmt.Sprintf("user%d@example.com", j.id),
		Subject: subject, Body: j.result.String})
	resp, err := p.post(ctx, p.mailURL+"/messages", "", body) // no key: the claim keeps it to one send
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
		return false, err
	}
	return true, nil
}
