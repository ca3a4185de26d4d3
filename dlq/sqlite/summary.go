package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retry/dlq"
)

// histogramBuckets is the length of dlq.Group.Histogram.
const histogramBuckets = 24

var _ dlq.Summarizer = (*Queue)(nil)

// Summarize adds up the letters f selects in SQL (see dlq.Summarizer): one
// query for the count and the time span, one that groups the letters by
// source, stop reason, class, root cause and slice of the span, and one
// that reads each root cause's latest letter. No other record is read.
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

// group is a root cause being added up, with the key of its latest letter:
// its last failure and, of equals, the last put (the largest seq).
type group struct {
	dlq.Group
	latest string
}

// aggregate runs the grouping query. The slice of a letter is the number of
// slice bounds at or before its last failure, compared as text (the stored
// form sorts as time does), as dlq's own Summarize counts them.
func (q *Queue) aggregate(ctx context.Context, s *dlq.Summary, where []string, args []any) (map[string]*group, error) {
	var bucket strings.Builder
	bargs := make([]any, 0, histogramBuckets-1+len(args))
	for i := 1; i < histogramBuckets; i++ {
		if i > 1 {
			bucket.WriteString(" + ")
		}
		bucket.WriteString("(last_failure >= ?)")
		bargs = append(bargs, stamp(bucketBound(i, s.Oldest, s.Newest)))
	}
	rows, err := q.db.QueryContext(ctx, `
SELECT source, stop_reason, class, grp, `+bucket.String()+` AS bucket, count(*), min(last_failure),
	max(last_failure || printf('%020d', seq))
FROM dlq_letters`+whereClause(where)+`
GROUP BY grp, source, stop_reason, class, bucket`, append(bargs, args...)...)
	if err != nil {
		return nil, fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	defer rows.Close()
	groups := map[string]*group{}
	for rows.Next() {
		var source, stop, class, grp, first, latest string
		var b, n int
		if err := rows.Scan(&source, &stop, &class, &grp, &b, &n, &first, &latest); err != nil {
			return nil, fmt.Errorf("dlq/sqlite: summarize: %w", err)
		}
		s.BySource[source] += n
		s.ByStopReason[stop] += n
		s.ByClass[class] += n
		g := groups[grp]
		if g == nil {
			g = &group{Group: dlq.Group{ID: grp, Histogram: make([]int, histogramBuckets)}, latest: latest}
			groups[grp] = g
		}
		if err := g.add(b, n, first, latest); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dlq/sqlite: summarize: %w", err)
	}
	return groups, nil
}

func (g *group) add(bucket, n int, first, latest string) error {
	g.Count += n
	g.Histogram[min(max(bucket, 0), histogramBuckets-1)] += n
	g.latest = max(g.latest, latest)
	t, err := time.Parse(timeLayout, first)
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
		seq, err := strconv.ParseInt(g.latest[len(g.latest)-20:], 10, 64)
		if err != nil {
			return fmt.Errorf("dlq/sqlite: summarize: %w", err)
		}
		bySeq[seq] = g
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
