// Package storetest checks an idempotency.Store against the contract, in the
// manner of testing/fstest: a store's own tests call Run, and pass only if
// the store keeps every rule that Do, Once and the middleware rely on —
// atomic claims, fencing by token, leases and retention that expire, records
// that round-trip byte for byte and do not alias the caller's memory.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) idempotency.Store {
//			return mystore.New(…) // a fresh, empty store (or key space) per call
//		})
//	}
//
// The suite runs on the real clock, with leases of a fraction of a second,
// its subtests in parallel; it takes a few seconds. Its checks use keys in a
// scope (scope), as the middleware does, and one check compares scopes. A
// store that implements idempotency.Waiter is also checked as one. The last
// checks run idempotency.Middleware over the store on real HTTP/1.1 and
// HTTP/2 servers on loopback: only a completed response is replayed — not a
// short body, a stream its client cut off, nor a panicking handler's
// fragment — and a replay carries no session field, as header or trailer.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry/idempotency"
)

// Durations of the suite. short expires within the test; long never does.
const (
	short  = 100 * time.Millisecond
	expire = 3 * short // sleeping this long outlasts short, whatever the load
	long   = time.Minute
	first  = time.Second // a lease renewed at once, and checked after it ran out
)

type check struct {
	name string
	run  func(t *testing.T, s idempotency.Store)
}

var checks = []check{
	{"a claim on a free key is granted", claimFree},
	{"a second claim gets the first one's record and changes nothing", claimHeld},
	{"the holder's outcome is kept and returned to later claims", completeRoundTrip},
	{"values of every size round-trip byte for byte", valueSizes},
	{"only the holder may extend, complete or release a claim", fencedByToken},
	{"a finished record can be neither extended, completed again nor released", finishedIsFinal},
	{"a released key can be claimed again at once", releaseFrees},
	{"a claim expires after its lease and its stale holder is fenced off", leaseExpires},
	{"extending a claim keeps it past its first lease", extendKeeps},
	{"a record expires after its retention", retentionExpires},
	{"keys are independent of each other", keysIndependent},
	{"the same key in another scope is another key", scopesIndependent},
	{"the Owner of a key is not part of it", ownerNotPartOfKey},
	{"concurrent claims grant a key exactly once", claimOnce},
	{"invalid arguments are errors that change nothing", invalidArguments},
	{"records returned and given do not alias the store", noAliasing},
	{"a Waiter wakes when the claim ends", waiter},
	{"Do runs fn once for 100 concurrent callers", doOnce},
}

// Run checks the stores newStore returns against the contract of
// idempotency.Store, one subtest per rule, each on a store of its own.
// newStore may be called concurrently. A nil newStore fails t; a nil t is
// nothing to report to, and Run returns at once.
func Run(t *testing.T, newStore func(t *testing.T) idempotency.Store) {
	if t == nil {
		return
	}
	t.Helper()
	if newStore == nil {
		t.Fatal("storetest.Run(<nil>): newStore must not be nil")
	}
	for _, c := range slices.Concat(checks, middlewareChecks) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newStore(t))
		})
	}
}

// scope is the scope of the keys the checks use.
const scope = "storetest-scope"

// keyOf is the store key the checks use for name.
func keyOf(name string) idempotency.StoreKey { return idempotency.StoreKey{Scope: scope, Key: name} }

func claimRecord(token string, fp idempotency.Fingerprint) idempotency.Record {
	return idempotency.Record{Status: idempotency.InProgress, Token: token, Fingerprint: fp}
}

var fpA, fpB = idempotency.NewFingerprint([]byte("a")), idempotency.NewFingerprint([]byte("b"))

// mustClaim claims key for token and fails the test unless it was granted.
func mustClaim(t *testing.T, s idempotency.Store, key, token string, lease time.Duration) {
	t.Helper()
	got, ok, err := s.Claim(t.Context(), keyOf(key), claimRecord(token, fpA), lease)
	if err != nil || !ok {
		t.Fatalf("Claim(%.40q, %q) = %s, %v, %v; want it granted", key, token, describe(got), ok, err)
	}
}

