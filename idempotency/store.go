package idempotency

import (
	"context"
	"strconv"
	"time"
)

// StoreKey names a record in a Store: an idempotency key within a scope.
//
// The scope keeps the keys of different clients apart: the middleware puts
// each request's key in its client's scope (see WithScope), so that a client
// can neither replay another's response nor learn that another used a key.
// Do and Once use the empty scope; a store may bound what each non-empty
// scope holds (the memory store does), so that one client cannot take the room of
// others.
//
// Owner is not part of the key: it names whose share of a bounded store the
// key's record counts against, when that is not its Scope. The middleware's
// default scope is a digest of every credential a request carries, which a
// client can vary at will; its Owner is the client's first credential, or
// its address when it has none, so that varying the rest does not multiply
// its share (see Middleware).
type StoreKey struct {
	Scope string // the client's partition; "" for Do, Once and a single-tenant middleware
	Key   string // the idempotency key, as the caller gave it: never empty
	// Owner is whose share of a bounded store the record counts against:
	// "" means its Scope. A store that bounds no share ignores it, and no
	// store tells two keys apart by it.
	Owner string
}

// id is the key without its Owner: what names a record.
func (k StoreKey) id() StoreKey { return StoreKey{Scope: k.Scope, Key: k.Key} }

// owner is the name of the share the key counts against: "" for none.
func (k StoreKey) owner() string {
	if k.Owner != "" {
		return k.Owner
	}
	return k.Scope
}

// scopeMark starts the string form of a scoped key: a control character,
// which no key that passed ValidateKey contains, so that a scoped key never
// reads as an unscoped one.
const scopeMark = "\x1f"

// String returns the key as one string, for stores that keep strings (without
// its Owner, which is not part of it): Key
// itself when Scope is empty (so unscoped keys read as the caller wrote
// them), and otherwise "\x1f", the length of Scope, ":", Scope, ":" and Key.
// Distinct StoreKeys whose Key passed ValidateKey have distinct strings.
func (k StoreKey) String() string {
	if k.Scope == "" {
		return k.Key
	}
	return scopeMark + strconv.Itoa(len(k.Scope)) + ":" + k.Scope + ":" + k.Key
}

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
// A key is its scope and its name together: the same Key in two scopes is
// two records. Key is an arbitrary non-empty string. Methods that get an
// invalid record or key, or a lease or retention that is not positive, return
// an error and change nothing. Claim may refuse a key whose scope holds its
// share of the store (ErrScopeFull) or a store that is full (ErrFull);
// Complete may refuse a record too large for what is left (ErrTooLarge).
// Other errors than those and ErrClaimLost mean the store failed.
//
// Every method returns soon after its context ends, whatever the state of
// the store's server: the callers' deadlines depend on it. Do records an
// outcome in the background when the store is slower than its caller's
// deadline, and that recording ends with the lease only if the store honours
// the context it gets.
type Store interface {
	// Claim stores rec, an InProgress record, under key for lease if key
	// holds no live record. It returns the record under key after the call,
	// and true if that is rec: the caller holds the claim.
	Claim(ctx context.Context, key StoreKey, rec Record, lease time.Duration) (Record, bool, error)
	// Extend makes the claim of token on key expire lease from now.
	Extend(ctx context.Context, key StoreKey, token string, lease time.Duration) error
	// Complete replaces the claim of rec.Token on key with rec, a final
	// record, kept for retention.
	Complete(ctx context.Context, key StoreKey, rec Record, retention time.Duration) error
	// Release deletes the claim of token on key, so that the key can be
	// claimed again at once.
	Release(ctx context.Context, key StoreKey, token string) error
}

// Waiter is implemented by a Store that can tell when a claim ends, so that a
// caller waiting for an execution in progress wakes when it finishes instead
// of polling. (The memory store implements it; stores without it are polled.)
type Waiter interface {
	// Wait returns nil once the claim that key holds at the call has ended —
	// completed, released or expired — at once if key holds no live claim,
	// and the context's error if ctx ends first. It may return early: the
	// caller checks the key again with Claim.
	Wait(ctx context.Context, key StoreKey) error
}
