package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/policy"
)

// attempts is how many attempts each step makes, the first included. The
// exercise counts them so: "after 3 attempts the job goes to the DLQ",
// "email_attempts = 3". The presets read its "retry 3 times" as three
// retries after the first call (4 attempts); this example follows the
// exercise's observable numbers.
const attempts = 3

// maxSpeed keeps the fastest scaled wait (the database's 100ms base) above a
// microsecond, and every scaled MaxDelay above zero (zero would mean the
// default, 30s).
const maxSpeed = 100_000

// step is one step of a job with its policy, scaled to the run's clock.
type step struct {
	name   string
	preset string
	policy policy.Policy
	note   string
}

// steps returns the three steps' policies: the presets, with the exercise's
// attempts, every wait divided by speed.
func steps(speed int64) ([3]step, error) {
	s := [3]step{
		{name: "llm", preset: "LLMCall", policy: policy.LLMCall(),
			note: "strict; 4xx, content_filter and empty answers never retried"},
		{name: "db", preset: "DBWrite", policy: policy.DBWrite(), note: "a locked database is retried"},
		{name: "email", preset: "EmailSend", policy: policy.EmailSend(), note: "5xx retried, 4xx never"},
	}
	for i := range s {
		p, err := scaled(s[i].policy, speed)
		if err != nil {
			return s, fmt.Errorf("%s: %w", s[i].preset, err)
		}
		p.MaxAttempts = attempts
		s[i].policy = p
	}
	return s, nil
}

// scaled divides every duration of p by speed: the run's clock goes speed
// times faster than the wall clock, and waits are measured on it.
func scaled(p policy.Policy, speed int64) (policy.Policy, error) {
	exp, ok := p.Backoff.(backoff.Exponential)
	if !ok {
		return p, fmt.Errorf("cannot scale a %T schedule", p.Backoff)
	}
	k := time.Duration(speed)
	exp.Base /= k
	exp.MaxDelay /= k
	p.Backoff = exp
	if p.MaxDelay == 0 {
		p.MaxDelay = policy.DefaultMaxDelay
	}
	p.MaxDelay /= k
	p.MaxElapsed /= k
	p.AttemptTimeout /= k
	return p, nil
}

// onRunClock returns a server's error answer read on the run's clock: the
// fakes speak in seconds of simulated time, as real servers do, and the
// client waits their Retry-After divided by speed — the same scale as its
// own backoff. The wait is scaled here, where the answer is read, and not by
// a classifier: the retry loop never lets a classifier shorten the wait a
// server asked for, and reads it from the outermost error that has one.
func onRunClock(err error, speed int64) error {
	if err == nil {
		return nil
	}
	return &scaledAnswer{err: err, speed: time.Duration(speed)}
}

// scaledAnswer is an error answer whose Retry-After reads on the run's clock.
type scaledAnswer struct {
	err   error
	speed time.Duration
}

func (e *scaledAnswer) Error() string { return e.err.Error() }
func (e *scaledAnswer) Unwrap() error { return e.err }

// RetryAfter is the server's Retry-After divided by the run's speed.
func (e *scaledAnswer) RetryAfter() time.Duration {
	var said interface{ RetryAfter() time.Duration }
	if !errors.As(e.err, &said) {
		return 0
	}
	return said.RetryAfter() / e.speed
}

// retriers are the three steps' Retriers, and the one that asks the mail
// server's message log: the email policy on a read, which may be repeated
// after a timeout.
type retriers struct {
	llm, db, email, lookup *retry.Retrier
}

// newRetriers builds them without the default retry budget: the run
// injects a failure rate (30% by default) far above a healthy dependency's,
// which the budget would answer by no longer retrying — as it should in
// production, where such a rate means an outage — and the exercise is about
// what its retries do, in an order-independent story.
func newRetriers(s [3]step) (retriers, error) {
	llm, err := retry.New(retry.WithPolicy(s[0].policy), retry.WithoutBudget())
	if err != nil {
		return retriers{}, err
	}
	db, err := retry.New(retry.WithPolicy(s[1].policy), retry.WithoutBudget())
	if err != nil {
		return retriers{}, err
	}
	email, err := retry.New(retry.WithPolicy(s[2].policy), retry.WithoutBudget())
	if err != nil {
		return retriers{}, err
	}
	lookup, err := retry.New(retry.WithPolicy(s[2].policy), retry.WithoutBudget(), retry.Idempotent())
	return retriers{llm: llm, db: db, email: email, lookup: lookup}, err
}

// describe prints a step's effective policy.
func (s step) describe(w io.Writer) {
	exp := s.policy.Backoff.(backoff.Exponential)
	fmt.Fprintf(w, "  %-5s %-9s backoff %v→%v, max wait %v: %s\n", s.name, s.preset, exp.Base, exp.MaxDelay, s.policy.MaxDelay, s.note)
}
