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

// schemaVersion is the version of the tables this package creates and reads.
// Open migrates a file of an earlier version: version 1 named the stop_reason
// column reason; version 2 had no index for Summarize.
const schemaVersion = 3

// Defaults for zero fields of Config.
const (
	defaultBusyTimeout  = 5 * time.Second
	defaultClaimTimeout = 5 * time.Minute
)

// timeLayout is fixed-width, so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Config configures a Queue. The zero value is the default; a negative
// value, or one below a millisecond, is a *retry.InvalidError naming it.
type Config struct {
	// BusyTimeout is how long a write waits for another connection's (or
	// process's) write to finish. 0 means 5s; otherwise at least 1ms.
	BusyTimeout time.Duration
	// ClaimTimeout is how long a replay holds a letter: a replay that has
	// not finished by then is deemed dead, and the letter may be replayed
	// again. Make it longer than an enqueue can take. 0 means 5m; otherwise
	// at least 1ms.
	ClaimTimeout time.Duration
}

// Queue is a dlq.Queue in a SQLite file. It is safe for concurrent use, by
// several goroutines and several processes. A Queue is made by Open; every
// method of a nil or zero Queue returns a *retry.InvalidError.
type Queue struct {
	db    *sql.DB
	claim time.Duration
}

var _ dlq.Queue = (*Queue)(nil)

const meta = `CREATE TABLE IF NOT EXISTS dlq_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;`

const schema = `
CREATE TABLE dlq_letters (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	id            TEXT NOT NULL UNIQUE,
	source        TEXT NOT NULL,
	job_id        TEXT NOT NULL,
	stop_reason   TEXT NOT NULL,
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
CREATE INDEX dlq_letters_source ON dlq_letters (source, seq);
CREATE INDEX dlq_letters_last_failure ON dlq_letters (last_failure);
CREATE INDEX dlq_letters_grp ON dlq_letters (grp);
` + summaryIndex + `
INSERT INTO dlq_meta (key, value) VALUES ('schema_version', '3');
`

// summaryIndex holds every column Summarize reads, so that it reads this
// index and not the rows, whose records are most of the file: 1.3 s for
// the overview of 100,000 letters without it, 0.3 s with it (bench:
// dlqdashboard).
const summaryIndex = `CREATE INDEX IF NOT EXISTS dlq_letters_summary ON dlq_letters (grp, source, stop_reason, class, last_failure);`

// migrations[v] takes a file from version v to v+1.
var migrations = map[int]string{
	1: `ALTER TABLE dlq_letters RENAME COLUMN reason TO stop_reason;
UPDATE dlq_meta SET value = '2' WHERE key = 'schema_version';`,
	2: summaryIndex + `
UPDATE dlq_meta SET value = '3' WHERE key = 'schema_version';`,
}

// Open opens the queue in the SQLite file at path, creating the file and
// its tables if needed. Errors naming a bad argument are
// *retry.InvalidError.
func Open(ctx context.Context, path string, c Config) (*Queue, error) {
	if err := c.validate(ctx, path); err != nil {
		return nil, err
	}
	busy := cmpOr(c.BusyTimeout, defaultBusyTimeout)
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
	return &Queue{db: db, claim: cmpOr(c.ClaimTimeout, defaultClaimTimeout)}, nil
}

func (c Config) validate(ctx context.Context, path string) error {
	switch {
	case ctx == nil:
		return invalid("sqlite.Open", nil, "the context must not be nil")
	case path == "" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:"):
		return invalid("sqlite.Open", path, "the path must be a plain file path, without ? or # (and not a file: URI)")
	case c.BusyTimeout < 0 || c.BusyTimeout > 0 && c.BusyTimeout < time.Millisecond:
		return invalid("sqlite.Config.BusyTimeout", c.BusyTimeout, "must be at least 1ms (0 means 5s)")
	case c.ClaimTimeout < 0 || c.ClaimTimeout > 0 && c.ClaimTimeout < time.Millisecond:
		return invalid("sqlite.Config.ClaimTimeout", c.ClaimTimeout, "must be at least 1ms (0 means 5m)")
	}
	return nil
}

