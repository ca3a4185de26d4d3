package dlq

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// histogramBuckets is how many slices of time a group's Histogram has.
const histogramBuckets = 24

// Summary is what the letters a filter selects add up to: what a dashboard
// or an alert shows, without every letter.
type Summary struct {
	Count int // how many letters
	// Oldest and Newest bound the letters' LastFailure; zero when Count is 0.
	Oldest, Newest time.Time
	BySource       map[string]int // letters by Job.Source
	ByStopReason   map[string]int // letters by StopReason
	ByClass        map[string]int // letters by the class of their last error (Last.Decision.Reason)
	// Groups lists every root cause, largest first (then the most recently
	// seen, then by ID), each with its Histogram over [Oldest, Newest] and,
	// as its Example, its most recent letter (of letters that failed at the
	// same instant, the first put).
	Groups []Group
}

// Summarizer is a Queue that adds up its letters itself — with SQL, or
// from an index — rather than have every letter read. Summarize prefers it.
//
// Summarize returns the Summary of the letters f selects, ignoring
// f.Limit and f.Offset; it must equal what Summarize computes from List.
type Summarizer interface {
	Summarize(ctx context.Context, f Filter) (Summary, error)
}

// Summarize returns the Summary of the letters of q that f selects
// (f.Limit and f.Offset are ignored): through q's own Summarize when q is a
// Summarizer (or a Monitor of one), otherwise from every letter List
// returns. A nil ctx or q and an invalid f are a *retry.InvalidError.
func Summarize(ctx context.Context, q Queue, f Filter) (Summary, error) {
	if err := checkQueue("dlq.Summarize", ctx, q); err != nil {
		return Summary{}, err
	}
	if err := f.Validate(); err != nil {
		return Summary{}, err
	}
	f.Limit, f.Offset = 0, 0
	if m, ok := q.(*Monitor); ok && m != nil && m.q != nil {
		q = m.q
	}
	if s, ok := q.(Summarizer); ok {
		return s.Summarize(ctx, f)
	}
	ls, err := q.List(ctx, f)
	if err != nil {
		return Summary{}, err
	}
	return summarize(ls), nil
}

// summarize adds letters up, as every Summarizer must.
func summarize(letters []Letter) Summary {
	var a aggregate[Letter]
	for _, l := range letters {
		a.add(entryOf(l), l)
	}
	s, _ := a.summary(func(l Letter) (Letter, error) { return l, nil })
	return s
}

// entry is what a summary reads of one letter: what a store can keep
// beside its record, so that adding letters up decodes none of them.
type entry struct {
	source, stop, class, group string
	last                       time.Time
}

func entryOf(l Letter) entry {
	return entry{source: l.Job.Source, stop: l.StopReason, class: l.Last.Decision.Reason, group: l.Group(), last: l.LastFailure}
}

// match reports whether f selects the letter id of e, as Filter.Match would.
func (e entry) match(f Filter, id string) bool {
	switch {
	case len(f.IDs) > 0 && !slices.Contains(f.IDs, id),
		f.Source != "" && e.source != f.Source,
		f.StopReason != "" && e.stop != f.StopReason,
		f.Class != "" && e.class != f.Class,
		!f.Since.IsZero() && e.last.Before(f.Since),
		!f.Until.IsZero() && !e.last.Before(f.Until),
		f.Group != "" && e.group != f.Group:
		return false
	}
	return true
}

// aggregate adds up entries, given oldest put first; E is what becomes a
// group's example letter (a Letter, or a stored record).
type aggregate[E any] struct {
	s        Summary
	entries  []entry
	groups   map[string]*Group
	examples map[string]E
}

func (a *aggregate[E]) add(e entry, example E) {
	if a.groups == nil {
		a.s = Summary{BySource: map[string]int{}, ByStopReason: map[string]int{}, ByClass: map[string]int{}}
		a.groups, a.examples = map[string]*Group{}, map[string]E{}
	}
	a.s.Count++
	a.s.BySource[e.source]++
	a.s.ByStopReason[e.stop]++
	a.s.ByClass[e.class]++
	if a.s.Count == 1 || e.last.Before(a.s.Oldest) {
		a.s.Oldest = e.last
	}
	if a.s.Count == 1 || e.last.After(a.s.Newest) {
		a.s.Newest = e.last
	}
	g, ok := a.groups[e.group]
	if !ok {
		g = &Group{ID: e.group, FirstSeen: e.last, LastSeen: e.last}
		a.groups[e.group] = g
	}
	g.Count++
	g.FirstSeen = minTime(g.FirstSeen, e.last)
	if !ok || e.last.After(g.LastSeen) { // the latest; of equals, the first put
		g.LastSeen, a.examples[e.group] = e.last, example
	}
	a.entries = append(a.entries, e)
}

// summary finishes the sum: each group's histogram, and its example, which
// decode turns into a letter (and its signature and class).
func (a *aggregate[E]) summary(decode func(E) (Letter, error)) (Summary, error) {
	s := a.s
	if a.groups == nil {
		return Summary{BySource: map[string]int{}, ByStopReason: map[string]int{}, ByClass: map[string]int{}}, nil
	}
	for _, e := range a.entries {
		g := a.groups[e.group]
		if g.Histogram == nil {
			g.Histogram = make([]int, histogramBuckets)
		}
		g.Histogram[bucketOf(e.last, s.Oldest, s.Newest)]++
	}
	s.Groups = make([]Group, 0, len(a.groups))
	for id, g := range a.groups {
		l, err := decode(a.examples[id])
		if err != nil {
			return Summary{}, err
		}
		g.Example, g.Signature, g.Class = l, l.Signature(), l.Last.Decision.Reason
		s.Groups = append(s.Groups, *g)
	}
	sortGroups(s.Groups)
	return s, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// bucketOf returns the slice of [oldest, newest] that t falls in: the
// number of bounds bucketBound(1 … histogramBuckets-1) at or before t.
func bucketOf(t, oldest, newest time.Time) int {
	n := 0
	for i := 1; i < histogramBuckets; i++ {
		if !t.Before(bucketBound(i, oldest, newest)) {
			n++
		}
	}
	return n
}

// bucketBound is the start of the i-th slice of [oldest, newest], computed
// without overflow for any span a Duration holds.
func bucketBound(i int, oldest, newest time.Time) time.Time {
	span := newest.Sub(oldest)
	n := time.Duration(histogramBuckets)
	return oldest.Add(span/n*time.Duration(i) + span%n*time.Duration(i)/n)
}

// sortGroups orders groups largest first, then the most recently seen,
// then by ID: the order of Summary.Groups.
func sortGroups(gs []Group) {
	slices.SortFunc(gs, func(a, b Group) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		if c := b.LastSeen.Compare(a.LastSeen); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
