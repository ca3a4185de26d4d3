package idempotency

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/retrykit/retry/internal/argerr"
)

// Status is the state of a key in a Store.
type Status uint8

const (
	// InProgress: an execution claimed the key and holds it until it
	// finishes or its lease expires.
	InProgress Status = 1 + iota
	// Succeeded: the execution finished; Value holds its result.
	Succeeded
	// Failed: the execution failed and the failure is kept for the retention
	// window (KeepFailures); Value describes it.
	Failed
	// NotRetained: the execution succeeded, but its result exceeded the
	// retention cap and was not stored; Value is empty.
	NotRetained
)

// String returns "in progress", "succeeded", "failed" or "not retained".
func (s Status) String() string {
	switch s {
	case InProgress:
		return "in progress"
	case Succeeded:
		return "succeeded"
	case Failed:
		return "failed"
	case NotRetained:
		return "not retained"
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// Final reports whether s is the status of a finished execution.
func (s Status) Final() bool { return s >= Succeeded && s <= NotRetained }

// Record is what a Store keeps under a key: a claim (InProgress) while an
// execution runs, then its outcome.
type Record struct {
	Status Status
	// Token identifies the execution that claimed the key and produced the
	// record: 1 to 255 bytes, unique per claim. It fences the claim (only its
	// holder may extend, complete or release it) and is the execution id that
	// replays report (Result.ReplayOf).
	Token       string
	Fingerprint Fingerprint
	// Value is the result (Succeeded), the kept failure (Failed), or empty.
	Value []byte
}

// maxTokenLength is the longest Token a Record can hold, in bytes: its
// length is one byte of the encoding.
const maxTokenLength = 255

// recordVersion is the first byte of every encoded Record.
const recordVersion = 1

// headerSize is the encoded size of a Record without its token and value.
const headerSize = 3 + len(Fingerprint{})

var errCorrupt = errors.New("corrupt idempotency record")

// Validate reports a record no store may keep — an unknown status, or a
// token that is empty or longer than 255 bytes — as a
// *retry.InvalidError.
func (r Record) Validate() error {
	const name = "idempotency.Record.Validate"
	switch {
	case r.Status < InProgress || r.Status > NotRetained:
		return argerr.New(name, r.Status, "unknown record status")
	case r.Token == "":
		return argerr.New(name, r.Status, "the record's token must not be empty")
	case len(r.Token) > maxTokenLength:
		return argerr.New(name, r.Status, fmt.Sprintf("the record's token has %d bytes, the limit is %d", len(r.Token), maxTokenLength))
	}
	return nil
}

// MarshalBinary encodes r for a store that keeps bytes. The layout is stable
// (records outlive deployments): byte 0 is the format version (1), byte 1 the
// Status, byte 2 the token's length n, bytes 3 to 3+n the Token, then the 32
// bytes of the Fingerprint, then the Value to the end. A store may inspect a
// record on the server by this layout — the Redis store's scripts recognise a
// claim by its first 3+n bytes — and only a new version byte may change it.
func (r Record) MarshalBinary() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, headerSize+len(r.Token)+len(r.Value))
	b = append(b, recordVersion, byte(r.Status), byte(len(r.Token)))
	b = append(b, r.Token...)
	b = append(b, r.Fingerprint[:]...)
	return append(b, r.Value...), nil
}

// UnmarshalBinary decodes a record encoded by MarshalBinary. It rejects
// anything else with an error, without panicking, whatever the bytes: a nil
// r or an empty b is a *retry.InvalidError, other bytes a corrupt record.
// Value is a copy: b may be reused.
func (r *Record) UnmarshalBinary(b []byte) error {
	switch {
	case r == nil:
		return argerr.New("idempotency.Record.UnmarshalBinary", nil, "the record must not be nil")
	case len(b) == 0:
		return argerr.New("idempotency.Record.UnmarshalBinary", "0 bytes", "there is no record to decode")
	}
	if len(b) < headerSize || b[0] != recordVersion {
		return fmt.Errorf("%w: %d bytes, version %v", errCorrupt, len(b), versionOf(b))
	}
	n := int(b[2])
	if len(b) < headerSize+n {
		return fmt.Errorf("%w: token of %d bytes in a record of %d", errCorrupt, n, len(b))
	}
	rec := Record{Status: Status(b[1]), Token: string(b[3 : 3+n])}
	copy(rec.Fingerprint[:], b[3+n:])
	if rest := b[headerSize+n:]; len(rest) > 0 {
		rec.Value = append([]byte(nil), rest...)
	}
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errCorrupt, err)
	}
	*r = rec
	return nil
}

func versionOf(b []byte) any {
	if len(b) == 0 {
		return "none"
	}
	return b[0]
}
