package classify_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"delta-seconds", "120", 2 * time.Minute, true},
		{"zero seconds", "0", 0, true},
		{"surrounding spaces", "  5 ", 5 * time.Second, true},
		{"leading zeros", "007", 7 * time.Second, true},
		{"huge seconds saturate", "99999999999999999999999999", math.MaxInt64, true},
		{"the largest exact number of seconds", "9223372036", 9223372036 * time.Second, true},
		{"one more second saturates", "9223372037", math.MaxInt64, true},
		{"IMF-fixdate", "Sun, 29 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"RFC 850 date", "Sunday, 29-Nov-26 12:01:00 GMT", time.Minute, true},
		{"asctime date", "Sun Nov 29 12:00:10 2026", 10 * time.Second, true},
		{"a date in the past means now", "Sun, 29 Nov 2026 11:00:00 GMT", 0, true},
		{"empty", "", 0, false},
		{"negative", "-5", 0, false},
		{"explicit plus sign", "+5", 0, false},
		{"fraction", "1.5", 0, false},
		{"garbage", "soon", 0, false},
		{"a date with a bad zone", "Sun, 29 Nov 2026 12:00:30 PST", 0, false},
		{"hex", "0x10", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := classify.ParseRetryAfter(tt.value, now)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "1e9", "Sun, 29 Nov 2026 12:00:30 GMT", "Sunday, 29-Nov-26 12:01:00 GMT",
		"Sun Nov 29 12:00:10 2026", strings.Repeat("9", 40), " 3 ", "\t", "Mon, 01 Jan 0001 00:00:00 GMT"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := classify.ParseRetryAfter(s, now)
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v: negative", s, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, false: a failure must return 0", s, d)
		}
		if ok && d != math.MaxInt64 && isSeconds(strings.TrimSpace(s)) && d%time.Second != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v: delta-seconds must be whole seconds", s, d)
		}
	})
}

func isSeconds(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
