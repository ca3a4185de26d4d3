package idempotency

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"strconv"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/keys"
)

// NewKey returns a random idempotency key (26 characters, 130 random bits)
// for a logical call that has no natural identity. Generate it once per
// logical call, before the first attempt, and send the same key with every
// retry of that call: a key minted per attempt makes every retry a new
// request. Where the call has an identity — a job's run and step — prefer
// DeriveKey, so that a resumed job replays instead of running again.
func NewKey() string { return rand.Text() }

// DeriveKey returns a deterministic idempotency key for the parts given, for
// example a run id, a step id and the request's fingerprint: the same parts
// always give the same key, so a job resumed after a crash replays its steps
// instead of paying for them twice, and different parts never collide (the
// key is a SHA-256 over the length-prefixed parts, 64 hex characters).
//
// It needs at least one part, and no part may be empty: a missing run or step
// id would make unrelated calls share a key. The error is a
// *retry.InvalidError.
func DeriveKey(parts ...string) (string, error) {
	if len(parts) == 0 {
		return "", &retry.InvalidError{Name: "idempotency.DeriveKey", Value: "no parts", Err: errors.New("needs at least one part")}
	}
	h := sha256.New()
	for i, p := range parts {
		if p == "" {
			return "", &retry.InvalidError{Name: "idempotency.DeriveKey", Value: "part " + strconv.Itoa(i),
				Err: errors.New("must not be empty: a missing id would make unrelated calls share a key")}
		}
		writePart(h, []byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Fingerprint is a stable hash of a request as the caller sends it, stored
// with the key so that the key's reuse for a different request is caught
// (ErrKeyReuse). Compute it over canonical bytes the caller chooses — the
// body it sends, the method and path — never over a server's model of the
// request with its defaults filled in: a field added to that model with a
// default would make every stored key mismatch a byte-identical retry.
//
// The zero Fingerprint is a valid value meaning "not fingerprinted"; it
// matches only itself. A Fingerprint is comparable with ==: f ==
// (Fingerprint{}) tells the zero one.
type Fingerprint [sha256.Size]byte

// NewFingerprint returns the SHA-256 of the parts, each prefixed with its
// length, so that ("ab", "c") and ("a", "bc") differ.
func NewFingerprint(parts ...[]byte) Fingerprint {
	h := sha256.New()
	for _, p := range parts {
		writePart(h, p)
	}
	var f Fingerprint
	h.Sum(f[:0])
	return f
}

// String returns the fingerprint in hexadecimal, fit for DeriveKey.
func (f Fingerprint) String() string { return hex.EncodeToString(f[:]) }

func writePart(h io.Writer, p []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(p)))
	h.Write(n[:])
	h.Write(p)
}

// ValidateKey reports whether key is usable as an idempotency key: non-empty,
// valid UTF-8, at most 255 characters (the limit of Stripe and of LLM
// gateways, checked before anything is sent) and free of control
// characters. The error is a *retry.InvalidError naming the key
// (abbreviated); retry.WithIdempotencyKey applies the same rules.
func ValidateKey(key string) error {
	if err := keys.Validate(key); err != nil {
		return &retry.InvalidError{Name: "idempotency.ValidateKey", Value: keys.Abbreviate(key), Err: err}
	}
	return nil
}
