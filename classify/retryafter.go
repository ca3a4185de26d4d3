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
// ANSI C asctime). An RFC 850 date's two-digit year is read as RFC 9110,
// section 5.6.7 says, relative to now: as the latest year with those digits
// that is at most 50 years after now (http.ParseTime instead fixes the window
// at 1969–2068).
//
// The result is never negative: a date in the past means no wait (0, true).
// A number of seconds too large for a time.Duration saturates at the largest
// one. Anything else — empty, negative, fractional, garbage — returns
// (0, false).
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	if d, ok := parseDelta(value); ok {
		return d, true
	}
	t, ok := parseHTTPDate(strings.TrimSpace(value), now)
	if !ok {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// The HTTP-date forms (RFC 9110, section 5.6.7). Each is in GMT, written as
// such: a date in another zone is not an HTTP-date.
const (
	imfFixdate = http.TimeFormat                  // Sun, 06 Nov 1994 08:49:37 GMT
	rfc850Date = "Monday, 02-Jan-06 15:04:05 GMT" // Sunday, 06-Nov-94 08:49:37 GMT
	asctime    = time.ANSIC                       // Sun Nov  6 08:49:37 1994
)

func parseHTTPDate(v string, now time.Time) (time.Time, bool) {
	if t, err := time.Parse(imfFixdate, v); err == nil {
		return t, true
	}
	if t, err := time.Parse(rfc850Date, v); err == nil {
		return inCentury(t, now)
	}
	t, err := time.Parse(asctime, v)
	return t, err == nil
}

// inCentury moves t, read from a two-digit year, to the latest year with the
// same last two digits that is at most 50 years after now: "a timestamp that
// appears to be more than 50 years in the future" is "the most recent year in
// the past that had the same last two digits" (RFC 9110, section 5.6.7). A
// 29 February that the chosen year lacks is not a date.
func inCentury(t, now time.Time) (time.Time, bool) {
	limit := now.AddDate(50, 0, 0)
	year := limit.Year() - limit.Year()%100 + t.Year()%100
	c := time.Date(year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
	if c.After(limit) {
		c = time.Date(year-100, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
	}
	return c, c.Day() == t.Day()
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
