package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retry/dlq"
)

// histogramBuckets is the length of dlq.Group.Histogram.
const histogramBuckets = 24

// timeLayout is fixed-width, so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

var _ dlq.Summarizer = (*Queue)(nil)

// entryOf is what Summarize reads of a letter, kept beside its record in
// the index hash by the scripts that store it: its group, last failure,
// stop reason, class and source, each as its length, a colon and itself.
func entryOf(l dlq.Letter) string {
	var b strings.Builder
	for _, f := range []string{l.Group(), l.LastFailure.UTC().Format(timeLayout), l.StopReason, l.Last.Decision.Reason, l.Job.Source} {
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
	}
	return b.String()
}

// entry is an index entry read back.
type entry struct {
	id                               string
	seq                              int64
	group, last, stop, class, source string
}

var errEntry = errors.New("malformed index entry")

func parseEntry(id, s string) (entry, error) {
	e := entry{id: id}
	seq, rest, ok := strings.Cut(s, " ")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil {
		return e, errEntry
	}
	e.seq = n
	for _, f := range []*string{&e.group, &e.last, &e.stop, &e.class, &e.source} {
		l, v, ok := strings.Cut(rest, ":")
		n, err := strconv.Atoi(l)
		if !ok || err != nil || n < 0 || n > len(v) {
			return e, errEntry
		}
		*f, rest = v[:n], v[n:]
	}
	return e, nil
}

// match reports whether f selects the letter of e. Times compare as text.
func (e entry) match(f dlq.Filter, since, until string) bool {
	switch {
	case len(f.IDs) > 0 && !slices.Contains(f.IDs, e.id),
		f.Source != "" && e.source != f.Source,
		f.StopReason != "" && e.stop != f.StopReason,
		f.Class != "" && e.class != f.Class,
		f.Group != "" && e.group != f.Group,
		since != "" && e.last < since,
		until != "" && e.last >= until:
		return false
	}
	return true
}

// Summarize adds up the letters f selects from the index hash, which the
// scripts that store and remove letters keep beside the records, a few
// dozen bytes a letter: it reads it with HSCAN, and reads a record only for
// each group's latest letter (see dlq.Summarizer). A letter stored by a
// version without the index gets its entry written first, once. The scan
// is not one atomic view: a letter stored or removed meanwhile may be
// counted or not.
func (q *Queue) Summarize(ctx context.Context, f dlq.Filter) (dlq.Summary, error) {
	if err := q.check("Summarize", ctx); err != nil {
		return dlq.Summary{}, err
	}
	if err := f.Validate(); err != nil {
		return dlq.Summary{}, err
	}
	if err := q.backfill(ctx); err != nil {
		return dlq.Summary{}, err
	}
	entries, err := q.entries(ctx, f)
	if err != nil {
		return dlq.Summary{}, err
	}
	return q.summarize(ctx, entries)
}

