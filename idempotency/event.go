package idempotency

// Event is what the middleware did with one guarded request: the Detail of
// the observe.Event of kind observe.Request that it reports to its
// observers (WithObserver). Do and Once report an Event only for an outcome
// they failed to record after they returned: "executed", Status 0, Err set.
//
// Outcome is one of these labels, stable for logs and metrics:
//
//	outcome         status          what happened
//	"executed"      the handler's   the handler ran; its response was recorded for
//	                                replay or, for a failure (5xx, 408, 429, 401,
//	                                403, 407) or an incomplete response, the key
//	                                released; Err is set if the store failed at that
//	"replayed"      the stored one  a stored response was sent again (Idempotent-Replay)
//	"in progress"   409             a request with the key is in flight
//	"key reuse"     422             the key was used with another request
//	"not retained"  409             the key's response was too large to keep
//	"store failed"  503             the store failed or is full, or the stored
//	                                response is unreadable (Err says how); nothing ran
//	"scope full"    429             the client holds its share of the store
//	                                (Err matches ErrScopeFull); nothing ran
//	"rejected"      400, 413        the key is missing or invalid, or the body is
//	                                too large or unreadable; nothing ran
type Event struct {
	// Outcome is what the middleware did: a label of the table above.
	Outcome string
	// Status is the status code answered: the handler's for an execution
	// (0 if it answered nothing), the stored one for a replay, the problem's
	// otherwise.
	Status int
	// Key is the request's Idempotency-Key; "" when it had none, or a bad one.
	Key string
	// Execution is the id of the execution concerned: the one that ran, was
	// replayed, is in progress, or holds the key.
	Execution string
	// Err is the store's failure ("store failed", "scope full", or an
	// execution whose outcome could not be recorded), and nil otherwise. The
	// observe.Event carries it too.
	Err error
}

// The outcomes of Event.
const (
	outcomeExecuted    = "executed"
	outcomeReplayed    = "replayed"
	outcomeInProgress  = "in progress"
	outcomeKeyReuse    = "key reuse"
	outcomeNotRetained = "not retained"
	outcomeStoreFailed = "store failed"
	outcomeScopeFull   = "scope full"
	outcomeRejected    = "rejected"
)
