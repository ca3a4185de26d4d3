package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"
)

// SchemaVersion is the version of the tables this package creates and reads.
const SchemaVersion = 1

// Defaults for zero fields of Options.
const (
	DefaultBusyTimeout  = 5 * time.Second
	DefaultClaimTimeout = 5 * time.Minute
)

// timeLayout is fixed-width, so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Options configures a Queue. The zero value is the default.
type Options struct {
	// BusyTimeout is how long a write waits for another connection's (or
	// process's) write to finish. 0 means 5s.
	BusyTimeout time.Duration
	// ClaimTimeout is how long a replay holds a letter: a replay that has
	// not finished by then is deemed dead, and the letter may be replayed
	// again. Make it longer than an enqueue can take. 0 means 5m.
	ClaimTimeout time.Duration
}

// Queue is a dlq.Queue in a SQLite file. It is safe for concurrent use, by
// several goroutines and several processes.
type Queue struct {
	db    *sql.DB
	claim time.Duration
}

var _ dlq.Queue = (*Queue)(nil)

const schema = `
CREATE TABLE IF NOT EXISTS dlq_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS dlq_letters (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	id            TEXT NOT NULL UNIQUE,
	source        TEXT NOT NULL,
	job_id        TEXT NOT NULL,
	reason        TEXT NOT NULL,
	class         TEXT NOT NULL,
	attempts      INTEGER NOT NULL,
	first_failure TEXT NOT NULL,
	last_failure  TEXT NOT NULL,
	last_error    TEXT NOT NULL,
	grp           TEXT NOT NULL,
	record        TEXT NOT NULL,
	claim         TEXT,
	claimed_until INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS dlq_letters_source ON dlq_letters (source, seq);
CREATE INDEX IF NOT EXISTS dlq_letters_last_failure ON dlq_letters (last_failure);
CREATE INDEX IF NOT EXISTS dlq_letters_grp ON dlq_letters (grp);
INSERT INTO dlq_meta (key, value) VALUES ('schema_version', '1') ON CONFLICT (key) DO NOTHING;
`

// Open opens the queue in the SQLite file at path, creating the file and
// its tables if needed. Errors naming a bad argument are
// *retry.InvalidError.
func Open(ctx context.Context, path string, o Options) (*Queue, error) {
	if err := o.validate(path); err != nil {
		return nil, err
	}
	busy := cmpOr(o.BusyTimeout, DefaultBusyTimeout)
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate") // a transaction that will write takes the lock first: no deadlock
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("dlq/sqlite: open %s: %w", path, err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("dlq/sqlite: open %s: %w", path, err)
	}
	return &Queue{db: db, claim: cmpOr(o.ClaimTimeout, DefaultClaimTimeout)}, nil
}

func (o Options) validate(path string) error {
	switch {
	case path == "" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:"):
		return invalid("sqlite.Open", path, "the path must be a plain file path, without ? or # (and not a file: URI)")
	case o.BusyTimeout < 0:
		return invalid("Options.BusyTimeout", o.BusyTimeout, "must not be negative (0 means 5s)")
	case o.ClaimTimeout < 0:
		return invalid("Options.ClaimTimeout", o.ClaimTimeout, "must not be negative (0 means 5m)")
	}
	return nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	var v string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM dlq_meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		return err
	}
	if n, err := strconv.Atoi(v); err != nil || n > SchemaVersion {
		return fmt.Errorf("schema version %s is newer than this code's (%d)", v, SchemaVersion)
	}
	return tx.Commit()
}

// Close closes the database.
func (q *Queue) Close() error { return q.db.Close() }

