package idempotency

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/keys"
)

// The parsers of outside input: stored records (a store's bytes may be
// corrupt or written by another version), stored responses, the
// Idempotency-Key header, derived keys and error bodies.

func FuzzRecordUnmarshalBinary(f *testing.F) {
	for _, r := range []Record{
		{Status: InProgress, Token: "t"},
		{Status: Succeeded, Token: strings.Repeat("x", maxTokenLength), Fingerprint: NewFingerprint([]byte("a")), Value: []byte("value")},
		{Status: NotRetained, Token: "tok"},
	} {
		b, err := r.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 1, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Record
		if err := r.UnmarshalBinary(b); err != nil {
			return
		}
		again, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded record does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed the record:\n%x\n%x", b, again)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add(encodeResponse(201, http.Header{"Content-Type": {"application/json"}, "X-Many": {"a", "b"}}, []byte(`{"order":1}`), nil))
	f.Add(encodeResponse(204, nil, nil, nil))
	f.Add([]byte{responseVersion, 0xc8, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResponse(b)
		if err != nil {
			return
		}
		again, err := decodeResponse(encodeResponse(r.status, r.header, r.body, nil))
		if err != nil {
			t.Fatalf("a decoded response does not round-trip: %v", err)
		}
		if again.status != r.status || !bytes.Equal(again.body, r.body) {
			t.Fatalf("round trip changed the response: %d %q / %d %q", r.status, r.body, again.status, again.body)
		}
	})
}

// keyHeader is a header whose Idempotency-Key fields are values.
func keyHeader(values ...string) http.Header { return http.Header{HeaderKey: values} }

func FuzzKeyOf(f *testing.F) {
	for _, s := range []string{"abc", `"abc"`, `"a\"b\\c"`, `"abc";x`, `"`, "", strings.Repeat("k", 256), "a\x00b", "ключ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		key, err := KeyOf(keyHeader(header))
		if err != nil || key == "" {
			return
		}
		if ValidateKey(key) != nil || utf8.RuneCountInString(key) > keys.MaxLength {
			t.Fatalf("accepted key %q breaks the key rules", key)
		}
		quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"`
		if again, err := KeyOf(keyHeader(quoted)); isPrintableASCII(key) && (err != nil || again != key) {
			t.Fatalf("the quoted form of %q parses as %q, %v", key, again, err)
		}
	})
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func FuzzDeriveKey(f *testing.F) {
	f.Add("run-1", "step-2")
	f.Add("", "x")
	f.Add("a\x00", "\xff")
	f.Fuzz(func(t *testing.T, a, b string) {
		key, err := DeriveKey(a, b)
		if err != nil {
			if a != "" && b != "" {
				t.Fatalf("DeriveKey(%q, %q): %v", a, b, err)
			}
			return
		}
		again, _ := DeriveKey(a, b)
		if key != again || len(key) != 64 || ValidateKey(key) != nil {
			t.Fatalf("DeriveKey(%q, %q) = %q, then %q", a, b, key, again)
		}
		if swapped, _ := DeriveKey(b, a); a != b && swapped == key {
			t.Fatalf("DeriveKey ignores the order of %q and %q", a, b)
		}
	})
}

func FuzzProblemKind(f *testing.F) {
	for _, s := range []string{`{"kind":"idempotency-in-progress"}`, `{"error":{"code":"x"}}`, `{"error":"x"}`, `[]`, `{"type":"a/b#c:d"}`, `{"code":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = problemKind(b)
	})
}

func TestKeyOf(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		want    string
		wantErr string
	}{
		{"a bare token is the key", []string{"order-1"}, "order-1", ""},
		{"a structured-field string is unquoted", []string{`"order \"1\" \\ x"`}, `order "1" \ x`, ""},
		{"no field is no key, and no error", nil, "", ""},
		{"an empty field is no key, and no error", []string{" "}, "", ""},
		{"two fields are refused", []string{"a", "b"}, "", "more than once"},
		{"a non-ASCII byte in quotes is refused", []string{"\"ключ\""}, "", "printable ASCII"},
		{"a key of 255 characters is accepted", []string{strings.Repeat("é", 255)}, strings.Repeat("é", 255), ""},
		{"a key of 256 characters is refused", []string{strings.Repeat("é", 256)}, "", "256 characters"},
		{"an empty quoted string is refused", []string{`""`}, "", "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KeyOf(keyHeader(tt.values...))
			if tt.wantErr != "" {
				if !errors.Is(err, retry.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("KeyOf(%q) = %q, %v; want an invalid key containing %q", tt.values, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("KeyOf(%q) = %q, %v; want %q", tt.values, got, err, tt.want)
			}
		})
	}
}

func TestStoredResponsesLeaveOutHopByHopAndSessionFields(t *testing.T) {
	c, err := newMiddlewareConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"text/plain"}, "Connection": {"close"}, "Content-Length": {"2"}, "Date": {"x"}, headerReplay: {"true"},
		"Set-Cookie": {"session=secret"}, "Authentication-Info": {`nextnonce="x"`}}
	r, err := decodeResponse(encodeResponse(200, h, []byte("ok"), c.unstored))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.header) != 1 || r.header.Get("Content-Type") != "text/plain" || string(r.body) != "ok" || r.status != 200 {
		t.Fatalf("decoded %d %v %q", r.status, r.header, r.body)
	}
}

func TestRecordRejectsWhatNoStoreMayKeep(t *testing.T) {
	for _, r := range []Record{
		{Status: 0, Token: "t"},
		{Status: NotRetained + 1, Token: "t"},
		{Status: Succeeded},
		{Status: Succeeded, Token: strings.Repeat("t", maxTokenLength+1)},
	} {
		if _, err := r.MarshalBinary(); err == nil {
			t.Errorf("MarshalBinary(%v, %d-byte token) = nil error", r.Status, len(r.Token))
		}
	}
	if got := Status(9).String(); got != "status(9)" {
		t.Errorf("Status(9) = %q", got)
	}
}
