package dlq

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
)

// maxSignatureMessage is how much of a normalised message a signature keeps:
// enough to tell causes apart, short enough that a payload echoed in an
// error does not make every letter its own group.
const maxSignatureMessage = 200

// Patterns of normalize, compiled once and never changed.
var (
	timestamps = []*regexp.Regexp{
		// RFC 3339 and time.Time's String: 2026-11-29T10:06:00.5Z, 2026-11-29 10:06:00 +0000 UTC
		regexp.MustCompile(`\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|\s?[+-]\d{2}:?\d{2}(?:\s[A-Z]{2,5})?|\s[A-Z]{2,5})?)?`),
		// HTTP dates: Sun, 06 Nov 1994 08:49:37 GMT
		regexp.MustCompile(`(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT`),
		// clock times: 08:49:37.123
		regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`),
	}
	uuids     = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	emails    = regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`)
	addrLike  = regexp.MustCompile(`\[?[0-9A-Fa-f]*[:.][0-9A-Fa-f:.]*\]?(?::\d{1,5})?`)
	digitWord = regexp.MustCompile(`\w*\d\w*`)
	hexID     = regexp.MustCompile(`^(?:0[xX][0-9a-fA-F]+|[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*)$`)
	digits    = regexp.MustCompile(`\d+`)
	spaces    = regexp.MustCompile(`\s+`)
)

// normalize rewrites msg so that two occurrences of one cause read the same,
// by the rules Signature documents: "timeout after 3012ms on 10.0.0.7" and
// "timeout after 998ms on 10.0.0.9" both read "timeout after <n>ms on
// <addr>".
func normalize(msg string) string {
	for _, re := range timestamps {
		msg = re.ReplaceAllString(msg, "<time>")
	}
	msg = uuids.ReplaceAllString(msg, "<uuid>")
	msg = emails.ReplaceAllString(msg, "<email>")
	msg = replaceAddrs(msg)
	msg = digitWord.ReplaceAllStringFunc(msg, normalizeWord)
	return strings.TrimSpace(spaces.ReplaceAllString(msg, " "))
}

// replaceAddrs replaces what parses as an IP address (with a port) and
// stands alone — not glued to a word, as "::" is in "pkg::Type".
func replaceAddrs(msg string) string {
	var b strings.Builder
	last := 0
	for _, m := range addrLike.FindAllStringIndex(msg, -1) {
		start, end := m[0], m[1]
		for end > start && (msg[end-1] == ':' || msg[end-1] == '.') {
			end-- // "dial 10.0.0.7:443: refused": the colon is the message's
		}
		if !isAddr(msg[start:end]) || wordAt(msg, start-1) || wordAt(msg, end) {
			continue
		}
		b.WriteString(msg[last:start])
		b.WriteString("<addr>")
		last = end
	}
	if last == 0 {
		return msg
	}
	b.WriteString(msg[last:])
	return b.String()
}

func isAddr(s string) bool {
	if _, err := netip.ParseAddrPort(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil
}

func wordAt(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func normalizeWord(w string) string {
	switch {
	case hexID.MatchString(w) && (len(w) >= 8 || strings.HasPrefix(w, "0x") || strings.HasPrefix(w, "0X")):
		return "<hex>"
	case len(w) >= 16 && countDigits(w) >= 4:
		return "<id>"
	}
	return digits.ReplaceAllString(w, "<n>")
}

func countDigits(s string) int {
	n := 0
	for i := range len(s) {
		if '0' <= s[i] && s[i] <= '9' {
			n++
		}
	}
	return n
}

// Signature returns the root-cause signature of a letter's last error: its
// innermost type, its class and its message normalised (cut at 200 bytes),
// e.g. "*errors.errorString [unclassified] timeout after <n>ms on <addr>".
//
// Normalising removes what varies between occurrences of one cause, in this
// order: timestamps (RFC 3339, time.Time's String, HTTP dates, clock times)
// become <time>; UUIDs <uuid>; e-mail addresses <email>; IPv4 and IPv6
// addresses, with their port, <addr>; then, in each word that holds a
// digit, a hexadecimal id (0x…, or 8 or more hex digits with a letter)
// becomes <hex>, an opaque token (16 or more characters, 4 or more of them
// digits) <id>, and any other run of digits <n>; runs of spaces become one.
func (l Letter) Signature() string {
	msg := normalize(l.Last.Error)
	if len(msg) > maxSignatureMessage {
		msg = clipAt(msg, maxSignatureMessage)
	}
	return l.Last.Type + " [" + l.Last.Decision.Reason + "] " + msg
}

func clipAt(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// Group returns the id of the letter's root-cause group: 12 hexadecimal
// digits of a SHA-256 of its Signature.
func (l Letter) Group() string {
	sum := sha256.Sum256([]byte(l.Signature()))
	return hex.EncodeToString(sum[:6])
}

// Group is one root cause: the letters whose last errors have the same
// signature.
type Group struct {
	ID        string    // Letter.Group() of its letters
	Signature string    // Letter.Signature() of its letters
	Class     string    // the class of their last error (Last.Decision.Reason), e.g. "http 503"; not why the loop stopped (Letter.StopReason)
	Count     int       // how many letters
	FirstSeen time.Time // the earliest LastFailure among them
	LastSeen  time.Time // the latest LastFailure among them
	Example   Letter    // the most recent of them
	// Histogram counts the letters by LastFailure in 24 equal slices of
	// the Summary's [Oldest, Newest], the last one closed (Summarize sets
	// it; GroupLetters leaves it nil).
	Histogram []int
}

// GroupLetters groups letters by root cause, largest group first (then
// the most recently seen), so that 5,000 dead jobs read as their few causes.
func GroupLetters(letters []Letter) []Group {
	byID := make(map[string]*Group)
	var order []*Group
	for _, l := range letters {
		id := l.Group()
		g, ok := byID[id]
		if !ok {
			g = &Group{ID: id, Signature: l.Signature(), Class: l.Last.Decision.Reason,
				FirstSeen: l.LastFailure, LastSeen: l.LastFailure, Example: l}
			byID[id] = g
			order = append(order, g)
		}
		g.add(l)
	}
	out := make([]Group, len(order))
	for i, g := range order {
		out[i] = *g
	}
	slices.SortStableFunc(out, func(a, b Group) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return b.LastSeen.Compare(a.LastSeen)
	})
	return out
}

func (g *Group) add(l Letter) {
	g.Count++
	if l.LastFailure.Before(g.FirstSeen) {
		g.FirstSeen = l.LastFailure
	}
	if !l.LastFailure.Before(g.LastSeen) {
		g.LastSeen, g.Example = l.LastFailure, l
	}
}
