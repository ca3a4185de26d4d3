package idempotency

import (
	"errors"
	"strconv"

	"github.com/retrykit/retry/internal/keys"
)

// Reasons an idempotent call did not return a fresh or replayed result. Do
// and Once return them inside an *Error (as its Reason; ErrFull and
// ErrScopeFull as the Err of an ErrStore), and so does ResponseError for a
// server's answer; stores return ErrClaimLost, ErrFull, ErrScopeFull and
// ErrTooLarge as they are. Test them with errors.Is.
var (
	// ErrInProgress: another execution holds the key. Do waits for it and
	// returns this only when the caller's context (or WithMaxWait) ends the
	// wait; the middleware answers 409 at once. Waiting again is safe.
	ErrInProgress = errors.New("an execution with this idempotency key is in progress")
	// ErrKeyReuse: the key was used before for a different request (another
	// fingerprint). It is never retried, and the library never mints a new key
	// in its place: a new key for an unchanged request would run it twice.
	ErrKeyReuse = errors.New("idempotency key reused with a different request")
	// ErrNotRetained: the first execution succeeded, but its result was larger
	// than the retention cap (WithMaxResultSize), so there is nothing to replay.
	// It ran, and ran once; it is never retried.
	ErrNotRetained = errors.New("result not retained: it exceeded the retention cap")
	// ErrStoredFailure: an earlier execution with this key failed and the
	// failure is kept for the retention window (KeepFailures). Retrying within
	// the window returns the same failure, so it is never retried. A
	// middleware's kept incomplete response (kind
	// idempotency-response-incomplete) reads as one.
	ErrStoredFailure = errors.New("an earlier execution with this idempotency key failed")
	// ErrClaimLost: the execution's claim on the key expired, or was taken by
	// another execution, before it finished: its result was not stored. Stores
	// return it when a stale executor tries to extend, complete or release a
	// claim that is no longer its own (fencing).
	ErrClaimLost = errors.New("claim on the idempotency key lost before the execution finished")
	// ErrStore: the store failed (unreachable, full, corrupt record); Err says
	// how. Nothing is known about the key; a retry may succeed.
	ErrStore = errors.New("idempotency store failed")
	// ErrFull: the store is full and takes no more claims until records
	// expire: the memory store refuses rather than forget a record before its
	// time. Nothing ran. It arrives inside ErrStore; the middleware answers
	// 503.
	ErrFull = errors.New("idempotency store full")
	// ErrScopeFull: the key's client — its Owner, or its scope — holds
	// its share of the store (MemoryConfig.ScopeShare), so the store
	// takes no more of its claims until some of its records expire; other
	// scopes are unaffected. Nothing ran. The middleware answers 429
	// (kind idempotency-scope-full).
	ErrScopeFull = errors.New("the client's share of the idempotency store is full")
	// ErrTooLarge: a store cannot keep a record this large. Complete returns
	// it and keeps the claim, so that the caller can complete the claim as
	// NotRetained instead (Do does).
	ErrTooLarge = errors.New("record too large for the idempotency store")
)

// Error reports why an idempotent call did not produce a result. It matches
// its Reason (one of the Err… sentinels above) and its Err with errors.Is.
type Error struct {
	// Reason is why: ErrInProgress, ErrKeyReuse, ErrNotRetained,
	// ErrStoredFailure, ErrClaimLost or ErrStore (or, from ResponseError,
	// ErrScopeFull, retry.ErrKeyRequired or retry.ErrInvalid).
	Reason error
	// Key is the idempotency key concerned, as the caller gave it.
	Key string
	// Execution is the id of the execution that holds or held the key, when
	// known: the one in progress, or the one whose result was not retained.
	Execution string
	// Err is the underlying error, if any: the store's failure, the context's
	// cause that ended a wait, a kept failure's message, or the HTTP response
	// (a *classify.StatusError) that reported the reason.
	Err error
}

// Error returns "idempotency: <reason> (key "k"): <err>"; a nil *Error
// reads "idempotency: <nil>".
func (e *Error) Error() string {
	if e == nil {
		return "idempotency: <nil>"
	}
	s := "idempotency: unknown reason"
	if e.Reason != nil {
		s = "idempotency: " + e.Reason.Error()
	}
	if e.Key != "" {
		s += " (key " + strconv.Quote(keys.Abbreviate(e.Key)) + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the reason and the underlying error, those that are set.
func (e *Error) Unwrap() []error {
	if e == nil {
		return nil
	}
	var errs []error
	for _, err := range []error{e.Reason, e.Err} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// storeError wraps a store's failure; a fencing refusal keeps its own reason.
func storeError(key StoreKey, err error) *Error {
	if errors.Is(err, ErrClaimLost) {
		if err == ErrClaimLost {
			err = nil
		}
		return &Error{Reason: ErrClaimLost, Key: key.Key, Err: err}
	}
	return &Error{Reason: ErrStore, Key: key.Key, Err: err}
}
