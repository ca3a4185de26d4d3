// Command decorator wraps existing functions in their retried twins, each
// with the preset for its kind of work — an LLM call, a database write, an
// email, a payment, a health check — in a few lines each, and prints what
// every call took.
//
//	go run ./examples/decorator            # real waits, a few seconds
//	go run ./examples/decorator -speed 100 # the same schedule, 100 times faster
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/policy"
)

func main() {
	speed := flag.Float64("speed", 1, "divide every wait by this factor (for demos and tests)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *speed); err != nil {
		fmt.Fprintln(os.Stderr, "decorator:", err)
		os.Exit(1)
	}
}

// services are the existing functions: each fails the way its kind of work
// fails, and counts its calls.
type services struct {
	llmCalls, dbCalls, mailCalls, chargeCalls, probeCalls int
}

// summarize answers after a 503.
func (s *services) summarize(ctx context.Context) (string, error) {
	if s.llmCalls++; s.llmCalls == 1 {
		return "", &classify.StatusError{Code: 503}
	}
	return "a short summary", nil
}

// saveResult succeeds after a brief lock.
func (s *services) saveResult(ctx context.Context) error {
	if s.dbCalls++; s.dbCalls <= 2 {
		return classify.Retryable(errors.New("database is locked"))
	}
	return nil
}

// sendEmail is rejected: the provider refuses the address.
func (s *services) sendEmail(ctx context.Context) error {
	s.mailCalls++
	return &classify.StatusError{Code: 422}
}

// charge answers with a receipt after a reset.
func (s *services) charge(ctx context.Context) (string, error) {
	if s.chargeCalls++; s.chargeCalls == 1 {
		return "", syscall.ECONNRESET
	}
	key, _ := retry.IdempotencyKey(ctx)
	return "receipt for " + key, nil
}

// probe finds the dependency down.
func (s *services) probe(ctx context.Context) error {
	s.probeCalls++
	return syscall.ECONNREFUSED
}

func run(ctx context.Context, w io.Writer, speed float64) error {
	if speed <= 0 {
		return fmt.Errorf("-speed %v: must be positive", speed)
	}
	preset := func(p policy.Policy) retry.Option { return retry.WithPolicy(scaled(p, speed)) }
	s := &services{}

	// One line each: the retried twin of an existing function.
	summarizeR := retry.WrapValue(s.summarize, preset(policy.LLMCall()))
	saveResultR := retry.Wrap(s.saveResult, preset(policy.DBWrite()))
	sendEmailR := retry.Wrap(s.sendEmail, preset(policy.EmailSend()))
	chargeR := retry.WrapValue(s.charge, preset(policy.Payment()))
	probeR := retry.Wrap(s.probe, preset(policy.HealthCheck()))

	start := time.Now()
	text, err := summarizeR(ctx)
	report(w, "LLM call", s.llmCalls, start, text, err)

	start = time.Now()
	report(w, "DB write", s.dbCalls, start, "saved", saveResultR(ctx))

	start = time.Now()
	report(w, "email send", s.mailCalls, start, "sent", sendEmailR(ctx))

	start = time.Now()
	_, err = chargeR(ctx) // no key: refused before the first attempt
	report(w, "payment without key", s.chargeCalls, start, "", err)
	keyed, err := retry.WithIdempotencyKey(ctx, "charge:order-4417")
	if err != nil {
		return err
	}
	start = time.Now()
	receipt, err := chargeR(keyed)
	report(w, "payment with key", s.chargeCalls, start, receipt, err)

	start = time.Now()
	report(w, "health check", s.probeCalls, start, "healthy", probeR(ctx))
	return nil
}

func report(w io.Writer, what string, calls int, start time.Time, ok string, err error) {
	took := time.Since(start).Round(time.Millisecond)
	var rerr *retry.Error
	switch {
	case err == nil:
		fmt.Fprintf(w, "%-20s ok (%s): %d call(s) so far, %v\n", what, ok, calls, took)
	case errors.As(err, &rerr) && rerr.Last != nil: // why it stopped, and what the last attempt said
		fmt.Fprintf(w, "%-20s failed: %v: %v (%d call(s) so far)\n", what, rerr.Reason, rerr.Last, calls)
	case errors.As(err, &rerr): // stopped before any attempt
		fmt.Fprintf(w, "%-20s failed: %v (%d call(s) so far)\n", what, rerr.Reason, calls)
	default:
		fmt.Fprintf(w, "%-20s failed: %v\n", what, err)
	}
}

// scaled divides a preset's waits by speed, keeping its shape.
func scaled(p policy.Policy, speed float64) policy.Policy {
	if e, ok := p.Backoff.(backoff.Exponential); ok {
		e.Base = time.Duration(float64(e.Base) / speed)
		e.MaxDelay = time.Duration(float64(e.MaxDelay) / speed)
		p.Backoff = e
	}
	p.MaxDelay = time.Duration(float64(p.MaxDelay) / speed)
	return p
}