// current returns the record key holds, if any, without changing it.
func current(t *testing.T, s idempotency.Store, key string) (idempotency.Record, bool) {
	t.Helper()
	got, ok, err := s.Claim(t.Context(), keyOf(key), claimRecord("probe", fpB), short)
	if err != nil {
		t.Fatalf("Claim(%.40q): %v", key, err)
	}
	if ok { // the key was free: leave it so
		if err := s.Release(t.Context(), keyOf(key), "probe"); err != nil {
			t.Fatalf("Release of a probe claim: %v", err)
		}
		return idempotency.Record{}, false
	}
	return got, true
}

func wantLost(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, idempotency.ErrClaimLost) {
		t.Errorf("%s = %v; want ErrClaimLost", what, err)
	}
}

func wantRecord(t *testing.T, got, want idempotency.Record) {
	t.Helper()
	if got.Status != want.Status || got.Token != want.Token || got.Fingerprint != want.Fingerprint || !bytes.Equal(got.Value, want.Value) {
		t.Errorf("record = %s; want %s", describe(got), describe(want))
	}
}

func describe(r idempotency.Record) string {
	v := string(r.Value)
	if len(v) > 40 {
		v = fmt.Sprintf("%d bytes", len(r.Value))
	}
	return fmt.Sprintf("{%v token=%q fp=%.8s… value=%q}", r.Status, r.Token, r.Fingerprint, v)
}

func claimFree(t *testing.T, s idempotency.Store) {
	rec := claimRecord("t1", fpA)
	got, ok, err := s.Claim(t.Context(), keyOf("k"), rec, long)
	if err != nil || !ok {
		t.Fatalf("Claim on a free key = %v, %v; want granted", ok, err)
	}
	wantRecord(t, got, rec)
}

func claimHeld(t *testing.T, s idempotency.Store) {
	mustClaim(t, s, "k", "t1", long)
	got, ok, err := s.Claim(t.Context(), keyOf("k"), claimRecord("t2", fpB), long)
	if err != nil || ok {
		t.Fatalf("second Claim = %v, %v; want refused", ok, err)
	}
	wantRecord(t, got, claimRecord("t1", fpA))
	if err := s.Extend(t.Context(), keyOf("k"), "t1", long); err != nil {
		t.Errorf("the first holder lost its claim to a refused one: Extend = %v", err)
	}
}

func completeRoundTrip(t *testing.T, s idempotency.Store) {
	for i, rec := range []idempotency.Record{
		{Status: idempotency.Succeeded, Value: []byte("result\x00\xff")},
		{Status: idempotency.Failed, Value: []byte("boom")},
		{Status: idempotency.NotRetained},
	} {
		key, token := fmt.Sprintf("k%d", i), fmt.Sprintf("t%d", i)
		mustClaim(t, s, key, token, long)
		rec.Token, rec.Fingerprint = token, fpA
		if err := s.Complete(t.Context(), keyOf(key), rec, long); err != nil {
			t.Fatalf("Complete(%v) by the holder: %v", rec.Status, err)
		}
		got, ok, err := s.Claim(t.Context(), keyOf(key), claimRecord("other", fpB), long)
		if err != nil || ok {
			t.Fatalf("Claim after Complete = %v, %v; want the record", ok, err)
		}
		wantRecord(t, got, rec)
	}
}

func valueSizes(t *testing.T, s idempotency.Store) {
	for _, n := range []int{0, 1, 255, 64 << 10, 1 << 20} { // up to the default retention cap, 1 MiB
		key := fmt.Sprintf("size-%d", n)
		mustClaim(t, s, key, "t", long)
		value := bytes.Repeat([]byte{0, 1, 0xfe, 'x'}, n/4+1)[:n]
		rec := idempotency.Record{Status: idempotency.Succeeded, Token: "t", Fingerprint: fpA, Value: value}
		err := s.Complete(t.Context(), keyOf(key), rec, long)
		if errors.Is(err, idempotency.ErrTooLarge) {
			// Allowed, if the claim is kept for a NotRetained record instead.
			rec = idempotency.Record{Status: idempotency.NotRetained, Token: "t", Fingerprint: fpA}
			err = s.Complete(t.Context(), keyOf(key), rec, long)
		}
		if err != nil {
			t.Fatalf("Complete with %d bytes: %v", n, err)
		}
		got, _ := current(t, s, key)
		wantRecord(t, got, rec)
	}
}

