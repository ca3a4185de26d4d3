package dlq_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/policy"
)

func TestEncodeDecodeRoundTrips(t *testing.T) {
	l := sample("j")
	l.Job.Metadata = map[string]string{"tenant": "acme"}
	l.RetryAfter = 5
	b, err := dlq.Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(`{"v":2,"id":"`+l.ID+`"`)) {
		t.Fatalf("encoding starts %.40s; want the version first", b)
	}
	got, err := dlq.Decode(b)
	if err != nil || !reflect.DeepEqual(got, l) {
		t.Fatalf("Decode = %+v, %v; want %+v", got, err, l)
	}
}

// TestEveryStopReasonRoundTrips makes the letter of a retry loop that stopped
// for each reason of the one list, policy.Stops: each but the caller's
// cancellation is dead-lettered under the reason's label, which survives the
// encoding. A reason added to the list is covered without a change here.
func TestEveryStopReasonRoundTrips(t *testing.T) {
	for s := range policy.Stops() {
		t.Run(s.String()+" round-trips", func(t *testing.T) {
			e := exhausted(2, errors.New("x"))
			e.Stop = s
			l, ok := dlq.NewLetter(dlq.Job{ID: "j", Source: "s"}, e, t0)
			if s == policy.StopCanceled {
				if ok {
					t.Fatal("NewLetter made a letter of a call its caller's context ended")
				}
				return
			}
			if !ok || l.StopReason != s.String() {
				t.Fatalf("NewLetter = %q, %v; want %q, true", l.StopReason, ok, s.String())
			}
			b, err := dlq.Encode(l)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dlq.Decode(b)
			if err != nil || got.StopReason != s.String() || !reflect.DeepEqual(got, l) {
				t.Fatalf("Decode = %q, %v; want the letter back with %q", got.StopReason, err, s.String())
			}
			if !(dlq.Filter{StopReason: s.String()}).Match(got) {
				t.Fatalf("a filter by %q does not select the letter", s.String())
			}
		})
	}
}

// TestStoredStopReasonsStillDecode reads records written before the stop
// reasons were derived from policy.Stop, in both encodings: each label is
// still a policy.Stop's (or "failed"), so stored letters decode unchanged
// and filters by their labels keep selecting them.
func TestStoredStopReasonsStillDecode(t *testing.T) {
	labels := map[string]bool{"failed": true}
	for s := range policy.Stops() {
		labels[s.String()] = true
	}
	for _, stored := range []string{"max-attempts", "elapsed", "deadline", "budget", "permanent",
		"not-idempotent", "class-limit", "wait-too-long", "key-required", "failed"} {
		t.Run(stored+" is still read", func(t *testing.T) {
			if !labels[stored] {
				t.Fatalf("%q is no longer a stop reason's label", stored)
			}
			for _, rec := range []string{
				strings.Replace(v1, `"reason":"failed"`, `"reason":"`+stored+`"`, 1),
				strings.Replace(strings.Replace(v1, `"reason":"failed"`, `"stop_reason":"`+stored+`"`, 1), `"v":1`, `"v":2`, 1),
			} {
				l, err := dlq.Decode([]byte(rec))
				if err != nil || l.StopReason != stored || !(dlq.Filter{StopReason: stored}).Match(l) {
					t.Fatalf("Decode = %q, %v; want stop reason %q, selected by a filter", l.StopReason, err, stored)
				}
			}
		})
	}
}

func TestEncodeRefusesAnInvalidLetter(t *testing.T) {
	if _, err := dlq.Encode(dlq.Letter{}); err == nil {
		t.Fatal("Encode of the zero letter succeeded")
	}
}

func TestDecodeRefusesWhatIsNotALetter(t *testing.T) {
	good, _ := dlq.Encode(sample("j"))
	tests := []struct {
		name string
		rec  string
		want error
	}{
		{"nothing", ``, dlq.ErrCorrupt},
		{"not JSON", `garbage`, dlq.ErrCorrupt},
		{"JSON that is not an object", `[1,2]`, dlq.ErrCorrupt},
		{"null", `null`, dlq.ErrCorrupt},
		{"an object without a version", `{"id":"x"}`, dlq.ErrCorrupt},
		{"version 0", `{"v":0}`, dlq.ErrVersion},
		{"version 3", `{"v":3,"anything":"new"}`, dlq.ErrVersion},
		{"a fractional version", `{"v":1.5}`, dlq.ErrVersion},
		{"a truncated record", string(good[:len(good)/2]), dlq.ErrCorrupt},
		{"trailing data", string(good) + `{}`, dlq.ErrCorrupt},
		{"a field of the wrong type", strings.Replace(string(good), `"attempts":3`, `"attempts":"3"`, 1), dlq.ErrCorrupt},
		{"a negative count", strings.Replace(string(good), `"attempts":3`, `"attempts":-3`, 1), dlq.ErrCorrupt},
		{"an id of another job", strings.Replace(string(good), `"id":"j"`, `"id":"k"`, 1), dlq.ErrCorrupt},
		{"an unknown verdict", strings.Replace(string(good), `"verdict":"retry"`, `"verdict":"maybe"`, 1), dlq.ErrCorrupt},
		{"a bad time", strings.Replace(string(good), `"last_failure":"2026`, `"last_failure":"x026`, 1), dlq.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			if _, err := dlq.Decode([]byte(tt.rec)); !errors.Is(err, tt.want) {
				t.Fatalf("Decode = %v; want %v", err, tt.want)
			}
		})
	}
}

