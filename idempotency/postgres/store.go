package postgres

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retrykit/retry/idempotency"
)

// Schema is the migration that creates the store's table and its expiry
// index, for the default table retry_idempotency (Migrate applies it for the
// Store's table).
//
//go:embed schema.sql
var Schema string

// Store is an idempotency.Store in a PostgreSQL table, reached through a pgx
// pool. It is safe for concurrent use, and any number of processes may share
// the table. Its Tx method runs an effect and completes its key in one
// transaction.
type Store struct {
	pool *pgxpool.Pool
	cfg  Config
	sql  statements
}

// statements are the store's SQL, for its table.
type statements struct{ claim, extend, complete, release, lookup, insert, purge string }

// New returns a Store keeping its records in pool's database, in the table
// that cfg names (retry_idempotency by default), which Migrate creates. A nil
// pool, or a bad field of cfg, is a *retry.InvalidError.
func New(pool *pgxpool.Pool, cfg Config) (*Store, error) {
	if pool == nil {
		return nil, invalid("postgres.New", nil, "the pool must not be nil")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Store{pool: pool, cfg: cfg, sql: build(cfg.Table)}, nil
}

// Migrate creates the store's table and index if they do not exist: the
// statements of Schema, for the Store's table, in one round trip.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.ready(ctx, "Migrate"); err != nil {
		return err
	}
	ddl := schemaFor(s.cfg.Table)
	if _, err := s.pool.Exec(ctx, ddl, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("idempotency/postgres: migrate: %w", err)
	}
	return nil
}

// schemaFor returns Schema for table, quoted. The index is named after the
// table without its schema: PostgreSQL puts an index in its table's schema,
// and refuses a qualified index name.
func schemaFor(table string) string {
	name := table[strings.LastIndex(table, ".")+1:]
	return strings.NewReplacer(defaultTable+"_expires_at", quote(name+"_expires_at"), defaultTable, quote(table)).Replace(Schema)
}

// quote returns table as a quoted SQL name ("schema"."name"), so that a name
// that is also a keyword ("user") is a name. Config.Table holds no quote.
func quote(table string) string {
	return `"` + strings.ReplaceAll(table, ".", `"."`) + `"`
}

// DeleteExpired deletes the records whose lease or retention has ended and
// returns how many it deleted. Expired records are already as good as
// absent; this only gives their room back. Call it now and then (a cron job,
// a ticker).
func (s *Store) DeleteExpired(ctx context.Context) (int64, error) {
	if err := s.ready(ctx, "DeleteExpired"); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, s.sql.purge)
	if err != nil {
		return 0, fmt.Errorf("idempotency/postgres: delete expired: %w", err)
	}
	return tag.RowsAffected(), nil
}

// build writes the statements for table. Durations are microseconds; the
// clock is the server's (clock_timestamp), so that processes whose clocks
// disagree agree on expiry.
func build(table string) statements {
	r := strings.NewReplacer("{table}", quote(table))
	const live = `expires_at > clock_timestamp()`
	return statements{
		// One round trip: take a free or expired key, or read its live record.
		// When a concurrent claim commits between this statement's snapshot
		// and its insert, neither half returns a row, and the caller asks again.
		claim: r.Replace(`WITH claimed AS (
  INSERT INTO {table} AS t (scope, key, status, token, fingerprint, value, expires_at)
  VALUES ($1, $2, 1, $3, $4, '', clock_timestamp() + $5 * interval '1 microsecond')
  ON CONFLICT (scope, key) DO UPDATE
    SET status = 1, token = excluded.token, fingerprint = excluded.fingerprint, value = '', expires_at = excluded.expires_at
    WHERE t.expires_at <= clock_timestamp()
  RETURNING 1)
SELECT true, 0::smallint, ''::bytea, ''::bytea, ''::bytea FROM claimed
UNION ALL
SELECT false, status, token, fingerprint, value FROM {table}
  WHERE scope = $1 AND key = $2 AND ` + live + ` AND NOT EXISTS (SELECT 1 FROM claimed)`),
		extend: r.Replace(`UPDATE {table} SET expires_at = clock_timestamp() + $4 * interval '1 microsecond'
  WHERE scope = $1 AND key = $2 AND token = $3 AND status = 1 AND ` + live),
		complete: r.Replace(`UPDATE {table} SET status = $4, fingerprint = $5, value = $6, expires_at = clock_timestamp() + $7 * interval '1 microsecond'
  WHERE scope = $1 AND key = $2 AND token = $3 AND status = 1 AND ` + live),
		release: r.Replace(`DELETE FROM {table} WHERE scope = $1 AND key = $2 AND token = $3 AND status = 1 AND ` + live),
		// Tx's completion: the final record, unless a live one is there.
		insert: r.Replace(`INSERT INTO {table} AS t (scope, key, status, token, fingerprint, value, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp() + $7 * interval '1 microsecond')
  ON CONFLICT (scope, key) DO UPDATE
    SET status = excluded.status, token = excluded.token, fingerprint = excluded.fingerprint, value = excluded.value, expires_at = excluded.expires_at
    WHERE t.expires_at <= clock_timestamp()`),
		lookup: r.Replace(`SELECT status, token, fingerprint, value FROM {table} WHERE scope = $1 AND key = $2 AND ` + live),
		purge:  r.Replace(`DELETE FROM {table} WHERE expires_at <= clock_timestamp()`),
	}
}