// Put stores l in one durable transaction (see dlq.Queue).
func (q *Queue) Put(ctx context.Context, l dlq.Letter) (bool, error) {
	rec, err := dlq.Encode(l)
	if err != nil {
		return false, err
	}
	res, err := q.db.ExecContext(ctx, `
INSERT INTO dlq_letters (id, source, job_id, reason, class, attempts, first_failure, last_failure, last_error, grp, record)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	reason = excluded.reason, class = excluded.class, attempts = excluded.attempts,
	first_failure = excluded.first_failure, last_failure = excluded.last_failure,
	last_error = excluded.last_error, grp = excluded.grp, record = excluded.record,
	claim = NULL, claimed_until = NULL
WHERE dlq_letters.claim IS NOT NULL`,
		l.ID, l.Job.Source, l.Job.ID, string(l.Reason), l.Last.Decision.Reason, l.Attempts,
		stamp(l.FirstFailure), stamp(l.LastFailure), l.Last.Error, l.Group(), string(rec))
	if err != nil {
		return false, fmt.Errorf("dlq/sqlite: put %s: %w", l.ID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Get returns the letter id (see dlq.Queue).
func (q *Queue) Get(ctx context.Context, id string) (dlq.Letter, error) {
	var rec string
	err := q.db.QueryRowContext(ctx, `SELECT record FROM dlq_letters WHERE id = ?`, id).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return dlq.Letter{}, fmt.Errorf("dlq/sqlite: letter %s: %w", id, dlq.ErrNotFound)
	}
	if err != nil {
		return dlq.Letter{}, fmt.Errorf("dlq/sqlite: get %s: %w", id, err)
	}
	return decode(id, rec)
}

// List returns the letters f selects, oldest first (see dlq.Queue).
func (q *Queue) List(ctx context.Context, f dlq.Filter) ([]dlq.Letter, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return q.list(ctx, q.db, f, "")
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// list selects with SQL what it can (everything but the group) and checks
// the rest on the decoded letters.
func (q *Queue) list(ctx context.Context, db querier, f dlq.Filter, extra string) ([]dlq.Letter, error) {
	where, args := conditions(f)
	if extra != "" {
		where = append(where, extra)
	}
	query := `SELECT id, record FROM dlq_letters`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq"
	if f.Limit > 0 && f.Group == "" {
		query += " LIMIT " + strconv.Itoa(f.Limit)
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("dlq/sqlite: list: %w", err)
	}
	defer rows.Close()
	var out []dlq.Letter
	for rows.Next() && (f.Limit == 0 || len(out) < f.Limit) {
		var id, rec string
		if err := rows.Scan(&id, &rec); err != nil {
			return nil, fmt.Errorf("dlq/sqlite: list: %w", err)
		}
		l, err := decode(id, rec)
		if err != nil {
			return nil, err
		}
		if f.Match(l) {
			out = append(out, l)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dlq/sqlite: list: %w", err)
	}
	return out, nil
}

func conditions(f dlq.Filter) (where []string, args []any) {
	add := func(cond string, arg any) {
		where, args = append(where, cond), append(args, arg)
	}
	if f.Source != "" {
		add("source = ?", f.Source)
	}
	if f.Reason != "" {
		add("reason = ?", string(f.Reason))
	}
	if f.Class != "" {
		add("class = ?", f.Class)
	}
	if !f.Since.IsZero() {
		add("last_failure >= ?", stamp(f.Since))
	}
	if !f.Until.IsZero() {
		add("last_failure < ?", stamp(f.Until))
	}
	if len(f.IDs) > 0 {
		where = append(where, "id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(f.IDs)), ", ")+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	return where, args
}

// Count counts the letters f selects, in SQL unless f selects a group.
func (q *Queue) Count(ctx context.Context, f dlq.Filter) (int, error) {
	if err := f.Validate(); err != nil {
		return 0, err
	}
	if f.Group != "" {
		f.Limit = 0
		ls, err := q.list(ctx, q.db, f, "")
		return len(ls), err
	}
	where, args := conditions(f)
	query := `SELECT count(*) FROM dlq_letters`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	var n int
	if err := q.db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("dlq/sqlite: count: %w", err)
	}
	return n, nil
}

// Replay claims the letter, hands its job to to, and removes it if to
// succeeded (see dlq.Queue).
func (q *Queue) Replay(ctx context.Context, id string, to dlq.Enqueuer) (err error) {
	if to == nil {
		return invalid("Replay", nil, "the Enqueuer must not be nil")
	}
	token, rec, err := q.claimLetter(ctx, id)
	if err != nil {
		return err
	}
	// Whatever happens to ctx now, the claim is settled: a letter left
	// claimed would wait for the claim timeout. A panic in to releases it.
	settle := context.WithoutCancel(ctx)
	enqueued := false
	defer func() {
		if !enqueued {
			err = errors.Join(err, q.release(settle, id, token))
		}
	}()
	l, err := decode(id, rec)
	if err != nil {
		return err
	}
	if err := to.Enqueue(ctx, l.Job); err != nil {
		return fmt.Errorf("dlq/sqlite: replay %s: %w", id, err)
	}
	enqueued = true
	// No row deleted means a Put of a new death replaced the letter: it stays.
	if _, err := q.db.ExecContext(settle, `DELETE FROM dlq_letters WHERE id = ? AND claim = ?`, id, token); err != nil {
		return fmt.Errorf("dlq/sqlite: letter %s was enqueued but not removed; it may be replayed again after %v: %w", id, q.claim, err)
	}
	return nil
}

func (q *Queue) claimLetter(ctx context.Context, id string) (token, rec string, err error) {
	token = rand.Text()
	now := time.Now()
	err = q.db.QueryRowContext(ctx, `
UPDATE dlq_letters SET claim = ?, claimed_until = ?
WHERE id = ? AND (claim IS NULL OR claimed_until <= ?)
RETURNING record`, token, now.Add(q.claim).UnixNano(), id, now.UnixNano()).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", q.absentOrClaimed(ctx, id)
	}
	if err != nil {
		return "", "", fmt.Errorf("dlq/sqlite: claim %s: %w", id, err)
	}
	return token, rec, nil
}

// absentOrClaimed says why the letter id could not be taken.
func (q *Queue) absentOrClaimed(ctx context.Context, id string) error {
	var n int
	if err := q.db.QueryRowContext(ctx, `SELECT count(*) FROM dlq_letters WHERE id = ?`, id).Scan(&n); err != nil {
		return fmt.Errorf("dlq/sqlite: letter %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("dlq/sqlite: letter %s: %w", id, dlq.ErrNotFound)
	}
	return fmt.Errorf("dlq/sqlite: letter %s: %w", id, dlq.ErrClaimed)
}

func (q *Queue) release(ctx context.Context, id, token string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE dlq_letters SET claim = NULL, claimed_until = NULL WHERE id = ? AND claim = ?`, id, token)
	if err != nil {
		return fmt.Errorf("dlq/sqlite: release %s (it stays claimed for up to %v): %w", id, q.claim, err)
	}
	return nil
}

// Discard removes the letter id unless a replay holds it.
func (q *Queue) Discard(ctx context.Context, id string) error {
	res, err := q.db.ExecContext(ctx, `DELETE FROM dlq_letters WHERE id = ? AND (claim IS NULL OR claimed_until <= ?)`,
		id, time.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("dlq/sqlite: discard %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	return q.absentOrClaimed(ctx, id)
}

// Purge removes, in one transaction, the letters f selects that no replay
// holds.
func (q *Queue) Purge(ctx context.Context, f dlq.Filter) (int, error) {
	if err := f.Validate(); err != nil {
		return 0, err
	}
	f.Limit = 0
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("dlq/sqlite: purge: %w", err)
	}
	defer tx.Rollback()
	free := "(claim IS NULL OR claimed_until <= " + strconv.FormatInt(time.Now().UnixNano(), 10) + ")"
	ls, err := q.list(ctx, tx, f, free)
	if err != nil {
		return 0, err
	}
	for _, l := range ls {
		if _, err := tx.ExecContext(ctx, `DELETE FROM dlq_letters WHERE id = ?`, l.ID); err != nil {
			return 0, fmt.Errorf("dlq/sqlite: purge %s: %w", l.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("dlq/sqlite: purge: %w", err)
	}
	return len(ls), nil
}

func decode(id, rec string) (dlq.Letter, error) {
	l, err := dlq.Decode([]byte(rec))
	if err != nil {
		return dlq.Letter{}, fmt.Errorf("dlq/sqlite: letter %s: %w", id, err)
	}
	return l, nil
}

func stamp(t time.Time) string { return t.UTC().Format(timeLayout) }

func cmpOr(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
