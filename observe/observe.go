// Package observe is how the library reports what it does: one interface,
// Observer, and one Event type, for every component. The retry loop and the
// stages it runs — cooldowns, circuit breakers, rate limiters, retry
// budgets, hedging — report calls, attempts, waits, hedges, refusals and
// transitions; a dead letter queue reports its letters and replays; the
// idempotency middleware reports each guarded request. An observer — a
// logger, package otelretry's metrics and traces, a test's recorder — is
// written once and handed to each of them:
//
//	| component                  | wire it with                         |
//	|----------------------------|--------------------------------------|
//	| retry.Retrier, its stages  | retry.WithObserver                   |
//	| dlq.Monitor                | dlq.MonitorConfig.Observer           |
//	| idempotency.Middleware     | idempotency.WithObserver             |
//
// A Retrier's breakers and cooldowns (retry.WithBreakers,
// retry.WithCooldowns) need no wiring of their own: they report through the
// observer of the call that moved them.
//
// Observe runs synchronously, on the goroutine that did the work, and often
// on the hot path: it must be quick, must not block, and must be safe for
// concurrent use. It receives the context of the call concerned (the
// caller's context for a retried call), so it can attach what it reports to
// the caller's trace.
package observe

import (
	"context"
	"strconv"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/policy"
)

// Observer hears of everything a component does (see the package
// documentation).
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// Func adapts a function to an Observer.
type Func func(ctx context.Context, e Event)

// Observe calls f(ctx, e).
func (f Func) Observe(ctx context.Context, e Event) { f(ctx, e) }

// Kind says what happened. Each kind documents the Event fields it sets;
// the others are zero.
type Kind uint8

const (
	// AttemptDone: an attempt returned. Err is its error, nil on success;
	// Decision its classification; Attempt its number (1-based) and Started
	// the attempts the call had started (more than Attempt while a hedged
	// call's attempts overlap). In a hedged call, Err is nil for the winner
	// only: an attempt that also succeeded after another won reports
	// context.Canceled, its result discarded, so an observer counts one
	// success per call.
	AttemptDone Kind = iota + 1
	// RetryScheduled: attempt Attempt failed (Err, Decision) and the call
	// waits Delay before the next one.
	RetryScheduled
	// GaveUp: the call failed for good. Err is the *retry.Error returned,
	// Stop why, Decision the last failure's classification. A call that
	// stopped before its first attempt has Attempt 0.
	GaveUp
	// HedgeStarted: an attempt had not finished after the hedging delay
	// (Delay), and attempt Attempt started alongside it.
	HedgeStarted
	// HedgeSkipped: a hedge was due and not sent: Stop says which stage
	// refused it (policy.StopBudget, policy.StopLimited, policy.StopOpen),
	// or policy.StopWaitTooLong when its key was cooling down. The call's
	// attempts in flight go on.
	HedgeSkipped
	// LimiterWaited: the client-side rate limiter held attempt Attempt for
	// Delay before letting it go. A permission given at once (under a
	// microsecond) is no wait and is not reported; a refusal is a GaveUp
	// with policy.StopLimited.
	LimiterWaited
	// CooldownWaited: attempt Attempt waited Delay for its key's cooldown
	// to end (a server's 503 with Retry-After, seen by another call).
	CooldownWaited
	// BreakerChanged: a circuit breaker changed state; Detail is a
	// breaker.Transition (its key, from, to).
	BreakerChanged
	// CooldownStarted: a key started cooling down for Delay after a
	// server's 503 (or gRPC UNAVAILABLE) with a Retry-After; Err is that
	// failure, Detail the key (a breaker.Key).
	CooldownStarted
	// LetterAdded: a dead letter queue stored a letter; Detail is the
	// dlq.Letter, Stop and Decision its stop reason and last failure's
	// classification.
	LetterAdded
	// LetterReplayed: a letter was replayed; Detail is its id (a string),
	// Err nil when the job was enqueued again and the letter left, or why
	// it stayed.
	LetterReplayed
	// QueueCounted: a dead letter queue was counted; Detail is the number
	// of letters (an int).
	QueueCounted
	// Request: the idempotency middleware answered a guarded request, or
	// idempotency.Do or Once, having returned at its caller's deadline,
	// could not record its outcome afterwards (outcome "executed", Err
	// set); Detail is the idempotency.Event (its outcome, status, key), Err
	// the store's failure if any.
	Request
	numKinds
)

var kindNames = [numKinds]string{
	AttemptDone: "attempt done", RetryScheduled: "retry scheduled", GaveUp: "gave up",
	HedgeStarted: "hedge started", HedgeSkipped: "hedge skipped", LimiterWaited: "limiter waited",
	CooldownWaited: "cooldown waited", BreakerChanged: "breaker changed", CooldownStarted: "cooldown started",
	LetterAdded: "letter added", LetterReplayed: "letter replayed", QueueCounted: "queue counted",
	Request: "request",
}

// String returns a stable label, e.g. "retry scheduled".
func (k Kind) String() string {
	if k > 0 && k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is what an Observer receives. Kind says which fields are set.
type Event struct {
	Kind     Kind
	Attempt  int               // the attempt concerned, 1-based
	Started  int               // attempts the call has started, hedges included
	Err      error             // the attempt's error, the call's *retry.Error (GaveUp), or the failure concerned
	Decision classify.Decision // how the failure was classified
	Stop     policy.Stop       // GaveUp: why the call stopped; HedgeSkipped: what refused the hedge
	Delay    time.Duration     // the wait before the next attempt, the hedging delay, a hold, or a cooldown's length
	Waited   time.Duration     // the call's total wait so far (see retry.Stats)
	Elapsed  time.Duration     // since the call began
	// Deferred reports an event of a retry loop nested in an Outermost
	// loop's operation (see retry.Outermost): it makes one attempt and
	// leaves the decision to the outer loop, whose events count the call.
	Deferred bool
	// Detail is the component's own record, for the kinds that say so.
	Detail any
}
