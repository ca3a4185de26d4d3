package idempotency

import (
	"context"
	"time"
)

// Store keeps one Record per key: a claim while an execution runs, then its
// outcome for a retention window. Do, Once and Middleware drive it; the
// package storetest checks that an implementation keeps the contract.
//
// Every method is one atomic transition, safe for concurrent use by any
// number of goroutines and processes sharing the store. Claims are fenced
// by their token: only the execution that claimed a key may extend, complete
// or release that claim, and only while it is live — after its lease
// expired, or once another execution claimed the key, the stale executor gets
// ErrClaimLost and the store is unchanged. A record past its expiry (lease or
// retention) is as good as absent.
//
// Keys are arbitrary non-empty strings. Methods that get an invalid record,
// or a lease or retention that is not positive, return an error and change
// nothing. Errors other than ErrClaimLost (and ErrTooLarge from Complete)
// mean the store failed.
type Store interface {
	// Claim stores rec, an InProgress record, under key for lease if key
	// holds no live record. It returns the record under key after the call,
	// and true if that is rec: the caller holds the claim.
	Claim(ctx context.Context, key string, rec Record, lease time.Duration) (Record, bool, error)
	// Extend makes the claim of token on key expire lease from now.
	Extend(ctx context.Context, key, token string, lease time.Duration) error
	// Complete replaces the claim of rec.Token on key with rec, a final
	// record, kept for retention.
	Complete(ctx context.Context, key string, rec Record, retention time.Duration) error
	// Release deletes the claim of token on key, so that the key can be
	// claimed again at once.
	Release(ctx context.Context, key, token string) error
}

// Waiter is implemented by a Store that can tell when a claim ends, so that a
// caller waiting for an execution in progress wakes when it finishes instead
// of polling. (*MemoryStore implements it; stores without it are polled.)
type Waiter interface {
	// Wait returns nil once the claim that key holds at the call has ended —
	// completed, released or expired — at once if key holds no live claim,
	// and the context's error if ctx ends first. It may return early: the
	// caller checks the key again with Claim.
	Wait(ctx context.Context, key string) error
}