func fencedByToken(t *testing.T, s idempotency.Store) {
	mustClaim(t, s, "k", "holder", long)
	ctx := t.Context()
	wantLost(t, "Extend by another token", s.Extend(ctx, keyOf("k"), "intruder", long))
	wantLost(t, "Complete by another token", s.Complete(ctx, keyOf("k"), idempotency.Record{Status: idempotency.Succeeded, Token: "intruder", Fingerprint: fpA, Value: []byte("x")}, long))
	wantLost(t, "Release by another token", s.Release(ctx, keyOf("k"), "intruder"))
	wantLost(t, "Extend of a free key", s.Extend(ctx, keyOf("free"), "holder", long))
	wantLost(t, "Complete of a free key", s.Complete(ctx, keyOf("free"), idempotency.Record{Status: idempotency.Succeeded, Token: "holder"}, long))
	wantLost(t, "Release of a free key", s.Release(ctx, keyOf("free"), "holder"))
	got, held := current(t, s, "k")
	if !held {
		t.Fatal("the claim is gone after refused calls")
	}
	wantRecord(t, got, claimRecord("holder", fpA))
	if _, held := current(t, s, "free"); held {
		t.Error("a refused call on a free key created a record")
	}
}

func finishedIsFinal(t *testing.T, s idempotency.Store) {
	mustClaim(t, s, "k", "t", long)
	done := idempotency.Record{Status: idempotency.Succeeded, Token: "t", Fingerprint: fpA, Value: []byte("first")}
	if err := s.Complete(t.Context(), keyOf("k"), done, long); err != nil {
		t.Fatal(err)
	}
	again := done
	again.Value = []byte("second")
	wantLost(t, "a second Complete", s.Complete(t.Context(), keyOf("k"), again, long))
	wantLost(t, "Extend of a finished record", s.Extend(t.Context(), keyOf("k"), "t", long))
	wantLost(t, "Release of a finished record", s.Release(t.Context(), keyOf("k"), "t"))
	got, _ := current(t, s, "k")
	wantRecord(t, got, done)
}

func releaseFrees(t *testing.T, s idempotency.Store) {
	mustClaim(t, s, "k", "t1", long)
	if err := s.Release(t.Context(), keyOf("k"), "t1"); err != nil {
		t.Fatalf("Release by the holder: %v", err)
	}
	mustClaim(t, s, "k", "t2", long)
	wantLost(t, "a second Release by the first holder", s.Release(t.Context(), keyOf("k"), "t1"))
}

func leaseExpires(t *testing.T, s idempotency.Store) {
	mustClaim(t, s, "k", "stale", short)
	time.Sleep(expire)
	mustClaim(t, s, "k", "fresh", long)
	ctx := t.Context()
	wantLost(t, "Extend by the stale holder", s.Extend(ctx, keyOf("k"), "stale", long))
	wantLost(t, "Complete by the stale holder", s.Complete(ctx, keyOf("k"), idempotency.Record{Status: idempotency.Succeeded, Token: "stale", Fingerprint: fpA, Value: []byte("late")}, long))
	wantLost(t, "Release by the stale holder", s.Release(ctx, keyOf("k"), "stale"))
	got, _ := current(t, s, "k")
	wantRecord(t, got, claimRecord("fresh", fpA))

	mustClaim(t, s, "gone", "stale", short)
	time.Sleep(expire)
	wantLost(t, "Complete after the lease, the key unclaimed", s.Complete(ctx, keyOf("gone"), idempotency.Record{Status: idempotency.Succeeded, Token: "stale", Fingerprint: fpA}, long))
}

func extendKeeps(t *testing.T, s idempotency.Store) {
	mustClaim(t, s, "k", "t", first)
	if err := s.Extend(t.Context(), keyOf("k"), "t", long); err != nil {
		t.Fatalf("Extend by the holder: %v", err)
	}
	time.Sleep(first + short)
	if err := s.Extend(t.Context(), keyOf("k"), "t", long); err != nil {
		t.Errorf("the claim expired at its first lease despite Extend: %v", err)
	}
}

func retentionExpires(t *testing.T, s idempotency.Store) {
	mustClaim(t, s, "k", "t", long)
	if err := s.Complete(t.Context(), keyOf("k"), idempotency.Record{Status: idempotency.Succeeded, Token: "t", Fingerprint: fpA}, short); err != nil {
		t.Fatal(err)
	}
	time.Sleep(expire)
	mustClaim(t, s, "k", "after", long)
}

