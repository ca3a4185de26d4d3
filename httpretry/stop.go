package httpretry

import (
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/policy"
)

// answer is what RoundTrip returns when the retry loop stops.
type answer uint8

const (
	unmapped answer = iota // a reason answers misses (a test fails)
	// lastAnswer: the loop stopped on the last attempt's failure: RoundTrip
	// returns that attempt's error response, body intact, or the error when
	// the attempt got no response.
	lastAnswer
	// refusal: a stage refused the call or its next attempt — nothing more
	// was sent — or the caller gave up: RoundTrip returns the error, and
	// drains and closes a response an earlier attempt got.
	refusal
)

// answers is what RoundTrip returns for each reason the loop stops (the
// one list, policy.Stop); the package documentation has it as a table. A
// cooldown too long to wait stops with StopWaitTooLong (or StopElapsed,
// StopDeadline) like a Retry-After too long: the last answer, when an
// attempt got one, and the error (its last error the *breaker.CooldownError)
// when the key was cooling down before any attempt.
var answers = [...]answer{
	policy.StopPermanent:     lastAnswer,
	policy.StopNotIdempotent: lastAnswer,
	policy.StopAttempts:      lastAnswer,
	policy.StopClassLimit:    lastAnswer,
	policy.StopWaitTooLong:   lastAnswer,
	policy.StopElapsed:       lastAnswer,
	policy.StopDeadline:      lastAnswer,
	policy.StopBudget:        lastAnswer,
	policy.StopKeyRequired:   refusal,
	policy.StopLimited:       refusal,
	policy.StopOpen:          refusal,
	policy.StopCanceled:      refusal,
}

// answerFor returns what RoundTrip returns when the loop stops for s; a
// reason the table misses is answered with the error.
func answerFor(s policy.Stop) answer {
	if int(s) < len(answers) && answers[s] != unmapped {
		return answers[s]
	}
	return refusal
}

// answerOf returns what RoundTrip returns for the loop's error err. A loop
// nested in an Outermost loop's operation returns the attempt's error as it
// is, without a reason: the last answer, unless the caller gave up.
func (c *call) answerOf(err error) answer {
	if e, ok := err.(*retry.Error); ok {
		return answerFor(e.Stop)
	}
	if c.ctx.Err() != nil {
		return refusal
	}
	return lastAnswer
}
