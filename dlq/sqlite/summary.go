package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retry/dlq"
)

// histogramBuckets is the length of dlq.Group.Histogram.
const histogramBuckets = 24

var _ dlq.Summarizer = (*Queue)(nil)

// Summarize adds up the letters f selects in SQL (see dlq.Summarizer): one
// query for the count and the time span, one that groups the letters by
// root cause, source, stop reason and class, one that reads the index for
// the histograms, and one that reads each root cause's latest letter. No
// other record is read.
func (q *Queue) Summarize(ctx context.Context, f dlq.Filter) (dlq.Summary, error) {
	if err := q.check("Summarize", ctx); err != nil {
		return dlq.Summary{}, err
	}
	if err := f.Validate(); err != nil {
		return dlq.Summary{}, err
	}
	s := dlq.Summary{BySource: map[string]int{}, ByStopReason: map[string]int{}, ByClass: map[string]int{}}
	where, args := conditions(f)
	var oldest, newest sql.NullString
	err := q.db.QueryRowContext(ctx, `SELECT count(*), min(last_failure), max(last_failure) FROM dlq_letters`+whereClause(where), args...).
		Scan(&s.Count, &oldest, &newest)
	if err != nil {
		return dlq.Summary{}, fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	if s.Count == 0 {
		return s, nil
	}
	if s.Oldest, err = time.Parse(timeLayout, oldest.String); err == nil {
		s.Newest, err = time.Parse(timeLayout, newest.String)
	}
	if err != nil {
		return dlq.Summary{}, fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	groups, err := q.aggregate(ctx, &s, where, args)
	if err != nil {
		return dlq.Summary{}, err
	}
	if err := q.examples(ctx, groups); err != nil {
		return dlq.Summary{}, err
	}
	for _, g := range groups {
		s.Groups = append(s.Groups, g.Group)
	}
	sortGroups(s.Groups)
	return s, nil
}

// group is a root cause being added up, with its latest letter: its last
// failure and, of equals, the first put (the smallest seq).
type group struct {
	dlq.Group
	last string
	seq  int64
}

// aggregate runs the grouping query over the summary index, in its order,
// so that SQLite streams it without sorting. The latest letter of each row
// is its max(last_failure) and, as SQLite gives the bare column of a lone
// max(), the seq of the first row that reached it: of equals, the first
// put.
func (q *Queue) aggregate(ctx context.Context, s *dlq.Summary, where []string, args []any) (map[string]*group, error) {
	rows, err := q.db.QueryContext(ctx, `
SELECT grp, source, stop_reason, class, count(*), min(last_failure), max(last_failure), seq
FROM dlq_letters`+whereClause(where)+`
GROUP BY grp, source, stop_reason, class`, args...)
	if err != nil {
		return nil, fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	defer rows.Close()
	groups := map[string]*group{}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.grp, &r.source, &r.stop, &r.class, &r.n, &r.first, &r.last, &r.seq); err != nil {
			return nil, fmt.Errorf("dlq/sqlite: summarize: %w", err)
		}
		s.BySource[r.source] += r.n
		s.ByStopReason[r.stop] += r.n
		s.ByClass[r.class] += r.n
		g := groups[r.grp]
		if g == nil {
			g = &group{Group: dlq.Group{ID: r.grp, Histogram: make([]int, histogramBuckets)}, last: r.last, seq: r.seq}
			groups[r.grp] = g
		}
		if err := g.add(r); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	return groups, q.histograms(ctx, s, groups, where, args)
}

// histograms counts each group's letters by slice of the summary's span.
// SQL would sort every letter to group them by slice (an expression no
// index holds); reading the two columns from the index in Go, without a
// copy (sql.RawBytes), costs less than half of that. The slice of a letter
// is the number of slice bounds at or before its last failure, compared as
// text (the stored form sorts as time does), as dlq's own Summarize counts
// them.
func (q *Queue) histograms(ctx context.Context, s *dlq.Summary, groups map[string]*group, where []string, args []any) error {
	bounds := make([][]byte, histogramBuckets-1)
	for i := range bounds {
		bounds[i] = []byte(stamp(bucketBound(i+1, s.Oldest, s.Newest)))
	}
	rows, err := q.db.QueryContext(ctx, `SELECT grp, last_failure FROM dlq_letters`+whereClause(where), args...)
	if err != nil {
		return fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	defer rows.Close()
	var grp, last sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&grp, &last); err != nil {
			return fmt.Errorf("dlq/sqlite: summarize: %w", err)
		}
		g := groups[string(grp)] // a lookup by conversion does not copy
		if g == nil {
			continue // put since the grouping query: the next summary counts it
		}
		// The slice is how many bounds are at or before last.
		b, found := slices.BinarySearchFunc(bounds, []byte(last), bytes.Compare)
		for found && b < len(bounds) && bytes.Equal(bounds[b], last) {
			b++
		}
		g.Histogram[b]++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	return nil
}

// row is one row of the grouping query.
type row struct {
	grp, source, stop, class, first, last string
	n                                     int
	seq                                   int64
}

func (g *group) add(r row) error {
	g.Count += r.n
	if r.last > g.last || r.last == g.last && r.seq < g.seq {
		g.last, g.seq = r.last, r.seq
	}
	t, err := time.Parse(timeLayout, r.first)
	if err != nil {
		return fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	if g.FirstSeen.IsZero() || t.Before(g.FirstSeen) {
		g.FirstSeen = t
	}
	return nil
}

// examples reads each group's latest letter, which gives it its signature,
// class and last seen time.
func (q *Queue) examples(ctx context.Context, groups map[string]*group) error {
	bySeq := make(map[int64]*group, len(groups))
	for _, g := range groups {
		bySeq[g.seq] = g
	}
	seqs := slices.Sorted(func(yield func(int64) bool) {
		for s := range bySeq {
			if !yield(s) {
				return
			}
		}
	})
	const chunk = 500
	for start := 0; start < len(seqs); start += chunk {
		part := seqs[start:min(start+chunk, len(seqs))]
		args := make([]any, len(part))
		for i, s := range part {
			args[i] = s
		}
		rows, err := q.db.QueryContext(ctx, `SELECT seq, id, record FROM dlq_letters WHERE seq IN (`+
			strings.TrimSuffix(strings.Repeat("?, ", len(part)), ", ")+`)`, args...)
		if err != nil {
			return fmt.Errorf("dlq/sqlite: summarize: %w", err)
		}
		err = readExamples(rows, bySeq)
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func readExamples(rows *sql.Rows, bySeq map[int64]*group) error {
	for rows.Next() {
		var seq int64
		var id, rec string
		if err := rows.Scan(&seq, &id, &rec); err != nil {
			return fmt.Errorf("dlq/sqlite: summarize: %w", err)
		}
		l, err := decode(id, rec)
		if err != nil {
			return err
		}
		g := bySeq[seq]
		g.Example, g.Signature, g.Class, g.LastSeen = l, l.Signature(), l.Last.Decision.Reason, l.LastFailure
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dlq/sqlite: summarize: %w", err)
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
