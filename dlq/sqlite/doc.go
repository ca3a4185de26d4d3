// Package sqlite is a durable dead letter queue (dlq.Queue) for one machine:
// a SQLite file, through a pure-Go driver (modernc.org/sqlite, no cgo), that
// an operator can also read with the sqlite3 shell or cmd/dlq.
//
//	q, err := sqlite.Open(ctx, "/var/lib/worker/dlq.db", sqlite.Options{})
//	if err != nil {
//		return err
//	}
//	defer q.Close()
//	err = dlq.Do(ctx, retrier, q, job, process)
//
// # Durability
//
// Every write is one SQLite transaction, in write-ahead-log mode with
// synchronous=FULL: when Put returns, the letter is in the log and the log
// is on disk, so a process killed at any point — and a machine that loses
// power — loses no acknowledged letter (TestKilledWriterLosesNoAcknowledgedLetter
// kills a writer with SIGKILL mid-stream). WAL also lets readers, such as
// cmd/dlq, read while the application writes. Several processes may share
// the file; a write waits up to BusyTimeout for another's.
//
// # Schema (version 1)
//
//	CREATE TABLE dlq_letters (
//		seq           INTEGER PRIMARY KEY AUTOINCREMENT, -- order of first put
//		id            TEXT NOT NULL UNIQUE,  -- dlq.LetterID(source, job_id)
//		source        TEXT NOT NULL,         -- the job's source queue
//		job_id        TEXT NOT NULL,
//		reason        TEXT NOT NULL,         -- max-attempts, budget, permanent, …
//		class         TEXT NOT NULL,         -- the last error's class, e.g. 'http 503'
//		attempts      INTEGER NOT NULL,
//		first_failure TEXT NOT NULL,         -- UTC, 2006-01-02T15:04:05.000000000Z
//		last_failure  TEXT NOT NULL,         -- idem
//		last_error    TEXT NOT NULL,         -- the last error's message
//		grp           TEXT NOT NULL,         -- dlq.Letter.Group() when stored
//		record        TEXT NOT NULL,         -- the letter: dlq encoding version 1 (JSON)
//		claim         TEXT,                  -- the replay holding the letter, if any
//		claimed_until INTEGER                -- when that claim lapses (Unix ns)
//	) STRICT;
//	CREATE TABLE dlq_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT; -- schema_version = 1
//
// The record is the truth; the other columns copy parts of it for queries
// such as
//
//	sqlite3 dlq.db "SELECT grp, count(*), max(last_error) FROM dlq_letters GROUP BY grp ORDER BY 2 DESC"
//	sqlite3 dlq.db "SELECT json_extract(record, '$.failures') FROM dlq_letters WHERE id = '…'"
//
// Open creates the tables and refuses a file whose schema is newer than
// this code.
//
// # Defaults
//
//	| setting        | default                             | change with          |
//	|----------------|-------------------------------------|----------------------|
//	| journal        | WAL, synchronous=FULL               | —                    |
//	| busy timeout   | 5s                                  | Options.BusyTimeout  |
//	| replay claim   | lapses after 5m (a replayer died)   | Options.ClaimTimeout |
//	| bound          | none but the disk                   | —                    |
package sqlite
