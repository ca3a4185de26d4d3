package dlq_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/retrykit/retry/dlq"
)

func TestEncodeDecodeRoundTrips(t *testing.T) {
	l := sample("j")
	l.Job.Metadata = map[string]string{"tenant": "acme"}
	l.RetryAfter = 5
	b, err := dlq.Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(`{"v":1,"id":"`+l.ID+`"`)) {
		t.Fatalf("encoding starts %.40s; want the version first", b)
	}
	got, err := dlq.Decode(b)
	if err != nil || !reflect.DeepEqual(got, l) {
		t.Fatalf("Decode = %+v, %v; want %+v", got, err, l)
	}
}

func TestLetterIsJSON(t *testing.T) {
	in := []dlq.Letter{sample("a"), sample("b")}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []dlq.Letter
	if err := json.Unmarshal(b, &out); err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("json round trip = %+v, %v", out, err)
	}
	if err := json.Unmarshal([]byte(`[{"v":2}]`), &out); !errors.Is(err, dlq.ErrVersion) {
		t.Fatalf("Unmarshal of version 2 = %v; want ErrVersion", err)
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
		{"version 2", `{"v":2,"anything":"new"}`, dlq.ErrVersion},
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
	rec := strings.Replace(string(good), `{"v":1,`, `{"v":1,"added_later":{"x":[1]},`, 1)
	if _, err := dlq.Decode([]byte(rec)); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecode checks that Decode never panics, and that what it accepts
// survives a round trip unchanged.
func FuzzDecode(f *testing.F) {
	good, _ := dlq.Encode(sample("j"))
	f.Add(good)
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":2}`))
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
