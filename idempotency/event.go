package idempotency

import "strconv"

// Outcome is what the middleware did with a guarded request, as WithHook
// reports it.
type Outcome uint8

const (
	// OutcomeExecuted: the handler ran for this request. Its response was
	// recorded for replay, or, for a failure (5xx, 408, 429, 401, 403, 407),
	// the key was released; Event.Err is set if the store failed at that.
	OutcomeExecuted Outcome = 1 + iota
	// OutcomeReplayed: a stored response was sent again (Idempotent-Replay).
	OutcomeReplayed
	// OutcomeInProgress: 409, a request with the key is in flight.
	OutcomeInProgress
	// OutcomeKeyReuse: 422, the key was used with another request.
	OutcomeKeyReuse
	// OutcomeNotRetained: 409, the key's response was too large to keep.
	OutcomeNotRetained
	// OutcomeStoreFailed: 503, the store failed or is full, or the stored
	// response is unreadable; Event.Err says how. Nothing ran.
	OutcomeStoreFailed
	// OutcomeScopeFull: 429, the client holds its share of the store
	// (ErrScopeFull). Nothing ran.
	OutcomeScopeFull
	// OutcomeRejected: 400 or 413, the request's key is missing or invalid,
	// or its body is too large or unreadable. Nothing ran.
	OutcomeRejected
)

var outcomeNames = [...]string{
	OutcomeExecuted: "executed", OutcomeReplayed: "replayed", OutcomeInProgress: "in progress",
	OutcomeKeyReuse: "key reuse", OutcomeNotRetained: "not retained", OutcomeStoreFailed: "store failed",
	OutcomeScopeFull: "scope full", OutcomeRejected: "rejected",
}

// String returns a stable label for logs and metrics: "executed",
// "replayed", "in progress", "key reuse", "not retained", "store failed",
// "scope full" or "rejected".
func (o Outcome) String() string {
	if o >= OutcomeExecuted && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Event is what the middleware reports to its hook (WithHook) for one guarded
// request.
type Event struct {
	Outcome Outcome
	// Status is the status code answered: the handler's for an execution
	// (0 if it answered nothing), the stored one for a replay, the problem's
	// otherwise.
	Status int
	// Key is the request's Idempotency-Key; "" when it had none, or a bad one.
	Key string
	// Execution is the id of the execution concerned: the one that ran, was
	// replayed, is in progress, or holds the key.
	Execution string
	// Err is the store's failure (OutcomeStoreFailed, OutcomeScopeFull, or an
	// execution whose outcome could not be recorded), and nil otherwise.
	Err error
}
