package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/retrykit/retry/dlq"
)

const timeFormat = "2006-01-02 15:04:05Z"

// encoded is a letter as --json prints it: in the dlq encoding (dlq.Encode),
// the form sqlite3's and Redis's JSON functions read too.
type encoded dlq.Letter

func (l encoded) MarshalJSON() ([]byte, error) { return dlq.Encode(dlq.Letter(l)) }

// encodeAll makes letters print in the dlq encoding, [] for none.
func encodeAll(letters []dlq.Letter) []encoded {
	out := make([]encoded, len(letters))
	for i, l := range letters {
		out[i] = encoded(l)
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

func stamp(t time.Time) string { return t.UTC().Format(timeFormat) }

// clean makes text a producer controls (an error, a job id, a source,
// metadata) safe to print on a terminal: each control character — C0, DEL
// and C1, escape sequences' first bytes — is shown as \xNN instead of being
// sent, so that no error text can retitle, clear or recolour the operator's
// terminal. Newlines stay where keep says so.
func clean(s string, keepNewlines bool) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' && keepNewlines, !unicode.IsControl(r):
			b.WriteRune(r)
		case r == '\t':
			b.WriteByte(' ')
		default:
			fmt.Fprintf(&b, "\\x%02x", r)
		}
	}
	return b.String()
}

// c is clean for a table cell, on one line.
func c(s string) string { return clean(s, false) }

// cut shortens s to n characters for a table cell, on one line.
func cut(s string, n int) string {
	s = c(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func (s summary) print(w io.Writer) error {
	tw := table(w)
	fmt.Fprintf(tw, "letters\t%d\n", s.Count)
	fmt.Fprintf(tw, "growth\t%d in the last %s\n", s.Growth, s.Window)
	if s.Count > 0 {
		fmt.Fprintf(tw, "oldest\t%s\n", stamp(*s.Oldest))
		fmt.Fprintf(tw, "newest\t%s\n", stamp(*s.Newest))
	}
	fmt.Fprintf(tw, "by stop reason\t%s\n", c(counts(s.ByStop)))
	fmt.Fprintf(tw, "by source\t%s\n", c(counts(s.BySource)))
	fmt.Fprintf(tw, "causes\t%d\n", len(s.Groups))
	tw.Flush()
	if len(s.Groups) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = table(w)
	fmt.Fprintln(tw, "GROUP\tCOUNT\tCLASS\tFIRST SEEN\tLAST SEEN\tEXAMPLE\tSIGNATURE")
	for _, g := range s.Groups {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.Count, c(g.Class), stamp(g.FirstSeen), stamp(g.LastSeen), g.ExampleID, cut(g.Signature, 90))
	}
	return tw.Flush()
}

// counts prints "max-attempts 4, budget 1", largest first.
func counts(m map[string]int) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconv.Itoa(m[k])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func printLetters(w io.Writer, letters []dlq.Letter) error {
	tw := table(w)
	fmt.Fprintln(tw, "ID\tSOURCE\tJOB\tSTOP REASON\tATTEMPTS\tLAST FAILURE\tGROUP\tLAST ERROR")
	for _, l := range letters {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", l.ID, cut(l.Job.Source, 30), cut(l.Job.ID, 30), c(l.StopReason),
			l.Attempts, stamp(l.LastFailure), l.Group(), cut(l.Last.Error, 60))
	}
	return tw.Flush()
}

func printLetter(w io.Writer, l dlq.Letter) error {
	tw := table(w)
	fmt.Fprintf(tw, "letter\t%s\n", l.ID)
	fmt.Fprintf(tw, "job\t%s from %s\n", c(l.Job.ID), c(l.Job.Source))
	fmt.Fprintf(tw, "stop reason\t%s\n", c(l.StopReason))
	fmt.Fprintf(tw, "attempts\t%d (waited %v, elapsed %v)\n", l.Attempts, l.Waited, l.Elapsed)
	if l.RetryAfter > 0 {
		fmt.Fprintf(tw, "retry after\t%v\n", l.RetryAfter)
	}
	fmt.Fprintf(tw, "failures\t%s to %s\n", stamp(l.FirstFailure), stamp(l.LastFailure))
	fmt.Fprintf(tw, "group\t%s %s\n", l.Group(), c(l.Signature()))
	for _, k := range slices.Sorted(maps.Keys(l.Job.Metadata)) {
		fmt.Fprintf(tw, "metadata\t%s=%s\n", c(k), c(l.Job.Metadata[k]))
	}
	fmt.Fprintf(tw, "last error\t%s: %s\n", c(l.Last.Type), c(l.Last.Error))
	fmt.Fprintf(tw, "classified\t%s\n", c(l.Last.Decision.String()))
	tw.Flush()
	fmt.Fprintln(w)
	tw = table(w)
	fmt.Fprintln(tw, "ATTEMPT\tAT\tCLASS\tVERDICT\tWAIT AFTER\tTYPE\tERROR")
	for _, f := range l.Failures {
		at := "-"
		if !f.At.IsZero() {
			at = stamp(f.At)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%v\t%v\t%s\t%s\n", f.Attempt, at, c(f.Decision.Reason), f.Decision.Verdict, f.Delay, c(f.Type), cut(f.Error, 80))
	}
	tw.Flush()
	fmt.Fprintf(w, "\npayload (%d bytes):\n%s\n", len(l.Job.Payload), payload(l.Job.Payload))
	return nil
}

// payload shows text as text and anything else (control characters
// included, C1 as well as C0) as a hex dump.
func payload(b []byte) string {
	if utf8.Valid(b) && !bytes.ContainsFunc(b, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
		return string(b)
	}
	return strings.TrimRight(hex.Dump(b), "\n")
}

func printReplay(w io.Writer, rep dlq.ReplayReport) {
	for _, id := range rep.Replayed {
		fmt.Fprintf(w, "replayed %s\n", id)
	}
	for _, id := range rep.Skipped {
		fmt.Fprintf(w, "skipped  %s (replayed or removed by someone else)\n", id)
	}
	for _, id := range rep.Lapsed {
		fmt.Fprintf(w, "lapsed   %s (enqueued, but its claim lapsed and another replay took it: it may be enqueued twice)\n", id)
	}
	for _, id := range slices.Sorted(maps.Keys(rep.Failed)) {
		fmt.Fprintf(w, "failed   %s (kept): %s\n", id, c(rep.Failed[id].Error()))
	}
	fmt.Fprintf(w, "replayed %d, skipped %d, lapsed %d, failed %d\n", len(rep.Replayed), len(rep.Skipped), len(rep.Lapsed), len(rep.Failed))
}

// execEnqueuer enqueues a job by running a shell command with its payload
// on standard input; exit status 0 means enqueued.
type execEnqueuer struct {
	command string
	stderr  io.Writer
}

func (x execEnqueuer) Enqueue(ctx context.Context, j dlq.Job) error {
	meta, _ := json.Marshal(j.Metadata)
	cmd := exec.CommandContext(ctx, "sh", "-c", x.command)
	cmd.Stdin = bytes.NewReader(j.Payload)
	cmd.Stdout, cmd.Stderr = x.stderr, x.stderr // stdout is for dlq's own output (--json)
	cmd.Env = append(os.Environ(), "DLQ_LETTER_ID="+dlq.LetterID(j.Source, j.ID), "DLQ_JOB_ID="+j.ID,
		"DLQ_SOURCE="+j.Source, "DLQ_METADATA="+string(meta))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", x.command, err)
	}
	return nil
}