func TestDecodeIgnoresFieldsAddedWithinAVersion(t *testing.T) {
	good, _ := dlq.Encode(sample("j"))
	rec := strings.Replace(string(good), `{"v":2,`, `{"v":2,"added_later":{"x":[1]},`, 1)
	if _, err := dlq.Decode([]byte(rec)); err != nil {
		t.Fatal(err)
	}
}

// v1 is a letter exactly as version 1 of the encoding wrote it (the
// package's Encode example before version 2), with its stop reason under
// "reason".
const v1 = `{"v":1,"id":"baabc1e43114f0a6","job":{"id":"7","source":"llm-jobs","payload":null},"reason":"failed","attempts":1,"waited_ns":0,"elapsed_ns":0,"retry_after_ns":0,"first_failure":"2026-11-29T10:00:00Z","last_failure":"2026-11-29T10:00:00Z","last":{"attempt":1,"type":"*errors.errorString","error":"boom","verdict":"retry","class":"unclassified","retry_after_ns":0,"limit":0,"timeout":false,"delay_ns":0},"failures":[{"attempt":1,"type":"*errors.errorString","error":"boom","verdict":"retry","class":"unclassified","retry_after_ns":0,"limit":0,"timeout":false,"delay_ns":0}]}`

func TestAVersion1LetterIsStillRead(t *testing.T) {
	l, err := dlq.Decode([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := dlq.NewLetter(dlq.Job{ID: "7", Source: "llm-jobs"}, errors.New("boom"), t0)
	if !reflect.DeepEqual(l, want) || l.StopReason != "failed" {
		t.Fatalf("Decode(v1) = %+v; want %+v, stop reason failed", l, want)
	}
	again, _ := dlq.Encode(l)
	if !bytes.Contains(again, []byte(`{"v":2,`)) || !bytes.Contains(again, []byte(`"stop_reason":"failed"`)) || bytes.Contains(again, []byte(`"reason"`)) {
		t.Fatalf("re-encoded as %s; want version 2 with stop_reason", again)
	}
	if _, err := dlq.Decode([]byte(strings.Replace(v1, `"reason":"failed"`, `"stop_reason":"failed"`, 1))); !errors.Is(err, dlq.ErrCorrupt) {
		t.Fatalf("a version 1 record naming stop_reason = %v; want ErrCorrupt (version 1 has no such field)", err)
	}
}

func TestDecodeOfNothingIsInvalid(t *testing.T) {
	for _, b := range [][]byte{nil, {}} {
		if _, err := dlq.Decode(b); !errors.Is(err, retry.ErrInvalid) || !errors.Is(err, dlq.ErrCorrupt) {
			t.Fatalf("Decode(%q) = %v; want retry.ErrInvalid and ErrCorrupt", b, err)
		}
	}
}

// FuzzDecode checks that Decode never panics, and that what it accepts
// survives a round trip unchanged.
func FuzzDecode(f *testing.F) {
	good, _ := dlq.Encode(sample("j"))
	f.Add(good)
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(v1))
	f.Add([]byte(`{"v":1,"id":"x","job":{"id":"","source":""},"failures":[{"verdict":"stop"}]}`))
	f.Add([]byte(`[]`))
	f.Add([]byte{0xff, '{'})
	f.Fuzz(func(t *testing.T, rec []byte) {
		l, err := dlq.Decode(rec)
		if err != nil {
			if !errors.Is(err, dlq.ErrCorrupt) && !errors.Is(err, dlq.ErrVersion) {
				t.Fatalf("Decode error %v is neither ErrCorrupt nor ErrVersion", err)
			}
			return
		}
		again, err := dlq.Encode(l)
		if err != nil {
			t.Fatalf("a decoded letter does not encode: %v", err)
		}
		l2, err := dlq.Decode(again)
		if err != nil || !reflect.DeepEqual(l, l2) {
			t.Fatalf("round trip changed the letter:\n%+v\n%+v (%v)", l, l2, err)
		}
	})
}
