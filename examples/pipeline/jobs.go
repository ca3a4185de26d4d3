package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"
)

// schema is the jobs table: a job's state, visible to the app and to support.
// status moves queued → running → done | partial_success | dead_lettered.
// email_sent_at is the claim the exercise prescribes: set before the email is sent,
// kept once it was (or might have been), cleared when every attempt was refused.
const schema = `
CREATE TABLE jobs (
	id             INTEGER PRIMARY KEY,
	prompt         TEXT    NOT NULL,
	status         TEXT    NOT NULL DEFAULT 'queued',
	deliveries     INTEGER NOT NULL DEFAULT 0,
	llm_attempts   INTEGER NOT NULL DEFAULT 0,
	result         TEXT,             -- the model's answer; NULL until saved
	finish_reason  TEXT,             -- stop, content_filter
	save_attempts  INTEGER NOT NULL DEFAULT 0,
	email_sent_at  TEXT,             -- the claim
	email_status   TEXT,             -- sending, sent, failed
	email_attempts INTEGER NOT NULL DEFAULT 0,
	last_error     TEXT,             -- why the job is partial or dead-lettered
	letter_id      TEXT,             -- its dead letter
	updated_at     TEXT    NOT NULL
) STRICT;
`

// Job statuses. The last three are final.
const (
	statusQueued  = "queued"
	statusRunning = "running"
	statusDone    = "done"
	statusPartial = "partial_success"
	statusDead    = "dead_lettered"
)

// jobsDB is the jobs table. Its methods make one attempt each; the pipeline
// retries them under the database policy.
type jobsDB struct {
	db *sql.DB
}

// openJobs creates the database at path. One connection serialises the
// workers' writes in Go rather than in SQLite's busy handler; WAL lets the
// dead letter queue's connections write to the same file.
func openJobs(ctx context.Context, path string) (jobsDB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return jobsDB{}, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return jobsDB{}, fmt.Errorf("creating the jobs table: %w", err)
	}
	return jobsDB{db: db}, nil
}

func (s jobsDB) Close() error { return s.db.Close() }

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// enqueue inserts jobs 1 to n, queued.
func (s jobsDB) enqueue(ctx context.Context, n int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	at := now()
	for id := 1; id <= n; id++ {
		if _, err := tx.ExecContext(ctx, `INSERT INTO jobs (id, prompt, updated_at) VALUES (?, ?, ?)`,
			id, fmt.Sprintf("ticket #%d", id), at); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// job is what a delivery reads of its job.
type job struct {
	id          int
	prompt      string
	result      sql.NullString
	emailSentAt sql.NullString
}

func (j job) saved() bool { return j.result.Valid }

// start marks the job running for a new delivery and reads it; ok is false
// when the job already ended (a duplicate delivery, to acknowledge and drop).
func (s jobsDB) start(ctx context.Context, id int) (j job, ok bool, err error) {
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = ?, deliveries = deliveries + 1, updated_at = ?
		WHERE id = ? AND status IN (?, ?)`, statusRunning, now(), id, statusQueued, statusRunning)
	if ok, err = affected(res, err); !ok {
		return j, false, err
	}
	err = s.db.QueryRowContext(ctx, `SELECT id, prompt, result, email_sent_at FROM jobs WHERE id = ?`, id).
		Scan(&j.id, &j.prompt, &j.result, &j.emailSentAt)
	return j, err == nil, err
}

// saveResult stores the model's answer; attempt is the write's attempt.
func (s jobsDB) saveResult(ctx context.Context, id int, c completion, llmAttempts, attempt int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET result = ?, finish_reason = ?, llm_attempts = llm_attempts + ?,
		save_attempts = ?, updated_at = ? WHERE id = ?`, c.Content, c.FinishReason, llmAttempts, attempt, now(), id)
	return err
}

// claimEmail is the exercise's claim: only the delivery that sets
// email_sent_at may send.
func (s jobsDB) claimEmail(ctx context.Context, id int) (bool, error) {
	return affected(s.db.ExecContext(ctx, `UPDATE jobs SET email_sent_at = ?, email_status = 'sending', updated_at = ?
		WHERE id = ? AND email_sent_at IS NULL`, now(), now(), id))
}

// takeOverClaim moves a claim whose holder died to this delivery: a compare
// and swap on the old claim, so that two redeliveries cannot both take it.
func (s jobsDB) takeOverClaim(ctx context.Context, id int, old string) (bool, error) {
	return affected(s.db.ExecContext(ctx, `UPDATE jobs SET email_sent_at = ?, updated_at = ?
		WHERE id = ? AND email_sent_at = ? AND email_status = 'sending'`, now(), now(), id, old))
}

// emailSent ends the job: done.
func (s jobsDB) emailSent(ctx context.Context, id, attempts int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = ?, email_status = 'sent',
		email_sent_at = coalesce(email_sent_at, ?), email_attempts = email_attempts + ?, updated_at = ? WHERE id = ?`,
		statusDone, now(), attempts, now(), id)
	return err
}

// emailFailed ends the job as a partial success: the result is saved, the
// email is not. The server refused every attempt, so nothing was delivered:
// the claim is released, for support to send it again once the cause is
// fixed, and no later delivery sends it behind their back (the job is final).
func (s jobsDB) emailFailed(ctx context.Context, id, attempts int, cause string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = ?, email_status = 'failed', email_sent_at = NULL,
		email_attempts = email_attempts + ?, last_error = ?, updated_at = ? WHERE id = ?`,
		statusPartial, attempts, cause, now(), id)
	return err
}

// markDead ends the job: dead-lettered, with the letter that tells why.
func (s jobsDB) markDead(ctx context.Context, id, llmAttempts int, letter, cause string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = ?, llm_attempts = llm_attempts + ?, letter_id = ?,
		last_error = ?, updated_at = ? WHERE id = ?`, statusDead, llmAttempts, letter, cause, now(), id)
	return err
}

func affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