// migrate creates the tables of a new file, or brings an older file's to
// schemaVersion, in one transaction.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, meta); err != nil {
		return err
	}
	var v string
	err = tx.QueryRowContext(ctx, `SELECT value FROM dlq_meta WHERE key = 'schema_version'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		v, err = strconv.Itoa(schemaVersion), create(ctx, tx)
	case err == nil:
		err = upgrade(ctx, tx, v)
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

func create(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, schema)
	return err
}

func upgrade(ctx context.Context, tx *sql.Tx, version string) error {
	n, err := strconv.Atoi(version)
	if err != nil || n < 1 || n > schemaVersion {
		return fmt.Errorf("schema version %s is not one this code reads (1 to %d)", version, schemaVersion)
	}
	for ; n < schemaVersion; n++ {
		if _, err := tx.ExecContext(ctx, migrations[n]); err != nil {
			return fmt.Errorf("migrate schema version %d to %d: %w", n, n+1, err)
		}
	}
	return nil
}

// check refuses a Queue that Open did not make, a nil context and an empty
// id, before any work.
func (q *Queue) check(method string, ctx context.Context, ids ...string) error {
	name := "sqlite.Queue." + method
	switch {
	case q == nil || q.db == nil:
		return invalid(name, nil, "the queue is nil, or was not made by Open")
	case ctx == nil:
		return invalid(name, nil, "the context must not be nil")
	}
	for _, id := range ids {
		if id == "" {
			return invalid(name, id, "the letter id must not be empty")
		}
	}
	return nil
}

// Close closes the database.
func (q *Queue) Close() error {
	if err := q.check("Close", context.Background()); err != nil {
		return err
	}
	return q.db.Close()
}

// Put stores l in one durable transaction (see dlq.Queue).
func (q *Queue) Put(ctx context.Context, l dlq.Letter) (bool, error) {
	if err := q.check("Put", ctx); err != nil {
		return false, err
	}
	rec, err := dlq.Encode(l)
	if err != nil {
		return false, err
	}
	res, err := q.db.ExecContext(ctx, `
INSERT INTO dlq_letters (id, source, job_id, stop_reason, class, attempts, first_failure, last_failure, last_error, grp, record)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	stop_reason = excluded.stop_reason, class = excluded.class, attempts = excluded.attempts,
	first_failure = excluded.first_failure, last_failure = excluded.last_failure,
	last_error = excluded.last_error, grp = excluded.grp, record = excluded.record,
	claim = NULL, claimed_until = NULL
WHERE dlq_letters.claim IS NOT NULL`,
		l.ID, l.Job.Source, l.Job.ID, l.StopReason, l.Last.Decision.Reason, l.Attempts,
		stamp(l.FirstFailure), stamp(l.LastFailure), l.Last.Error, l.Group(), string(rec))
	if err != nil {
		return false, fmt.Errorf("dlq/sqlite: put %s: %w", l.ID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Get returns the letter id (see dlq.Queue).
func (q *Queue) Get(ctx context.Context, id string) (dlq.Letter, error) {
	if err := q.check("Get", ctx, id); err != nil {
		return dlq.Letter{}, err
	}
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
	if err := q.check("List", ctx); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return q.list(ctx, q.db, f, "")
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// list selects with SQL, by the columns Put stored beside each record: a
// letter's group is the one computed when it was stored.
func (q *Queue) list(ctx context.Context, db querier, f dlq.Filter, extra string) ([]dlq.Letter, error) {
	where, args := conditions(f)
	if extra != "" {
		where = append(where, extra)
	}
	query := `SELECT id, record FROM dlq_letters` + whereClause(where) + " ORDER BY seq"
	if f.Limit > 0 || f.Offset > 0 {
		query += " LIMIT " + strconv.Itoa(cmpOr(f.Limit, -1)) + " OFFSET " + strconv.Itoa(f.Offset)
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("dlq/sqlite: list: %w", err)
	}
	defer rows.Close()
	var out []dlq.Letter
	for rows.Next() {
		var id, rec string
		if err := rows.Scan(&id, &rec); err != nil {
			return nil, fmt.Errorf("dlq/sqlite: list: %w", err)
		}
		l, err := decode(id, rec)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dlq/sqlite: list: %w", err)
	}
	return out, nil
}

func whereClause(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(where, " AND ")
}

func conditions(f dlq.Filter) (where []string, args []any) {
	add := func(cond string, arg any) {
		where, args = append(where, cond), append(args, arg)
	}
	if f.Source != "" {
		add("source = ?", f.Source)
	}
	if f.StopReason != "" {
		add("stop_reason = ?", f.StopReason)
	}
	if f.Class != "" {
		add("class = ?", f.Class)
	}
	if f.Group != "" {
		add("grp = ?", f.Group)
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

// Count counts the letters f selects, in SQL.
func (q *Queue) Count(ctx context.Context, f dlq.Filter) (int, error) {
	if err := q.check("Count", ctx); err != nil {
		return 0, err
	}
	if err := f.Validate(); err != nil {
		return 0, err
	}
	where, args := conditions(f)
	var n int
	if err := q.db.QueryRowContext(ctx, `SELECT count(*) FROM dlq_letters`+whereClause(where), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("dlq/sqlite: count: %w", err)
	}
	return n, nil
}

// Replay claims the letter, hands its job to to, and removes it if to
// succeeded (see dlq.Queue and dlq.ReplayClaimed).
func (q *Queue) Replay(ctx context.Context, id string, to dlq.Enqueuer) error {
	if err := q.check("Replay", ctx); err != nil {
		return err
	}
	return dlq.ReplayClaimed(ctx, claims{q}, id, to)
}

// claims is the Claimer of a Queue: the claim and the time it lapses are
// columns of the letter's row, so a lapsed claim stays visible until
// another replay takes it.
type claims struct{ q *Queue }

func (c claims) Claim(ctx context.Context, id string) (dlq.Claim, error) {
	token := rand.Text()
	now := time.Now()
	var rec string
	err := c.q.db.QueryRowContext(ctx, `
UPDATE dlq_letters SET claim = ?, claimed_until = ?
WHERE id = ? AND (claim IS NULL OR claimed_until <= ?)
RETURNING record`, token, now.Add(c.q.claim).UnixNano(), id, now.UnixNano()).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return dlq.Claim{}, c.q.absentOrClaimed(ctx, id)
	}
	if err != nil {
		return dlq.Claim{}, fmt.Errorf("dlq/sqlite: claim %s: %w", id, err)
	}
	return dlq.Claim{ID: id, Token: token, Record: []byte(rec)}, nil
}

// Ack removes the letter if the claim is still the replay's. Otherwise a Put
// replaced the letter (it stays), or the claim lapsed and another replay
// took it.
func (c claims) Ack(ctx context.Context, cl dlq.Claim) error {
	res, err := c.q.db.ExecContext(ctx, `DELETE FROM dlq_letters WHERE id = ? AND claim = ?`, cl.ID, cl.Token)
	if err != nil {
		return fmt.Errorf("dlq/sqlite: letter %s not removed; it may be replayed again after %v: %w", cl.ID, c.q.claim, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var rec string
	err = c.q.db.QueryRowContext(ctx, `SELECT record FROM dlq_letters WHERE id = ?`, cl.ID).Scan(&rec)
	switch {
	case err == nil && rec != string(cl.Record):
		return nil // a new death, which stays
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("dlq/sqlite: letter %s: %w", cl.ID, err)
	}
	return fmt.Errorf("dlq/sqlite: letter %s: the claim lapsed after %v and another replay took the letter: %w", cl.ID, c.q.claim, dlq.ErrClaimLapsed)
}

func (c claims) Release(ctx context.Context, cl dlq.Claim) error {
	_, err := c.q.db.ExecContext(ctx, `UPDATE dlq_letters SET claim = NULL, claimed_until = NULL WHERE id = ? AND claim = ?`, cl.ID, cl.Token)
	if err != nil {
		return fmt.Errorf("dlq/sqlite: release %s (it stays claimed for up to %v): %w", cl.ID, c.q.claim, err)
	}
	return nil
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

// Discard removes the letter id unless a replay holds it.
func (q *Queue) Discard(ctx context.Context, id string) error {
	if err := q.check("Discard", ctx, id); err != nil {
		return err
	}
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
	if err := q.check("Purge", ctx); err != nil {
		return 0, err
	}
	if err := f.Validate(); err != nil {
		return 0, err
	}
	f.Limit, f.Offset = 0, 0
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

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// invalid returns the *retry.InvalidError for a bad argument or option:
// "name(value): reason".
func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