func keysIndependent(t *testing.T, s idempotency.Store) {
	keys := []string{"a", "ab", "a:b", "a b", "ключ", "🔑", strings.Repeat("k", 1000), "a\x00b"}
	for i, k := range keys {
		mustClaim(t, s, k, fmt.Sprint("t", i), long)
	}
	for i, k := range keys {
		got, held := current(t, s, k)
		if !held || got.Token != fmt.Sprint("t", i) {
			t.Errorf("key %.20q holds %s; want its own claim t%d", k, describe(got), i)
		}
	}
}

func scopesIndependent(t *testing.T, s idempotency.Store) {
	// Scopes whose string forms could be confused if a store joined scope
	// and key carelessly.
	keys := []idempotency.StoreKey{
		{Key: "k"}, {Scope: "a", Key: "k"}, {Scope: "b", Key: "k"}, {Scope: "a:k", Key: "k"},
		{Scope: "a", Key: "k:k"}, {Key: "1:a:k"}, {Key: "a:k"}, {Scope: "ключ", Key: "k"},
	}
	for i, k := range keys {
		got, ok, err := s.Claim(t.Context(), k, claimRecord(fmt.Sprint("t", i), fpA), long)
		if err != nil || !ok {
			t.Fatalf("Claim(%+q) = %s, %v, %v; want it granted: no other scope holds it", k, describe(got), ok, err)
		}
	}
	for i, k := range keys {
		if err := s.Extend(t.Context(), k, fmt.Sprint("t", i), long); err != nil {
			t.Errorf("Extend(%+q) by its own holder = %v; the scopes share a record", k, err)
		}
	}
	if err := s.Release(t.Context(), keys[1], "t0"); !errors.Is(err, idempotency.ErrClaimLost) {
		t.Errorf("Release of scope a's key by the unscoped key's holder = %v; want ErrClaimLost", err)
	}
}

func ownerNotPartOfKey(t *testing.T, s idempotency.Store) {
	owned := func(owner string) idempotency.StoreKey {
		k := keyOf("k")
		k.Owner = owner
		return k
	}
	if _, ok, err := s.Claim(t.Context(), owned("first"), claimRecord("t", fpA), long); err != nil || !ok {
		t.Fatalf("Claim = %v, %v; want it granted", ok, err)
	}
	if got, ok, err := s.Claim(t.Context(), owned("second"), claimRecord("u", fpB), long); err != nil || ok || got.Token != "t" {
		t.Errorf("Claim by another Owner = %s, %v, %v; want the first claim: the key is the same", describe(got), ok, err)
	}
	if err := s.Extend(t.Context(), owned(""), "t", long); err != nil {
		t.Errorf("Extend without the Owner = %v; want nil", err)
	}
	done := idempotency.Record{Status: idempotency.Succeeded, Token: "t", Fingerprint: fpA, Value: []byte("v")}
	if err := s.Complete(t.Context(), owned("third"), done, long); err != nil {
		t.Errorf("Complete with another Owner = %v; want nil", err)
	}
	if got, ok := current(t, s, "k"); !ok || got.Status != idempotency.Succeeded {
		t.Errorf("the key holds %s; want the completed record", describe(got))
	}
}

