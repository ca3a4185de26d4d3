package classify

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// ParseRetryAfter reads a Retry-After header value (RFC 9110, section 10.2.3):
// either delta-seconds or an HTTP-date, which is converted to a wait relative
// to now. It accepts all three HTTP-date forms (IMF-fixdate, RFC 850 and
// ANSI C asctime).
//
// The result is never negative: a date in the past means no wait (0, true).
// A number of seconds too large for a time.Duration saturates at the largest
// one. Anything else — empty, negative, fractional, garbage — returns
// (0, false).
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	if d, ok := parseDelta(value); ok {
		return d, true
	}
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, false
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// parseMillis reads a whole number of milliseconds (surrounding spaces
// allowed), saturating.
func parseMillis(value string) (time.Duration, bool) {
	v, ok := digits(value)
	if !ok {
		return 0, false
	}
	return parseUnits(v, time.Millisecond), true
}

// parseDelta reads delta-seconds (surrounding spaces allowed).
func parseDelta(value string) (time.Duration, bool) {
	v, ok := digits(value)
	if !ok {
		return 0, false
	}
	return parseUnits(v, time.Second), true
}

// digits returns value without surrounding spaces, if it is all digits.
func digits(value string) (string, bool) {
	v := strings.TrimSpace(value)
	if v == "" {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return "", false
		}
	}
	return v, true
}

// parseUnits converts a string of digits, a count of unit, to a duration,
// saturating.
func parseUnits(s string, unit time.Duration) time.Duration {
	limit := math.MaxInt64 / int64(unit)
	var n int64
	for i := 0; i < len(s); i++ {
		n = n*10 + int64(s[i]-'0')
		if n > limit {
			return math.MaxInt64
		}
	}
	return time.Duration(n) * unit
}
