package otelretry

import (
	"strings"

	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/policy"
	"go.opentelemetry.io/otel/attribute"
)

// Attribute values come from the fixed sets in this file, each derived from
// the library's own list where it has one, never from an error's text, a
// key, a URL or anything else a caller or a server chooses: a series per
// distinct value would grow without bound. doc.go has them as tables.

// Attribute keys.
const (
	keyName        = attribute.Key("retry.name")    // the name given to New
	keyOutcome     = attribute.Key("retry.outcome") // outcomes
	keyClass       = attribute.Key("retry.class")   // classes
	keyVerdict     = attribute.Key("retry.verdict") // verdicts
	keyRetryAfter  = attribute.Key("retry.retry_after.action")
	keySkippedBy   = attribute.Key("retry.hedge.skipped_by") // the outcome a stage's refusal would be
	keyAttempt     = attribute.Key("retry.attempt")          // span events only
	keyDelay       = attribute.Key("retry.delay")            // span events only
	keyBreaker     = attribute.Key("retry.breaker.name")     // a breaker's key (capped)
	keyState       = attribute.Key("retry.breaker.state")
	keyFromState   = attribute.Key("retry.breaker.from")
	keyRejection   = attribute.Key("retry.breaker.reason")
	keySource      = attribute.Key("retry.dlq.source")      // a letter's Job.Source (capped)
	keyGroup       = attribute.Key("retry.dlq.group")       // a letter's root-cause group (capped)
	keyStopReason  = attribute.Key("retry.dlq.stop_reason") // outcomes, or "failed"
	keyReplay      = attribute.Key("retry.dlq.replay.result")
	keyServer      = attribute.Key("retry.idempotency.outcome")
	keyStatusClass = attribute.Key("retry.http.status_class")
)

const (
	other   = "other"   // a value this version does not know
	success = "success" // a call's outcome, an attempt's verdict
)

// outcomes are the values of retry.outcome: success, then the label of each
// policy.Stop in policy.Stops() order, then other. stopIndex maps a Stop to
// its index.
var outcomes, stopIndex = stopTable()

const iSuccess = 0

var iOther = len(outcomes) - 1

func stopTable() ([]string, map[policy.Stop]int) {
	labels := []string{success}
	index := map[policy.Stop]int{}
	for s := range policy.Stops() {
		index[s] = len(labels)
		labels = append(labels, s.String())
	}
	return append(labels, other), index
}

// outcomeOf returns the index in outcomes of stop.
func outcomeOf(stop policy.Stop) int {
	if i, ok := stopIndex[stop]; ok {
		return i
	}
	return iOther
}

// classes are the values of retry.class: every reason of the library's
// classifiers (classify.Reasons), then other, for a caller's classifier's
// own reason. classIndex maps a reason to its index.
var classes, classIndex = classTable()

func classTable() ([]string, map[string]int) {
	var list []string
	index := map[string]int{}
	for r := range classify.Reasons() {
		if _, dup := index[r]; !dup && r != other {
			index[r] = len(list)
			list = append(list, r)
		}
	}
	index[other] = len(list)
	return append(list, other), index
}

// classOf returns the index in classes of reason.
func classOf(reason string) int {
	if i, ok := classIndex[reason]; ok {
		return i
	}
	return len(classes) - 1
}

// Verdicts of an attempt: the values of retry.verdict.
const (
	verdictRetry = "retry" // the classifier said the failure is transient
	verdictStop  = "stop"  // it said another attempt would fail the same way, or had no opinion
)

// retry.retry_after.action: a server's wait the loop slept, or one it
// returned to the caller (retry.Error.RetryAfter).
const (
	retryAfterSlept    = "slept"
	retryAfterReturned = "returned"
)

// states are a breaker's states; their values are State.String with "_"
// for "-" (closed, half_open, open), as they were before breakers had keys.
var states = [...]breaker.State{breaker.StateClosed, breaker.StateHalfOpen, breaker.StateOpen}

func stateLabel(i int) string { return strings.ReplaceAll(states[i].String(), "-", "_") }

func stateIndex(s breaker.State) int {
	for i := range states {
		if states[i] == s {
			return i
		}
	}
	return 0
}

// The values of retry.breaker.reason: the state that refused the call.
const (
	rejectedOpen     = 0 // breaker.ErrOpen
	rejectedHalfOpen = 1 // breaker.ErrTooManyRequests: the probes are taken
)

// Replay results, and their values of retry.dlq.replay.result.
const (
	replayDone        = iota // the job was enqueued and the letter left
	replayNotFound           // another replay had it (dlq.ErrNotFound)
	replayClaimed            // another replay is in progress (dlq.ErrClaimed)
	replayClaimLapsed        // dlq.ErrClaimLapsed
	replayFailed             // the letter stayed: the enqueue or the store failed
)

var replays = [...]string{
	replayDone: "replayed", replayNotFound: "not_found", replayClaimed: "claimed",
	replayClaimLapsed: "claim_lapsed", replayFailed: "failed",
}

// dlqFailed is a letter's stop reason when its error did not come from a
// retry loop (the event's Stop is policy.Continue).
const dlqFailed = "failed"

// serverOutcomes are the values of retry.idempotency.outcome: the labels
// of idempotency.Event.Outcome, each with "_" for " " (executed, replayed,
// in_progress, …), by their index; an outcome not listed is other.
var serverOutcomes = serverTable("executed", "replayed", "in progress", "key reuse", "not retained",
	"store failed", "scope full", "rejected")

func serverTable(labels ...string) map[string]int {
	index := make(map[string]int, len(labels))
	for i, l := range labels {
		index[l] = i
	}
	return index
}

func serverLabel(o string) string { return strings.ReplaceAll(o, " ", "_") }

// statusClasses are the values of retry.http.status_class.
var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx", "error"}

const (
	class2xx   = 1
	classError = 5
)

// statusClass returns the index in statusClasses of an attempt that ended
// with err: 2xx for a success, the class of the status an error carries
// (a method HTTPStatusCode() int anywhere in its chain), error otherwise.
func statusClass(err error) int {
	if err == nil {
		return class2xx
	}
	code, ok := statusOf(err)
	if !ok || code < 100 || code > 599 {
		return classError
	}
	return code/100 - 1
}

// statusOf finds an HTTP status in err's chain, without reflection (which
// errors.As would use, and allocate for).
func statusOf(err error) (int, bool) {
	for depth := 0; err != nil && depth < 32; depth++ {
		switch e := err.(type) {
		case interface{ HTTPStatusCode() int }:
			return e.HTTPStatusCode(), true
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				if code, ok := statusOf(inner); ok {
					return code, true
				}
			}
			return 0, false
		default:
			return 0, false
		}
	}
	return 0, false
}