// entries scans the index for the entries f selects, oldest put first.
func (q *Queue) entries(ctx context.Context, f dlq.Filter) ([]entry, error) {
	var since, until string
	if !f.Since.IsZero() {
		since = f.Since.UTC().Format(timeLayout)
	}
	if !f.Until.IsZero() {
		until = f.Until.UTC().Format(timeLayout)
	}
	var out []entry
	it := q.c.HScan(ctx, q.index, 0, "", 1000).Iterator()
	for it.Next(ctx) {
		id := it.Val()
		if !it.Next(ctx) {
			break
		}
		e, err := parseEntry(id, it.Val())
		if err != nil {
			return nil, fmt.Errorf("dlq/redis: summarize: letter %s: %w", id, err)
		}
		if e.match(f, since, until) {
			out = append(out, e)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("dlq/redis: summarize: %w", err)
	}
	slices.SortFunc(out, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	// HSCAN may return an entry twice (the hash grew while it ran).
	return slices.CompactFunc(out, func(a, b entry) bool { return a.id == b.id }), nil
}

// backfill writes the entries of letters stored by a version without the
// index: those the counts of the two hashes say are missing.
func (q *Queue) backfill(ctx context.Context) error {
	nl, err := q.c.HLen(ctx, q.letters).Result()
	if err != nil {
		return fmt.Errorf("dlq/redis: summarize: %w", err)
	}
	ni, err := q.c.HLen(ctx, q.index).Result()
	if err != nil || ni >= nl {
		return err
	}
	ls, err := q.List(ctx, dlq.Filter{})
	if err != nil {
		return err
	}
	for _, l := range ls {
		if err := backfillScript.Run(ctx, q.c, []string{q.letters, q.order, q.index}, l.ID, entryOf(l)).Err(); err != nil {
			return fmt.Errorf("dlq/redis: summarize: index %s: %w", l.ID, err)
		}
	}
	return nil
}

// group is a root cause being added up, with its latest letter: its last
// failure and, of equals, the first put.
type group struct {
	dlq.Group
	first, last, example string
}

// summarize adds entries up as dlq's own Summarize does, then reads each
// group's latest letter.
func (q *Queue) summarize(ctx context.Context, entries []entry) (dlq.Summary, error) {
	s := dlq.Summary{Count: len(entries), BySource: map[string]int{}, ByStopReason: map[string]int{}, ByClass: map[string]int{}}
	if len(entries) == 0 {
		return s, nil
	}
	groups := map[string]*group{}
	oldest, newest := entries[0].last, entries[0].last
	for _, e := range entries {
		s.BySource[e.source]++
		s.ByStopReason[e.stop]++
		s.ByClass[e.class]++
		oldest, newest = min(oldest, e.last), max(newest, e.last)
		g := groups[e.group]
		if g == nil {
			g = &group{Group: dlq.Group{ID: e.group, Histogram: make([]int, histogramBuckets)}, first: e.last, last: e.last, example: e.id}
			groups[e.group] = g
		}
		g.Count++
		g.first = min(g.first, e.last)
		if e.last > g.last {
			g.last, g.example = e.last, e.id
		}
	}
	var err error
	if s.Oldest, err = time.Parse(timeLayout, oldest); err == nil {
		s.Newest, err = time.Parse(timeLayout, newest)
	}
	if err != nil {
		return dlq.Summary{}, fmt.Errorf("dlq/redis: summarize: %w", err)
	}
	bounds := make([]string, histogramBuckets-1)
	for i := range bounds {
		bounds[i] = bucketBound(i+1, s.Oldest, s.Newest).UTC().Format(timeLayout)
	}
	for _, e := range entries {
		b, found := slices.BinarySearch(bounds, e.last)
		for found && b < len(bounds) && bounds[b] == e.last {
			b++ // a bound equal to the time is at or before it
		}
		groups[e.group].Histogram[b]++
	}
	if err := q.examples(ctx, groups); err != nil {
		return dlq.Summary{}, err
	}
	for _, g := range groups {
		if g.FirstSeen, err = time.Parse(timeLayout, g.first); err != nil {
			return dlq.Summary{}, fmt.Errorf("dlq/redis: summarize: %w", err)
		}
		s.Groups = append(s.Groups, g.Group)
	}
	sortGroups(s.Groups)
	return s, nil
}

// examples reads each group's latest letter, which gives it its signature,
// class and last seen time. A letter removed since the scan leaves its
// group with none but its count.
func (q *Queue) examples(ctx context.Context, groups map[string]*group) error {
	ids := make([]string, 0, len(groups))
	byID := make(map[string]*group, len(groups))
	for _, g := range groups {
		ids, byID[g.example] = append(ids, g.example), g
	}
	for start := 0; start < len(ids); start += batch {
		ls, err := q.read(ctx, ids[start:min(start+batch, len(ids))])
		if err != nil {
			return err
		}
		for _, l := range ls {
			g := byID[l.ID]
			g.Example, g.Signature, g.Class, g.LastSeen = l, l.Signature(), l.Last.Decision.Reason, l.LastFailure
		}
	}
	return nil
}

// bucketBound is the start of the i-th of histogramBuckets slices of
// [oldest, newest], as package dlq computes it.
func bucketBound(i int, oldest, newest time.Time) time.Time {
	span := newest.Sub(oldest)
	n := time.Duration(histogramBuckets)
	return oldest.Add(span/n*time.Duration(i) + span%n*time.Duration(i)/n)
}

// sortGroups orders groups as dlq.Summary.Groups are: largest first, then
// the most recently seen, then by ID.
func sortGroups(gs []dlq.Group) {
	slices.SortFunc(gs, func(a, b dlq.Group) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		if c := b.LastSeen.Compare(a.LastSeen); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