// identifier is what Config.Table accepts: a plain lower-case SQL name,
// optionally schema-qualified, that holds no quote (quote quotes it). 40
// characters leave room for the index's "_expires_at" in PostgreSQL's 63.
var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}(\.[a-z_][a-z0-9_]{0,39})?$`)

// Claim implements idempotency.Store, in one round trip (rarely two, when a
// concurrent claim of the same key commits in the middle of it).
func (s *Store) Claim(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, lease time.Duration) (idempotency.Record, bool, error) {
	if rec.Status != idempotency.InProgress {
		return idempotency.Record{}, false, invalid("postgres.Store.Claim", rec.Status, "the record must be InProgress")
	}
	if err := s.checkRecord(ctx, "Claim", key, rec, lease); err != nil {
		return idempotency.Record{}, false, err
	}
	for {
		got, claimed, err := s.claimOnce(ctx, key, rec, lease)
		if !errors.Is(err, pgx.ErrNoRows) {
			return got, claimed, err
		}
	}
}

func (s *Store) claimOnce(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, lease time.Duration) (idempotency.Record, bool, error) {
	var claimed bool
	var got row
	err := s.pool.QueryRow(ctx, s.sql.claim, []byte(key.Scope), []byte(key.Key), []byte(rec.Token), rec.Fingerprint[:], lease.Microseconds()).
		Scan(&claimed, &got.status, &got.token, &got.fp, &got.value)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return idempotency.Record{}, false, err
	case err != nil:
		return idempotency.Record{}, false, fmt.Errorf("idempotency/postgres: claim: %w", err)
	case claimed:
		return rec, true, nil
	}
	stored, err := got.decode()
	return stored, false, err
}

// row is a record as the table holds it.
type row struct {
	status           idempotency.Status
	token, fp, value []byte
}

// decode returns the record of r, and refuses one no store could have
// written.
func (r row) decode() (idempotency.Record, error) {
	rec := idempotency.Record{Status: r.status, Token: string(r.token)}
	if len(r.fp) != len(rec.Fingerprint) {
		return idempotency.Record{}, fmt.Errorf("idempotency/postgres: corrupt record: fingerprint of %d bytes", len(r.fp))
	}
	copy(rec.Fingerprint[:], r.fp)
	if len(r.value) > 0 {
		rec.Value = r.value
	}
	if err := rec.Validate(); err != nil {
		return idempotency.Record{}, fmt.Errorf("idempotency/postgres: corrupt record: %w", err)
	}
	return rec, nil
}

// Extend implements idempotency.Store.
func (s *Store) Extend(ctx context.Context, key idempotency.StoreKey, token string, lease time.Duration) error {
	if err := s.checkToken(ctx, "Extend", key, token, lease); err != nil {
		return err
	}
	return fenced(s.pool.Exec(ctx, s.sql.extend, []byte(key.Scope), []byte(key.Key), []byte(token), lease.Microseconds()))
}

// Complete implements idempotency.Store.
func (s *Store) Complete(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, retention time.Duration) error {
	if err := s.checkFinal(ctx, "Complete", key, rec, retention); err != nil {
		return err
	}
	return fenced(s.complete(ctx, s.pool, key, rec, retention))
}

// complete runs the completion on db: the pool, or a transaction.
func (s *Store) complete(ctx context.Context, db execer, key idempotency.StoreKey, rec idempotency.Record, retention time.Duration) (pgconn.CommandTag, error) {
	value := rec.Value
	if value == nil {
		value = []byte{}
	}
	return db.Exec(ctx, s.sql.complete, []byte(key.Scope), []byte(key.Key), []byte(rec.Token), int16(rec.Status), rec.Fingerprint[:], value, retention.Microseconds())
}

type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Release implements idempotency.Store.
func (s *Store) Release(ctx context.Context, key idempotency.StoreKey, token string) error {
	if err := s.checkToken(ctx, "Release", key, token, time.Microsecond); err != nil {
		return err
	}
	return fenced(s.pool.Exec(ctx, s.sql.release, []byte(key.Scope), []byte(key.Key), []byte(token)))
}

// fenced is the outcome of a statement that acts only for the claim's
// holder: no row changed means the caller holds no live claim.
func fenced(tag pgconn.CommandTag, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("idempotency/postgres: %w", err)
	case tag.RowsAffected() != 1:
		return idempotency.ErrClaimLost
	}
	return nil
}
