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
		{"an RFC 850 date in another zone", "Sunday, 29-Nov-26 12:01:00 PST", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := classify.ParseRetryAfter(tt.value, now)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// RFC 9110, section 5.6.7: "Recipients of a timestamp value in rfc850-date
// format, which uses a two-digit year, MUST interpret a timestamp that appears
// to be more than 50 years in the future as representing the most recent year
// in the past that had the same last two digits." http.ParseTime fixes the
// window at 1969–2068 instead, whatever the date today.
func TestParseRetryAfterReadsTwoDigitYearsRelativeToNow(t *testing.T) {
	at := func(year int, month time.Month, day int) time.Time {
		return time.Date(year, month, day, 12, 0, 0, 0, time.UTC)
	}
	tests := []struct {
		name   string
		now    time.Time
		value  string
		want   time.Time // the date the value stands for
		wantOK bool
	}{
		{"70 is 2070 in 2026, 43 years ahead, not 1970", at(2026, 11, 29), "Tuesday, 01-Jan-70 12:00:00 GMT", at(2070, 1, 1), true},
		{"76 is 2076 up to 50 years ahead to the day", at(2026, 11, 29), "Sunday, 29-Nov-76 12:00:00 GMT", at(2076, 11, 29), true},
		{"76 is 1976 a day later: more than 50 years ahead", at(2026, 11, 29), "Monday, 30-Nov-76 12:00:00 GMT", at(1976, 11, 30), true},
		{"80 is 1980 in 2026", at(2026, 11, 29), "Tuesday, 01-Jan-80 12:00:00 GMT", at(1980, 1, 1), true},
		{"26 is this year", at(2026, 11, 29), "Sunday, 29-Nov-26 12:01:00 GMT", at(2026, 11, 29).Add(time.Minute), true},
		{"00 is 2100 in 2099, not 2000", at(2099, 6, 1), "Friday, 01-Jan-00 12:00:00 GMT", at(2100, 1, 1), true},
		{"10 is 2110 in 2070, not 2010", at(2070, 6, 1), "Wednesday, 01-Jan-10 12:00:00 GMT", at(2110, 1, 1), true},
		{"a 29 February the chosen year lacks is not a date", at(2080, 1, 1), "Monday, 29-Feb-00 12:00:00 GMT", time.Time{}, false},
		{"a 29 February the chosen year has is a date", at(2026, 1, 1), "Tuesday, 29-Feb-00 12:00:00 GMT", at(2000, 2, 29), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := classify.ParseRetryAfter(tt.value, tt.now)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, max(tt.want.Sub(tt.now), 0), got, "wait until %v", tt.want)
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "1e9", "Sun, 29 Nov 2026 12:00:30 GMT", "Sunday, 29-Nov-26 12:01:00 GMT",
		"Sun Nov 29 12:00:10 2026", strings.Repeat("9", 40), " 3 ", "\t", "Mon, 01 Jan 0001 00:00:00 GMT",
		"Tuesday, 01-Jan-70 12:00:00 GMT", "Monday, 30-Nov-76 12:00:00 GMT", "Monday, 29-Feb-00 12:00:00 GMT"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fiftyYears := now.AddDate(50, 0, 0).Sub(now)
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
		if _, err := time.Parse("Monday, 02-Jan-06 15:04:05 GMT", strings.TrimSpace(s)); err == nil && d > fiftyYears {
			t.Fatalf("ParseRetryAfter(%q) = %v: an RFC 850 date is never more than 50 years ahead", s, d)
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