func claimOnce(t *testing.T, s idempotency.Store) {
	const n = 50
	var granted atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, ok, err := s.Claim(context.Background(), keyOf("k"), claimRecord(fmt.Sprint("t", i), fpA), long)
			if err != nil {
				t.Error(err)
			}
			if ok {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := granted.Load(); got != 1 {
		t.Errorf("%d concurrent claims granted; want 1", got)
	}
}

func invalidArguments(t *testing.T, s idempotency.Store) {
	ctx := t.Context()
	long256 := strings.Repeat("t", 256) // a token has at most 255 bytes
	final := idempotency.Record{Status: idempotency.Succeeded, Token: "t", Fingerprint: fpA}
	calls := []struct {
		name string
		err  func() error
	}{
		{"Claim of a finished record", func() error { _, _, err := s.Claim(ctx, keyOf("k"), final, long); return err }},
		{"Claim with an empty token", func() error { _, _, err := s.Claim(ctx, keyOf("k"), claimRecord("", fpA), long); return err }},
		{"Claim with a token over 255 bytes", func() error { _, _, err := s.Claim(ctx, keyOf("k"), claimRecord(long256, fpA), long); return err }},
		{"Claim with a zero lease", func() error { _, _, err := s.Claim(ctx, keyOf("k"), claimRecord("t", fpA), 0); return err }},
		{"Claim of an empty key", func() error { _, _, err := s.Claim(ctx, keyOf(""), claimRecord("t", fpA), long); return err }},
		{"Claim with an unknown status", func() error {
			_, _, err := s.Claim(ctx, keyOf("k"), idempotency.Record{Status: 99, Token: "t"}, long)
			return err
		}},
	}
	for _, c := range calls {
		if c.err() == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, held := current(t, s, "k"); held {
		t.Fatal("an invalid Claim stored a record")
	}
	mustClaim(t, s, "k", "t", long)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"Complete with an InProgress record", s.Complete(ctx, keyOf("k"), claimRecord("t", fpA), long)},
		{"Complete with a zero retention", s.Complete(ctx, keyOf("k"), final, 0)},
		{"Extend with a zero lease", s.Extend(ctx, keyOf("k"), "t", 0)},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	got, _ := current(t, s, "k")
	wantRecord(t, got, claimRecord("t", fpA))
}

func noAliasing(t *testing.T, s idempotency.Store) {
	mustClaim(t, s, "k", "t", long)
	value := []byte("original")
	if err := s.Complete(t.Context(), keyOf("k"), idempotency.Record{Status: idempotency.Succeeded, Token: "t", Fingerprint: fpA, Value: value}, long); err != nil {
		t.Fatal(err)
	}
	copy(value, "MUTATED!")
	got, _ := current(t, s, "k")
	copy(got.Value, "changed!")
	again, _ := current(t, s, "k")
	if string(again.Value) != "original" {
		t.Errorf("stored value = %q; want %q, whatever the caller does with its slices", again.Value, "original")
	}
}

func waiter(t *testing.T, s idempotency.Store) {
	w, ok := s.(idempotency.Waiter)
	if !ok {
		t.Skip("the store does not implement idempotency.Waiter")
	}
	if err := w.Wait(t.Context(), keyOf("free")); err != nil {
		t.Errorf("Wait on a free key = %v; want nil at once", err)
	}
	mustClaim(t, s, "k", "t", long)
	go func() {
		time.Sleep(short)
		_ = s.Complete(context.Background(), keyOf("k"), idempotency.Record{Status: idempotency.Succeeded, Token: "t", Fingerprint: fpA}, long)
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 50*short)
	defer cancel()
	if err := w.Wait(ctx, keyOf("k")); err != nil {
		t.Errorf("Wait for a claim that completes = %v; want nil", err)
	}
	mustClaim(t, s, "expiring", "t", short)
	if err := w.Wait(ctx, keyOf("expiring")); err != nil {
		t.Errorf("Wait for a claim that expires = %v; want nil", err)
	}
	mustClaim(t, s, "held", "t", long)
	ctx2, cancel2 := context.WithTimeout(t.Context(), short)
	defer cancel2()
	if err := w.Wait(ctx2, keyOf("held")); err == nil {
		t.Error("Wait beyond the context's end = nil; want its error")
	}
}

func doOnce(t *testing.T, s idempotency.Store) {
	const callers = 100
	var runs atomic.Int32
	results := make([]idempotency.Result, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			results[i], errs[i] = idempotency.Do(t.Context(), s, "order-1", fpA, func(context.Context) ([]byte, error) {
				runs.Add(1)
				time.Sleep(short)
				return []byte("receipt"), nil
			}, idempotency.WithPollInterval(5*time.Millisecond))
		})
	}
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Errorf("fn ran %d times; want 1", n)
	}
	fresh := 0
	for i := range callers {
		if errs[i] != nil || string(results[i].Value) != "receipt" {
			t.Fatalf("caller %d got %q, %v; want the receipt", i, results[i].Value, errs[i])
		}
		if !results[i].Replay {
			fresh++
		} else if results[i].ReplayOf != results[i].Execution || results[i].ReplayOf == "" {
			t.Errorf("caller %d: a replay of %q with execution %q", i, results[i].ReplayOf, results[i].Execution)
		}
	}
	if fresh != 1 {
		t.Errorf("%d callers got a fresh result; want 1 (the rest replays)", fresh)
	}
}
